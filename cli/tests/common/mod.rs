//! Running the `gangpack` binary from the workspace root, for the scenario tests (paths
//! and the file names in messages are `cli/tests/fixtures/...`, as in the docs).

#![allow(dead_code)] // each test file uses part of it

use std::path::PathBuf;

use assert_cmd::cargo::cargo_bin_cmd;

/// What one run printed and returned.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) out: String,
    pub(crate) err: String,
}

impl Run {
    /// Whether some line of stdout is `words`, split on whitespace (column widths are
    /// not the contract).
    pub(crate) fn has_row(&self, words: &[&str]) -> bool {
        self.out
            .lines()
            .any(|l| l.split_whitespace().eq(words.iter().copied()))
    }
}

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ is in the workspace")
        .to_path_buf()
}

/// `gangpack ARGS` from the workspace root, without colour. Fails the test if it
/// panicked.
pub(crate) fn run(args: &[&str]) -> Run {
    run_with_stdin(args, None)
}

/// [`run`] with `stdin` (if given) as standard input.
pub(crate) fn run_with_stdin(args: &[&str], stdin: Option<&str>) -> Run {
    let mut cmd = cargo_bin_cmd!("gangpack");
    cmd.current_dir(root()).env("NO_COLOR", "1").args(args);
    if let Some(input) = stdin {
        cmd.write_stdin(input);
    }
    let output = cmd.output().expect("gangpack runs");
    let r = Run {
        code: output.status.code().expect("exited"),
        out: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        err: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    };
    assert!(
        !r.err.contains("panicked"),
        "gangpack {args:?} panicked: {}",
        r.err
    );
    r
}
