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

use std::collections::{BTreeMap, BTreeSet};

use gangpack::{
    AllocationMode, ClaimSource, Cluster, ClusterError, DeviceAllocation, DeviceRef, DeviceRequest,
    ExactDeviceRequest, GangOptions, PodGroup, PodResourceClaim, PriorityClass, Problem, Quantity,
    ResourceClaim, ResourceClaimTemplate, Scheduler, SchedulerError,
};
use serde_json::{Value, json};

use crate::convert::de::{input_error, latest_timestamp, validation_error, warning};
use crate::convert::workload::{GroupInput, PodInput};
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
}

impl Snapshot {
    /// Converts and applies every object; fails with every problem found (nothing
    /// half-built) unless `skip_invalid`.
    pub fn build(loaded: Loaded, options: &BuildOptions) -> Result<Snapshot, InputErrors> {
        let Loaded {
            objects,
            mut warnings,
        } = loaded;
        let mut b = Builder::new(&objects, options);
        b.run();
        let Builder {
            errors,
            more_errors,
            skipped,
            warnings: found,
            scheduler,
            generated,
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
        })
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

/// What [`Builder::earlier_claim`] found for a template entry.
enum Earlier {
    /// Use this existing claim.
    Use(String),
    /// The object was rejected (it depends on a rejected claim).
    Rejected,
    /// Generate one.
    None,
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
    scheduler: Option<Scheduler>,
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
            scheduler: None,
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
            for i in idx {
                match kind {
                    Kind::Namespace => self.namespace(i),
                    Kind::Node => self.node(i),
                    Kind::PriorityClass => self.priority_class(i),
                    Kind::DeviceClass => self.device_class(i),
                    Kind::ResourceSlice => self.slice(i),
                    Kind::DeviceTaintRule => self.taint_rule(i),
                    Kind::ResourceClaimTemplate => self.template(i),
                    Kind::ResourceClaim => self.claim(i),
                    Kind::Workload => self.workload(i),
                    Kind::PodGroup => self.group(i),
                    Kind::Pod => self.pod(i),
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
        let (result, warnings) = convert::run(self.obj(i), f);
        self.warnings.extend(warnings.into_iter().map(|w| (i, w)));
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                self.reject(i, e);
                None
            }
        }
    }

    fn cluster_error(&self, i: usize, e: &ClusterError) -> InputErrors {
        let obj = self.obj(i);
        let mut errs = InputErrors::default();
        match e {
            ClusterError::Invalid(list) => {
                for v in list {
                    errs.push(validation_error(obj, v));
                }
            }
            other => errs.push(input_error(obj, String::new(), other)),
        }
        errs
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

    fn namespace(&mut self, i: usize) {
        if let Some(labels) = self.convert(i, convert::namespace_labels) {
            let name = self.obj(i).name.clone();
            self.namespaces.insert(name, labels);
        }
    }

    fn node(&mut self, i: usize) {
        let Some(node) = self.convert(i, convert::resource::node) else {
            return;
        };
        let resources: Vec<String> = node.allocatable.keys().cloned().collect();
        match self.cluster.add_node(node) {
            Ok(_) => self.node_resources.extend(resources),
            Err(e) => {
                let errs = self.cluster_error(i, &e);
                self.reject(i, errs);
            }
        }
    }

    fn priority_class(&mut self, i: usize) {
        if let Some(c) = self.convert(i, convert::workload::priority_class) {
            self.classes.push(c);
        }
    }

    fn device_class(&mut self, i: usize) {
        let Some(class) = self.convert(i, convert::resource::device_class) else {
            return;
        };
        if let Err(e) = self.cluster.put_class(class) {
            let errs = self.cluster_error(i, &e);
            self.reject(i, errs);
        }
    }

    /// Extended resource name → class: each class's implicit name, then the explicit
    /// `extendedResourceName`s (when several classes name the same resource, the most
    /// recently created wins, ties to the first name, as upstream).
    fn map_extended_resources(&mut self) {
        let mut explicit: BTreeMap<String, (gangpack::Time, String)> = BTreeMap::new();
        for class in self.cluster.classes() {
            self.extended.insert(
                format!("{DEVICE_CLASS_RESOURCE_PREFIX}{}", class.name),
                class.name.clone(),
            );
            let Some(name) = &class.extended_resource_name else {
                continue;
            };
            let created = self
                .find(Kind::DeviceClass, None, &class.name)
                .ok()
                .map(|i| creation_of(self.obj(i)))
                .unwrap_or_default();
            let better = explicit
                .get(name)
                .is_none_or(|(t, n)| created > *t || (created == *t && class.name < *n));
            if better {
                explicit.insert(name.clone(), (created, class.name.clone()));
            }
        }
        for (resource, (_, class)) in explicit {
            self.extended.insert(resource, class);
        }
    }

    fn slice(&mut self, i: usize) {
        let Some(slice) = self.convert(i, convert::resource::resource_slice) else {
            return;
        };
        if let Err(e) = self.cluster.add_slice(slice) {
            let errs = self.cluster_error(i, &e);
            self.reject(i, errs);
        }
    }

    fn taint_rule(&mut self, i: usize) {
        let Some(rule) = self.convert(i, convert::resource::device_taint_rule) else {
            return;
        };
        if let Err(e) = self.cluster.add_taint_rule(rule) {
            let errs = self.cluster_error(i, &e);
            self.reject(i, errs);
        }
    }

    fn template(&mut self, i: usize) {
        let Some(t) = self.convert(i, convert::claim_template) else {
            return;
        };
        let errs = self.admin_access(i, &t.template.spec, "spec.spec.devices", false);
        if !errs.is_empty() {
            self.reject(i, errs);
            return;
        }
        let key = (t.template.namespace.clone(), t.template.name.clone());
        self.templates.insert(key, (i, t));
    }

    fn claim(&mut self, i: usize) {
        let Some(c) = self.convert(i, convert::resource_claim) else {
            return;
        };
        let allocated = c.claim.allocation.is_some();
        let errs = self.admin_access(i, &c.claim.spec, "spec.devices", allocated);
        if !errs.is_empty() {
            self.reject(i, errs);
            return;
        }
        let key = (c.claim.namespace.clone(), c.claim.name.clone());
        self.claims.insert(key, (i, c));
    }

    /// Upstream admits `adminAccess: true` only in namespaces labelled
    /// `resource.kubernetes.io/admin-access: "true"`. Without the Namespace object, a
    /// pending claim (or a template) is refused and an allocated claim, admitted back
    /// then, only warned about.
    fn admin_access(
        &mut self,
        i: usize,
        spec: &gangpack::ResourceClaimSpec,
        path: &str,
        allocated: bool,
    ) -> InputErrors {
        let obj = self.obj(i);
        let ns = obj.namespace.clone().unwrap_or_default();
        let mut errs = InputErrors::default();
        for (r, req) in spec.requests.iter().enumerate() {
            let gangpack::DeviceRequestKind::Exactly(e) = &req.kind else {
                continue;
            };
            if !e.admin_access {
                continue;
            }
            let field = format!("{path}.requests[{r}].exactly.adminAccess");
            match self.namespaces.get(&ns) {
                Some(labels) if labels.get(ADMIN_ACCESS_LABEL).map(String::as_str) == Some("true") => {}
                Some(_) => errs.push(input_error(
                    obj,
                    field,
                    format!(
                        "admin access to devices requires the label {ADMIN_ACCESS_LABEL}: \"true\" on Namespace \"{ns}\""
                    ),
                )),
                None if allocated => self.warnings.push((
                    i,
                    warning(
                        obj,
                        format!(
                            "{field}: Namespace \"{ns}\" is not in the input, so its {ADMIN_ACCESS_LABEL} label cannot be checked; the claim is allocated, so it was admitted"
                        ),
                    ),
                )),
                None => errs.push(input_error(
                    obj,
                    field,
                    format!(
                        "admin access to devices requires the label {ADMIN_ACCESS_LABEL}: \"true\" on Namespace \"{ns}\", which is not in the input: include the Namespace object"
                    ),
                )),
            }
        }
        errs
    }

    /// Records the devices of every allocated claim as held (by `namespace/name`).
    fn allocate_claims(&mut self) {
        let keys: Vec<(String, String)> = self.claims.keys().cloned().collect();
        for key in keys {
            let (i, c) = &self.claims[&key];
            let i = *i;
            let Some(result) = c.claim.allocation.clone() else {
                continue;
            };
            let consumer = format!("{}/{}", key.0, key.1);
            let mut done: Vec<DeviceRef> = Vec::new();
            let mut failed = None;
            for (r, d) in result.devices.iter().enumerate() {
                let device = DeviceRef::new(&d.driver, &d.pool, &d.device);
                let allocation = DeviceAllocation {
                    consumer: consumer.clone(),
                    tolerations: d.tolerations.clone(),
                    admin_access: d.admin_access,
                    share_id: d.share_id.clone(),
                    consumed_capacity: d.consumed_capacity.clone(),
                };
                match self.cluster.allocate(&device, allocation) {
                    Ok(_) => done.push(device),
                    Err(ClusterError::DeviceNotFound(_)) => self.warn(
                        i,
                        format!(
                            "status.allocation.devices.results[{r}]: device {device} is not published (its slice is not in the input, or its pool is incomplete): it is not marked as allocated"
                        ),
                    ),
                    Err(e) => {
                        failed = Some((r, e));
                        break;
                    }
                }
            }
            if let Some((r, e)) = failed {
                for d in &done {
                    let _ = self.cluster.release(d, &consumer);
                }
                let err = input_error(
                    self.obj(i),
                    format!("status.allocation.devices.results[{r}]"),
                    e,
                );
                self.claims.remove(&key);
                self.reject(i, err.into());
            }
        }
    }

    /// Indexes the claims a controller generated: an owner reference (a Pod or a
    /// PodGroup) and one of the generated-claim annotations. A pod or PodGroup whose
    /// `status` does not name its generated claim finds it here, as the resourceclaim
    /// controller finds it (by owner and annotation) before creating one.
    fn index_owned_claims(&mut self) {
        let annotations = [
            GeneratedClaim::POD_CLAIM_NAME_ANNOTATION,
            GeneratedClaim::POD_GROUP_CLAIM_NAME_ANNOTATION,
            GeneratedClaim::EXTENDED_RESOURCE_CLAIM_ANNOTATION,
        ];
        let mut index = BTreeMap::new();
        for ((ns, name), (i, _)) in &self.claims {
            let meta = &self.objects[*i].raw["metadata"];
            let owners = meta["ownerReferences"].as_array().into_iter().flatten();
            for o in owners {
                let (Some(kind), Some(owner)) = (o["kind"].as_str(), o["name"].as_str()) else {
                    continue;
                };
                for a in annotations {
                    if let Some(v) = meta["annotations"][a].as_str() {
                        index.insert(
                            (
                                ns.clone(),
                                kind.to_owned(),
                                owner.to_owned(),
                                a.to_owned(),
                                v.to_owned(),
                            ),
                            name.clone(),
                        );
                    }
                }
            }
        }
        self.owned = index;
    }

    /// The claim generated earlier for `owner`'s entry (see `index_owned_claims`).
    fn owned_claim(
        &self,
        ns: &str,
        owner_kind: &str,
        owner: &str,
        annotation: &str,
        value: &str,
    ) -> Option<String> {
        self.owned
            .get(&(
                ns.to_owned(),
                owner_kind.to_owned(),
                owner.to_owned(),
                annotation.to_owned(),
                value.to_owned(),
            ))
            .cloned()
    }

    /// The claim generated earlier for a template entry of object `i` (a pod or a
    /// PodGroup): the one its status names, else the one found by owner and annotation
    /// (`owner` = owner kind, owner name, annotation). A named claim that is not in the
    /// input gets a warning (a claim is generated); one that was rejected rejects `i`.
    fn earlier_claim(
        &mut self,
        i: usize,
        ns: &str,
        owner: (&str, &str, &str),
        entry: &str,
        named: Option<&String>,
        path: &str,
    ) -> Earlier {
        let found = named
            .cloned()
            .or_else(|| self.owned_claim(ns, owner.0, owner.1, owner.2, entry));
        let Some(c) = found else {
            return Earlier::None;
        };
        match self.find(Kind::ResourceClaim, Some(ns), &c) {
            Ok(_) => Earlier::Use(c),
            Err(true) => {
                let on = crate::describe(Kind::ResourceClaim, Some(ns), &c);
                self.reject_dependent(i, "status.resourceClaimStatuses", &on);
                Earlier::Rejected
            }
            Err(false) => {
                self.warn(
                    i,
                    format!(
                        "status.resourceClaimStatuses names claim \"{c}\" for {path}, which is not in the input: a claim is generated"
                    ),
                );
                Earlier::None
            }
        }
    }

    fn workload(&mut self, i: usize) {
        let _ = self.convert(i, convert::workload::workload);
    }

    fn group(&mut self, i: usize) {
        let Some(GroupInput {
            group,
            uid,
            claim_statuses,
        }) = self.convert(i, convert::workload::pod_group)
        else {
            return;
        };
        let ns = group.namespace.clone();
        let mut errs = InputErrors::default();
        let mut partial = group.clone();
        for (e, entry) in partial.resource_claims.iter_mut().enumerate() {
            let path = format!("spec.resourceClaims[{e}]");
            match entry.source.clone() {
                ClaimSource::ClaimName(c) => {
                    if let Err(dependent) = self.find(Kind::ResourceClaim, Some(&ns), &c) {
                        if dependent {
                            let on = crate::describe(Kind::ResourceClaim, Some(&ns), &c);
                            self.reject_dependent(i, &format!("{path}.resourceClaimName"), &on);
                            return;
                        }
                        errs.push(not_found(
                            self.obj(i),
                            &format!("{path}.resourceClaimName"),
                            &c,
                        ));
                    }
                }
                ClaimSource::Template(t) => {
                    let named = claim_statuses.get(&entry.name);
                    let owner = (
                        "PodGroup",
                        group.name.as_str(),
                        GeneratedClaim::POD_GROUP_CLAIM_NAME_ANNOTATION,
                    );
                    match self.earlier_claim(i, &ns, owner, &entry.name, named, &path) {
                        Earlier::Use(c) => {
                            entry.source = ClaimSource::ClaimName(c);
                            continue;
                        }
                        Earlier::Rejected => return,
                        Earlier::None => {}
                    }
                    if let Err(dependent) = self.find(Kind::ResourceClaimTemplate, Some(&ns), &t) {
                        if dependent {
                            let on = crate::describe(Kind::ResourceClaimTemplate, Some(&ns), &t);
                            self.reject_dependent(
                                i,
                                &format!("{path}.resourceClaimTemplateName"),
                                &on,
                            );
                            return;
                        }
                        errs.push(not_found(
                            self.obj(i),
                            &format!("{path}.resourceClaimTemplateName"),
                            &t,
                        ));
                    }
                }
            }
        }
        if partial.priority.is_none()
            && gangpack::resolve_priority(&self.classes, partial.priority_class_name.as_deref())
                .is_none()
        {
            errs.push(not_found(
                self.obj(i),
                "spec.priorityClassName",
                partial.priority_class_name.as_deref().unwrap_or_default(),
            ));
        }
        if !errs.is_empty() {
            self.reject(i, errs);
            return;
        }
        let result = self.with_templates(|t| gangpack::instantiate_group_claims(&partial, t));
        let (done, claims) = match result {
            Ok(x) => x,
            Err(v) => {
                self.reject_invalid(i, &v);
                return;
            }
        };
        for claim in claims {
            let entry = partial
                .resource_claims
                .iter()
                .find(|e| {
                    matches!(e.source, ClaimSource::Template(_))
                        && gangpack::generated_group_claim_name(&ns, &partial.name, &e.name)
                            == claim.name
                })
                .expect("a generated claim comes from a template entry");
            let ClaimSource::Template(t) = &entry.source else {
                unreachable!("filtered above")
            };
            let (_, template) = &self.templates[&(ns.clone(), t.clone())];
            let raw = generated_raw(
                &claim,
                ("scheduling.k8s.io/v1beta1", "PodGroup", &partial.name, &uid),
                Some((GeneratedClaim::POD_GROUP_CLAIM_NAME_ANNOTATION, &entry.name)),
                template,
            );
            self.generated.push(GeneratedClaim {
                claim,
                owner: Owner::PodGroup {
                    namespace: ns.clone(),
                    name: partial.name.clone(),
                },
                entry: Some(entry.name.clone()),
                raw,
                request_mappings: Vec::new(),
            });
        }
        let key = (ns, partial.name.clone());
        self.groups.insert(
            key,
            ReadyGroup {
                original: group,
                partial,
                done,
                idx: i,
            },
        );
    }

    /// Runs `f` on the valid templates, as the core's instantiation functions take
    /// them (the list is built once: every template is read before the first PodGroup
    /// or pod).
    fn with_templates<R>(&mut self, f: impl FnOnce(&[ResourceClaimTemplate]) -> R) -> R {
        let list = self.template_list.take().unwrap_or_else(|| {
            self.templates
                .values()
                .map(|(_, t)| t.template.clone())
                .collect()
        });
        let r = f(&list);
        self.template_list = Some(list);
        r
    }

    fn pod(&mut self, i: usize) {
        let Some(input) = self.convert(i, convert::workload::pod) else {
            return;
        };
        let bound = input.pod.node_name.is_some();
        if let Some(phase) = input
            .phase
            .as_deref()
            .filter(|p| matches!(*p, "Succeeded" | "Failed"))
        {
            self.warn(
                i,
                format!("skipped: the pod has finished (status.phase {phase}) and holds nothing"),
            );
            return;
        }
        if input.deleting {
            self.warn(
                i,
                "skipped: the pod is terminating (metadata.deletionTimestamp is set)",
            );
            return;
        }
        if !bound && input.pod.effective_scheduler_name() != gangpack::DEFAULT_SCHEDULER_NAME {
            self.warn(
                i,
                format!(
                    "skipped: spec.schedulerName \"{}\" is not {}; only its bound pods are read",
                    input.pod.scheduler_name,
                    gangpack::DEFAULT_SCHEDULER_NAME
                ),
            );
            return;
        }
        if !bound && !input.gates.is_empty() {
            self.warn(
                i,
                format!(
                    "skipped: spec.schedulingGates ({}) hold the pod back from scheduling",
                    input.gates.join(", ")
                ),
            );
            return;
        }
        let mut errs = InputErrors::default();
        let mut input = input;
        self.priority(i, &mut input, &mut errs);
        if let Some(node) = &input.pod.node_name
            && self.cluster.node(node).is_none()
        {
            if let Err(true) = self.find(Kind::Node, None, node) {
                let on = crate::describe(Kind::Node, None, node);
                self.reject_dependent(i, "spec.nodeName", &on);
                return;
            }
            errs.push(not_found(self.obj(i), "spec.nodeName", node));
        }
        let Ok(extended) = self.extended_resources(i, &mut input, &mut errs) else {
            return;
        };
        // The pod's group.
        let ns = input.pod.namespace.clone();
        let group_key = input
            .pod
            .scheduling_group
            .as_ref()
            .map(|g| (ns.clone(), g.clone()));
        let group: Option<(PodGroup, PodGroup)> = match &group_key {
            Some(k) => match self.find(Kind::PodGroup, Some(&k.0), &k.1) {
                Ok(_) => self
                    .groups
                    .get(k)
                    .map(|g| (g.original.clone(), g.partial.clone())),
                Err(true) => {
                    let on = crate::describe(Kind::PodGroup, Some(&k.0), &k.1);
                    self.reject_dependent(i, "spec.schedulingGroup.podGroupName", &on);
                    return;
                }
                Err(false) => {
                    if !bound {
                        self.warn(
                            i,
                            format!(
                                "spec.schedulingGroup.podGroupName: PodGroup \"{}\" is not in the input: the pod waits for it",
                                k.1
                            ),
                        );
                    }
                    None
                }
            },
            None => None,
        };
        // Claims.
        let mut pod = input.pod.clone();
        for (e, entry) in pod.resource_claims.iter_mut().enumerate() {
            let path = format!("spec.resourceClaims[{e}]");
            match entry.source.clone() {
                ClaimSource::ClaimName(c) => match self.find(Kind::ResourceClaim, Some(&ns), &c) {
                    Ok(_) => {
                        if bound && !self.claim_allocated(&ns, &c) {
                            self.warn(i, format!("{path}: the pod is bound but ResourceClaim \"{c}\" is not allocated"));
                        }
                    }
                    Err(true) => {
                        let on = crate::describe(Kind::ResourceClaim, Some(&ns), &c);
                        self.reject_dependent(i, &format!("{path}.resourceClaimName"), &on);
                        return;
                    }
                    Err(false) => {
                        errs.push(not_found(
                            self.obj(i),
                            &format!("{path}.resourceClaimName"),
                            &c,
                        ));
                    }
                },
                ClaimSource::Template(t) => {
                    let named = input.claim_statuses.get(&entry.name);
                    let owner = (
                        "Pod",
                        input.pod.name.as_str(),
                        GeneratedClaim::POD_CLAIM_NAME_ANNOTATION,
                    );
                    match self.earlier_claim(i, &ns, owner, &entry.name, named, &path) {
                        Earlier::Use(c) => {
                            entry.source = ClaimSource::ClaimName(c);
                            continue;
                        }
                        Earlier::Rejected => return,
                        Earlier::None => {}
                    }
                    // A claim of the pod's group (KEP-5729: same name, same source): the
                    // group's, as its status names it or as it is generated.
                    if let Some((original, partial)) = &group
                        && let Some(pos) = original
                            .resource_claims
                            .iter()
                            .position(|x| x.name == entry.name && x.source == entry.source)
                    {
                        if let ClaimSource::ClaimName(c) = &partial.resource_claims[pos].source {
                            entry.source = ClaimSource::ClaimName(c.clone());
                        }
                        continue;
                    }
                    match self.find(Kind::ResourceClaimTemplate, Some(&ns), &t) {
                        Ok(_) => {
                            if bound {
                                self.warn(i, format!("{path}: the pod is bound but its claim is not in the input (status.resourceClaimStatuses): the generated claim is not allocated"));
                            }
                        }
                        Err(true) => {
                            let on = crate::describe(Kind::ResourceClaimTemplate, Some(&ns), &t);
                            self.reject_dependent(
                                i,
                                &format!("{path}.resourceClaimTemplateName"),
                                &on,
                            );
                            return;
                        }
                        Err(false) => errs.push(not_found(
                            self.obj(i),
                            &format!("{path}.resourceClaimTemplateName"),
                            &t,
                        )),
                    }
                }
            }
        }
        if !errs.is_empty() {
            self.reject(i, errs);
            return;
        }
        // The extended-resource claim, named by an entry of its own.
        if let Some(g) = &extended {
            let name = entry_name(&pod.resource_claims);
            pod.resource_claims.push(PodResourceClaim {
                name,
                source: ClaimSource::ClaimName(g.claim.name.clone()),
            });
        }
        let result = self.with_templates(|t| match &group {
            Some((_, partial)) => gangpack::instantiate_member_claims(&pod, partial, t),
            None => gangpack::instantiate_pod_claims(&pod, t),
        });
        let (pod, claims) = match result {
            Ok(x) => x,
            Err(v) => {
                self.reject_invalid(i, &v);
                return;
            }
        };
        for claim in claims {
            let entry = input
                .pod
                .resource_claims
                .iter()
                .find(|e| {
                    matches!(e.source, ClaimSource::Template(_))
                        && gangpack::generated_claim_name(&ns, &input.pod.name, &e.name)
                            == claim.name
                })
                .expect("a generated claim comes from a template entry");
            let ClaimSource::Template(t) = &entry.source else {
                unreachable!("filtered above")
            };
            let (_, template) = &self.templates[&(ns.clone(), t.clone())];
            let raw = generated_raw(
                &claim,
                ("v1", "Pod", &input.pod.name, &input.uid),
                Some((GeneratedClaim::POD_CLAIM_NAME_ANNOTATION, &entry.name)),
                template,
            );
            self.generated.push(GeneratedClaim {
                claim,
                owner: Owner::Pod {
                    namespace: ns.clone(),
                    name: input.pod.name.clone(),
                },
                entry: Some(entry.name.clone()),
                raw,
                request_mappings: Vec::new(),
            });
        }
        self.generated.extend(extended);
        self.pods.push(ReadyPod { idx: i, pod });
    }

    fn claim_allocated(&self, ns: &str, name: &str) -> bool {
        self.claims
            .get(&(ns.to_owned(), name.to_owned()))
            .is_some_and(|(_, c)| c.claim.allocation.is_some())
    }

    /// `spec.priority`, else the PriorityClass's value (or the global default's);
    /// `spec.preemptionPolicy`, else the class's.
    fn priority(&self, i: usize, input: &mut PodInput, errs: &mut InputErrors) {
        let class = input.priority_class_name.as_deref();
        let resolved = gangpack::resolve_priority(&self.classes, class);
        match (input.priority, resolved) {
            (Some(p), r) => {
                input.pod.priority = p;
                input.pod.preemption_policy = input
                    .preemption_policy
                    .or(r.map(|(_, p)| p))
                    .unwrap_or_default();
            }
            (None, Some((value, policy))) => {
                input.pod.priority = value;
                input.pod.preemption_policy = input.preemption_policy.unwrap_or(policy);
            }
            (None, None) => errs.push(not_found(
                self.obj(i),
                "spec.priorityClassName",
                class.unwrap_or_default(),
            )),
        }
    }

    /// Extended resources (`nvidia.com/gpu: 8` in a container): kept as node resources
    /// where a node advertises them (device plugins), else served by a claim for the
    /// DeviceClass that names them (`spec.extendedResourceName`, or the implicit
    /// `deviceclass.resource.kubernetes.io/<class>`), as Kubernetes 1.34+ does: one
    /// claim per pod, one request `container-<i>-request-<j>` per container and
    /// resource. Else kept, with a warning (the pod cannot be scheduled).
    ///
    /// `Err` when the pod was rejected as a dependent.
    fn extended_resources(
        &mut self,
        i: usize,
        input: &mut PodInput,
        errs: &mut InputErrors,
    ) -> Result<Option<GeneratedClaim>, ()> {
        let ns = input.pod.namespace.clone();
        let bound = input.pod.node_name.is_some();
        let mut served: BTreeSet<String> = BTreeSet::new();
        if input.extended_claim.is_none()
            && let Some(claim) = self.owned_claim(
                &ns,
                "Pod",
                &input.pod.name,
                GeneratedClaim::EXTENDED_RESOURCE_CLAIM_ANNOTATION,
                "true",
            )
        {
            // Generated earlier for this pod (its status does not say for which
            // resources): it serves every extended resource a DeviceClass provides.
            let resources: Vec<String> = input
                .pod
                .requests
                .keys()
                .filter(|r| is_extended_resource(r) && self.extended.contains_key(*r))
                .cloned()
                .collect();
            input.extended_claim = Some((claim, resources));
        }
        if let Some((claim, resources)) = &input.extended_claim {
            match self.find(Kind::ResourceClaim, Some(&ns), claim) {
                Ok(_) => {
                    served.extend(resources.iter().cloned());
                    let name = entry_name(&input.pod.resource_claims);
                    input.pod.resource_claims.push(PodResourceClaim {
                        name,
                        source: ClaimSource::ClaimName(claim.clone()),
                    });
                }
                Err(true) => {
                    let on = crate::describe(Kind::ResourceClaim, Some(&ns), claim);
                    self.reject_dependent(i, "status.extendedResourceClaimStatus.resourceClaimName", &on);
                    return Err(());
                }
                Err(false) => self.warn(
                    i,
                    format!(
                        "status.extendedResourceClaimStatus names ResourceClaim \"{claim}\", which is not in the input"
                    ),
                ),
            }
        }
        let mut by_dra: BTreeMap<String, String> = BTreeMap::new();
        let names: Vec<String> = input
            .pod
            .requests
            .keys()
            .filter(|r| is_extended_resource(r))
            .cloned()
            .collect();
        for r in names {
            if served.contains(&r) {
                input.pod.requests.remove(&r);
            } else if self.node_resources.contains(&r) {
                // A device plugin's resource: counted against node allocatable.
            } else if let Some(class) = self.extended.get(&r) {
                by_dra.insert(r.clone(), class.clone());
                input.pod.requests.remove(&r);
            } else if !bound {
                self.warn(
                    i,
                    format!(
                        "extended resource \"{r}\": no Node advertises it in status.allocatable and no DeviceClass provides it (spec.extendedResourceName): the pod cannot be scheduled"
                    ),
                );
            }
        }
        if by_dra.is_empty() {
            return Ok(None);
        }
        if bound {
            self.warn(
                i,
                format!(
                    "the pod is bound, but the claim for its extended resources ({}) is not in the input (status.extendedResourceClaimStatus): their devices are not known",
                    by_dra.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            );
            return Ok(None);
        }
        let mut requests: Vec<DeviceRequest> = Vec::new();
        let mut raw_requests: Vec<Value> = Vec::new();
        let mut request_mappings: Vec<RequestMapping> = Vec::new();
        for (ci, c) in input.containers.iter().enumerate() {
            for (j, (r, q)) in c.requests.iter().enumerate() {
                let Some(class) = by_dra.get(r) else {
                    continue;
                };
                let at = c
                    .written_at
                    .get(r)
                    .cloned()
                    .unwrap_or_else(|| c.path.clone());
                let Some(count) = whole(*q) else {
                    errs.push(input_error(
                        self.obj(i),
                        at,
                        Problem::Invalid {
                            value: q.to_string(),
                            reason: "must be a whole number of devices",
                        },
                    ));
                    continue;
                };
                if count == 0 {
                    continue;
                }
                let name = format!("container-{ci}-request-{j}");
                let pointer = format!("/{}/name", c.path.replace(['.', '['], "/").replace(']', ""));
                request_mappings.push(RequestMapping {
                    container_name: self
                        .obj(i)
                        .raw
                        .pointer(&pointer)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    resource_name: r.clone(),
                    request_name: name.clone(),
                });
                requests.push(DeviceRequest::exactly(
                    name.clone(),
                    ExactDeviceRequest::new(class.clone())
                        .with_mode(AllocationMode::ExactCount(count)),
                ));
                raw_requests.push(json!({
                    "name": name,
                    "exactly": {
                        "deviceClassName": class,
                        "allocationMode": "ExactCount",
                        "count": count,
                    }
                }));
            }
        }
        if requests.is_empty() {
            return Ok(None);
        }
        // Upstream sorts the requests by name.
        requests.sort_by(|a, b| a.name.cmp(&b.name));
        raw_requests.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        let claim_name = gangpack::generated_claim_name(&ns, &input.pod.name, "extended-resources");
        let mut claim = ResourceClaim::new(ns.clone(), claim_name.clone());
        claim.spec.requests = requests;
        let raw = json!({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": claim_name,
                "namespace": ns,
                "annotations": { GeneratedClaim::EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true" },
                "ownerReferences": [owner_reference("v1", "Pod", &input.pod.name, &input.uid)],
            },
            "spec": { "devices": { "requests": raw_requests } },
        });
        Ok(Some(GeneratedClaim {
            claim,
            owner: Owner::Pod {
                namespace: ns,
                name: input.pod.name.clone(),
            },
            entry: None,
            raw,
            request_mappings,
        }))
    }

    // ----------------------------------------------------------------- assembly

    /// Builds the scheduler from what passed.
    fn assemble(&mut self) {
        for g in self.groups.values() {
            for t in &g.done.topology {
                self.cluster.track_topology_key(&t.key);
            }
        }
        let cluster = std::mem::take(&mut self.cluster);
        let mut s = Scheduler::new(cluster, self.options.gang.clone());
        for c in &self.classes {
            s.put_priority_class(c.clone()).expect("validated");
        }
        let mut failures: Vec<(usize, SchedulerError)> = Vec::new();
        for (i, c) in self.claims.values() {
            if self.rejected.contains(i) {
                continue;
            }
            if let Err(e) = s.add_claim(c.claim.clone()) {
                failures.push((*i, e));
            }
        }
        let generated: Vec<ResourceClaim> =
            self.generated.iter().map(|g| g.claim.clone()).collect();
        for claim in generated {
            if let Err(e) = s.add_claim(claim.clone()) {
                // A generated name that collides with a claim of the input.
                let owner = self
                    .generated
                    .iter()
                    .find(|g| g.claim.name == claim.name)
                    .map(|g| &g.owner);
                let idx = match owner {
                    Some(Owner::Pod { namespace, name }) => {
                        self.find(Kind::Pod, Some(namespace), name).ok()
                    }
                    Some(Owner::PodGroup { namespace, name }) => {
                        self.find(Kind::PodGroup, Some(namespace), name).ok()
                    }
                    None => None,
                };
                if let Some(idx) = idx {
                    failures.push((idx, e));
                }
            }
        }
        for g in self.groups.values() {
            if self.rejected.contains(&g.idx) {
                continue;
            }
            if let Err(e) = s.add_group(g.done.clone()) {
                failures.push((g.idx, e));
            }
        }
        // Bound pods first (they hold their node resources), then pending ones.
        let (bound, pending): (Vec<&ReadyPod>, Vec<&ReadyPod>) =
            self.pods.iter().partition(|p| p.pod.node_name.is_some());
        let mut overcommitted = Vec::new();
        for p in bound.into_iter().chain(pending) {
            if self.rejected.contains(&p.idx) {
                continue;
            }
            match s.add_pod(p.pod.clone()) {
                Ok(()) => {}
                Err(SchedulerError::Cluster(ClusterError::Insufficient { node, shortfalls })) => {
                    // The pod runs there anyway (a node whose allocatable shrank, say).
                    let mut pod = p.pod.clone();
                    pod.requests.clear();
                    let what: Vec<String> = shortfalls
                        .iter()
                        .map(|s| {
                            format!(
                                "{} {} requested, {} free",
                                s.resource, s.requested, s.available
                            )
                        })
                        .collect();
                    overcommitted.push((
                        p.idx,
                        format!(
                            "node {node} is over-committed ({}): the running pod's requests are not reserved",
                            what.join(", ")
                        ),
                    ));
                    if let Err(e) = s.add_pod(pod) {
                        failures.push((p.idx, e));
                    }
                }
                Err(e) => failures.push((p.idx, e)),
            }
        }
        for (i, msg) in overcommitted {
            self.warn(i, msg);
        }
        for (i, e) in failures {
            let obj = self.obj(i);
            let mut errs = InputErrors::default();
            match e {
                SchedulerError::Invalid(v) => {
                    for x in &v {
                        errs.push(validation_error(obj, x));
                    }
                }
                other => errs.push(input_error(obj, String::new(), other)),
            }
            self.reject(i, errs);
        }
        if self.errors.is_empty() && self.more_errors == 0 {
            self.scheduler = Some(s);
        }
    }
}

/// Stable sort by object index.
fn in_input_order<T>(mut v: Vec<(usize, T)>) -> Vec<(usize, T)> {
    v.sort_by_key(|(i, _)| *i);
    v
}

fn creation_of(o: &Object) -> gangpack::Time {
    o.raw
        .get("metadata")
        .and_then(|m| m.get("creationTimestamp"))
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<k8s_openapi::jiff::Timestamp>().ok())
        .map(|t| gangpack::Time(t.as_second()))
        .unwrap_or_default()
}

fn not_found(obj: &Object, field: &str, name: &str) -> InputError {
    input_error(
        obj,
        field.to_owned(),
        Problem::NotFound {
            value: name.to_owned(),
        },
    )
}

/// Whether a resource name is an extended resource (upstream
/// `IsExtendedResourceName`, plus the DeviceClass-implicit names): outside the
/// `kubernetes.io` domains, qualified, not a quota `requests.` name.
pub(crate) fn is_extended_resource(name: &str) -> bool {
    if name.starts_with(DEVICE_CLASS_RESOURCE_PREFIX) {
        return true;
    }
    let Some((domain, _)) = name.split_once('/') else {
        return false;
    };
    !(domain == "kubernetes.io"
        || domain.ends_with(".kubernetes.io")
        || name.starts_with("requests."))
}

/// A quantity that is a whole number of devices.
fn whole(q: Quantity) -> Option<u32> {
    let nano = q.as_nano();
    if nano < 0 || nano % 1_000_000_000 != 0 {
        return None;
    }
    u32::try_from(nano / 1_000_000_000).ok()
}

/// A claim entry name not used by the pod yet, for the extended-resource claim.
fn entry_name(entries: &[PodResourceClaim]) -> String {
    let taken = |n: &str| entries.iter().any(|e| e.name == n);
    let mut name = "extended-resources".to_owned();
    let mut k = 1;
    while taken(&name) {
        name = format!("extended-resources-{k}");
        k += 1;
    }
    name
}

fn owner_reference(api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// The ResourceClaim the resourceclaim controller creates from `template` for an owner's
/// claim entry.
fn generated_raw(
    claim: &ResourceClaim,
    owner: (&str, &str, &str, &str),
    annotation: Option<(&str, &str)>,
    template: &TemplateInput,
) -> Value {
    let mut annotations: serde_json::Map<String, Value> = template
        .annotations
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    if let Some((k, v)) = annotation {
        annotations.insert(k.to_owned(), Value::String(v.to_owned()));
    }
    let mut metadata = serde_json::Map::new();
    metadata.insert("name".into(), Value::String(claim.name.clone()));
    metadata.insert("namespace".into(), Value::String(claim.namespace.clone()));
    if !template.labels.is_empty() {
        metadata.insert("labels".into(), json!(template.labels));
    }
    metadata.insert("annotations".into(), Value::Object(annotations));
    let (api_version, kind, name, uid) = owner;
    metadata.insert(
        "ownerReferences".into(),
        json!([owner_reference(api_version, kind, name, uid)]),
    );
    json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": template.spec,
    })
}
