//! Issue 37, "first contact": what a new user meets first, each asserted on the exact
//! text and exit status the command gives.
//!
//! - empty input (an empty file, only comments, a List with no items) is an error
//!   naming each input;
//! - a file that cannot be opened says why in words, not `(os error 2)`.

mod common;

use std::path::PathBuf;

use common::{Run, run, run_with_stdin};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "gangpack-first-contact-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Writes `text` to `dir/name`, returning the path as a string.
fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("scratch file");
    path.display().to_string()
}

/// The one `error:` line and exit 2, nothing on stdout.
fn fails_with(r: &Run, line: &str) {
    assert_eq!(r.code, 2, "{}", r.err);
    assert_eq!(r.out, "");
    assert_eq!(r.err, format!("error: {line}\n"));
}

// ---------------------------------------------------------------------- empty input

#[test]
fn empty_input_is_an_error_naming_each_input() {
    let dir = scratch("empty");
    let empty = write(&dir, "cluster.yaml", "");
    let comments = write(
        &dir,
        "comments.yaml",
        "# kubectl get nodes -o yaml\n---\n---\n",
    );
    let list = write(
        &dir,
        "list.yaml",
        "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n",
    );
    let pod_list = write(
        &dir,
        "pods.json",
        r#"{"apiVersion": "v1", "kind": "PodList", "items": []}"#,
    );
    let hint = "is the kubectl context right?";
    for command in ["plan", "check", "explain", "capacity"] {
        fails_with(
            &run(&[command, "-f", &empty]),
            &format!("no Kubernetes objects in {empty} (an empty file); {hint}"),
        );
        fails_with(
            &run(&[command, "-f", &comments]),
            &format!("no Kubernetes objects in {comments} (only comments and ---); {hint}"),
        );
    }
    fails_with(
        &run(&["plan", "-f", &list, "-f", &pod_list]),
        &format!(
            "no Kubernetes objects in {list} (a List with no items), {pod_list} (a PodList with \
             no items); {hint}"
        ),
    );
    fails_with(
        &run(&["taint", "-f", &list, "--node", "n1"]),
        &format!("no Kubernetes objects in {list} (a List with no items); {hint}"),
    );
    fails_with(
        &run(&["diff", "-f", &empty, "--ours", &list, "--theirs", &list]),
        &format!("no Kubernetes objects in {empty} (an empty file); {hint}"),
    );
    fails_with(
        &run_with_stdin(&["plan", "-f", "-", "-o", "json"], Some("\n")),
        &format!("no Kubernetes objects in <stdin> (an empty file); {hint}"),
    );
    let sub = dir.join("no-manifests");
    std::fs::create_dir_all(&sub).expect("directory");
    let sub = sub.display().to_string();
    fails_with(
        &run(&["plan", "-f", &sub]),
        &format!("no Kubernetes objects in {sub} (no *.yaml, *.yml or *.json files); {hint}"),
    );
    // Only kinds gangpack does not read: said, with the warnings that skipped them.
    let deployments = write(
        &dir,
        "deployments.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
    );
    let r = run(&["plan", "-f", &deployments]);
    assert_eq!(r.code, 2);
    assert!(
        r.err.ends_with(&format!(
            "error: no Kubernetes objects in {deployments} (1 object, of a kind gangpack does \
             not read); {hint}\n"
        )),
        "{}",
        r.err
    );
}

#[test]
fn an_empty_input_beside_a_cluster_is_a_warning() {
    let dir = scratch("beside");
    let empty = write(&dir, "pending.yaml", "");
    let r = run(&["plan", "-f", "examples/cluster", "-f", &empty]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        format!("warning: no Kubernetes objects in {empty} (an empty file)\n")
    );
    assert!(r.out.starts_with("nothing to schedule"), "{}", r.out);
}

// ------------------------------------------------------------------- unreadable files

#[test]
fn a_missing_file_is_named_in_words() {
    for command in ["plan", "check", "explain", "capacity"] {
        let r = run(&[command, "-f", "cluster.yaml"]);
        assert_eq!(r.code, 1, "{}", r.err);
        assert_eq!(r.out, "");
        assert_eq!(r.err, "error: cluster.yaml: no such file or directory\n");
    }
    let r = run(&[
        "plan",
        "-f",
        "examples/cluster",
        "--policy",
        "fgd",
        "--workload-mix",
        "no/mix.yaml",
    ]);
    assert_eq!(r.err, "error: no/mix.yaml: no such file or directory\n");
    assert_eq!(r.code, 1);
    // A directory where a file is wanted.
    let r = run(&[
        "plan",
        "-f",
        "examples/cluster",
        "--policy",
        "fgd",
        "--workload-mix",
        "examples",
    ]);
    assert_eq!(r.err, "error: examples: is a directory\n");
    assert_eq!(r.code, 1);
}

#[test]
fn io_reasons_are_words_without_os_error_numbers() {
    use std::io::{Error, ErrorKind};
    let reason = gangpack_cli::io_reason;
    assert_eq!(
        reason(&Error::from_raw_os_error(2)),
        "no such file or directory"
    );
    assert_eq!(
        reason(&Error::from(ErrorKind::PermissionDenied)),
        "permission denied"
    );
    assert_eq!(
        reason(&Error::from(ErrorKind::IsADirectory)),
        "is a directory"
    );
    // Anything else: the system's words, lower-cased, without the number.
    let other = reason(&Error::from_raw_os_error(5));
    assert!(!other.contains("os error"), "{other}");
    assert!(other.starts_with(char::is_lowercase), "{other}");
}

// ------------------------------------------------------------------- did you mean

const CLUSTER: &str = "examples/cluster";
const GANG: &str = "examples/gang-rack.yaml";

#[test]
fn a_misspelt_unit_gets_the_nearest_names() {
    let explain = |args: &[&str]| {
        let mut all = vec!["explain", "-f", CLUSTER, "-f", GANG];
        all.extend(args);
        run(&all)
    };
    // A PodGroup, misspelt, without its namespace.
    fails_with(
        &explain(&["llm-pretrian"]),
        "PodGroup default/llm-pretrian not found in the input; did you mean ml/llm-pretrain?",
    );
    fails_with(
        &explain(&["ml/llm-pretrian"]),
        "PodGroup ml/llm-pretrian not found in the input; did you mean ml/llm-pretrain?",
    );
    // A pod: the nearest first, then in natural order, at most three.
    fails_with(
        &explain(&["--pod", "ml/llm-pretrain-worker-O"]),
        "Pod ml/llm-pretrain-worker-O not found in the input; did you mean \
         ml/llm-pretrain-worker-0, ml/llm-pretrain-worker-1 or ml/llm-pretrain-worker-2?",
    );
    fails_with(
        &explain(&["--pod", "ml/llm-pretrain-workr-3"]),
        "Pod ml/llm-pretrain-workr-3 not found in the input; did you mean \
         ml/llm-pretrain-worker-3?",
    );
    // A pod's name given as a PodGroup: the pod, with the flag to ask for it.
    fails_with(
        &explain(&["ml/llm-pretrain-worker-3"]),
        "PodGroup ml/llm-pretrain-worker-3 not found in the input; did you mean --pod \
         ml/llm-pretrain-worker-3?",
    );
    // Nothing near: no guess.
    fails_with(
        &explain(&["ml/zzz"]),
        "PodGroup ml/zzz not found in the input",
    );
}

// ------------------------------------------------------- big gangs, natural order

/// A cluster of `nodes` nodes of one GPU each (`node-0`, `node-1`, ...; those for
/// which `cordoned` holds are cordoned) and a gang `ml/train` of `pods` pods of one GPU
/// each (`worker-0`, ...), as one JSON List.
fn big_gang(nodes: usize, pods: usize, cordoned: impl Fn(usize) -> bool) -> String {
    let mut items = vec![
        r#"{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}],
                     "extendedResourceName": "example.com/gpu"}}"#
            .to_owned(),
        format!(
            r#"{{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                "metadata": {{"name": "train", "namespace": "ml"}},
                "spec": {{"schedulingPolicy": {{"gang": {{"minCount": {pods}}}}}}}}}"#
        ),
    ];
    for i in 0..nodes {
        items.push(format!(
            r#"{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "node-{i}"}},
                "spec": {{"unschedulable": {}}},
                "status": {{"allocatable": {{"cpu": "8", "memory": "32Gi", "pods": "110"}}}}}}"#,
            cordoned(i)
        ));
        items.push(format!(
            r#"{{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {{"name": "node-{i}-gpus"}},
                "spec": {{"driver": "gpu.example.com", "nodeName": "node-{i}",
                         "pool": {{"name": "node-{i}", "resourceSliceCount": 1}},
                         "devices": [{{"name": "gpu-0"}}]}}}}"#
        ));
    }
    for i in 0..pods {
        items.push(format!(
            r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "worker-{i}", "namespace": "ml"}},
                "spec": {{"schedulingGroup": {{"podGroupName": "train"}},
                         "containers": [{{"name": "c", "resources": {{"limits": {{"example.com/gpu": "1"}}}}}}]}}}}"#
        ));
    }
    format!(
        r#"{{"apiVersion": "v1", "kind": "List", "items": [{}]}}"#,
        items.join(",\n")
    )
}

/// The UNIT row of `plan`'s table for the gang, split on runs of 2+ spaces.
fn unit_row(out: &str) -> Vec<&str> {
    let row = out
        .lines()
        .find(|l| l.starts_with("PodGroup ml/train"))
        .expect("the gang's row");
    row.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

#[test]
fn a_333_node_gang_prints_its_nodes_folded() {
    let dir = scratch("big");
    let file = write(&dir, "big.json", &big_gang(333, 333, |_| false));
    let r = run(&["plan", "-f", &file]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        unit_row(&r.out),
        ["PodGroup ml/train", "placed", "333", "333", "node-[0-332]"]
    );
    // The pods table has them all, in natural order: worker-9 before worker-10.
    let pods: Vec<&str> = r
        .out
        .lines()
        .filter(|l| l.starts_with("ml/worker-"))
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    let expected: Vec<String> = (0..333).map(|i| format!("ml/worker-{i}")).collect();
    assert_eq!(pods, expected);
    // Every line stays readable.
    assert!(r.out.lines().all(|l| l.chars().count() < 140), "{}", r.out);
}

#[test]
fn a_scattered_gang_is_cut_short_with_its_count() {
    let dir = scratch("scattered");
    // Every third node cordoned: runs of two.
    let file = write(&dir, "scattered.json", &big_gang(300, 200, |i| i % 3 == 0));
    let r = run(&["plan", "-f", &file]);
    assert_eq!(r.code, 0, "{}", r.err);
    let row = unit_row(&r.out);
    assert_eq!(row[..4], ["PodGroup ml/train", "placed", "200", "200"]);
    assert_eq!(
        row[4],
        "node-[1-2,4-5,7-8,10-11,13-14,16-17,19-20,22-23,25-26,…] (200 nodes)"
    );
    assert!(row[4].chars().count() <= 72, "{}", row[4]);
    // Few nodes: listed plainly, in natural order.
    let file = write(&dir, "small.json", &big_gang(12, 10, |i| i < 2));
    let r = run(&["plan", "-f", &file]);
    assert_eq!(
        unit_row(&r.out)[4],
        "node-2 node-3 node-4 node-5 node-6 node-7 node-8 node-9 node-10 node-11"
    );
    // One more, and the list is folded rather than longer than 72 characters.
    let file = write(&dir, "eleven.json", &big_gang(12, 11, |i| i == 0));
    let r = run(&["plan", "-f", &file]);
    assert_eq!(unit_row(&r.out)[4], "node-[1-11]");
}

// ------------------------------------------------- versions a default server refuses

#[test]
fn beta_versions_are_converted_with_a_warning_per_version_and_file() {
    let dir = scratch("beta");
    let class = |name: &str, version: &str| {
        format!(
            "apiVersion: resource.k8s.io/{version}\nkind: DeviceClass\nmetadata:\n  name: {name}\n\
             spec:\n  selectors:\n  - cel:\n      expression: device.driver == \"{name}\"\n"
        )
    };
    let node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n";
    let one = write(
        &dir,
        "cluster.yaml",
        &[
            node.to_owned(),
            class("a.example.com", "v1"),
            class("gpu.nvidia.com", "v1beta1"),
        ]
        .join("---\n"),
    );
    let r = run(&["plan", "-f", &one, "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        format!(
            "warning: {one} doc 3: DeviceClass \"gpu.nvidia.com\": uses resource.k8s.io/v1beta1, \
             which a default Kubernetes 1.37 API server does not serve (only with \
             --runtime-config=resource.k8s.io/v1beta1=true); converted to resource.k8s.io/v1\n"
        )
    );
    // stdout stays the JSON list alone.
    assert!(
        r.out.starts_with("{\n") && r.out.contains("\"kind\": \"List\""),
        "{}",
        r.out
    );
    // 50 objects of one version in one file: one line, the first three named.
    let mut docs = vec![node.to_owned()];
    docs.extend((0..50).map(|i| class(&format!("c{i}.example.com"), "v1beta2")));
    let many = write(&dir, "driver.yaml", &docs.join("---\n"));
    let r = run(&["plan", "-f", &many]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        format!(
            "warning: {many}: 50 objects use resource.k8s.io/v1beta2, which a default Kubernetes \
             1.37 API server does not serve (only with \
             --runtime-config=resource.k8s.io/v1beta2=true); converted to resource.k8s.io/v1: \
             DeviceClass \"c0.example.com\" (doc 2), DeviceClass \"c1.example.com\" (doc 3), \
             DeviceClass \"c2.example.com\" (doc 4) and 47 more\n"
        )
    );
}

// ------------------------------------------------------------ objects defined again

#[test]
fn a_later_file_updates_an_object_as_kubectl_apply_does() {
    let dir = scratch("update");
    let class = |expression: &str| {
        format!(
            "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: gpu.nvidia.com\n\
             spec:\n  selectors:\n  - cel:\n      expression: {expression}\n"
        )
    };
    let node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n";
    let dump = write(
        &dir,
        "cluster.yaml",
        &format!("{node}---\n{}", class("device.driver == \"old\"")),
    );
    let driver = write(
        &dir,
        "driver.yaml",
        &class("device.driver == \"gpu.nvidia.com\""),
    );
    let r = run(&["check", "-f", &dump, "-f", &driver]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        format!(
            "warning: {driver} doc 1: DeviceClass \"gpu.nvidia.com\": replaces the one at \
             {dump} doc 2 (a later input updates the object, as kubectl apply does)\n"
        )
    );
    // Twice in one file: an error, the dump contradicts itself.
    let twice = write(
        &dir,
        "twice.yaml",
        &format!(
            "{node}---\n{}---\n{}",
            class("\"true\""),
            class("\"false\"")
        ),
    );
    fails_with(
        &run(&["plan", "-f", &twice]),
        &format!(
            "{twice} doc 3: DeviceClass \"gpu.nvidia.com\": metadata.name: duplicate object: \
             also defined at {twice} doc 2"
        ),
    );
}

// --------------------------------------------------------- errors in templates

#[test]
fn an_error_in_a_template_names_the_template_and_where_it_is() {
    let dir = scratch("template");
    let gang = std::fs::read_to_string(common::root().join(GANG)).expect("the example");
    let bad = write(
        &dir,
        "gang.yaml",
        &gang.replace(
            "deviceClassName: h100.nvidia.com",
            "deviceClassName: nope.nvidia.com",
        ),
    );
    let told = format!(
        "PodGroup ml/llm-pretrain: failed: {bad} doc 1: ResourceClaimTemplate \
         \"ml/h100-x4-numa\" (for the claim ml/llm-pretrain-worker-0-gpus-rnnv5 of Pod \
         ml/llm-pretrain-worker-0): spec.spec.devices.requests[0].exactly.deviceClassName: \
         DeviceClass \"nope.nvidia.com\" not found"
    );
    let plan = run(&["plan", "-f", CLUSTER, "-f", &bad]);
    assert_eq!(plan.code, 3, "{}", plan.err);
    assert!(plan.out.lines().any(|l| l.trim() == told), "{}", plan.out);
    let explain = run(&["explain", "-f", CLUSTER, "-f", &bad, "ml/llm-pretrain"]);
    assert_eq!(explain.out, format!("{told}\n"));
    // The condition written for -o yaml says the same.
    let yaml = run(&["plan", "-f", CLUSTER, "-f", &bad, "-o", "yaml"]);
    assert!(yaml.out.contains("ResourceClaimTemplate"), "{}", yaml.out);
}

// ------------------------------------------------------------ -n / -A namespaces

#[test]
fn namespace_flags_schedule_one_namespace_on_the_whole_cluster() {
    let dir = scratch("namespaces");
    let chat = std::fs::read_to_string(common::root().join("examples/claim-first-available.yaml"))
        .expect("the example");
    let web = write(
        &dir,
        "web.yaml",
        &chat.replace("namespace: ml", "namespace: web"),
    );
    let mut bare = chat
        .lines()
        .filter(|l| !l.trim_start().starts_with("namespace:"))
        .collect::<Vec<_>>()
        .join("\n");
    bare.push('\n');
    let bare = write(&dir, "bare.yaml", &bare);
    let both = ["plan", "-f", CLUSTER, "-f", GANG, "-f", &web];
    // -A (the default): both namespaces' pending work.
    for extra in [&[][..], &["-A"]] {
        let mut args = both.to_vec();
        args.extend(extra);
        let r = run(&args);
        assert_eq!(r.code, 0, "{}", r.err);
        assert!(r.out.contains("Pod web/chat-inference"), "{}", r.out);
        assert!(r.out.contains("PodGroup ml/llm-pretrain"), "{}", r.out);
    }
    // -n ml: only ml's; -n web: only web's.
    let mut args = both.to_vec();
    args.extend(["-n", "ml"]);
    let r = run(&args);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(!r.out.contains("web/"), "{}", r.out);
    assert!(r.out.ends_with(
        "1 unit: 1 placed, 0 preempted, 0 pending, 0 invalid, 0 failed; 4 pods bound, 0 \
         nominated, 16 devices allocated\n"
    ));
    let mut args = both.to_vec();
    args.extend(["--namespace", "web", "-o", "json"]);
    let r = run(&args);
    assert!(r.out.contains("\"namespace\": \"web\""), "{}", r.out);
    assert!(!r.out.contains("\"namespace\": \"ml\""), "{}", r.out);
    // Objects without a namespace are in NS, as kubectl apply -n puts them.
    let r = run(&["plan", "-f", CLUSTER, "-f", &bare, "-n", "team-a"]);
    assert!(
        r.has_row(&[
            "Pod",
            "team-a/chat-inference",
            "placed",
            "1",
            "1",
            "gpu-r2-n2"
        ]),
        "{}",
        r.out
    );
    // Other namespaces' running pods still hold their GPUs: the gang does not fit
    // beside the running job, whichever namespace is asked for.
    let running = ["examples/running-job.yaml"];
    let r = run(&[
        "plan", "-f", CLUSTER, "-f", running[0], "-f", GANG, "-n", "ml",
    ]);
    assert_eq!(r.code, 3, "{}", r.out);
    let ours = std::fs::read_to_string(common::root().join(GANG))
        .expect("the gang")
        .replace("namespace: ml", "namespace: research");
    let gang = write(&dir, "gang.yaml", &ours);
    let r = run(&[
        "plan", "-f", CLUSTER, "-f", running[0], "-f", &gang, "-n", "research",
    ]);
    assert_eq!(r.code, 3, "{}", r.out);
    assert!(
        r.out.contains("PodGroup research/llm-pretrain  pending"),
        "{}",
        r.out
    );
    // explain: a bare name is in NS.
    let r = run(&[
        "explain",
        "-f",
        CLUSTER,
        "-f",
        GANG,
        "-n",
        "ml",
        "llm-pretrain",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.out.starts_with("PodGroup ml/llm-pretrain: "), "{}", r.out);
    // Not both.
    let r = run(&["plan", "-f", CLUSTER, "-n", "ml", "-A"]);
    assert_eq!(r.code, 2);
    assert!(r.err.contains("cannot be used with"), "{}", r.err);
}
