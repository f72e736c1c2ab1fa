//! Loading the input: paths → objects → a snapshot, with every problem reported.
//!
//! The command prints one line per message on stderr: `error: <problem>` for input errors (each as
//! `gangpack_k8s::InputError` prints it: `FILE doc N: Kind "ns/name": field.path:
//! message`), `warning: <what>` for what was skipped or reinterpreted, one line per
//! cause (`gangpack_k8s::group_warnings`: the same warning for 16 devices is one line
//! with a count). Unknown fields are warnings, or errors with `--strict`.

use gangpack::GangOptions;
use gangpack_k8s::{BuildOptions, InputError, InputErrors, LoadOptions, Loaded, Snapshot, Warning};

use crate::{Failure, Options};

/// The manifests a command reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// Files and directories (`*.yaml`, `*.yml`, `*.json`, read recursively, sorted by
    /// path); `-` is stdin. A path that cannot be opened is an I/O failure (exit 1).
    Paths(Vec<String>),
    /// Texts already read, in order, each named for messages (the file name a
    /// JavaScript host read it from, or `<stdin>`).
    Files(Vec<InputFile>),
}

/// One text of manifests and the name messages give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFile {
    /// The name in messages (`FILE doc N: ...`).
    pub name: String,
    /// Multi-document YAML, JSON, or a `kind: List`.
    pub text: String,
}

/// One problem of invalid input: the line the command prints, and, when the problem is
/// about an object, where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The whole line (`FILE doc N: Kind "ns/name": field.path: message`).
    pub line: String,
    /// The file, when known.
    pub file: Option<String>,
    /// The document in the file (1-based), when known.
    pub doc: Option<usize>,
    /// The item of a `kind: List` (0-based), when the document is one.
    pub item: Option<usize>,
    /// The object (`Kind "ns/name"`), when known.
    pub object: Option<String>,
    /// The field path in the object (`spec.devices[0].name`), empty when the problem is
    /// the whole object or file.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl Problem {
    /// A problem that is only a message (a bad flag value, a name that does not exist).
    pub(crate) fn message(message: impl Into<String>) -> Problem {
        let message = message.into();
        Problem {
            line: message.clone(),
            file: None,
            doc: None,
            item: None,
            object: None,
            field: String::new(),
            message,
        }
    }
}

impl From<&InputError> for Problem {
    /// The problem of one input error, with where it is.
    fn from(e: &InputError) -> Problem {
        Problem {
            line: e.to_string(),
            file: e.source.as_ref().map(|s| s.file.clone()),
            doc: e.source.as_ref().map(|s| s.doc),
            item: e.source.as_ref().and_then(|s| s.item),
            object: e.object.clone(),
            field: e.field.clone(),
            message: e.message.clone(),
        }
    }
}

/// The warnings a command prints, collected in order.
#[derive(Debug, Default)]
pub(crate) struct Messages {
    lines: Vec<String>,
}

impl Messages {
    /// `warning: ...`.
    pub(crate) fn warning(&mut self, text: &str) {
        self.lines.push(text.to_owned());
    }

    /// Warnings, one line per cause.
    pub(crate) fn warnings(&mut self, warnings: &[Warning]) {
        for g in gangpack_k8s::group_warnings(warnings) {
            self.warning(&g.to_string());
        }
    }

    /// The lines, in order.
    pub(crate) fn into_lines(self) -> Vec<String> {
        self.lines
    }
}

/// The build options the global flags ask for.
pub(crate) fn build_options(global: &Options) -> BuildOptions {
    BuildOptions {
        gang: GangOptions {
            policy: global.policy.scoring(),
            step_budget: global.step_budget,
            allocator_step_budget: global.allocator_step_budget,
            pod_group_preemption_policy: global.pod_group_preemption_policy,
            ..GangOptions::default()
        },
        skip_invalid: global.skip_invalid,
        now: global.now,
        admit_admin_access: false,
    }
}

/// Every problem of a failed load, one line each (`... and N more problems` last when
/// some were not listed).
pub(crate) fn input_failure(errors: &InputErrors) -> Failure {
    let mut lines: Vec<Problem> = errors.errors.iter().map(Problem::from).collect();
    if errors.more > 0 {
        lines.push(Problem::message(format!(
            "... and {} more problem{}",
            errors.more,
            if errors.more == 1 { "" } else { "s" }
        )));
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

/// Reads the input as the global flags ask (`--strict`).
pub(crate) fn load_with(input: &Input, options: LoadOptions) -> Result<Loaded, Failure> {
    match input {
        Input::Paths(paths) => {
            check_paths(paths)?;
            gangpack_k8s::load_paths_with(paths, &options).map_err(|e| input_failure(&e))
        }
        Input::Files(files) => {
            let mut loaded = Loaded::default();
            let mut errors = InputErrors::default();
            for f in files {
                match gangpack_k8s::load_str_with(&f.text, &f.name, &options) {
                    Ok(l) => loaded.extend(l),
                    Err(e) => errors.extend(e),
                }
            }
            if errors.is_empty() {
                Ok(loaded)
            } else {
                Err(input_failure(&errors))
            }
        }
    }
}

/// The load options the global flags ask for.
pub(crate) fn load_options(global: &Options) -> LoadOptions {
    LoadOptions {
        strict: global.strict,
        limits: global.limits,
    }
}

/// Builds the snapshot, reporting warnings and skipped objects on stderr.
pub(crate) fn build(
    global: &Options,
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
    global: &Options,
    input: &Input,
    messages: &mut Messages,
) -> Result<Snapshot, Failure> {
    let loaded = load_with(input, load_options(global))?;
    phase_end("parse");
    let snapshot = build(global, loaded, messages)?;
    phase_end("build");
    Ok(snapshot)
}

/// Marks the end of a phase for `--timings` ([`gangpack_k8s::trace`]).
pub(crate) fn phase_end(phase: &'static str) {
    gangpack_k8s::trace::emit(gangpack_k8s::trace::Event::PhaseEnd(phase));
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
