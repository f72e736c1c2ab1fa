//! A cluster snapshot: loaded objects turned into a scheduler.
//!
//! [`Snapshot::build`] converts every object (see the `convert` module), then applies
//! them in [`Kind::ALL`] order: nodes, device classes, slices and taint rules into a
//! [`gangpack::Cluster`]; the allocations of claims with `status.allocation` are
//! recorded in it (those devices are not free); then a [`Scheduler`] receives the
//! PriorityClasses, the claims (read and generated), the PodGroups, the bound pods
//! (`spec.nodeName`: they hold their node resources) and the pending pods.
//!
//! Claims that the control plane would create are generated here, deterministically:
//! one per pod (or PodGroup) claim entry that names a ResourceClaimTemplate (unless the
//! owner's `status.resourceClaimStatuses` names a claim that is in the input), and one
//! per pod whose extended resources (`nvidia.com/gpu: 8`) are backed by a DeviceClass
//! rather than by a device plugin.
//!
//! | File | What it holds |
//! |---|---|
//! | `mod.rs` | The public types; the `Builder`, its driver (`run`, the phases in [`Kind::ALL`] order), bookkeeping and the duplicate check. |
//! | `cluster.rs` | Namespaces, Nodes, DeviceClasses (and their extended resource names), ResourceSlices, DeviceTaintRules. |
//! | `claims.rs` | ResourceClaimTemplates, ResourceClaims and their recorded allocations; generated claims found again; extended-resource claims; generated claims' raw objects. |
//! | `workloads.rs` | PriorityClasses, Workloads, PodGroups and pods (bound and pending), with their template claims generated. |
//! | `assemble.rs` | The [`Scheduler`] built from what passed. |
//! | `fold.rs` | Changed documents and deleted pods written back into the objects (`fold_back`, `fold_deletions`). |

mod assemble;
mod claims;
mod cluster;
mod fold;
mod workloads;

pub(crate) use assemble::bound_time;

use std::collections::{BTreeMap, BTreeSet};

use gangpack::{
    Cluster, GangOptions, PodGroup, PriorityClass, ResourceClaim, ResourceClaimTemplate, Scheduler,
};

use crate::convert::de::{input_error, latest_timestamp, validation_error, warning};
use crate::convert::{self, ClaimInput, TemplateInput};
use crate::load::Loaded;
use crate::object::{InputError, InputErrors, Kind, Object, Warning};

/// How to build a snapshot.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// Placement options for the scheduler (scoring policy, step budget).
    pub gang: GangOptions,
    /// Skip invalid objects (each reported in [`Snapshot::skipped`]) instead of failing.
    pub skip_invalid: bool,
    /// The logical clock; `None` = the latest timestamp found in the input.
    pub now: Option<gangpack::Time>,
    /// Admit claims and templates with `adminAccess: true` whatever their Namespace's
    /// labels (the API server's admission check is skipped). For checkers that report
    /// the missing label as a finding of their own ([`check`](crate::check)).
    pub admit_admin_access: bool,
}

/// Who a generated claim belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A pod's claim from a ResourceClaimTemplate (or its extended-resource claim).
    Pod {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A PodGroup's claim from a ResourceClaimTemplate.
    PodGroup {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
}

/// A ResourceClaim gangpack instantiated (from a template, or for extended resources
/// backed by DRA); it does not exist in the input.
#[derive(Clone, Debug)]
pub struct GeneratedClaim {
    /// The claim as the scheduler sees it.
    pub claim: ResourceClaim,
    /// Who owns it.
    pub owner: Owner,
    /// The entry name in the owner's `spec.resourceClaims` (`None` for an
    /// extended-resource claim).
    pub entry: Option<String>,
    /// The whole `resource.k8s.io/v1` ResourceClaim object the resourceclaim controller
    /// would create (metadata with ownerReferences and the pod-claim-name annotation,
    /// spec from the template), without status.
    pub raw: serde_json::Value,
    /// For a pod's extended-resource claim (`entry: None`): which container's request
    /// for which resource each claim request serves, as the pod's
    /// `status.extendedResourceClaimStatus.requestMappings` records it. Empty otherwise.
    pub request_mappings: Vec<RequestMapping>,
}

/// One `status.extendedResourceClaimStatus.requestMappings` entry of a pod.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestMapping {
    /// The container (or init container) name.
    pub container_name: String,
    /// The extended resource, e.g. `nvidia.com/gpu`.
    pub resource_name: String,
    /// The request of the generated claim that serves it.
    pub request_name: String,
}

/// A pod or PodGroup held back from scheduling because an object it names is not in
/// the input, as kube-scheduler's PreEnqueue holds it (the API server accepts the pod;
/// it waits until the claim, or the template its claim is created from, exists).
///
/// Such a unit is not given to the scheduler; [`output::plan`](crate::output::plan)
/// lists it as pending with [`reason`](Self::reason). A pod of a PodGroup that waits
/// is not counted among the group's pods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// [`Kind::Pod`] or [`Kind::PodGroup`].
    pub kind: Kind,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// For a pod: its PodGroup (`spec.schedulingGroup.podGroupName`), if it names one.
    pub group: Option<String>,
    /// What it waits for.
    pub on: WaitingOn,
}

/// What a [`Waiting`] unit waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitingOn {
    /// An object that is not in the input.
    Missing {
        /// [`Kind::ResourceClaim`] or [`Kind::ResourceClaimTemplate`].
        kind: Kind,
        /// Its name (in the unit's namespace).
        name: String,
        /// The field that names it, e.g. `spec.resourceClaims[0].resourceClaimName`.
        field: String,
    },
    /// Its PodGroup, which waits itself.
    Group,
}

impl Waiting {
    /// `Pod ns/name` or `PodGroup ns/name`.
    pub fn unit(&self) -> String {
        format!("{} {}/{}", self.kind.as_str(), self.namespace, self.name)
    }

    /// Why it waits.
    ///
    /// ```text
    /// waiting for ResourceClaim "default/c" (spec.resourceClaims[0].resourceClaimName):
    /// it is not in the input; the scheduler holds the pod until it exists
    /// ```
    pub fn reason(&self) -> String {
        let what = if self.kind == Kind::PodGroup {
            "its pods"
        } else {
            "the pod"
        };
        match &self.on {
            WaitingOn::Missing { kind, name, field } => {
                let created = if *kind == Kind::ResourceClaimTemplate {
                    ", so the resourceclaim controller cannot create the claim"
                } else {
                    ""
                };
                format!(
                    "waiting for {} \"{}/{name}\" ({field}): it is not in the input{created}; \
                     the scheduler holds {what} until it exists",
                    kind.as_str(),
                    self.namespace
                )
            }
            WaitingOn::Group => format!(
                "waiting with its PodGroup \"{}/{}\", which waits for an object not in the input",
                self.namespace,
                self.group.as_deref().unwrap_or_default()
            ),
        }
    }
}

/// Loaded objects turned into a scheduler.
pub struct Snapshot {
    /// The scheduler: running state bound, pending pods and groups queued.
    pub scheduler: Scheduler,
    /// Every loaded object, in input order, untouched.
    pub objects: Vec<Object>,
    /// Claims gangpack instantiated.
    pub generated: Vec<GeneratedClaim>,
    /// Warnings from loading and converting.
    pub warnings: Vec<Warning>,
    /// Objects skipped as invalid (only with [`BuildOptions::skip_invalid`]).
    pub skipped: Vec<InputError>,
    /// Pods and PodGroups held back, waiting for objects not in the input, in input
    /// order.
    pub waiting: Vec<Waiting>,
}

impl Snapshot {
    /// Converts and applies every object; fails with every problem found (nothing
    /// half-built) unless `skip_invalid`.
    pub fn build(loaded: Loaded, options: &BuildOptions) -> Result<Snapshot, InputErrors> {
        Snapshot::build_with(loaded, options, converters())
    }

    /// [`Snapshot::build`] with `converters` threads converting ahead (none: every
    /// object converted in turn).
    fn build_with(
        loaded: Loaded,
        options: &BuildOptions,
        converters: usize,
    ) -> Result<Snapshot, InputErrors> {
        let Loaded {
            objects,
            mut warnings,
            bindings,
            empty: _,
        } = loaded;
        // Only a decisions' load reads Bindings; a snapshot has no use for them.
        for b in bindings {
            warnings.push(Warning {
                object: Some(b.describe()),
                source: Some(b.source),
                message: "skipped: a Binding is a scheduler's decision (give it to `gangpack check --decisions`)".into(),
            });
        }
        let objects = later_inputs_update(objects, &mut warnings);
        crate::trace::emit(crate::trace::Event::Building {
            objects: objects.len(),
        });
        let mut b = Builder::new(&objects, options);
        b.converters = converters;
        b.run();
        let Builder {
            errors,
            more_errors,
            skipped,
            warnings: found,
            scheduler,
            generated,
            waiting,
            ..
        } = b;
        // Everything in input order (objects are applied kind by kind).
        if !errors.is_empty() || more_errors > 0 {
            let mut out = InputErrors::default();
            for (_, e) in in_input_order(errors) {
                out.push(e);
            }
            out.more += more_errors;
            return Err(out);
        }
        warnings.extend(in_input_order(found).into_iter().map(|(_, w)| w));
        let skipped = in_input_order(skipped)
            .into_iter()
            .map(|(_, e)| e)
            .collect();
        let scheduler = scheduler.expect("built when there is no error");
        Ok(Snapshot {
            scheduler,
            objects,
            generated,
            warnings,
            skipped,
            waiting: in_input_order(waiting)
                .into_iter()
                .map(|(_, w)| w)
                .collect(),
        })
    }

    /// The uid gangpack writes for an object whose input has no `metadata.uid`, where
    /// a reference needs one (a claim's `status.reservedFor`, a generated claim's
    /// `ownerReferences`): deterministic, the same for the same kind, namespace and
    /// name, and marked as not the API server's: a UUIDv8 (RFC 9562, the custom
    /// version) whose 122 free bits are the FNV-1a-128 hash of
    /// `gangpack:<kind>:<namespace>/<name>`, finalised by an xor-shift-multiply mix.
    ///
    /// ```
    /// use gangpack_k8s::Snapshot;
    ///
    /// let uid = Snapshot::derived_uid("Pod", "default", "train-0");
    /// assert_eq!(uid, Snapshot::derived_uid("Pod", "default", "train-0"));
    /// assert_ne!(uid, Snapshot::derived_uid("Pod", "default", "train-1"));
    /// assert_eq!(uid.len(), 36);
    /// assert_eq!(&uid[14..15], "8"); // version 8
    /// ```
    pub fn derived_uid(kind: &str, namespace: &str, name: &str) -> String {
        const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
        const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
        let mut h = OFFSET;
        let text = format!("gangpack:{kind}:{namespace}/{name}");
        for b in text.bytes() {
            h ^= u128::from(b);
            h = h.wrapping_mul(PRIME);
        }
        // Spread the last bytes' changes over every bit (FNV alone keeps `...-0` and
        // `...-1` close), as a 128-bit finaliser: xor-shift, odd multiply, xor-shift.
        h ^= h >> 67;
        h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
        h ^= h >> 59;
        gangpack::uuid_v8(h)
    }

    /// The waiting unit `Pod ns/name` or `PodGroup ns/name`, if it waits.
    pub fn waiting(&self, kind: Kind, namespace: &str, name: &str) -> Option<&Waiting> {
        self.waiting
            .iter()
            .find(|w| w.kind == kind && w.namespace == namespace && w.name == name)
    }

    /// The loaded object of that kind and name.
    pub fn object(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Option<&Object> {
        self.objects
            .iter()
            .find(|o| o.kind == kind && o.name == name && o.namespace.as_deref() == namespace)
    }

    /// The generated claim `namespace/name`.
    pub fn generated_claim(&self, namespace: &str, name: &str) -> Option<&GeneratedClaim> {
        self.generated
            .iter()
            .find(|g| g.claim.namespace == namespace && g.claim.name == name)
    }
}

/// The label a namespace needs for claims with `adminAccess: true`.
const ADMIN_ACCESS_LABEL: &str = Snapshot::ADMIN_ACCESS_LABEL;
/// The prefix of a DeviceClass's implicit extended resource name.
const DEVICE_CLASS_RESOURCE_PREFIX: &str = Snapshot::DEVICE_CLASS_RESOURCE_PREFIX;

impl Snapshot {
    /// The label a Namespace needs (with value `"true"`) for claims with
    /// `adminAccess: true`.
    pub const ADMIN_ACCESS_LABEL: &str = "resource.kubernetes.io/admin-access";
    /// The prefix of a DeviceClass's implicit extended resource name
    /// (`deviceclass.resource.kubernetes.io/<class>`).
    pub const DEVICE_CLASS_RESOURCE_PREFIX: &str = "deviceclass.resource.kubernetes.io/";
}

impl GeneratedClaim {
    /// The annotation on a claim generated for a pod's claim entry (its value is the
    /// entry's name).
    pub const POD_CLAIM_NAME_ANNOTATION: &str = "resource.kubernetes.io/pod-claim-name";
    /// The annotation on a claim generated for a PodGroup's claim entry (KEP-5729).
    pub const POD_GROUP_CLAIM_NAME_ANNOTATION: &str = "resource.kubernetes.io/podgroup-claim-name";
    /// The annotation (value `"true"`) on the claim generated for a pod's extended
    /// resources.
    pub const EXTENDED_RESOURCE_CLAIM_ANNOTATION: &str =
        "resource.kubernetes.io/extended-resource-claim";
}

type Key = (Kind, Option<String>, String);

/// A conversion's result and warnings ([`convert::run`]).
type Converted<T> = (Result<T, InputErrors>, Vec<Warning>);

/// Objects converted ahead at a time ([`Builder::each`]).
const CONVERT_RUN: usize = 256;
/// At most this many threads convert ahead.
#[cfg(not(target_arch = "wasm32"))]
const MAX_CONVERT_THREADS: usize = 7;

/// Objects defined again by a later input (another file, or stdin) replace the
/// earlier definition, as a later `kubectl apply -f` updates an object: a driver's
/// DeviceClass given after a cluster dump that has it. Each replacement is a warning
/// naming both places. The same object twice in one input stays an error (a dump never
/// lists an object twice: the two contradict each other), found by the duplicate
/// check.
pub(crate) fn later_inputs_update(
    objects: Vec<Object>,
    warnings: &mut Vec<Warning>,
) -> Vec<Object> {
    let mut last: BTreeMap<Key, usize> = BTreeMap::new();
    let mut replaced = vec![false; objects.len()];
    for (i, o) in objects.iter().enumerate() {
        if let Some(j) = last.insert(key_of(o), i)
            && objects[j].source.file != o.source.file
        {
            replaced[j] = true;
            warnings.push(Warning {
                source: Some(o.source.clone()),
                object: Some(o.describe()),
                message: format!(
                    "replaces the one at {} (a later input updates the object, as kubectl \
                     apply does)",
                    objects[j].source
                ),
            });
        }
    }
    if !replaced.contains(&true) {
        return objects;
    }
    objects
        .into_iter()
        .zip(replaced)
        .filter_map(|(o, r)| (!r).then_some(o))
        .collect()
}

fn key_of(o: &Object) -> Key {
    (o.kind, o.namespace.clone(), o.name.clone())
}

/// A pod ready to be added: its final claims decided.
struct ReadyPod {
    idx: usize,
    pod: gangpack::Pod,
}

/// A group ready to be added.
struct ReadyGroup {
    /// The group as written.
    original: PodGroup,
    /// The group with template entries resolved by status (pods are instantiated
    /// against it).
    partial: PodGroup,
    /// The group as the scheduler gets it (every entry a claim name).
    done: PodGroup,
    idx: usize,
}

struct Builder<'a> {
    objects: &'a [Object],
    options: &'a BuildOptions,
    /// Problems, by object index.
    errors: Vec<(usize, InputError)>,
    /// Problems counted but not listed.
    more_errors: usize,
    /// Objects skipped (with `skip_invalid`), by object index.
    skipped: Vec<(usize, InputError)>,
    /// Warnings, by object index.
    warnings: Vec<(usize, Warning)>,
    rejected: BTreeSet<usize>,
    index: BTreeMap<Key, usize>,
    namespaces: BTreeMap<String, BTreeMap<String, String>>,
    cluster: Cluster,
    classes: Vec<PriorityClass>,
    /// Extended resource name → DeviceClass.
    extended: BTreeMap<String, String>,
    /// Resources some node advertises in `status.allocatable`.
    node_resources: BTreeSet<String>,
    templates: BTreeMap<(String, String), (usize, TemplateInput)>,
    template_list: Option<Vec<ResourceClaimTemplate>>,
    claims: BTreeMap<(String, String), (usize, ClaimInput)>,
    /// Claims the resourceclaim controller created, as it finds them again: by
    /// (namespace, owner kind, owner name, annotation, annotation value) → claim name.
    owned: BTreeMap<(String, String, String, String, String), String>,
    groups: BTreeMap<(String, String), ReadyGroup>,
    pods: Vec<ReadyPod>,
    generated: Vec<GeneratedClaim>,
    /// Units held back, by object index.
    waiting: Vec<(usize, Waiting)>,
    /// PodGroups held back (their pods wait with them).
    waiting_groups: BTreeSet<(String, String)>,
    scheduler: Option<Scheduler>,
    /// Threads that convert ahead in [`Builder::each`] (none: in turn).
    converters: usize,
}

/// The threads that convert ahead: one per core but this one's, where there are
/// threads.
fn converters() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    {
        crate::load::threads()
            .saturating_sub(1)
            .min(MAX_CONVERT_THREADS)
    }
    #[cfg(target_arch = "wasm32")]
    {
        0
    }
}

impl<'a> Builder<'a> {
    fn new(objects: &'a [Object], options: &'a BuildOptions) -> Builder<'a> {
        Builder {
            objects,
            options,
            errors: Vec::new(),
            more_errors: 0,
            skipped: Vec::new(),
            warnings: Vec::new(),
            rejected: BTreeSet::new(),
            index: BTreeMap::new(),
            namespaces: BTreeMap::new(),
            cluster: Cluster::new(),
            classes: Vec::new(),
            extended: BTreeMap::new(),
            node_resources: BTreeSet::new(),
            templates: BTreeMap::new(),
            template_list: None,
            claims: BTreeMap::new(),
            owned: BTreeMap::new(),
            groups: BTreeMap::new(),
            pods: Vec::new(),
            generated: Vec::new(),
            waiting: Vec::new(),
            waiting_groups: BTreeSet::new(),
            scheduler: None,
            converters: 0,
        }
    }

    fn run(&mut self) {
        self.dedup();
        let now = self.options.now.unwrap_or_else(|| {
            let latest = self
                .objects
                .iter()
                .enumerate()
                .filter(|(i, _)| !self.rejected.contains(i))
                .filter_map(|(_, o)| latest_timestamp(&o.raw))
                .max();
            gangpack::Time(latest.unwrap_or(0))
        });
        self.cluster.set_clock(now);
        for kind in Kind::ALL {
            let idx: Vec<usize> = (0..self.objects.len())
                .filter(|i| self.objects[*i].kind == kind && !self.rejected.contains(i))
                .collect();
            // The kinds a large cluster has thousands of are converted ahead, on
            // threads where there are threads, and applied in turn.
            match kind {
                Kind::Node => self.each(&idx, convert::resource::node, Builder::add_node),
                Kind::ResourceSlice => {
                    self.each(&idx, convert::resource::resource_slice, Builder::add_slice);
                }
                Kind::ResourceClaim => {
                    self.each(&idx, convert::resource_claim, Builder::add_claim);
                }
                Kind::Pod => self.each(&idx, convert::workload::pod, Builder::add_pod),
                _ => {
                    for i in idx {
                        match kind {
                            Kind::Namespace => self.namespace(i),
                            Kind::PriorityClass => self.priority_class(i),
                            Kind::DeviceClass => self.device_class(i),
                            Kind::DeviceTaintRule => self.taint_rule(i),
                            Kind::ResourceClaimTemplate => self.template(i),
                            Kind::Workload => self.workload(i),
                            Kind::PodGroup => self.group(i),
                            Kind::Node | Kind::ResourceSlice | Kind::ResourceClaim | Kind::Pod => {
                                unreachable!("applied above")
                            }
                        }
                    }
                }
            }
            if kind == Kind::DeviceClass {
                self.map_extended_resources();
            }
            if kind == Kind::ResourceClaim {
                self.allocate_claims();
                self.index_owned_claims();
            }
        }
        if !self.errors.is_empty() || self.more_errors > 0 {
            return;
        }
        self.assemble();
    }

    // ----------------------------------------------------------------- bookkeeping

    fn obj(&self, i: usize) -> &'a Object {
        &self.objects[i]
    }

    /// Rejects an invalid object with its problems.
    fn reject(&mut self, i: usize, errs: InputErrors) {
        self.rejected.insert(i);
        let list = errs.errors.into_iter().map(|e| (i, e));
        if self.options.skip_invalid {
            self.skipped.extend(list);
        } else {
            self.errors.extend(list);
            // Problems an object's conversion counted without listing them.
            self.more_errors += errs.more;
        }
    }

    /// Rejects an object that depends on a rejected one (its own problem is already
    /// reported, so this only shows in [`Snapshot::skipped`]).
    /// Rejects object `i` with the core's validation errors.
    fn reject_invalid(&mut self, i: usize, problems: &[gangpack::ValidationError]) {
        let obj = self.obj(i);
        let mut errs = InputErrors::default();
        for e in problems {
            errs.push(validation_error(obj, e));
        }
        self.reject(i, errs);
    }

    fn reject_dependent(&mut self, i: usize, field: &str, on: &str) {
        if !self.rejected.insert(i) {
            return;
        }
        if self.options.skip_invalid {
            let obj = self.obj(i);
            self.skipped.push((
                i,
                input_error(
                    obj,
                    field.to_owned(),
                    format!("skipped: depends on {on}, which is invalid"),
                ),
            ));
        }
    }

    fn warn(&mut self, i: usize, message: impl std::fmt::Display) {
        let w = warning(self.obj(i), message);
        self.warnings.push((i, w));
    }

    /// Runs a conversion, recording warnings; `None` (and the object rejected) when it
    /// fails.
    fn convert<T>(
        &mut self,
        i: usize,
        f: impl FnOnce(&mut convert::Ctx<'_>) -> Option<T>,
    ) -> Option<T> {
        crate::trace::emit(crate::trace::Event::ConvertStart);
        let converted = convert::run(self.obj(i), f);
        crate::trace::emit(crate::trace::Event::ConvertEnd);
        self.converted(i, converted)
    }

    /// A conversion's result: its warnings recorded; `None` (and the object rejected)
    /// when it failed.
    fn converted<T>(&mut self, i: usize, (result, warnings): Converted<T>) -> Option<T> {
        self.warnings.extend(warnings.into_iter().map(|w| (i, w)));
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                self.reject(i, e);
                None
            }
        }
    }

    /// Converts objects `idx` with `convert` and applies each one that converts with
    /// `apply`, in `idx` order: exactly what [`Builder::convert`] then `apply` for each
    /// in turn does (a conversion depends on its object alone). Where there are threads,
    /// runs of [`CONVERT_RUN`] objects are converted ahead on other threads while this
    /// one applies ([`Builder::converters`]).
    fn each<T: Send>(
        &mut self,
        idx: &[usize],
        convert: fn(&mut convert::Ctx<'_>) -> Option<T>,
        apply: fn(&mut Builder<'a>, usize, T),
    ) {
        if self.converters > 0 && idx.len() > CONVERT_RUN {
            self.each_ahead(idx, convert, apply, self.converters);
        } else {
            self.each_in_turn(idx, convert, apply);
        }
    }

    /// [`Builder::each`] on this thread alone.
    fn each_in_turn<T>(
        &mut self,
        idx: &[usize],
        convert: fn(&mut convert::Ctx<'_>) -> Option<T>,
        apply: fn(&mut Builder<'a>, usize, T),
    ) {
        for &i in idx {
            if let Some(v) = self.convert(i, convert) {
                apply(self, i, v);
            }
        }
    }

    /// No threads (wasm32, where [`converters`] is 0): in turn.
    #[cfg(target_arch = "wasm32")]
    fn each_ahead<T>(
        &mut self,
        idx: &[usize],
        convert: fn(&mut convert::Ctx<'_>) -> Option<T>,
        apply: fn(&mut Builder<'a>, usize, T),
        _workers: usize,
    ) {
        self.each_in_turn(idx, convert, apply);
    }

    /// [`Builder::each`] with `workers` threads converting: worker `w` converts runs
    /// `w`, `w + workers`, ... and hands each over on a channel of its own (a few runs
    /// ahead at most), which this thread reads in turn, so that runs arrive in order.
    #[cfg(not(target_arch = "wasm32"))]
    fn each_ahead<T: Send>(
        &mut self,
        idx: &[usize],
        convert: fn(&mut convert::Ctx<'_>) -> Option<T>,
        apply: fn(&mut Builder<'a>, usize, T),
        workers: usize,
    ) {
        use crate::trace::{Event, emit};
        let objects = self.objects;
        let runs: Vec<&[usize]> = idx.chunks(CONVERT_RUN).collect();
        std::thread::scope(|s| {
            let mut inboxes = Vec::with_capacity(workers);
            for w in 0..workers {
                let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Converted<T>>>(2);
                inboxes.push(rx);
                let runs = &runs;
                s.spawn(move || {
                    for run in runs.iter().skip(w).step_by(workers) {
                        let done = run
                            .iter()
                            .map(|&i| convert::run(&objects[i], convert))
                            .collect();
                        // This side stopped reading (it panicked): stop too.
                        if tx.send(done).is_err() {
                            return;
                        }
                    }
                });
            }
            for (r, run) in runs.iter().enumerate() {
                // Time spent waiting for conversions is conversion time.
                emit(Event::ConvertStart);
                // A worker that panicked hung up: its panic is the scope's.
                let Ok(done) = inboxes[r % workers].recv() else {
                    return;
                };
                for (&i, converted) in run.iter().zip(done) {
                    emit(Event::ConvertEnd);
                    if let Some(v) = self.converted(i, converted) {
                        apply(self, i, v);
                    }
                }
            }
        });
    }

    /// The index of a valid object, or `Err(true)` when it exists but was rejected,
    /// `Err(false)` when it does not exist.
    fn find(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Result<usize, bool> {
        let key = (kind, namespace.map(str::to_owned), name.to_owned());
        match self.index.get(&key) {
            Some(&i) if self.rejected.contains(&i) => Err(true),
            Some(&i) => Ok(i),
            None => Err(false),
        }
    }

    // ----------------------------------------------------------------- phases

    /// The same kind, namespace and name twice: the later copies are errors.
    fn dedup(&mut self) {
        for (i, o) in self.objects.iter().enumerate() {
            if let Some(&first) = self.index.get(&key_of(o)) {
                let msg = format!(
                    "duplicate object: also defined at {}",
                    self.objects[first].source
                );
                self.reject(i, input_error(o, "metadata.name".into(), msg).into());
            } else {
                self.index.insert(key_of(o), i);
            }
        }
    }
}

/// Stable sort by object index.
fn in_input_order<T>(mut v: Vec<(usize, T)>) -> Vec<(usize, T)> {
    v.sort_by_key(|(i, _)| *i);
    v
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::{BuildOptions, CONVERT_RUN, Snapshot};
    use crate::load::Loaded;
    use crate::object::{Kind, Object};

    /// The examples' cluster and jobs, with every Node, ResourceSlice, ResourceClaim
    /// and Pod copied under other names, enough for [`Builder::each`] to convert
    /// ahead; some copies broken (a conversion error, a validation error, a bad
    /// quantity), some with a warning, one a duplicate.
    fn many() -> Loaded {
        let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");
        let paths = [
            format!("{examples}/cluster"),
            format!("{examples}/running-job.yaml"),
            format!("{examples}/gang-rack.yaml"),
        ];
        let base = crate::load_paths(&paths).expect("the examples load");
        let mut objects = Vec::new();
        for o in &base.objects {
            objects.push(o.clone());
            if !matches!(
                o.kind,
                Kind::Node | Kind::ResourceSlice | Kind::ResourceClaim | Kind::Pod
            ) {
                continue;
            }
            for c in 0..CONVERT_RUN / 2 {
                let mut raw = (*o.raw).clone();
                let name = format!("{}-copy-{c}", o.name);
                raw["metadata"]["name"] = json!(name);
                match (o.kind, c % 40) {
                    (Kind::ResourceSlice, _) => {
                        raw["spec"]["pool"]["name"] = json!(name);
                        match c % 40 {
                            // Only validation finds it.
                            3 => raw["spec"]["driver"] = json!(""),
                            // Conversion finds it (and validation what else).
                            5 => {
                                raw["spec"]["devices"][0]["attributes"]["index"]["string"] =
                                    json!("x");
                            }
                            7 => {
                                raw["spec"]["devices"][1]["attributes"]["index"]["string"] =
                                    json!("x");
                                raw["spec"]["pool"]["name"] = json!("");
                            }
                            // A warning.
                            11 => raw["spec"]["partitionTypeAttribute"] = json!("x"),
                            _ => {}
                        }
                    }
                    (_, 4) => raw["metadata"]["creationTimestamp"] = json!(3),
                    (Kind::Node, 6) => raw["status"]["allocatable"]["cpu"] = json!("lots"),
                    _ => {}
                }
                let name = if c == 9 { o.name.clone() } else { name };
                objects.push(Object {
                    name,
                    raw: Arc::new(raw),
                    ..o.clone()
                });
            }
        }
        Loaded {
            objects,
            warnings: base.warnings,
            bindings: Vec::new(),
            empty: Vec::new(),
        }
    }

    /// Converting ahead on threads builds what converting in turn builds: the same
    /// errors, or the same warnings, skipped objects and plan.
    #[test]
    fn converting_ahead_builds_what_converting_in_turn_builds() {
        let loaded = many();
        assert!(loaded.objects.len() > 4 * CONVERT_RUN);
        let errors = |converters| {
            Snapshot::build_with(loaded.clone(), &BuildOptions::default(), converters)
                .err()
                .expect("some copies are invalid")
        };
        let in_turn = errors(0);
        assert!(in_turn.more > 0, "{in_turn}");
        for converters in [1, 3] {
            assert_eq!(errors(converters), in_turn);
        }
        let options = BuildOptions {
            skip_invalid: true,
            ..BuildOptions::default()
        };
        let built = |converters| {
            let mut s = Snapshot::build_with(loaded.clone(), &options, converters)
                .expect("invalid objects are skipped");
            let plan = crate::output::plan(&mut s);
            (
                s.warnings,
                s.skipped,
                s.waiting,
                format!("{:?}", s.generated),
                serde_json::to_value(&plan).expect("a plan serializes"),
            )
        };
        let in_turn = built(0);
        assert!(!in_turn.0.is_empty() && !in_turn.1.is_empty());
        for converters in [1, 3] {
            assert_eq!(built(converters), in_turn);
        }
    }
}
