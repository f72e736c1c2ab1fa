//! Loading the input: paths → objects → a snapshot, with every problem reported.
//!
//! stderr carries one line per message: `error: <problem>` for input errors (each as
//! `gangpack_k8s::InputError` prints it: `FILE doc N: Kind "ns/name": field.path:
//! message`), `warning: <what>` for what was skipped or reinterpreted, one line per
//! cause (`gangpack_k8s::group_warnings`: the same warning for 16 devices is one line
//! with a count). Unknown fields are warnings, or errors with `--strict`.

use std::io::Write as _;

use gangpack::GangOptions;
use gangpack_k8s::{BuildOptions, InputErrors, LoadOptions, Loaded, Snapshot, Warning};

use crate::render::{Paint, Style};
use crate::{Failure, Global};

/// Messages to stderr, written as they come.
pub(crate) struct Messages {
    style: Style,
}

impl Messages {
    /// Messages painted with `style`.
    pub(crate) fn new(style: Style) -> Messages {
        Messages { style }
    }

    fn line(&self, label: &str, paint: Paint, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{} {text}", self.style.paint(paint, label));
    }

    /// `error: ...`.
    pub(crate) fn error(&mut self, text: &str) {
        self.line("error:", Paint::Red, text);
    }

    /// `warning: ...`.
    pub(crate) fn warning(&mut self, text: &str) {
        self.line("warning:", Paint::Yellow, text);
    }

    /// Warnings, one line per cause.
    pub(crate) fn warnings(&mut self, warnings: &[Warning]) {
        for g in gangpack_k8s::group_warnings(warnings) {
            self.warning(&g.to_string());
        }
    }
}

/// The build options the global flags ask for.
pub(crate) fn build_options(global: &Global) -> BuildOptions {
    BuildOptions {
        gang: GangOptions {
            policy: global.policy.scoring(),
            ..GangOptions::default()
        },
        skip_invalid: global.skip_invalid,
        now: global.now,
    }
}

/// Every problem of a failed load, one line each (`... and N more problems` last when
/// some were not listed).
pub(crate) fn input_failure(errors: &InputErrors) -> Failure {
    let mut lines: Vec<String> = errors.errors.iter().map(ToString::to_string).collect();
    if errors.more > 0 {
        lines.push(format!(
            "... and {} more problem{}",
            errors.more,
            if errors.more == 1 { "" } else { "s" }
        ));
    }
    Failure::Invalid(lines)
}

/// Checks that every path can be opened, so that a missing file is an I/O failure
/// (exit 1) rather than an input error.
fn check_paths(paths: &[String]) -> Result<(), Failure> {
    for p in paths.iter().filter(|p| p.as_str() != "-") {
        let meta = std::fs::metadata(p).map_err(|e| Failure::Io(format!("{p}: {e}")))?;
        if meta.is_file() {
            std::fs::File::open(p).map_err(|e| Failure::Io(format!("{p}: {e}")))?;
        } else if meta.is_dir() {
            std::fs::read_dir(p).map_err(|e| Failure::Io(format!("{p}: {e}")))?;
        }
    }
    Ok(())
}

/// Reads `paths` as the global flags ask (`--strict`).
pub(crate) fn load_with(paths: &[String], options: LoadOptions) -> Result<Loaded, Failure> {
    check_paths(paths)?;
    gangpack_k8s::load_paths_with(paths, &options).map_err(|e| input_failure(&e))
}

/// The load options the global flags ask for.
pub(crate) fn load_options(global: &Global) -> LoadOptions {
    LoadOptions {
        strict: global.strict,
    }
}

/// Builds the snapshot, reporting warnings and skipped objects on stderr.
pub(crate) fn build(
    global: &Global,
    loaded: Loaded,
    messages: &mut Messages,
) -> Result<Snapshot, Failure> {
    let load_warnings = loaded.warnings.clone();
    match Snapshot::build(loaded, &build_options(global)) {
        Ok(snapshot) => {
            messages.warnings(&snapshot.warnings);
            for s in &snapshot.skipped {
                messages.warning(&format!("skipped: {s}"));
            }
            Ok(snapshot)
        }
        Err(errors) => {
            messages.warnings(&load_warnings);
            Err(input_failure(&errors))
        }
    }
}

/// [`load_with`] (as the global flags ask) then [`build`].
pub(crate) fn snapshot(
    global: &Global,
    paths: &[String],
    messages: &mut Messages,
) -> Result<Snapshot, Failure> {
    let loaded = load_with(paths, load_options(global))?;
    build(global, loaded, messages)
}

/// `namespace/name`, with `default` as the namespace of a bare name.
pub(crate) fn namespaced(name: &str) -> Result<String, Failure> {
    let (ns, n) = name.split_once('/').unwrap_or(("default", name));
    if ns.is_empty() || n.is_empty() || n.contains('/') {
        return Err(Failure::invalid(format!(
            "{name:?} is not NAMESPACE/NAME or NAME"
        )));
    }
    Ok(format!("{ns}/{n}"))
}
