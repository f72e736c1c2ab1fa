//! The `gangpack` binary on the examples, the demo and a corpus of bad inputs.
//!
//! Runs from the workspace root, so paths (and the file names in messages) are
//! `examples/...` and `cli/tests/bad/...`, as in the documentation.

use std::path::PathBuf;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

const CLUSTER: &str = "examples/cluster";
const GANG: &str = "examples/gang-rack.yaml";
const CLAIM: &str = "examples/claim-first-available.yaml";
const RUNNING: &str = "examples/running-job.yaml";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ is in the workspace")
        .to_path_buf()
}

/// What one run printed and returned.
struct Run {
    code: i32,
    out: String,
    err: String,
}

impl Run {
    /// The lines of stdout, split on whitespace (column widths are not the contract).
    fn rows(&self) -> Vec<Vec<&str>> {
        self.out
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect()
    }

    fn has_row(&self, words: &[&str]) -> bool {
        self.rows().iter().any(|r| r == words)
    }

    fn yaml(&self) -> Value {
        serde_norway::from_str(&self.out).expect("stdout is YAML")
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.out).expect("stdout is JSON")
    }
}

fn run_with(args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Run {
    let mut cmd = cargo_bin_cmd!("gangpack");
    cmd.current_dir(root()).env_remove("NO_COLOR").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(s) = stdin {
        cmd.write_stdin(s);
    }
    let output = cmd.output().expect("gangpack runs");
    Run {
        code: output.status.code().expect("exited"),
        out: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        err: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    }
}

fn run(args: &[&str]) -> Run {
    run_with(args, None, &[])
}

/// `-f` for each path.
fn files<'a>(paths: &[&'a str]) -> Vec<&'a str> {
    paths.iter().flat_map(|p| ["-f", p]).collect()
}

fn cmd<'a>(command: &'a str, paths: &[&'a str], rest: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![command];
    v.extend(files(paths));
    v.extend_from_slice(rest);
    v
}

fn items(list: &Value) -> &Vec<Value> {
    assert_eq!(list["apiVersion"], "v1");
    assert_eq!(list["kind"], "List");
    list["items"].as_array().expect("items")
}

fn find<'a>(list: &'a Value, kind: &str, name: &str) -> &'a Value {
    items(list)
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{kind} {name} not in the list"))
}

fn condition<'a>(object: &'a Value, kind: &str) -> &'a Value {
    object["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind))
        .unwrap_or_else(|| panic!("no {kind} condition in {object}"))
}

// ------------------------------------------------------------------------------ plan

#[test]
fn plan_places_the_rack_gang_and_the_inference_pod() {
    let r = run(&cmd("plan", &[CLUSTER, GANG, CLAIM], &[]));
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert_eq!(r.err, "");
    assert!(
        r.has_row(&["UNIT", "OUTCOME", "PODS", "DEVICES", "NODES"]),
        "{}",
        r.out
    );
    assert!(r.has_row(&["POD", "NODE", "COUNT", "DEVICES"]), "{}", r.out);
    // The inference pod has the higher priority: it goes first, and BestFit puts it on
    // the tightest node, the one with a tainted GPU.
    let first = r.rows()[1].clone();
    assert_eq!(
        first,
        ["Pod", "ml/chat-inference", "placed", "1", "1", "gpu-r2-n2"]
    );
    // rack-2 has a GPU tainted NoSchedule: the 16-GPU gang fits only in rack-1.
    assert!(
        r.has_row(&[
            "PodGroup",
            "ml/llm-pretrain",
            "placed",
            "4",
            "16",
            "gpu-r1-n1",
            "gpu-r1-n2"
        ]),
        "{}",
        r.out
    );
    // Four H100s per worker, on one NUMA node (GPUs 0-3 or 4-7).
    for w in 0..4 {
        let row = r
            .rows()
            .into_iter()
            .find(|row| row.first() == Some(&format!("ml/llm-pretrain-worker-{w}").as_str()))
            .map(|row| row.join(" "))
            .expect("a row per worker");
        assert!(
            row.ends_with("4 gpu.nvidia.com/gpu-r1-n1: gpu-0 gpu-1 gpu-2 gpu-3")
                || row.ends_with("4 gpu.nvidia.com/gpu-r1-n1: gpu-4 gpu-5 gpu-6 gpu-7")
                || row.ends_with("4 gpu.nvidia.com/gpu-r1-n2: gpu-0 gpu-1 gpu-2 gpu-3")
                || row.ends_with("4 gpu.nvidia.com/gpu-r1-n2: gpu-4 gpu-5 gpu-6 gpu-7"),
            "{row}"
        );
    }
    assert!(!r.out.contains("not placed:"));
    assert_eq!(
        r.out.lines().last(),
        Some(
            "2 units: 2 placed, 0 preempted, 0 pending, 0 invalid, 0 failed; 5 pods bound, \
             0 nominated, 17 devices allocated"
        )
    );
}

#[test]
fn plan_with_a_pending_gang_exits_3_and_says_why() {
    let r = run(&cmd("plan", &[CLUSTER, RUNNING, GANG], &[]));
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    assert!(
        r.has_row(&["PodGroup", "ml/llm-pretrain", "pending", "4", "0"]),
        "{}",
        r.out
    );
    let reason = r
        .out
        .lines()
        .skip_while(|l| *l != "not placed:")
        .nth(1)
        .expect("a reason line");
    assert!(
        reason.starts_with("  PodGroup ml/llm-pretrain: 3 of 4 pods fit: "),
        "{reason}"
    );
    assert!(
        reason.contains("4 devices on 1 node (gpu-r1-n1) are allocated to other claims"),
        "{reason}"
    );
    assert!(r.out.ends_with(
        "1 unit: 0 placed, 0 preempted, 1 pending, 0 invalid, 0 failed; 0 pods bound, 0 \
         nominated, 0 devices allocated\n"
    ));
}

#[test]
fn plan_with_nothing_pending() {
    let r = run(&cmd("plan", &[CLUSTER, RUNNING], &[]));
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert_eq!(r.out, "nothing to schedule: 2 pods bound\n");
}

#[test]
fn plan_yaml_lists_the_changed_objects() {
    let r = run(&cmd("plan", &[CLUSTER, GANG, CLAIM], &["-o", "yaml"]));
    assert_eq!(r.code, 0, "{}", r.err);
    let list = r.yaml();
    for w in 0..4 {
        let pod = find(&list, "Pod", &format!("llm-pretrain-worker-{w}"));
        let node = pod["spec"]["nodeName"].as_str().expect("bound");
        assert!(node.starts_with("gpu-r1-"), "{node}");
        assert_eq!(condition(pod, "PodScheduled")["status"], "True");
    }
    let group = find(&list, "PodGroup", "llm-pretrain");
    assert_eq!(
        condition(group, "PodGroupInitiallyScheduled")["status"],
        "True"
    );
    // firstAvailable: the H100 alternative.
    let claim = find(&list, "ResourceClaim", "chat-inference-gpu");
    let results = &claim["status"]["allocation"]["devices"]["results"];
    assert_eq!(results.as_array().map(Vec::len), Some(1));
    assert_eq!(results[0]["request"], "gpu/h100");
    assert_eq!(claim["status"]["reservedFor"][0]["name"], "chat-inference");
    // The workers' claims come from the template: generated, allocated, four devices.
    let generated: Vec<&Value> = items(&list)
        .iter()
        .filter(|o| {
            o["kind"] == "ResourceClaim"
                && o["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("llm-pretrain-worker-"))
        })
        .collect();
    assert_eq!(generated.len(), 4);
    for c in generated {
        assert_eq!(
            c["status"]["allocation"]["devices"]["results"]
                .as_array()
                .map(Vec::len),
            Some(4)
        );
    }
}

#[test]
fn plan_json_and_yaml_are_the_same_list() {
    let yaml = run(&cmd("plan", &[CLUSTER, GANG, CLAIM], &["-o", "yaml"]));
    let json = run(&cmd("plan", &[CLUSTER, GANG, CLAIM], &["-o", "json"]));
    assert_eq!(json.code, 0);
    assert_eq!(yaml.yaml(), json.json());
    assert!(json.out.ends_with("}\n"));
}

#[test]
fn plan_yaml_of_a_pending_gang_carries_the_reason() {
    let r = run(&cmd("plan", &[CLUSTER, RUNNING, GANG], &["-o", "yaml"]));
    assert_eq!(r.code, 3);
    let list = r.yaml();
    let group = find(&list, "PodGroup", "llm-pretrain");
    let c = condition(group, "PodGroupInitiallyScheduled");
    assert_eq!(c["status"], "False");
    assert_eq!(c["reason"], "Unschedulable");
    let table = run(&cmd("plan", &[CLUSTER, RUNNING, GANG], &[]));
    assert!(
        table
            .out
            .contains(c["message"].as_str().expect("a message")),
        "the table's reason is the condition's message"
    );
}

#[test]
fn plan_output_is_stable_and_plain_when_piped() {
    let a = run(&cmd("plan", &[CLUSTER, GANG, CLAIM], &[]));
    let b = run(&cmd("plan", &[CLUSTER, GANG, CLAIM], &["--color", "never"]));
    assert_eq!(a.out, b.out);
    assert!(!a.out.contains('\x1b'));
    assert!(
        a.out.lines().all(|l| l == l.trim_end()),
        "no trailing spaces"
    );
    let c = run(&cmd(
        "plan",
        &[CLUSTER, GANG, CLAIM],
        &["--color", "always"],
    ));
    assert!(c.out.contains("\x1b["));
    // --color always wins over NO_COLOR; auto on a pipe never colours.
    let d = run_with(
        &cmd("plan", &[CLUSTER, GANG, CLAIM], &["--color", "always"]),
        None,
        &[("NO_COLOR", "1")],
    );
    assert_eq!(c.out, d.out);
}

#[test]
fn plan_reads_stdin() {
    let text = std::fs::read_to_string(root().join(CLAIM)).expect("example");
    let from_stdin = run_with(&cmd("plan", &[CLUSTER, "-"], &[]), Some(&text), &[]);
    let from_file = run(&cmd("plan", &[CLUSTER, CLAIM], &[]));
    assert_eq!(from_stdin.code, 0, "{}", from_stdin.err);
    assert_eq!(from_stdin.out, from_file.out);
    // Errors name stdin.
    let bad = run_with(&cmd("plan", &["-"], &[]), Some("kind: [\n"), &[]);
    assert_eq!(bad.code, 2);
    assert!(bad.err.starts_with("error: <stdin> doc 1: "), "{}", bad.err);
}

#[test]
fn plan_accepts_comma_separated_paths() {
    let a = run(&[
        "plan",
        "-f",
        "examples/cluster,examples/claim-first-available.yaml",
    ]);
    let b = run(&cmd("plan", &[CLUSTER, CLAIM], &[]));
    assert_eq!(a.code, 0, "{}", a.err);
    assert_eq!(a.out, b.out);
}

#[test]
fn scoring_policy_changes_where_a_pod_goes() {
    let best = run(&cmd("plan", &[CLUSTER, CLAIM], &["--policy", "best-fit"]));
    let spread = run(&cmd("plan", &[CLUSTER, CLAIM], &["--policy", "spread"]));
    let stranding = run(&cmd("plan", &[CLUSTER, CLAIM], &["--policy", "stranding"]));
    let fgd = run(&cmd("plan", &[CLUSTER, CLAIM], &["--policy", "fgd"]));
    let gang_aware = run(&cmd("plan", &[CLUSTER, CLAIM], &["--policy", "gang-aware"]));
    assert_eq!(best.out, run(&cmd("plan", &[CLUSTER, CLAIM], &[])).out);
    // BestFit: the tightest node (7 usable GPUs); Spread: one with all 8 free.
    assert!(best.has_row(&["Pod", "ml/chat-inference", "placed", "1", "1", "gpu-r2-n2"]));
    assert_eq!(spread.code, 0);
    assert!(
        !spread.out.contains("gpu-r2-n2"),
        "spread avoids the tightest node:\n{}",
        spread.out
    );
    // Stranding packs too: the pod strands least where a GPU is already out of use.
    assert_eq!(stranding.code, 0, "{}", stranding.err);
    assert!(stranding.has_row(&["Pod", "ml/chat-inference", "placed", "1", "1", "gpu-r2-n2"]));
    // FGD against the input's one 1-GPU shape: no node fragments more than another,
    // the first by name wins (`cli/tests/policies.rs` gives it a mix that tells them apart).
    assert_eq!(fgd.code, 0, "{}", fgd.err);
    assert!(fgd.has_row(&["Pod", "ml/chat-inference", "placed", "1", "1", "gpu-r1-n1"]));
    // Gang-aware: stranding's choice, a node already broken into.
    assert_eq!(gang_aware.code, 0, "{}", gang_aware.err);
    assert!(gang_aware.has_row(&["Pod", "ml/chat-inference", "placed", "1", "1", "gpu-r2-n2"]));
    let bogus = run(&cmd("plan", &[CLUSTER], &["--policy", "binpack"]));
    assert_eq!(bogus.code, 2);
    assert!(
        bogus
            .err
            .contains("[possible values: best-fit, spread, stranding, fgd, gang-aware]"),
        "{}",
        bogus.err
    );
}

#[test]
fn seed_is_accepted_and_does_not_change_a_plan() {
    let a = run(&cmd("plan", &[CLUSTER, GANG, CLAIM], &["--seed", "42"]));
    let b = run(&cmd("plan", &[CLUSTER, GANG, CLAIM], &[]));
    assert_eq!(a.code, 0);
    assert_eq!(a.out, b.out);
}

#[test]
fn plan_preemption_names_the_victims() {
    let fixture = "cli/tests/fixtures/preemption.yaml";
    let r = run(&cmd("plan", &[fixture], &[]));
    assert_eq!(
        r.code, 0,
        "a preemptor counts as placed: {}{}",
        r.out, r.err
    );
    assert!(r.has_row(&["Pod", "default/server", "preempted", "1", "0", "cpu-a"]));
    assert!(r.out.contains(
        "\npreemptions:\n  Pod default/server evicts:\n    Pod default/batch (1 pod, 0 devices, \
         priority 10)\n"
    ));
    assert!(r.out.ends_with(
        "1 unit: 0 placed, 1 preempted, 0 pending, 0 invalid, 0 failed; 0 pods bound, 1 \
         nominated, 0 devices allocated\n"
    ));
    let list = run(&cmd("plan", &[fixture], &["-o", "yaml"])).yaml();
    let victim = find(&list, "Pod", "batch");
    assert_eq!(
        condition(victim, "DisruptionTarget")["reason"],
        "PreemptionByScheduler"
    );
    let server = find(&list, "Pod", "server");
    assert_eq!(server["status"]["nominatedNodeName"], "cpu-a");
    let why = run(&cmd("explain", &[fixture], &["--pod", "server"]));
    assert_eq!(
        why.out,
        "Pod default/server: preempting Pod default/batch (1 pod nominated)\n  default/server -> \
         cpu-a\n"
    );
}

#[test]
fn plan_reports_a_refused_group_and_exits_3() {
    let fixture = "cli/tests/fixtures/invalid-group.yaml";
    let r = run(&cmd("plan", &[fixture], &[]));
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    assert!(r.has_row(&["PodGroup", "default/job", "invalid", "2", "0"]));
    let why = "PodGroup default/job: invalid: Pod \"default/job-1\": spec.priority: invalid value \
               \"5\": must equal the priority of the pod's PodGroup";
    assert!(
        r.out.contains(&format!("\nnot placed:\n  {why}\n")),
        "{}",
        r.out
    );
    let explain = run(&cmd("explain", &[fixture], &["default/job"]));
    assert_eq!(explain.code, 0);
    assert_eq!(explain.out, format!("{why}\n"));
}

// ---------------------------------------------------------------------------- explain

#[test]
fn explain_a_pending_gang() {
    let r = run(&cmd(
        "explain",
        &[CLUSTER, RUNNING, GANG],
        &["ml/llm-pretrain"],
    ));
    assert_eq!(r.code, 0, "{}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    // Issue 32's first report: the first line says what helps, and never promises
    // preemption when none would help.
    assert_eq!(
        lines[0],
        "PodGroup ml/llm-pretrain: pending; waiting helps: the room it needs is held by \
         PodGroup ml/resnet-finetune; more capacity helps: at least 4 more free devices in \
         domain rack-1"
    );
    assert_eq!(
        lines[1],
        "PodGroup ml/llm-pretrain: Unschedulable (capacity other workloads hold is in the way)"
    );
    assert_eq!(
        lines[2],
        "├─ needs 4 pending pods placed together (0 running); at most 3 fit"
    );
    assert!(
        r.out
            .contains("preemption: evicting lower-priority units would not help")
    );
    assert!(!r.out.contains("preemption may help"), "{}", r.out);
    assert!(
        r.out
            .contains("4 devices on 1 node (gpu-r1-n1) are allocated to other claims"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains(
            "1 device on 1 node (gpu-r2-n2) carries \
             gpu.nvidia.com/ecc=correctable-threshold:NoSchedule, not tolerated"
        ),
        "{}",
        r.out
    );
    assert!(
        r.out.contains(
            "the largest topology.kubernetes.io/rack domain, rack-1, can host 3 of the 4 pods"
        ),
        "{}",
        r.out
    );
    let minimal = lines
        .iter()
        .find(|l| l.starts_with("└─ minimal blocking set: ["))
        .expect("the minimal blocking set");
    assert!(minimal.ends_with("(capacity others hold)"), "{minimal}");
    // Then what it would take: no lower-priority victim helps; one 4-GPU pod is
    // missing in the closest rack.
    assert!(
        r.out.contains(
            "What it would take to place PodGroup ml/llm-pretrain:\n  \
             preemption: evicting lower-priority units would not help\n  \
             domain rack-1: 3 of 4 pods fit; at least 4 more free devices needed:\n    \
             1 pod like ml/llm-pretrain-worker-0 (4 devices each)"
        ),
        "{}",
        r.out
    );
}

#[test]
fn explain_by_pod_explains_its_group() {
    let by_group = run(&cmd(
        "explain",
        &[CLUSTER, RUNNING, GANG],
        &["ml/llm-pretrain"],
    ));
    let by_pod = run(&cmd(
        "explain",
        &[CLUSTER, RUNNING, GANG],
        &["--pod", "ml/llm-pretrain-worker-2"],
    ));
    assert_eq!(by_pod.code, 0, "{}", by_pod.err);
    // The pod asked about, then its group's explanation.
    assert_eq!(
        by_pod.out,
        format!(
            "Pod ml/llm-pretrain-worker-2 is a member of PodGroup ml/llm-pretrain:\n{}",
            by_group.out
        )
    );
}

#[test]
fn explain_without_a_name_explains_everything_pending() {
    let all = run(&cmd("explain", &[CLUSTER, RUNNING, GANG], &[]));
    let one = run(&cmd(
        "explain",
        &[CLUSTER, RUNNING, GANG],
        &["ml/llm-pretrain"],
    ));
    assert_eq!(all.code, 0);
    assert_eq!(all.out, one.out);
    let none = run(&cmd("explain", &[CLUSTER, GANG, CLAIM], &[]));
    assert_eq!(none.code, 0);
    assert_eq!(
        none.out,
        "nothing pending: the cycle placed every unit (5 pods bound)\n"
    );
}

#[test]
fn explain_a_unit_that_fits() {
    let r = run(&cmd(
        "explain",
        &[CLUSTER, GANG, CLAIM],
        &["ml/llm-pretrain"],
    ));
    assert_eq!(r.code, 0);
    assert!(
        r.out
            .starts_with("PodGroup ml/llm-pretrain: Scheduled (4 pods bound)\n"),
        "{}",
        r.out
    );
    let pod = run(&cmd(
        "explain",
        &[CLUSTER, CLAIM],
        &["--pod", "ml/chat-inference"],
    ));
    assert_eq!(
        pod.out,
        "Pod ml/chat-inference: Scheduled (1 pod bound)\n  ml/chat-inference -> gpu-r2-n2: \
         gpu.nvidia.com/gpu-r2-n2: gpu-0\n"
    );
    let running = run(&cmd(
        "explain",
        &[CLUSTER, RUNNING],
        &["ml/resnet-finetune"],
    ));
    assert_eq!(
        running.out,
        "PodGroup ml/resnet-finetune: nothing pending (2 pods bound)\n"
    );
}

#[test]
fn explain_an_unknown_name_is_an_input_error() {
    // A bare name is in namespace `default`; the one in `ml` is suggested.
    let r = run(&cmd("explain", &[CLUSTER, GANG], &["llm-pretrain"]));
    assert_eq!(r.code, 2);
    assert_eq!(
        r.err,
        "error: PodGroup default/llm-pretrain not found in the input; did you mean \
         ml/llm-pretrain?\n"
    );
    let p = run(&cmd("explain", &[CLUSTER, GANG], &["--pod", "ml/nope"]));
    assert_eq!(p.code, 2);
    assert_eq!(p.err, "error: Pod ml/nope not found in the input\n");
    let both = run(&cmd(
        "explain",
        &[CLUSTER, GANG],
        &["ml/llm-pretrain", "--pod", "ml/x"],
    ));
    assert_eq!(both.code, 2, "usage error");
}

// ------------------------------------------------------------------------------ taint

#[test]
fn taint_a_device_under_a_running_gang() {
    let r = run(&cmd(
        "taint",
        &[CLUSTER, RUNNING],
        &["--device", "gpu.nvidia.com/gpu-r1-n1/gpu-2"],
    ));
    assert_eq!(r.code, 0, "{}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(
        lines[0],
        "taint: device gpu.nvidia.com/gpu-r1-n1/gpu-2: gangpack.dev/what-if:NoExecute at \
         2026-11-03T16:00:04Z"
    );
    assert!(r.has_row(&["POD", "AT", "WHY"]));
    // worker-1 holds gpu-2; worker-0 goes with it (disruptionMode All).
    let evicted: Vec<&str> = r
        .rows()
        .iter()
        .filter(|row| row.first().is_some_and(|p| p.starts_with("ml/resnet")))
        .map(|row| row[0])
        .collect();
    assert_eq!(
        evicted,
        ["ml/resnet-finetune-worker-0", "ml/resnet-finetune-worker-1"]
    );
    assert!(r.out.contains(
        "\nbroken gangs:\n  PodGroup ml/resnet-finetune (disruptionMode All): 2 of 2 bound pods \
         evicted, 0 left, minCount 2\n"
    ));
    // The gang can start again (BestFit: back on gpu-r1-n1, whose other GPUs are free).
    assert!(r.out.contains("\nwhere they could go:\n"));
    assert!(
        r.has_row(&[
            "PodGroup",
            "ml/resnet-finetune",
            "placed",
            "2",
            "4",
            "gpu-r1-n1"
        ]),
        "{}",
        r.out
    );
    assert!(
        r.out.ends_with("\n2 pods evicted, 1 gang broken\n"),
        "{}",
        r.out
    );
}

#[test]
fn taint_a_free_device_evicts_nothing() {
    let r = run(&cmd(
        "taint",
        &[CLUSTER, RUNNING],
        &[
            "--device",
            "gpu.nvidia.com/gpu-r2-n1/gpu-0",
            "--effect",
            "NoSchedule",
        ],
    ));
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.out.contains("gangpack.dev/what-if:NoSchedule"));
    assert!(r.out.contains("\nno pod is evicted\n"));
    assert!(r.out.ends_with("\n0 pods evicted, 0 gangs broken\n"));
}

#[test]
fn taint_key_value_and_now() {
    let r = run(&cmd(
        "taint",
        &[CLUSTER, RUNNING],
        &[
            "--device",
            "gpu.nvidia.com/gpu-r1-n1/gpu-0",
            "--key",
            "example.com/maintenance",
            "--value",
            "planned",
            "--now",
            "2026-12-01T09:30:00+01:00",
        ],
    ));
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out.starts_with(
            "taint: device gpu.nvidia.com/gpu-r1-n1/gpu-0: \
             example.com/maintenance=planned:NoExecute at 2026-12-01T08:30:00Z\n"
        ),
        "{}",
        r.out
    );
    let bad = run(&cmd(
        "taint",
        &[CLUSTER],
        &["--node", "gpu-r1-n1", "--now", "yesterday"],
    ));
    assert_eq!(bad.code, 2);
    assert!(bad.err.contains("not an RFC 3339 time"), "{}", bad.err);
}

#[test]
fn taint_a_node() {
    let soft = run(&cmd(
        "taint",
        &[CLUSTER, RUNNING],
        &["--node", "gpu-r1-n1", "--effect", "NoSchedule"],
    ));
    assert_eq!(soft.code, 0, "{}", soft.err);
    assert!(soft.out.contains("\nno pod is evicted\n"));
    let hard = run(&cmd("taint", &[CLUSTER, RUNNING], &["--node", "gpu-r1-n1"]));
    assert_eq!(hard.code, 0, "{}", hard.err);
    assert!(hard.out.starts_with(
        "taint: node gpu-r1-n1: gangpack.dev/what-if:NoExecute at 2026-11-03T16:00:04Z\n"
    ));
    assert!(
        hard.out
            .contains("node gpu-r1-n1 tainted gangpack.dev/what-if:NoExecute")
    );
    assert!(hard.out.ends_with("\n2 pods evicted, 1 gang broken\n"));
    let list = run(&cmd(
        "taint",
        &[CLUSTER, RUNNING],
        &["--node", "gpu-r1-n1", "-o", "json"],
    ))
    .json();
    for w in 0..2 {
        let pod = find(&list, "Pod", &format!("resnet-finetune-worker-{w}"));
        let c = condition(pod, "DisruptionTarget");
        assert_eq!(c["status"], "True");
        assert_eq!(c["reason"], "DeletionByTaintManager");
    }
}

#[test]
fn taint_rule_evicts_and_writes_the_rule_status() {
    let r = run(&cmd(
        "taint",
        &[CLUSTER, RUNNING],
        &["--rule", "examples/taint-rule.yaml"],
    ));
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.out.starts_with(
        "taint: DeviceTaintRule gpu-r1-n1-gpu-2-ecc: gpu.nvidia.com/ecc=uncorrectable:NoExecute"
    ));
    assert!(r.out.ends_with("\n2 pods evicted, 1 gang broken\n"));
    let list = run(&cmd(
        "taint",
        &[CLUSTER, RUNNING],
        &["--rule", "examples/taint-rule.yaml", "-o", "yaml"],
    ))
    .yaml();
    let rule = find(&list, "DeviceTaintRule", "gpu-r1-n1-gpu-2-ecc");
    let c = condition(rule, "EvictionInProgress");
    assert_eq!(c["status"], "True");
    assert_eq!(c["reason"], "PodsPendingEviction");
    let pod = find(&list, "Pod", "resnet-finetune-worker-1");
    assert_eq!(
        condition(pod, "DisruptionTarget")["reason"],
        "DeletionByDeviceTaintManager"
    );
}

#[test]
fn taint_rule_dry_run() {
    let r = run(&cmd(
        "taint",
        &[CLUSTER, RUNNING],
        &["--rule", "examples/taint-rule-dry-run.yaml"],
    ));
    assert_eq!(r.code, 0, "{}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert!(lines[0].starts_with(
        "taint (dry run): DeviceTaintRule gpu-r1-n1-gpu-2-ecc: gpu.nvidia.com/ecc=uncorrectable:None"
    ));
    assert_eq!(
        lines[1],
        "  1 published device selected. 1 allocated device selected. 1 pod would be evicted in 1 \
         namespace if the effect was NoExecute. This information will not be updated again. \
         Recreate the DeviceTaintRule to trigger an update."
    );
    assert!(r.out.contains("\nevictions (would):\n"));
    assert!(
        r.out
            .ends_with("\n2 pods would be evicted, 1 gang broken\n")
    );
    let list = run(&cmd(
        "taint",
        &[CLUSTER, RUNNING],
        &["--rule", "examples/taint-rule-dry-run.yaml", "-o", "json"],
    ))
    .json();
    // Nothing is evicted: only the rule's status changes.
    assert_eq!(items(&list).len(), 1);
    let c = condition(&items(&list)[0], "EvictionInProgress");
    assert_eq!(c["status"], "False");
    assert_eq!(c["reason"], "NoEffect");
}

#[test]
fn taint_after_plan_evicts_what_the_plan_placed() {
    let r = run(&cmd(
        "taint",
        &[CLUSTER, GANG],
        &["--after-plan", "--device", "gpu.nvidia.com/gpu-r1-n1/gpu-0"],
    ));
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out
            .starts_with("after plan: 1 of 1 unit placed, 4 pods bound\n\ntaint: "),
        "{}",
        r.out
    );
    assert!(
        r.out.ends_with("\n4 pods evicted, 1 gang broken\n"),
        "{}",
        r.out
    );
    // rack-1 now has a tainted GPU, rack-2 its ECC one: the gang cannot start again.
    assert!(
        r.has_row(&["PodGroup", "ml/llm-pretrain", "pending", "4", "0"]),
        "{}",
        r.out
    );
    assert!(
        r.out.contains(
            "    PodGroup ml/llm-pretrain: 3 of 4 pods fit: 1 device on 1 node (gpu-r1-n1) \
             carries gangpack.dev/what-if:NoExecute, not tolerated"
        ),
        "{}",
        r.out
    );
    // The evicted pods are written as the plan left them: bound.
    let list = run(&cmd(
        "taint",
        &[CLUSTER, GANG],
        &[
            "--after-plan",
            "--device",
            "gpu.nvidia.com/gpu-r1-n1/gpu-0",
            "-o",
            "yaml",
        ],
    ))
    .yaml();
    for w in 0..4 {
        let pod = find(&list, "Pod", &format!("llm-pretrain-worker-{w}"));
        assert!(pod["spec"]["nodeName"].is_string(), "{pod}");
        assert_eq!(condition(pod, "DisruptionTarget")["status"], "True");
    }
}

#[test]
fn taint_usage_errors() {
    let none = run(&cmd("taint", &[CLUSTER], &[]));
    assert_eq!(none.code, 2, "a target is required");
    let two = run(&cmd(
        "taint",
        &[CLUSTER],
        &["--node", "gpu-r1-n1", "--device", "a/b/c"],
    ));
    assert_eq!(two.code, 2);
    let shape = run(&cmd("taint", &[CLUSTER], &["--device", "gpu-0"]));
    assert_eq!(shape.code, 2);
    assert_eq!(
        shape.err,
        "error: --device \"gpu-0\": expected DRIVER/POOL/DEVICE\n"
    );
    let missing = run(&cmd(
        "taint",
        &[CLUSTER],
        &["--device", "gpu.nvidia.com/gpu-r1-n1/gpu-9"],
    ));
    assert_eq!(missing.code, 2);
    assert!(
        missing.err.starts_with("error: cannot apply the taint: ") && missing.err.contains("gpu-9"),
        "{}",
        missing.err
    );
    let no_node = run(&cmd("taint", &[CLUSTER], &["--node", "gpu-r9-n9"]));
    assert_eq!(no_node.code, 2);
    assert!(no_node.err.contains("gpu-r9-n9"), "{}", no_node.err);
    let none_on_node = run(&cmd(
        "taint",
        &[CLUSTER],
        &["--node", "gpu-r1-n1", "--effect", "None"],
    ));
    assert_eq!(none_on_node.code, 2);
    let prefer_on_device = run(&cmd(
        "taint",
        &[CLUSTER],
        &[
            "--device",
            "gpu.nvidia.com/gpu-r1-n1/gpu-0",
            "--effect",
            "PreferNoSchedule",
        ],
    ));
    assert_eq!(prefer_on_device.code, 2);
    let bad_key = run(&cmd(
        "taint",
        &[CLUSTER],
        &["--node", "gpu-r1-n1", "--key", "not a key"],
    ));
    assert_eq!(bad_key.code, 2);
    let rule_and_effect = run(&cmd(
        "taint",
        &[CLUSTER],
        &[
            "--rule",
            "examples/taint-rule.yaml",
            "--effect",
            "NoSchedule",
        ],
    ));
    assert_eq!(rule_and_effect.code, 2);
    let not_a_rule = run(&cmd("taint", &[CLUSTER], &["--rule", CLAIM]));
    assert_eq!(not_a_rule.code, 2);
    assert_eq!(
        not_a_rule.err,
        "error: --rule examples/claim-first-available.yaml: expected exactly one \
         DeviceTaintRule, found 2 objects (0 DeviceTaintRules)\n"
    );
}

// ------------------------------------------------------------------------------- demo

#[test]
fn demo_runs_the_three_acts() {
    let r = run(&["demo"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.err, "");
    for heading in [
        "==> gangpack plan: one scheduling cycle",
        "==> gangpack explain ml-training/gpt-moe-pretrain: why it stays pending",
        "==> gangpack taint --device gpu.nvidia.com/gpu-r2-n",
    ] {
        assert!(r.out.contains(heading), "{heading}\n{}", r.out);
    }
    assert!(r.has_row(&["UNIT", "OUTCOME", "PODS", "DEVICES", "NODES"]));
    assert!(
        r.has_row(&[
            "PodGroup",
            "ml-training/gpt-moe-pretrain",
            "pending",
            "4",
            "0"
        ]),
        "{}",
        r.out
    );
    // The high-priority serving gang finds no rack with two free healthy nodes: it
    // preempts. At equal priority, workload-aware preemption (KEP-5710) keeps a
    // PodGroup before individual pods, so four lone batch pods in rack 3 go rather
    // than the 2-pod ViT sweep gang (fewer pods, but a PodGroup) in rack 4.
    let serve = r
        .rows()
        .into_iter()
        .find(|row| row.get(1) == Some(&"inference/llama-405b-serve"))
        .map(|row| row.join(" "))
        .expect("a row for the serving gang");
    assert!(
        serve.starts_with("PodGroup inference/llama-405b-serve preempted 2 16 gpu-r3-"),
        "{serve}"
    );
    let victims: Vec<&str> = r
        .out
        .lines()
        .skip_while(|l| *l != "preemptions:")
        .skip(2)
        .take_while(|l| l.starts_with("    "))
        .collect();
    assert_eq!(
        victims,
        (0..4)
            .map(|i| format!("    Pod inference/embed-batch-{i} (1 pod, 4 devices, priority 1000)"))
            .collect::<Vec<_>>(),
        "{}",
        r.out
    );
    assert!(
        r.out
            .contains("\nPodGroup ml-training/gpt-moe-pretrain: Unschedulable")
    );
    assert!(r.out.contains("minimal blocking set: "));
    assert!(r.out.contains(
        "PodGroup ml-training/llama-70b-pretrain (disruptionMode All): 8 of 8 bound pods \
         evicted, 0 left, minCount 8"
    ));
    assert!(
        r.out.ends_with("\n8 pods evicted, 1 gang broken\n"),
        "{}",
        r.out
    );
    // Deterministic, and the seed only picks the failing GPU.
    assert_eq!(run(&["demo"]).out, r.out);
    let other = run(&["demo", "--seed", "5"]);
    assert_eq!(other.code, 0);
    let plan_part = |s: &str| s.split("==> gangpack taint").next().map(str::to_owned);
    assert_eq!(plan_part(&other.out), plan_part(&r.out));
}

#[test]
fn demo_manifests_are_real_input() {
    let m = run(&["demo", "--manifests"]);
    assert_eq!(m.code, 0);
    assert!(m.out.starts_with("# gangpack demo cluster"));
    let docs = serde_norway::Deserializer::from_str(&m.out).count();
    assert!(docs > 100, "{docs} documents");
    // Planning them as a file gives the demo's own plan table.
    let plan = run_with(&["plan", "-f", "-"], Some(&m.out), &[]);
    assert_eq!(plan.code, 3, "{}", plan.err);
    let demo = run(&["demo"]);
    let section = demo
        .out
        .split("==> ")
        .nth(1)
        .and_then(|s| s.split_once("\n\n"))
        .map(|(_, body)| body.trim_end().to_owned())
        .expect("the plan section");
    assert_eq!(section, plan.out.trim_end());
}

/// The demo output the guide shows (up to the taint section) is what `gangpack demo`
/// prints.
#[test]
fn the_guide_shows_real_demo_output() {
    let readme = std::fs::read_to_string(root().join("docs/GUIDE.md")).expect("guide");
    let demo = run(&["demo"]);
    assert_eq!(demo.code, 0, "{}", demo.err);
    let shown = demo
        .out
        .split("\n==> gangpack taint")
        .next()
        .expect("the demo output")
        .trim_end();
    assert!(
        readme.contains(&format!("```text\n{shown}\n```")),
        "docs/GUIDE.md does not show the demo's output:\n{shown}"
    );
}

/// The explanation on the README's first screen is a piece of what `gangpack demo`
/// prints, line for line.
#[test]
fn the_readme_explanation_sample_is_real_demo_output() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let marker = "<!-- cli/tests/cli.rs checks this is what `gangpack demo` prints. -->\n```text\n";
    let at = readme
        .find(marker)
        .expect("README.md has the marked sample")
        + marker.len();
    let sample = &readme[at..at + readme[at..].find("\n```").expect("the fence closes")];
    assert!(
        sample.lines().count() >= 5,
        "a sample of a few lines:\n{sample}"
    );
    let demo = run(&["demo"]);
    assert_eq!(demo.code, 0, "{}", demo.err);
    assert!(
        demo.out.contains(&format!("\n{sample}\n")),
        "README.md's sample is not what gangpack demo prints:\n{sample}"
    );
}

/// The samples in `cli/README.md` are what the commands print.
#[test]
fn readme_samples_are_real_output() {
    let readme = std::fs::read_to_string(root().join("cli/README.md")).expect("README");
    for args in [
        cmd("plan", &[CLUSTER, GANG, CLAIM], &[]),
        cmd(
            "plan",
            &[
                CLUSTER,
                RUNNING,
                "cli/tests/fixtures/evictions/xid-rule.yaml",
            ],
            &[],
        ),
        cmd("explain", &[CLUSTER, RUNNING, GANG], &["ml/llm-pretrain"]),
        cmd(
            "taint",
            &[CLUSTER, RUNNING],
            &["--device", "gpu.nvidia.com/gpu-r1-n1/gpu-2"],
        ),
    ] {
        let r = run(&args);
        assert!(
            readme.contains(&format!("```text\n{}```", r.out)),
            "cli/README.md does not show the output of {args:?}:\n{}",
            r.out
        );
    }
}

// --------------------------------------------------------------------- bad input

/// Each file alone: exit 2 and exactly these stderr lines.
#[test]
fn bad_inputs_are_reported_with_their_location() {
    let cases: &[(&str, &[&str])] = &[
        (
            "bad-cel.yaml",
            &[
                "error: cli/tests/bad/bad-cel.yaml doc 1: DeviceClass \"broken.nvidia.com\": \
               spec.selectors[0].cel.expression: invalid CEL expression: at 16: syntax error: \
               found end of input, expected an expression",
            ],
        ),
        (
            "bad-quantity.yaml",
            &[
                "error: cli/tests/bad/bad-quantity.yaml doc 1: ResourceSlice \
               \"gpu-a-gpu.nvidia.com\": spec.devices[1].capacity[\"memory\"].value: invalid \
               quantity \"80 GiB\": unexpected character ' ' at byte 2",
            ],
        ),
        (
            "dangling-node.yaml",
            &[
                "error: cli/tests/bad/dangling-node.yaml doc 1: Pod \"ml/trainer\": \
               spec.nodeName: not found: \"gpu-z\"",
            ],
        ),
        (
            "duplicate.yaml",
            &[
                "error: cli/tests/bad/duplicate.yaml doc 2: Node \"gpu-a\": metadata.name: \
               duplicate object: also defined at cli/tests/bad/duplicate.yaml doc 1",
            ],
        ),
        (
            "missing-field.yaml",
            &[
                "error: cli/tests/bad/missing-field.yaml doc 1: ResourceSlice \
                 \"gpu-a-gpu.nvidia.com\": spec.pool.name: required value",
                "error: cli/tests/bad/missing-field.yaml doc 1: ResourceSlice \
                 \"gpu-a-gpu.nvidia.com\": spec.pool.resourceSliceCount: invalid value \"0\": \
                 must be greater than zero",
            ],
        ),
        (
            "too-many-devices.yaml",
            &[
                "error: cli/tests/bad/too-many-devices.yaml doc 1: ResourceSlice \
               \"gpu-a-gpu.nvidia.com\": spec.devices: too many: 129, must have at most 128 \
               items",
            ],
        ),
    ];
    for (file, lines) in cases {
        let path = format!("cli/tests/bad/{file}");
        for command in [&["plan"][..], &["explain"], &["taint", "--node", "gpu-a"]] {
            let mut args: Vec<&str> = command.to_vec();
            args.extend(["-f", &path]);
            let r = run(&args);
            assert_eq!(r.code, 2, "{file} {command:?}: {}{}", r.out, r.err);
            assert_eq!(r.out, "", "{file}: nothing on stdout");
            let got: Vec<&str> = r.err.lines().collect();
            assert_eq!(got, *lines, "{file} {command:?}");
        }
    }
}

/// The parser's own wording is not the contract: the location and the kind of problem are.
#[test]
fn yaml_syntax_errors_name_the_document_and_position() {
    let r = run(&cmd("plan", &["cli/tests/bad/syntax.yaml"], &[]));
    assert_eq!(r.code, 2);
    assert_eq!(r.out, "");
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    assert!(
        r.err
            .starts_with("error: cli/tests/bad/syntax.yaml doc 2: YAML syntax error")
            && r.err.contains("line 10 column 1"),
        "{}",
        r.err
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let r = run(&cmd(
        "plan",
        &[
            "cli/tests/bad/bad-cel.yaml",
            "cli/tests/bad/bad-quantity.yaml",
            "cli/tests/bad/dangling-node.yaml",
        ],
        &[],
    ));
    assert_eq!(r.code, 2);
    let files: Vec<&str> = r
        .err
        .lines()
        .map(|l| l.split(" doc ").next().unwrap_or_default())
        .collect();
    assert_eq!(
        files,
        [
            "error: cli/tests/bad/bad-cel.yaml",
            "error: cli/tests/bad/bad-quantity.yaml",
            "error: cli/tests/bad/dangling-node.yaml",
        ]
    );
}

#[test]
fn unknown_kinds_and_versions_are_skipped_with_a_warning() {
    let r = run(&cmd("plan", &["cli/tests/bad/wrong-kind.yaml"], &[]));
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "nothing to schedule: 0 pods bound\n");
    assert_eq!(
        r.err.lines().collect::<Vec<_>>(),
        [
            "warning: cli/tests/bad/wrong-kind.yaml doc 1: ConfigMap \"ml/settings\": skipped: \
             ConfigMap (v1) is not a kind gangpack reads",
            "warning: cli/tests/bad/wrong-kind.yaml doc 2: PodGroup \"ml/trainer\": skipped: \
             PodGroup (scheduling.x-k8s.io/v1alpha1) is a custom resource, not the PodGroup of \
             scheduling.k8s.io that gangpack reads",
        ]
    );
}

#[test]
fn skip_invalid_goes_on_without_the_invalid_objects() {
    let r = run(&cmd(
        "plan",
        &[CLUSTER, CLAIM, "cli/tests/bad/bad-cel.yaml"],
        &["--skip-invalid"],
    ));
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        "warning: skipped: cli/tests/bad/bad-cel.yaml doc 1: DeviceClass \"broken.nvidia.com\": \
         spec.selectors[0].cel.expression: invalid CEL expression: at 16: syntax error: found \
         end of input, expected an expression\n"
    );
    assert_eq!(r.out, run(&cmd("plan", &[CLUSTER, CLAIM], &[])).out);
    // A file that does not parse still fails the run.
    let s = run(&cmd(
        "plan",
        &[CLUSTER, "cli/tests/bad/syntax.yaml"],
        &["--skip-invalid"],
    ));
    assert_eq!(s.code, 2);
}

#[test]
fn unreadable_input_exits_1() {
    cargo_bin_cmd!("gangpack")
        .current_dir(root())
        .args(["plan", "-f", "examples/no-such-file.yaml"])
        .assert()
        .code(1)
        .stdout("")
        .stderr("error: examples/no-such-file.yaml: no such file or directory\n");
}

#[test]
fn usage_errors_exit_2_and_help_documents_exit_codes() {
    assert_eq!(run(&["plan"]).code, 2, "-f is required");
    assert_eq!(run(&["frobnicate"]).code, 2);
    assert_eq!(run(&cmd("plan", &[CLUSTER], &["-o", "xml"])).code, 2);
    let help = run(&["--help"]);
    assert_eq!(help.code, 0);
    for needle in [
        "Exit status:",
        "0  success",
        "1  failure",
        "2  invalid input or usage",
        "3  plan: at least one pod or PodGroup stays pending",
    ] {
        assert!(help.out.contains(needle), "{needle}\n{}", help.out);
    }
    let plan_help = run(&["plan", "--help"]);
    assert!(plan_help.out.contains("Exit status:"));
}

#[test]
fn simulate_replays_a_trace_excerpt_and_writes_the_csv_and_the_plot() {
    let data = format!("{}/../sim/tests/data", env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("gangpack-simulate-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("temp dir");
    let csv = out.join("out.csv");
    let svg = out.join("out.svg");
    let trace = format!("{data}/openb_pod_list_small.csv");
    let (csv_s, svg_s) = (csv.display().to_string(), svg.display().to_string());
    let r = run(&[
        "simulate",
        "--trace",
        &trace,
        "--seeds",
        "42..43",
        "--csv",
        &csv_s,
        "--svg",
        &svg_s,
        "--threads",
        "2",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out.starts_with("unallocated GPU % at 100 % arrived"),
        "{}",
        r.out
    );
    assert!(
        ["Random", "DotProd", "BestFit", "Spread", "Stranding", "FGD"]
            .iter()
            .all(|p| r.out.contains(p))
    );
    assert!(
        r.out
            .contains("12 replays (1 workloads x 6 policies x 2 seeds)"),
        "{}",
        r.out
    );
    let text = std::fs::read_to_string(&csv).expect("the CSV is written");
    assert_eq!(
        text.lines().next(),
        Some("workload,policy,seed,arrived_pct,allocated_pct")
    );
    assert_eq!(text.lines().count(), 1 + 6 * 2 * 131);
    // One policy with the global --policy.
    let r = run(&[
        "simulate", "--trace", &trace, "--seeds", "42", "--policy", "spread",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out
            .contains("1 replays (1 workloads x 1 policies x 1 seeds)"),
        "{}",
        r.out
    );
    assert!(
        std::fs::read_to_string(&svg)
            .expect("the plot is written")
            .starts_with("<svg")
    );
    // Bad input: a clear error and the invalid-input status.
    let r = run(&["simulate", "--trace", &trace, "--policy", "Nope"]);
    assert_eq!(r.code, 2);
    let r = run(&[
        "simulate",
        "--trace",
        &trace,
        "--seeds",
        "42",
        "--policies",
        "random,dot-prod",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out
            .contains("2 replays (1 workloads x 2 policies x 1 seeds)"),
        "{}",
        r.out
    );
    let r = run(&["simulate", "--trace", &trace, "--policies", "Nope"]);
    assert_eq!(r.code, 2);
    assert!(
        r.err.contains("--policies: \"Nope\" is not a policy"),
        "{}",
        r.err
    );
    let r = run(&["simulate", "--trace", &trace, "--seeds", "9..1"]);
    assert_eq!(r.code, 2);
    let r = run(&["simulate", "--trace", "/nonexistent/openb_pod_list_x.csv"]);
    assert_eq!(r.code, 1);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn simulate_gangs_compares_podgroups_with_pod_by_pod() {
    let data = format!("{}/../sim/tests/data", env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("gangpack-gangs-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("temp dir");
    let (csv, svg) = (out.join("gangs.csv"), out.join("gangs.svg"));
    let trace = format!("{data}/openb_pod_list_small.csv");
    let r = run(&[
        "simulate",
        "--gangs",
        "--trace",
        &trace,
        "--seeds",
        "42..43",
        "--hours",
        "24",
        "--csv",
        &csv.display().to_string(),
        "--svg",
        &svg.display().to_string(),
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    for row in [
        "gangpack (PodGroup) ",
        "gangpack (PodGroup) + reservation after 1 h",
        "pod by pod",
        "6 replays (3 schedulers x 2 seeds)",
    ] {
        assert!(r.out.contains(row), "{row}\n{}", r.out);
    }
    // The PodGroup rows hold nothing for partly placed gangs: the column reads 0.0.
    let podgroup = r
        .out
        .lines()
        .find(|l| l.starts_with("gangpack (PodGroup) ") && !l.contains("reservation"))
        .expect("the PodGroup row");
    let cells: Vec<&str> = podgroup.split_whitespace().collect();
    assert_eq!(cells[cells.len() - 3], "0.0", "{podgroup}");
    let text = std::fs::read_to_string(&csv).expect("the CSV is written");
    assert_eq!(
        text.lines().next(),
        Some("scheduler,seed,hour,allocated_pct,held_idle_pct,fragmented_pct")
    );
    assert_eq!(text.lines().count(), 1 + 3 * 2 * 24);
    assert!(
        std::fs::read_to_string(&svg)
            .expect("the plot is written")
            .starts_with("<svg")
    );
    for bad in [
        vec!["simulate", "--gangs", "--trace", &trace, "--hours", "0"],
        vec!["simulate", "--gangs", "--trace", &trace, "--load", "-1"],
        vec![
            "simulate",
            "--gangs",
            "--trace",
            &trace,
            "--preemptors",
            "1.5",
        ],
        vec!["simulate", "--trace", &trace, "--hours", "5"],
    ] {
        let r = run(&bad);
        assert_eq!(r.code, 2, "{bad:?}: {}", r.err);
    }
    // One PodGroup row per policy, without preemptors.
    let r = run(&[
        "simulate",
        "--gangs",
        "--trace",
        &trace,
        "--seeds",
        "42",
        "--hours",
        "12",
        "--preemptors",
        "0",
        "--policies",
        "best-fit,gang-aware",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    for row in [
        "gangpack (PodGroup) ",
        "gangpack (PodGroup), GangAware ",
        "2 replays (2 schedulers x 1 seeds)",
    ] {
        assert!(r.out.contains(row), "{row}\n{}", r.out);
    }
    assert!(!r.out.contains("pod by pod"), "{}", r.out);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn capacity_reports_what_each_rack_can_still_host() {
    let cluster = format!("{}/../examples/cluster", env!("CARGO_MANIFEST_DIR"));
    // No PodGroup in the input: the whole cluster. 32 GPUs, one tainted NoSchedule.
    let r = run(&["capacity", "-f", &cluster]);
    assert_eq!(r.code, 0, "{}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        [
            "CLUSTER", "NODES", "FREE", "1x1", "1x2", "1x4", "1x8", "8x8"
        ]
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["total", "4", "31", "31", "15", "7", "3", "0"]
    );
    assert!(
        r.out
            .contains("fragmentation: 7 of 31 free devices cannot be part of a whole 1x8 pod")
    );
    // By rack, with a 2-pod gang shape: the tainted GPU is in rack-2.
    let r = run(&[
        "capacity",
        "-f",
        &cluster,
        "--key",
        "topology.kubernetes.io/rack",
        "--gang-pods",
        "2",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    let rows: Vec<Vec<&str>> = r
        .out
        .lines()
        .take(4)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        [
            "DOMAIN",
            "NODES",
            "FREE",
            "1x1",
            "1x2",
            "1x4",
            "1x8",
            "2x8@topology.kubernetes.io/rack"
        ]
    );
    assert_eq!(rows[1], ["rack-1", "2", "16", "16", "8", "4", "2", "1"]);
    assert_eq!(rows[2], ["rack-2", "2", "15", "15", "7", "3", "1", "0"]);
    assert_eq!(rows[3], ["total", "4", "31", "31", "15", "7", "3", "1"]);
    // JSON: the report as data, with the column labels.
    let r = run(&[
        "capacity",
        "-f",
        &cluster,
        "--key",
        "topology.kubernetes.io/rack",
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).expect("JSON");
    assert_eq!(v["key"], "topology.kubernetes.io/rack");
    assert_eq!(v["labels"][3], "1x8");
    assert_eq!(v["domains"].as_array().expect("domains").len(), 2);
    assert_eq!(v["totals"][0]["free"], 31);
    // A label no node has: every node unlabelled, single pods only.
    let r = run(&["capacity", "-f", &cluster, "--key", "example.com/none"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out
            .lines()
            .nth(1)
            .expect("a row")
            .starts_with("(unlabelled)"),
        "{}",
        r.out
    );
    // Bad input fails as every command does.
    let r = run(&["capacity", "-f", "/nonexistent.yaml"]);
    assert_eq!(r.code, 1);
    let r = run(&["capacity", "-f", &cluster, "--key", "k", "--whole"]);
    assert_eq!(r.code, 2);
}

/// `--timings`: one stderr line per phase of `plan` (parse, build with its conversion
/// split out, plan, write) and of `explain`, in order, each with a wall time and the
/// peak RSS; stdout and the exit status are those of the run without it.
#[test]
fn timings_name_every_phase_on_stderr_and_leave_stdout_alone() {
    let args = [
        "plan",
        "-f",
        "examples/cluster",
        "-f",
        "examples/gang-rack.yaml",
        "-o",
        "yaml",
    ];
    let plain = run(&args);
    let mut timed_args = args.to_vec();
    timed_args.push("--timings");
    let timed = run(&timed_args);
    assert_eq!((timed.code, &timed.out), (plain.code, &plain.out));
    let phases: Vec<&str> = timed
        .err
        .lines()
        .filter_map(|l| l.strip_prefix("timings: "))
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    assert_eq!(phases, ["parse", "build", "plan", "write"], "{}", timed.err);
    let build = timed
        .err
        .lines()
        .find(|l| l.starts_with("timings: build"))
        .unwrap();
    assert!(
        build.contains("conversion to the API types") && build.contains("peak RSS"),
        "{build}"
    );
    assert!(!plain.err.contains("timings:"), "{}", plain.err);
    let explained = run(&[
        "explain",
        "-f",
        "examples/cluster",
        "-f",
        "examples/gang-rack.yaml",
        "--timings",
    ]);
    let phases: Vec<&str> = explained
        .err
        .lines()
        .filter_map(|l| l.strip_prefix("timings: "))
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    assert_eq!(
        phases,
        ["parse", "build", "plan", "explain"],
        "{}",
        explained.err
    );
}
