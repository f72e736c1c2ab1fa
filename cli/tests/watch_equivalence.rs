//! `gangpack watch` is `gangpack plan` on the objects its events leave: reading every
//! event and running one cycle at the end gives exactly the table, the changed
//! objects and the exit status `plan` gives on the final objects, whatever the order
//! of the events of different objects (those of one object keep theirs), whatever the
//! noise on the way (objects added in another state and modified into their final
//! one, modified and back, deleted and added again, objects that come and go), and
//! however the events are split into streams or into a starting dump.

use gangpack::testing::{self, ScenarioConfig, Size, Source, SplitMix64};
use gangpack_cli::{Input, InputFile, Options, Style, Trigger, Watch};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A label nothing selects on: changing it changes nothing but the object.
const NOISE: &str = "gangpack.dev/watch-noise";

fn config() -> ScenarioConfig {
    let mut c = ScenarioConfig::from(Size::Small);
    c.jobs.0 = c.jobs.0.max(1);
    c
}

/// `(kind, namespace, name)` of a manifest.
fn key(o: &Value) -> (String, String, String) {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (
        s(&o["kind"]),
        s(&o["metadata"]["namespace"]),
        s(&o["metadata"]["name"]),
    )
}

/// The object in another, valid, state: labelled, and for a pod unbound, for a
/// slice with a device less.
fn noisy(o: &Value, n: u64) -> Value {
    let mut v = o.clone();
    v["metadata"]["labels"][NOISE] = json!(n.to_string());
    match v["kind"].as_str() {
        Some("Pod") => {
            if let Some(spec) = v["spec"].as_object_mut() {
                spec.remove("nodeName");
            }
        }
        Some("ResourceSlice") => {
            if let Some(devices) = v["spec"]["devices"].as_array_mut()
                && devices.len() > 1
            {
                devices.pop();
            }
        }
        _ => {}
    }
    v
}

fn event(ty: &str, o: &Value) -> Value {
    json!({"type": ty, "object": o})
}

/// The events of one object, in order, ending in its final state.
fn history(o: &Value, rng: &mut SplitMix64) -> Vec<Value> {
    let n = rng.next_u64();
    match rng.below(5) {
        0 => vec![event("ADDED", &noisy(o, n)), event("MODIFIED", o)],
        1 => vec![
            event("ADDED", o),
            event("MODIFIED", &noisy(o, n)),
            event("MODIFIED", o),
        ],
        2 => vec![
            event("ADDED", &noisy(o, n)),
            event("DELETED", &noisy(o, n)),
            event("ADDED", o),
        ],
        _ => vec![event("ADDED", o)],
    }
}

/// A short-lived copy of `o` under another name: added, perhaps modified, deleted.
fn transient(o: &Value, rng: &mut SplitMix64) -> Vec<Value> {
    let mut copy = o.clone();
    let name = format!("noise-{}", key(o).2);
    copy["metadata"]["name"] = json!(name);
    if copy["kind"] == "ResourceSlice" {
        copy["spec"]["pool"]["name"] = json!(name);
    }
    let mut events = vec![event("ADDED", &copy)];
    if rng.below(2) == 0 {
        events.push(event("MODIFIED", &noisy(&copy, 1)));
    }
    events.push(event("DELETED", &copy));
    events
}

/// The per-object histories interleaved at random, each keeping its order.
fn interleave(mut queues: Vec<Vec<Value>>, rng: &mut SplitMix64) -> Vec<Value> {
    for q in &mut queues {
        q.reverse();
    }
    let mut out = Vec::new();
    loop {
        let open: Vec<usize> = (0..queues.len())
            .filter(|&i| !queues[i].is_empty())
            .collect();
        if open.is_empty() {
            return out;
        }
        let q = open[rng.below(open.len())];
        out.extend(queues[q].pop());
    }
}

/// Events as kubectl prints them: indented JSON objects one after another.
fn stream_text(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| serde_json::to_string_pretty(e).expect("JSON") + "\n")
        .collect()
}

fn list(items: Vec<Value>) -> String {
    serde_json::to_string_pretty(&gangpack_k8s::output::list(items)).expect("JSON")
}

/// Runs the watch on `seed`'s arrangement of `objects` and compares its one cycle
/// with `plan` on the objects.
fn check(objects: &[Value], seed: u64) {
    let mut rng = SplitMix64::new(seed);
    // Kinds given in a starting dump instead of events (and perhaps listed again).
    let dumped_kinds = ["DeviceClass", "PriorityClass", "Namespace"];
    let dump_some = rng.below(2) == 0;
    let relist = rng.below(2) == 0;
    let mut dump = Vec::new();
    let mut queues = Vec::new();
    for o in objects {
        let in_dump = dump_some && dumped_kinds.contains(&o["kind"].as_str().unwrap_or_default());
        if in_dump {
            dump.push(o.clone());
            if relist {
                // `kubectl get --watch` lists every object first.
                queues.push(vec![event("ADDED", o)]);
            }
            continue;
        }
        queues.push(history(o, &mut rng));
        if rng.below(4) == 0 {
            queues.push(transient(o, &mut rng));
        }
    }
    let events = interleave(queues, &mut rng);
    // One stream, or one per kind (as kubectl watches), read one after another.
    let streams: Vec<(String, String)> = if rng.below(2) == 0 {
        vec![("events.json".into(), stream_text(&events))]
    } else {
        let mut kinds: Vec<String> = Vec::new();
        for e in &events {
            let k = e["object"]["kind"].as_str().unwrap_or_default().to_owned();
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        kinds
            .iter()
            .map(|k| {
                let mine: Vec<Value> = events
                    .iter()
                    .filter(|e| e["object"]["kind"] == k.as_str())
                    .cloned()
                    .collect();
                (format!("{}.json", k.to_lowercase()), stream_text(&mine))
            })
            .collect()
    };

    let options = Options::default();
    let dump = (!dump.is_empty()).then(|| {
        Input::Files(vec![InputFile {
            name: "dump.json".into(),
            text: list(dump),
        }])
    });
    // Once with one cycle at the end, once with cycles on the way (every N events):
    // each cycle starts again from the objects, so the last is the same.
    let every = 1 + events.len() / (2 + rng.below(4));
    let mut lasts = Vec::new();
    for every in [None, Some(every)] {
        let mut watch = Watch::new(&options, false);
        if let Some(dump) = &dump {
            watch.initial(dump).expect("the dump loads");
        }
        let mut cycles = Vec::new();
        for (name, text) in &streams {
            watch.read_from(name, &mut text.as_bytes(), every, &mut |w, t| {
                cycles.extend(w.cycle(t));
            });
        }
        if watch.is_dirty() {
            cycles.extend(watch.cycle(Trigger::End));
        }
        assert_eq!(cycles.len() > 1, every.is_some(), "seed {seed}");
        let errors: Vec<String> = watch
            .take_messages()
            .iter()
            .filter(|m| m.is_error())
            .map(ToString::to_string)
            .collect();
        assert!(errors.is_empty(), "seed {seed}: {errors:#?}");
        assert_eq!(watch.objects().len(), objects.len(), "seed {seed}");
        lasts.push(cycles.pop().expect("a cycle"));
    }

    let final_objects = Input::Files(vec![InputFile {
        name: "final.json".into(),
        text: list(objects.to_vec()),
    }]);
    let plan = gangpack_cli::plan_report(&final_objects, &options, Style::PLAIN)
        .expect("the scenario plans");
    for cycle in lasts {
        assert_eq!(cycle.plan_table, plan.table, "seed {seed}");
        assert_eq!(cycle.plan_list, plan.list, "seed {seed}");
        assert_eq!(cycle.plan_code, plan.code, "seed {seed}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn one_cycle_at_the_end_is_plan_of_the_final_objects(
        scenario in testing::scenario(&config()),
        seed in any::<u64>(),
    ) {
        let objects = gangpack_k8s::output::scenario_manifests(&scenario);
        check(&objects, seed);
    }
}
