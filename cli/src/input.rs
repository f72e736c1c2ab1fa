//! Loading the input: paths → objects → a snapshot, with every problem reported.
//!
//! The command prints one line per message on stderr: `error: <problem>` for input errors (each as
//! `gangpack_k8s::InputError` prints it: `FILE doc N: Kind "ns/name": field.path:
//! message`), `warning: <what>` for what was skipped or reinterpreted, one line per
//! cause (`gangpack_k8s::group_warnings`: the same warning for 16 devices is one line
//! with a count). Unknown fields are warnings, or errors with `--strict`.

use gangpack::{GangOptions, ShapeMix, TypicalShape};
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
    /// A problem at `field` (empty: the whole file) of a file that holds no object (a
    /// `--workload-mix` file): `FILE: field: message`.
    pub(crate) fn in_file(file: &str, field: &str, message: impl Into<String>) -> Problem {
        let message = message.into();
        let line = if field.is_empty() {
            format!("{file}: {message}")
        } else {
            format!("{file}: {field}: {message}")
        };
        Problem {
            line,
            file: Some(file.to_owned()),
            doc: None,
            item: None,
            object: None,
            field: field.to_owned(),
            message,
        }
    }

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
            policy: global.scoring(),
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

/// Without `--workload-mix`, has Stranding and FGD score against the shapes of every
/// pod in the input, running and pending ([`ShapeMix::observe`]), from the start: the
/// workload the input describes, for `plan`'s cycle as for `explain`'s and `taint`'s
/// what-ifs (which run no cycle, where the scheduler has observed nothing yet). Nothing
/// changes when no pod requests devices, or under best-fit and spread.
pub(crate) fn track_input_mix(global: &Options, snapshot: &mut Snapshot) {
    if global.workload_mix.is_some() || !global.policy.uses_mix() {
        return;
    }
    let scheduler = &snapshot.scheduler;
    let mix = ShapeMix::observe(scheduler.pods(), scheduler.claims());
    if mix.shapes.is_empty() {
        return;
    }
    // The shapes of valid pods and claims make a valid mix; were one refused, the
    // scheduler would go on observing the same pods itself at its cycle.
    let _ = snapshot.scheduler.set_workload_mix(Some(mix));
}

/// The fields of a `--workload-mix` shape ([`TypicalShape`], camelCase).
const SHAPE_FIELDS: [&str; 9] = [
    "weight",
    "cpu",
    "memory",
    "deviceClassName",
    "count",
    "capacity",
    "selectors",
    "pods",
    "topologyKey",
];

/// A `--workload-mix` file's mix (see [`crate::workload_mix`]): YAML or JSON, every
/// field known, every value of its type, the mix valid. Each problem names the file and
/// the field.
pub(crate) fn workload_mix(name: &str, text: &str) -> Result<ShapeMix, Failure> {
    use serde_json::Value;
    let one = |field: &str, message: String| {
        Failure::Invalid(vec![Problem::in_file(name, field, message)])
    };
    let value: Value = serde_norway::from_str(text).map_err(|e| one("", e.to_string()))?;
    let Value::Object(top) = &value else {
        return Err(one(
            "",
            "expected a workload mix, {shapes: [{weight, deviceClassName, count, ...}]}".into(),
        ));
    };
    let mut problems = Vec::new();
    for key in top.keys().filter(|k| *k != "shapes") {
        problems.push(Problem::in_file(
            name,
            key,
            "unknown field (expected shapes)",
        ));
    }
    match top.get("shapes") {
        None => problems.push(Problem::in_file(name, "shapes", "required value")),
        Some(Value::Array(shapes)) => {
            for (i, shape) in shapes.iter().enumerate() {
                shape_problems(name, &format!("shapes[{i}]"), shape, &mut problems);
            }
        }
        Some(_) => problems.push(Problem::in_file(
            name,
            "shapes",
            "expected a list of shapes",
        )),
    }
    if !problems.is_empty() {
        return Err(Failure::Invalid(problems));
    }
    let mix: ShapeMix = serde_json::from_value(value).map_err(|e| one("", e.to_string()))?;
    mix.validate().map_err(|errors| {
        Failure::Invalid(
            errors
                .iter()
                .map(|e| Problem::in_file(name, &e.field, e.problem.to_string()))
                .collect(),
        )
    })?;
    Ok(mix)
}

/// The problems of one shape of a `--workload-mix` file: unknown fields, and values
/// that are not of their field's type (each field read on its own, so that the message
/// names it).
fn shape_problems(name: &str, path: &str, shape: &serde_json::Value, out: &mut Vec<Problem>) {
    use serde_json::Value;
    let Value::Object(fields) = shape else {
        out.push(Problem::in_file(
            name,
            path,
            "expected a shape, {weight, deviceClassName, count, ...}",
        ));
        return;
    };
    for (key, value) in fields {
        let field = format!("{path}.{key}");
        if !SHAPE_FIELDS.contains(&key.as_str()) {
            out.push(Problem::in_file(
                name,
                &field,
                format!(
                    "unknown field (expected one of {})",
                    SHAPE_FIELDS.join(", ")
                ),
            ));
            continue;
        }
        let alone = Value::Object([(key.clone(), value.clone())].into_iter().collect());
        if let Err(e) = serde_json::from_value::<TypicalShape>(alone) {
            out.push(Problem::in_file(name, &field, e.to_string()));
            continue;
        }
        if key == "selectors" {
            for (j, selector) in value.as_array().into_iter().flatten().enumerate() {
                for k in selector.as_object().into_iter().flat_map(|o| o.keys()) {
                    if k != "cel" {
                        out.push(Problem::in_file(
                            name,
                            &format!("{field}[{j}].{k}"),
                            "unknown field (expected cel)",
                        ));
                    }
                }
            }
        }
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

/// `PATH: REASON` for a file that cannot be read (see [`gangpack_k8s::io_reason`]).
pub(crate) fn io_failure(path: &str, e: &std::io::Error) -> Failure {
    Failure::Io(format!("{path}: {}", gangpack_k8s::io_reason(e)))
}

/// Checks that every path can be opened, so that a missing file is an I/O failure
/// (exit 1) rather than an input error: `cluster.yaml: no such file or directory`.
fn check_paths(paths: &[String]) -> Result<(), Failure> {
    for p in paths.iter().filter(|p| p.as_str() != "-") {
        let meta = std::fs::metadata(p).map_err(|e| io_failure(p, &e))?;
        if meta.is_file() {
            std::fs::File::open(p).map_err(|e| io_failure(p, &e))?;
        } else if meta.is_dir() {
            std::fs::read_dir(p).map_err(|e| io_failure(p, &e))?;
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

/// The cluster's input ([`load_with`]), which must hold objects: a load without any
/// (an empty file, only comments, a `kubectl get` List with no items: most often the
/// wrong kubectl context) is invalid input naming each input and what it held. When
/// some inputs hold objects, each empty one is a warning.
pub(crate) fn load_cluster(
    input: &Input,
    options: LoadOptions,
    messages: &mut Messages,
) -> Result<Loaded, Failure> {
    let loaded = load_with(input, options)?;
    if loaded.objects.is_empty() {
        let names: Vec<String> = loaded.empty.iter().map(ToString::to_string).collect();
        let inputs = if names.is_empty() {
            "the input".to_owned()
        } else {
            names.join(", ")
        };
        return Err(Failure::invalid(format!(
            "no Kubernetes objects in {inputs}; is the kubectl context right?"
        )));
    }
    for e in &loaded.empty {
        messages.warning(&format!("no Kubernetes objects in {e}"));
    }
    Ok(loaded)
}

/// `-n NS`: namespaced objects that name no namespace are put in `ns` (as `kubectl
/// apply -n` does), and the pending pods of other namespaces are left out, so that only
/// `ns`'s pods and PodGroups are scheduled; bound pods and every other object stay, and
/// hold their capacity.
pub(crate) fn in_namespace(loaded: &mut Loaded, ns: &str) {
    for o in &mut loaded.objects {
        let unnamed = o.raw["metadata"]["namespace"]
            .as_str()
            .is_none_or(str::is_empty);
        if o.kind.is_namespaced() && unnamed {
            o.namespace = Some(ns.to_owned());
            let raw = std::sync::Arc::make_mut(&mut o.raw);
            if let Some(meta) = raw.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                meta.insert("namespace".into(), serde_json::Value::String(ns.to_owned()));
            }
        }
    }
    loaded.objects.retain(|o| {
        o.kind != gangpack_k8s::Kind::Pod
            || o.namespace.as_deref() == Some(ns)
            || o.raw["spec"]["nodeName"]
                .as_str()
                .is_some_and(|n| !n.is_empty())
    });
}

/// The load options the global flags ask for.
pub(crate) fn load_options(global: &Options) -> LoadOptions {
    LoadOptions {
        strict: global.strict,
        limits: global.limits,
        decisions: false,
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
        Ok(mut snapshot) => {
            track_input_mix(global, &mut snapshot);
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
    let mut loaded = load_cluster(input, load_options(global), messages)?;
    if let Some(ns) = &global.namespace {
        in_namespace(&mut loaded, ns);
    }
    phase_end("parse");
    let snapshot = build(global, loaded, messages)?;
    phase_end("build");
    Ok(snapshot)
}

/// Marks the end of a phase for `--timings` ([`gangpack_k8s::trace`]).
pub(crate) fn phase_end(phase: &'static str) {
    gangpack_k8s::trace::emit(gangpack_k8s::trace::Event::PhaseEnd(phase));
}

/// `namespace/name`, with `default` (or `-n NS`) as the namespace of a bare name.
pub(crate) fn namespaced(name: &str, default: Option<&str>) -> Result<String, Failure> {
    let (ns, n) = name
        .split_once('/')
        .unwrap_or((default.unwrap_or("default"), name));
    if ns.is_empty() || n.is_empty() || n.contains('/') {
        return Err(Failure::invalid(format!(
            "{name:?} is not NAMESPACE/NAME or NAME"
        )));
    }
    Ok(format!("{ns}/{n}"))
}
