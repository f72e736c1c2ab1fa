//! `gangpack gen --events`: a generated scenario as a stream of watch events, what
//! `kubectl get --watch --output-watch-events -o json` prints and `gangpack watch -f`
//! reads: `{"type": "ADDED" | "MODIFIED" | "DELETED", "object": {...}}`, indented by
//! four spaces, one after another.
//!
//! The stream, from the scenario of the same [`GenSpec`] and a [`SplitMix64`] seeded
//! with the seed (the same bytes for the same spec):
//!
//! 1. **The listing**: an `ADDED` of every object of the cluster (namespaces, nodes,
//!    classes, slices, taint rules, priority classes) and of every unit already running
//!    (its claims, Workload, PodGroup and pods), in the order `gen` writes them.
//! 2. **Steps**, a minute apart: each pending unit (a PodGroup with its Workload, pods
//!    and claims, or a single pod with its claims) arrives in its own step, its pods
//!    and PodGroup created then; among the arrivals, in an order drawn from the seed:
//!    - clock steps: a node's status update, its `Ready` condition stamped with the
//!      step's time (the watch's clock is the latest timestamp of its objects; a
//!      `BOOKMARK` carries no time);
//!    - with `node-taints`: a node tainted (`NoSchedule`, `PreferNoSchedule` or
//!      `NoExecute`) or cordoned;
//!    - with `device-taints`: a driver tainting a device of its slice, and new
//!      DeviceTaintRules (the first one `NoExecute`);
//!    - removals: a pod (and its claims), a node drained and removed (its pods and
//!      their claims, its slices, then the node), and a node's ResourceSlices (one
//!      whose devices no claim holds).
//!
//! The stream is consistent: every `MODIFIED` or `DELETED` is of an object `ADDED`
//! before and not deleted since; `metadata.resourceVersion` counts the events (1, 2,
//! ...); and the clock never goes back: an object carrying the latest time is never
//! removed without a later time written first (a clock step just before).

use std::collections::{BTreeMap, BTreeSet};

use gangpack::testing::{
    DEVICE_TAINT_KEY, DRIVER, NODE_TAINT_KEY, RULE_TAINT_KEY, Scenario, Source as _, SplitMix64,
};
use gangpack::{
    ClaimSource, DeviceTaint, DeviceTaintEffect, DeviceTaintRule, DeviceTaintSelector, Node,
    ResourceSlice, Taint, TaintEffect, Time,
};
use gangpack_k8s::output::{scenario_manifests, time_to_rfc3339};
use serde_json::{Value, json};

use super::GenSpec;

/// Seconds between two steps.
const STEP_SECONDS: i64 = 60;

/// Mixed into the seed, so that the stream's draws are not the scenario's.
const STREAM_SEED: u64 = 0x6576_656e_7473; // "events"

/// An object's kind, namespace (empty when cluster-scoped) and name.
type Key = (String, String, String);

fn key_of(doc: &Value) -> Key {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (
        text(&doc["kind"]),
        text(&doc["metadata"]["namespace"]),
        text(&doc["metadata"]["name"]),
    )
}

fn key(kind: &str, namespace: &str, name: &str) -> Key {
    (kind.to_owned(), namespace.to_owned(), name.to_owned())
}

/// The stream for `spec`.
pub(crate) fn stream(spec: &GenSpec) -> String {
    let scenario = spec.scenario();
    let mut rng = SplitMix64::new(spec.seed ^ STREAM_SEED);
    let units = units(&scenario);
    let pending: Vec<usize> = (0..units.len()).filter(|u| !units[*u].running).collect();
    let steps = steps(spec, &scenario, pending.len(), &mut rng);
    let original = scenario_manifests(&scenario);
    let start = latest_time(original.iter());
    let time = |step: usize| {
        let steps = i64::try_from(step + 1).unwrap_or(i64::MAX);
        Time(start.0.saturating_add(STEP_SECONDS.saturating_mul(steps)))
    };

    // The arriving units are created at their step's time.
    let mut timed = scenario.clone();
    for (step, s) in steps.iter().enumerate() {
        if let Step::Arrive(n) = s {
            retime(&mut timed, &units[pending[*n]], time(step));
        }
    }
    let docs = documents(original, &timed);

    // The node to remove: a node stays.
    let doomed = (scenario.nodes.len() >= 2)
        .then(|| scenario.nodes[rng.below(scenario.nodes.len())].name.clone());
    let mut w = Writer::new(&scenario, docs, doomed);
    let arriving: BTreeSet<&Key> = pending.iter().flat_map(|u| &units[*u].keys).collect();
    w.list(&arriving);
    for (step, s) in steps.iter().enumerate() {
        let at = time(step);
        match *s {
            Step::Arrive(n) => w.arrive(&units[pending[n]]),
            Step::Clock => w.clock_step(at, &mut rng),
            Step::NodeTaint => w.taint_node(at, &mut rng),
            Step::DeviceTaint => w.taint_device(at, &mut rng),
            Step::TaintRule { no_execute } => w.add_rule(at, no_execute, &mut rng),
            Step::RemovePod => w.remove_pod(at, &mut rng),
            Step::RemoveNode => w.remove_node(at, &mut rng),
            Step::RemoveSlices => w.remove_slices(at, &mut rng),
        }
    }
    w.text
}

// ------------------------------------------------------------------- the plan

/// One step after the listing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The `n`-th pending unit arrives.
    Arrive(usize),
    /// A node's status update: only the clock moves.
    Clock,
    /// A node tainted or cordoned.
    NodeTaint,
    /// A driver taints a device of its slice.
    DeviceTaint,
    /// A new DeviceTaintRule.
    TaintRule { no_execute: bool },
    /// A pod and its claims deleted.
    RemovePod,
    /// A node drained and deleted.
    RemoveNode,
    /// A node's ResourceSlices deleted.
    RemoveSlices,
}

/// The steps: the arrivals in order, and the other steps the features allow, each at a
/// position drawn from `rng`.
fn steps(spec: &GenSpec, s: &Scenario, arrivals: usize, rng: &mut SplitMix64) -> Vec<Step> {
    let f = spec.features;
    // One or two of each.
    let some = |step: Step, rng: &mut SplitMix64| std::iter::repeat_n(step, 1 + rng.below(2));
    let mut others: Vec<Step> = some(Step::Clock, rng).collect();
    if f.node_taints && !s.nodes.is_empty() {
        others.extend(some(Step::NodeTaint, rng));
    }
    if f.device_taints && !s.nodes.is_empty() {
        others.extend(some(Step::DeviceTaint, rng));
        others.extend(some(Step::TaintRule { no_execute: false }, rng));
    }
    others.push(Step::RemovePod);
    others.push(Step::RemoveSlices);
    if s.nodes.len() >= 2 {
        others.push(Step::RemoveNode);
    }
    let mut steps: Vec<Step> = (0..arrivals).map(Step::Arrive).collect();
    for step in others {
        let at = rng.below(steps.len() + 1);
        steps.insert(at, step);
    }
    // The first rule is NoExecute: a stream with device taints has one.
    if let Some(first) = steps
        .iter_mut()
        .find(|s| matches!(s, Step::TaintRule { .. }))
    {
        *first = Step::TaintRule { no_execute: true };
    }
    steps
}

/// A unit of work: a PodGroup with its Workload, pods and their claims, or a single
/// pod and its claims.
#[derive(Clone, Debug)]
struct Unit {
    /// The PodGroup's `(namespace, name)`, if any.
    group: Option<(String, String)>,
    /// The indexes of its pods in the scenario.
    pods: Vec<usize>,
    /// Its objects: claims, Workload, PodGroup, pods.
    keys: BTreeSet<Key>,
    /// Whether a pod of it is bound.
    running: bool,
}

/// The scenario's units, in the order of their first pods.
fn units(s: &Scenario) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    let mut of_group: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, p) in s.pods.iter().enumerate() {
        let group = p
            .scheduling_group
            .as_ref()
            .map(|g| (p.namespace.clone(), g.clone()));
        let found = group.as_ref().and_then(|g| of_group.get(g)).copied();
        let at = found.unwrap_or_else(|| {
            if let Some(g) = &group {
                of_group.insert(g.clone(), units.len());
            }
            units.push(Unit::new(s, group.clone()));
            units.len() - 1
        });
        let unit = &mut units[at];
        unit.pods.push(i);
        unit.running |= p.node_name.is_some();
        unit.keys.insert(key("Pod", &p.namespace, &p.name));
        for c in claim_names(p) {
            unit.keys.insert(key("ResourceClaim", &p.namespace, c));
        }
    }
    units
}

impl Unit {
    /// A unit without pods yet: of the PodGroup `group` (with its Workload, if the
    /// scenario has it), or of a single pod.
    fn new(s: &Scenario, group: Option<(String, String)>) -> Unit {
        let mut keys = BTreeSet::new();
        if let Some((ns, g)) = &group {
            keys.insert(key("PodGroup", ns, g));
            if s.workloads
                .iter()
                .any(|w| &w.namespace == ns && &w.name == g)
            {
                keys.insert(key("Workload", ns, g));
            }
        }
        Unit {
            group,
            pods: Vec::new(),
            keys,
            running: false,
        }
    }
}

/// The names of the claims a pod names.
fn claim_names(p: &gangpack::Pod) -> impl Iterator<Item = &str> + '_ {
    p.resource_claims.iter().filter_map(|c| match &c.source {
        ClaimSource::ClaimName(n) => Some(n.as_str()),
        ClaimSource::Template(_) => None,
    })
}

/// Creates a unit's pods and PodGroup at `at`.
fn retime(s: &mut Scenario, unit: &Unit, at: Time) {
    for &i in &unit.pods {
        s.pods[i].creation = at;
    }
    if let Some((ns, name)) = &unit.group
        && let Some(g) = s
            .groups
            .iter_mut()
            .find(|g| &g.namespace == ns && &g.name == name)
    {
        g.creation = at;
    }
}

/// Every object's document, in `gen`'s order: those of `timed` (arrivals created at
/// their step), but the claims of `original` (the scenario's documents: their
/// allocations are dated by the latest time of the listing, not of the last arrival).
fn documents(original: Vec<Value>, timed: &Scenario) -> Vec<Value> {
    let claims: BTreeMap<Key, Value> = original
        .into_iter()
        .filter(|d| d["kind"] == "ResourceClaim")
        .map(|d| (key_of(&d), d))
        .collect();
    scenario_manifests(timed)
        .into_iter()
        .map(|d| claims.get(&key_of(&d)).cloned().unwrap_or(d))
        .collect()
}

// ------------------------------------------------------------------- time

/// The fields whose timestamps the watch's clock reads (`gangpack_k8s`'s loader).
const TIME_FIELDS: [&str; 6] = [
    "creationTimestamp",
    "timeAdded",
    "allocationTimestamp",
    "deletionTimestamp",
    "startTime",
    "lastTransitionTime",
];

/// The latest timestamp in a document (0 when none).
fn doc_time(doc: &Value) -> Time {
    let mut best = Time(0);
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, x) in map {
                    if TIME_FIELDS.contains(&k.as_str())
                        && let Some(t) = x.as_str().and_then(Time::parse_rfc3339)
                    {
                        best = best.max(t);
                    }
                    stack.push(x);
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    best
}

fn latest_time<'a>(docs: impl Iterator<Item = &'a Value>) -> Time {
    docs.map(doc_time).max().unwrap_or_default()
}

// ------------------------------------------------------------------- the writer

/// The objects so far, the model of the nodes and slices the steps change, and the
/// text written.
struct Writer {
    /// Every document of the scenario, by key (the arrivals' as they arrive).
    docs: BTreeMap<Key, Value>,
    /// Their keys in `gen`'s order.
    order: Vec<Key>,
    /// The objects now, as last written.
    now: BTreeMap<Key, Value>,
    /// The nodes, as last written, by name.
    nodes: BTreeMap<String, Node>,
    /// The slices, as last written, by name.
    slices: BTreeMap<String, ResourceSlice>,
    /// The scenario's pods, by key.
    pods: BTreeMap<Key, gangpack::Pod>,
    /// The scenario's claims, by key.
    claims: BTreeMap<Key, gangpack::ResourceClaim>,
    /// DeviceTaintRules written so far (names `rule-N` go on from the scenario's).
    rules: usize,
    /// The node the stream removes: no step stamps a time on it.
    doomed: Option<String>,
    /// The last event's resourceVersion.
    version: u64,
    /// The stream so far.
    text: String,
}

impl Writer {
    fn new(s: &Scenario, docs: Vec<Value>, doomed: Option<String>) -> Writer {
        let order = docs.iter().map(key_of).collect();
        Writer {
            docs: docs.into_iter().map(|d| (key_of(&d), d)).collect(),
            order,
            now: BTreeMap::new(),
            nodes: s
                .nodes
                .iter()
                .map(|n| (n.name.clone(), n.clone()))
                .collect(),
            slices: s
                .slices
                .iter()
                .map(|x| (x.name.clone(), x.clone()))
                .collect(),
            pods: s
                .pods
                .iter()
                .map(|p| (key("Pod", &p.namespace, &p.name), p.clone()))
                .collect(),
            claims: s
                .claims
                .iter()
                .map(|c| (key("ResourceClaim", &c.namespace, &c.name), c.clone()))
                .collect(),
            rules: s.taint_rules.len(),
            doomed,
            version: 0,
            text: String::new(),
        }
    }

    /// Writes one event of `doc` (stamped with the next resourceVersion) and applies
    /// it to the objects.
    fn event(&mut self, kind: &str, mut doc: Value) {
        self.version += 1;
        doc["metadata"]["resourceVersion"] = Value::String(self.version.to_string());
        write_event(&mut self.text, kind, &doc);
        let k = key_of(&doc);
        if kind == "DELETED" {
            self.now.remove(&k);
        } else {
            self.now.insert(k, doc);
        }
    }

    /// `ADDED` of the scenario's object `k`.
    fn add(&mut self, k: &Key) {
        debug_assert!(!self.now.contains_key(k), "{k:?} added twice");
        if let Some(doc) = self.docs.get(k).cloned() {
            self.event("ADDED", doc);
        }
    }

    /// `MODIFIED` of an object there.
    fn modify(&mut self, doc: Value) {
        debug_assert!(self.now.contains_key(&key_of(&doc)), "{doc}");
        self.event("MODIFIED", doc);
    }

    /// `DELETED` of `k`, as it last was, if it is there.
    fn delete(&mut self, k: &Key) {
        if let Some(doc) = self.now.get(k).cloned() {
            self.event("DELETED", doc);
        }
    }

    /// The listing: `ADDED` of every object but those `arriving` later, in `gen`'s
    /// order.
    fn list(&mut self, arriving: &BTreeSet<&Key>) {
        let listed: Vec<Key> = self
            .order
            .iter()
            .filter(|k| !arriving.contains(k))
            .cloned()
            .collect();
        for k in &listed {
            self.add(k);
        }
    }

    /// A unit arrives: its objects in `gen`'s order (claims, Workload, PodGroup, pods).
    fn arrive(&mut self, unit: &Unit) {
        let keys: Vec<Key> = self
            .order
            .iter()
            .filter(|k| unit.keys.contains(*k))
            .cloned()
            .collect();
        for k in &keys {
            self.add(k);
        }
    }

    /// The nodes there but the doomed one: where steps stamp their time.
    fn lasting_nodes(&self) -> Vec<String> {
        self.nodes
            .keys()
            .filter(|n| Some(*n) != self.doomed.as_ref())
            .filter(|n| self.now.contains_key(&key("Node", "", n)))
            .cloned()
            .collect()
    }

    /// A node's status update: its `Ready` condition stamped `at`.
    fn clock_step(&mut self, at: Time, rng: &mut SplitMix64) {
        let nodes = self.lasting_nodes();
        if nodes.is_empty() {
            return;
        }
        let name = &nodes[rng.below(nodes.len())];
        let Some(mut doc) = self.now.get(&key("Node", "", name)).cloned() else {
            return;
        };
        let stamp = time_to_rfc3339(at);
        doc["status"]["conditions"] = json!([{
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": stamp,
            "lastTransitionTime": stamp,
        }]);
        self.modify(doc);
    }

    /// `MODIFIED` of a node from its model, keeping its status conditions.
    fn write_node(&mut self, node: Node) {
        let k = key("Node", "", &node.name);
        let mut doc = render(&Scenario {
            nodes: vec![node.clone()],
            ..Scenario::default()
        });
        if let Some(conditions) = self.now.get(&k).map(|d| d["status"]["conditions"].clone())
            && !conditions.is_null()
        {
            doc["status"]["conditions"] = conditions;
        }
        self.nodes.insert(node.name.clone(), node);
        self.modify(doc);
    }

    /// A node tainted (`NoSchedule`, `PreferNoSchedule`, `NoExecute`) at `at`, or
    /// cordoned.
    fn taint_node(&mut self, at: Time, rng: &mut SplitMix64) {
        let nodes = self.lasting_nodes();
        if nodes.is_empty() {
            return;
        }
        let mut node = self.nodes[&nodes[rng.below(nodes.len())]].clone();
        let effect = match rng.below(4) {
            3 if !node.unschedulable => None,
            0 | 3 => Some(TaintEffect::NoSchedule),
            1 => Some(TaintEffect::PreferNoSchedule),
            _ => Some(TaintEffect::NoExecute),
        };
        match effect {
            None => node.unschedulable = true,
            Some(effect) => {
                node.taints
                    .retain(|t| !(t.key == NODE_TAINT_KEY && t.effect == effect));
                let mut taint = Taint::new(NODE_TAINT_KEY, "true", effect);
                taint.time_added = Some(at);
                node.taints.push(taint);
            }
        }
        self.write_node(node);
    }

    /// A driver taints a device of a node's slice at `at` (effect `None`,
    /// `NoSchedule` or `NoExecute`).
    fn taint_device(&mut self, at: Time, rng: &mut SplitMix64) {
        let slices: Vec<String> = self
            .lasting_nodes()
            .iter()
            .map(|n| format!("{n}-gpus"))
            .filter(|s| self.now.contains_key(&key("ResourceSlice", "", s)))
            .collect();
        if slices.is_empty() {
            return;
        }
        let mut slice = self.slices[&slices[rng.below(slices.len())]].clone();
        if slice.devices.is_empty() {
            return;
        }
        let effect = device_effect(rng.below(3));
        let at_device = rng.below(slice.devices.len());
        let device = &mut slice.devices[at_device];
        device
            .taints
            .retain(|t| !(t.key == DEVICE_TAINT_KEY && t.effect == effect));
        device
            .taints
            .push(DeviceTaint::new(DEVICE_TAINT_KEY, "uncorrectable", effect).added_at(at));
        let doc = render(&Scenario {
            slices: vec![slice.clone()],
            ..Scenario::default()
        });
        self.slices.insert(slice.name.clone(), slice);
        self.modify(doc);
    }

    /// A new DeviceTaintRule on a node's pool (a device of it, or all), its taint
    /// added at `at`.
    fn add_rule(&mut self, at: Time, no_execute: bool, rng: &mut SplitMix64) {
        let nodes: Vec<&Node> = self.nodes.values().collect();
        if nodes.is_empty() {
            return;
        }
        let node = nodes[rng.below(nodes.len())].name.clone();
        let devices: Vec<String> = self
            .slices
            .get(&format!("{node}-gpus"))
            .map(|s| s.devices.iter().map(|d| d.name.clone()).collect())
            .unwrap_or_default();
        let device = (!devices.is_empty() && rng.below(2) == 0)
            .then(|| devices[rng.below(devices.len())].clone());
        let effect = if no_execute {
            DeviceTaintEffect::NoExecute
        } else {
            device_effect(rng.below(3))
        };
        let rule = DeviceTaintRule {
            name: format!("rule-{}", self.rules),
            selector: Some(DeviceTaintSelector {
                driver: Some(DRIVER.into()),
                pool: Some(node),
                device,
            }),
            taint: DeviceTaint::new(RULE_TAINT_KEY, "planned", effect).added_at(at),
        };
        self.rules += 1;
        let doc = render(&Scenario {
            taint_rules: vec![rule],
            ..Scenario::default()
        });
        self.event("ADDED", doc);
    }

    /// Deletes `keys` (those there, in order); first, if that would take the latest
    /// time away, a clock step at `at` on a node that stays.
    fn remove(&mut self, keys: &[Key], at: Time, rng: &mut SplitMix64) {
        let gone: BTreeSet<&Key> = keys.iter().collect();
        let all = latest_time(self.now.values());
        let left = latest_time(
            self.now
                .iter()
                .filter(|(k, _)| !gone.contains(k))
                .map(|(_, d)| d),
        );
        if left < all {
            self.clock_step(at, rng);
        }
        for k in keys {
            self.delete(k);
        }
    }

    /// A pod's keys and its claims'.
    fn pod_and_claims(&self, k: &Key) -> Vec<Key> {
        let mut keys = vec![k.clone()];
        if let Some(p) = self.pods.get(k) {
            keys.extend(claim_names(p).map(|c| key("ResourceClaim", &p.namespace, c)));
        }
        keys
    }

    /// A pod there deleted, and its claims.
    fn remove_pod(&mut self, at: Time, rng: &mut SplitMix64) {
        let pods: Vec<Key> = self.now.keys().filter(|k| k.0 == "Pod").cloned().collect();
        if pods.is_empty() {
            return;
        }
        let keys = self.pod_and_claims(&pods[rng.below(pods.len())]);
        self.remove(&keys, at, rng);
    }

    /// The doomed node drained (its pods and their claims deleted), its slices
    /// deleted, then itself.
    fn remove_node(&mut self, at: Time, rng: &mut SplitMix64) {
        let Some(name) = self.doomed.clone() else {
            return;
        };
        let mut keys = Vec::new();
        let bound: Vec<Key> = self
            .pods
            .iter()
            .filter(|(k, p)| p.node_name.as_deref() == Some(&name) && self.now.contains_key(*k))
            .map(|(k, _)| k.clone())
            .collect();
        for k in &bound {
            keys.extend(self.pod_and_claims(k));
        }
        keys.extend(self.pool_slices(&name));
        keys.push(key("Node", "", &name));
        self.remove(&keys, at, rng);
    }

    /// The slices there of a node's pool.
    fn pool_slices(&self, node: &str) -> Vec<Key> {
        self.slices
            .values()
            .filter(|s| s.pool.name == node)
            .map(|s| key("ResourceSlice", "", &s.name))
            .filter(|k| self.now.contains_key(k))
            .collect()
    }

    /// The slices of a node's pool deleted: a node that stays, whose devices no claim
    /// there holds.
    fn remove_slices(&mut self, at: Time, rng: &mut SplitMix64) {
        let held: BTreeSet<&str> = self
            .claims
            .iter()
            .filter(|(k, _)| self.now.contains_key(*k))
            .filter_map(|(_, c)| c.allocation.as_ref())
            .flat_map(|a| &a.devices)
            .map(|d| d.pool.as_str())
            .collect();
        let nodes: Vec<String> = self
            .lasting_nodes()
            .into_iter()
            .filter(|n| !held.contains(n.as_str()) && !self.pool_slices(n).is_empty())
            .collect();
        if nodes.is_empty() {
            return;
        }
        let keys = self.pool_slices(&nodes[rng.below(nodes.len())]);
        self.remove(&keys, at, rng);
    }
}

fn device_effect(n: usize) -> DeviceTaintEffect {
    match n {
        0 => DeviceTaintEffect::None,
        1 => DeviceTaintEffect::NoSchedule,
        _ => DeviceTaintEffect::NoExecute,
    }
}

/// The document of a scenario's only object.
fn render(s: &Scenario) -> Value {
    scenario_manifests(s)
        .into_iter()
        .next()
        .expect("one object")
}

/// Appends `{"type": KIND, "object": DOC}` as kubectl prints it: four spaces per level.
fn write_event(out: &mut String, kind: &str, doc: &Value) {
    out.push_str("{\n    \"type\": \"");
    out.push_str(kind);
    out.push_str("\",\n    \"object\": ");
    let pretty = serde_json::to_string_pretty(doc).expect("a JSON value prints");
    for (i, line) in pretty.lines().enumerate() {
        let body = line.trim_start_matches(' ');
        let depth = line.len() - body.len();
        if i > 0 {
            out.push('\n');
            out.push_str(&" ".repeat(2 * depth + 4));
        }
        out.push_str(body);
    }
    out.push_str("\n}\n");
}
