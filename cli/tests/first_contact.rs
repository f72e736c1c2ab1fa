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
    let comments = write(&dir, "comments.yaml", "# kubectl get nodes -o yaml\n---\n---\n");
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
        &run(&[
            "diff", "-f", &empty, "--ours", &list, "--theirs", &list,
        ]),
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
    assert_eq!(reason(&Error::from(ErrorKind::IsADirectory)), "is a directory");
    // Anything else: the system's words, lower-cased, without the number.
    let other = reason(&Error::from_raw_os_error(5));
    assert!(!other.contains("os error"), "{other}");
    assert!(other.starts_with(char::is_lowercase), "{other}");
}
