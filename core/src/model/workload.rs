//! The scheduling view of pods and gangs (scheduling.k8s.io/v1beta1, Kubernetes 1.37):
//! [`Pod`], [`PodGroup`], [`Workload`] with its [`PodGroupTemplate`]s, the alpha
//! [`CompositePodGroup`] (KEP-6012) and [`PriorityClass`].
//!
//! A *gang* is a runtime [`PodGroup`]: a controller copies a template of a [`Workload`]
//! into a PodGroup ([`Workload::instantiate`]), and pods join it through
//! `spec.schedulingGroup.podGroupName` ([`Pod::scheduling_group`]). Every type validates
//! itself as the API server does, reporting each problem at its exact field path; rules that
//! span objects are pure functions ([`check_group_members`]).
//!
//! ```
//! use gangpack::{Pod, PodGroupTemplate, SchedulingPolicy, Workload, check_group_members};
//!
//! let mut workload = Workload::new("team-a", "trainer");
//! workload
//!     .pod_group_templates
//!     .push(PodGroupTemplate::new("workers", SchedulingPolicy::Gang { min_count: 4 }));
//! assert!(workload.validate().is_ok());
//!
//! // The controller creates one PodGroup per replica.
//! let group = workload.instantiate("workers", "trainer-0").unwrap();
//! assert_eq!(group.policy.min_count(), Some(4));
//!
//! let mut pod = Pod::new("team-a", "trainer-0-w0");
//! pod.scheduling_group = Some("trainer-0".into());
//! assert!(check_group_members(&group, &[&pod]).is_empty());
//!
//! // A member whose priority differs from its group's fails the whole group.
//! pod.priority = 100;
//! let errs = check_group_members(&group, &[&pod]);
//! assert_eq!(
//!     errs[0].to_string(),
//!     "Pod \"team-a/trainer-0-w0\": spec.priority: invalid value \"100\": must equal the \
//!      priority of the pod's PodGroup"
//! );
//! ```
//!
//! Where the model is flatter than the API, each field's docs name the API field it stands
//! for; error paths always use the API's spelling (`spec.schedulingConstraints.topology`).

use core::fmt;

use crate::alloc_prelude::*;
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError, check_max, check_name};
use crate::model::names;
use crate::{Node, NodeSelector, Quantity, Time, Toleration};

// ---------------------------------------------------------------------------------------------
// Limits and well-known values
// ---------------------------------------------------------------------------------------------

/// Upstream `WorkloadMaxPodGroupTemplates`: templates per Workload.
pub const MAX_POD_GROUP_TEMPLATES: usize = 8;
/// Topology constraints per PodGroup, template or CompositePodGroup (the beta allows one).
pub const MAX_TOPOLOGY_CONSTRAINTS: usize = 1;
/// Upstream `MaxPodGroupResourceClaims`: ResourceClaims per PodGroup or template.
pub const MAX_POD_GROUP_RESOURCE_CLAIMS: usize = 4;
/// Upstream `HighestUserDefinablePriority`: the largest priority a user-defined
/// PriorityClass, a PodGroup or a template may carry.
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i32 = 1_000_000_000;
/// Upstream `SystemCriticalPriority`: the value of `system-cluster-critical`
/// (`system-node-critical` is 1000 higher).
pub const SYSTEM_CRITICAL_PRIORITY: i32 = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
/// The scheduler a pod gets when `spec.schedulerName` is empty.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// The built-in PriorityClasses the API server creates, with their values.
const SYSTEM_PRIORITY_CLASSES: [(&str, i32); 2] = [
    ("system-node-critical", SYSTEM_CRITICAL_PRIORITY + 1000),
    ("system-cluster-critical", SYSTEM_CRITICAL_PRIORITY),
];
/// Names with this prefix are reserved for [`SYSTEM_PRIORITY_CLASSES`].
const SYSTEM_PRIORITY_CLASS_PREFIX: &str = "system-";

/// The kind used for `Workload` objects in errors.
const WORKLOAD_KIND: ObjectKind = ObjectKind::Workload;
/// The kind used for `CompositePodGroup` objects in errors.
const COMPOSITE_POD_GROUP_KIND: ObjectKind = ObjectKind::CompositePodGroup;
/// The kind used for `PriorityClass` objects in errors.
const PRIORITY_CLASS_KIND: ObjectKind = ObjectKind::PriorityClass;

// Upstream's wording, shared by several rules.
const POSITIVE_MSG: &str = "must be greater than zero";
const INT32_MSG: &str = "must be less than or equal to 2147483647";
const MAX_PRIORITY_MSG: &str = "must be less than or equal to 1000000000";
const ALL_WITH_BASIC_MSG: &str =
    "the disruptionMode `all` is not supported with the Basic scheduling policy";

// ---------------------------------------------------------------------------------------------
// Shared value types
// ---------------------------------------------------------------------------------------------

/// Whether a pod, PodGroup or PriorityClass may preempt lower priorities
/// (core/v1 and scheduling.k8s.io `PreemptionPolicy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum PreemptionPolicy {
    /// `PreemptLowerPriority` (the default): may preempt strictly lower priorities.
    #[default]
    PreemptLowerPriority,
    /// `Never`: waits instead of preempting.
    Never,
}

impl PreemptionPolicy {
    /// The values Kubernetes accepts, in upstream's order.
    pub const SUPPORTED: &'static [&'static str] = &["Never", "PreemptLowerPriority"];

    /// Parses the Kubernetes spelling; anything else is `None`.
    pub fn parse(s: &str) -> Option<PreemptionPolicy> {
        match s {
            "PreemptLowerPriority" => Some(PreemptionPolicy::PreemptLowerPriority),
            "Never" => Some(PreemptionPolicy::Never),
            _ => None,
        }
    }

    /// The Kubernetes spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            PreemptionPolicy::PreemptLowerPriority => "PreemptLowerPriority",
            PreemptionPolicy::Never => "Never",
        }
    }
}

impl fmt::Display for PreemptionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a pod's or PodGroup's claim comes from: exactly one of `resourceClaimName` and
/// `resourceClaimTemplateName` (the union is the enum, so "both" and "neither" cannot
/// be written).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ClaimSource {
    /// `resourceClaimName`: an existing ResourceClaim in the same namespace.
    #[cfg_attr(feature = "serde", serde(rename = "resourceClaimName"))]
    ClaimName(String),
    /// `resourceClaimTemplateName`: a ResourceClaimTemplate in the same namespace, from
    /// which one claim is generated per pod (or per PodGroup, for a group's claim).
    #[cfg_attr(feature = "serde", serde(rename = "resourceClaimTemplateName"))]
    Template(String),
}

impl ClaimSource {
    /// Validates the referenced name (a DNS subdomain) at `path.resourceClaimName` or
    /// `path.resourceClaimTemplateName`.
    fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        let (field, name) = match self {
            ClaimSource::ClaimName(n) => ("resourceClaimName", n),
            ClaimSource::Template(n) => ("resourceClaimTemplateName", n),
        };
        check_name(
            obj,
            &format!("{path}.{field}"),
            name,
            names::validate_dns_subdomain,
            errs,
        );
    }
}

/// One entry of a pod's `spec.resourceClaims` (core/v1 `PodResourceClaim`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PodResourceClaim {
    /// `name`: a DNS label, unique within the pod; containers refer to the claim by it.
    pub name: String,
    /// `resourceClaimName` or `resourceClaimTemplateName`.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub source: ClaimSource,
}

/// One entry of a PodGroup's or template's `resourceClaims` (scheduling.k8s.io/v1beta1
/// `PodGroupResourceClaim`, KEP-5729): a claim reserved for the whole group. A pod uses
/// it by declaring a [`PodResourceClaim`] with the same name and source.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PodGroupResourceClaim {
    /// `name`: a DNS label, unique within the group.
    pub name: String,
    /// `resourceClaimName` or `resourceClaimTemplateName` (a template yields one claim per
    /// PodGroup).
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub source: ClaimSource,
}

/// How a PodGroup is scheduled (`PodGroupSchedulingPolicy`, a union of `basic` and `gang`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "camelCase", rename_all_fields = "camelCase")
)]
pub enum SchedulingPolicy {
    /// `basic: {}`: the pods are scheduled one by one, as if there were no group.
    Basic,
    /// `gang: {minCount}`: all-or-nothing; at least `min_count` pods must be placeable in
    /// the same cycle. `min_count` must be positive (and fit an `int32`); it is mutable.
    Gang {
        /// `minCount`.
        min_count: u32,
    },
}

impl SchedulingPolicy {
    /// `Some(minCount)` for a gang, `None` for basic scheduling.
    pub const fn min_count(self) -> Option<u32> {
        match self {
            SchedulingPolicy::Basic => None,
            SchedulingPolicy::Gang { min_count } => Some(min_count),
        }
    }

    /// Whether this is the `gang` policy.
    pub const fn is_gang(self) -> bool {
        matches!(self, SchedulingPolicy::Gang { .. })
    }

    /// Validates the policy at `path` (`...schedulingPolicy`).
    fn validate(self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        if let SchedulingPolicy::Gang { min_count } = self {
            check_positive_i32(obj, &format!("{path}.gang.minCount"), min_count, errs);
        }
    }
}

/// How a CompositePodGroup schedules its children (`CompositePodGroupSchedulingPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "camelCase", rename_all_fields = "camelCase")
)]
pub enum CompositeSchedulingPolicy {
    /// `basic: {}`: the child groups are scheduled independently.
    Basic,
    /// `gang: {minGroupCount}`: at least `min_group_count` child groups must be placeable
    /// together. Must be positive (and fit an `int32`).
    Gang {
        /// `minGroupCount`.
        min_group_count: u32,
    },
}

impl CompositeSchedulingPolicy {
    /// `Some(minGroupCount)` for a gang, `None` for basic scheduling.
    pub const fn min_group_count(self) -> Option<u32> {
        match self {
            CompositeSchedulingPolicy::Basic => None,
            CompositeSchedulingPolicy::Gang { min_group_count } => Some(min_group_count),
        }
    }
}

/// The preemption unit of a group (`DisruptionMode`, a union of `single` and `all`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum DisruptionMode {
    /// `single: {}` (the default): members can be disrupted one at a time.
    #[default]
    Single,
    /// `all: {}`: members can only be disrupted together. Not allowed with basic
    /// scheduling: the preemption unit may not be larger than the scheduling unit.
    All,
}

/// One topology constraint (`TopologyConstraint`): every pod of the group must land in the
/// same domain, the set of nodes sharing one value of the node label `key`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TopologyConstraint {
    /// `key`: a node label name such as `topology.kubernetes.io/rack`.
    pub key: String,
}

impl TopologyConstraint {
    /// A constraint on one node label.
    pub fn new(key: impl Into<String>) -> TopologyConstraint {
        TopologyConstraint { key: key.into() }
    }
}

/// `WorkloadReference`: the Workload and template a group was created from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct WorkloadReference {
    /// `workloadName`: a DNS subdomain.
    pub workload_name: String,
    /// `templateName`: a DNS label.
    pub template_name: String,
}

impl WorkloadReference {
    /// A reference to template `template_name` of Workload `workload_name`.
    pub fn new(
        workload_name: impl Into<String>,
        template_name: impl Into<String>,
    ) -> WorkloadReference {
        WorkloadReference {
            workload_name: workload_name.into(),
            template_name: template_name.into(),
        }
    }

    /// Validates the reference at `path` (`spec.workloadRef`).
    fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        check_name(
            obj,
            &format!("{path}.workloadName"),
            &self.workload_name,
            names::validate_dns_subdomain,
            errs,
        );
        check_name(
            obj,
            &format!("{path}.templateName"),
            &self.template_name,
            names::validate_dns_label,
            errs,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Pods
// ---------------------------------------------------------------------------------------------

/// The scheduling view of a core/v1 `Pod`: what the scheduler reads to place it.
///
/// An adapter fills `requests` with the pod's effective requests (containers summed, init
/// containers' maximum, overhead added) and resolves `priority` / `preemption_policy` from
/// the pod's PriorityClass (see [`resolve_priority`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct Pod {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.priority` (0 when no PriorityClass applies).
    pub priority: i32,
    /// `spec.preemptionPolicy`.
    pub preemption_policy: PreemptionPolicy,
    /// `spec.schedulerName`; empty means [`DEFAULT_SCHEDULER_NAME`].
    pub scheduler_name: String,
    /// The pod's effective resource requests (`cpu`, `memory`, extended resources, ...),
    /// reported at `spec.resources.requests`.
    pub requests: BTreeMap<String, Quantity>,
    /// `spec.tolerations`.
    pub tolerations: Vec<Toleration>,
    /// `spec.nodeSelector`: every label must be present on the node with this value.
    pub node_selector: BTreeMap<String, String>,
    /// `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub required_node_affinity: Option<NodeSelector>,
    /// `spec.resourceClaims`.
    pub resource_claims: Vec<PodResourceClaim>,
    /// `spec.schedulingGroup.podGroupName`: the PodGroup (same namespace) this pod belongs to.
    pub scheduling_group: Option<String>,
    /// `spec.nodeName`: set once the pod is bound.
    pub node_name: Option<String>,
    /// `metadata.creationTimestamp`, for queue order.
    pub creation: Time,
}

impl Pod {
    /// A pod with a name, the default scheduler and nothing else.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Pod {
        Pod {
            namespace: namespace.into(),
            name: name.into(),
            scheduler_name: DEFAULT_SCHEDULER_NAME.to_owned(),
            ..Pod::default()
        }
    }

    /// The object reference used in errors.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::namespaced(ObjectKind::Pod, self.namespace.clone(), self.name.clone())
    }

    /// `spec.schedulerName`, with empty read as [`DEFAULT_SCHEDULER_NAME`].
    pub fn effective_scheduler_name(&self) -> &str {
        if self.scheduler_name.is_empty() {
            DEFAULT_SCHEDULER_NAME
        } else {
            &self.scheduler_name
        }
    }

    /// Whether the node's name and labels satisfy the pod's `nodeSelector` **and** its
    /// required node affinity (upstream `RequiredNodeAffinity.Match`): every
    /// `nodeSelector` entry must be a label of the node with exactly that value, and the
    /// affinity, if set, must match (its terms are ORed; see [`NodeSelector::matches`]).
    /// Taints, resources and `spec.nodeName` are other filters.
    pub fn fits_node_labels(&self, node_name: &str, labels: &BTreeMap<String, String>) -> bool {
        self.node_selector
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self
                .required_node_affinity
                .as_ref()
                .is_none_or(|sel| sel.matches(node_name, labels))
    }

    /// [`Pod::fits_node_labels`] for a [`Node`].
    pub fn fits_node(&self, node: &Node) -> bool {
        self.fits_node_labels(&node.name, &node.labels)
    }

    /// Checks the scheduling-relevant part of the pod as the API server does
    /// (`ValidatePodCreate`), returning every problem, in this order:
    ///
    /// * `metadata.namespace` a DNS label, `metadata.name` a DNS subdomain;
    /// * `spec.schedulerName`, if set, and `spec.nodeName`, if set, DNS subdomains;
    /// * `spec.nodeSelector["key"]`: keys label names, values label values;
    /// * `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`: a
    ///   valid node selector (at least one term; see [`NodeSelector`]);
    /// * `spec.tolerations[i]`: each valid (see [`Toleration::validation_errors`]);
    /// * `spec.resourceClaims[i]`: `name` a DNS label, unique (a repeat is reported at
    ///   `.name`); the claim or template name a DNS subdomain;
    /// * `spec.schedulingGroup.podGroupName`, if set, a DNS subdomain;
    /// * `spec.resources.requests["name"]`: names label names, amounts not negative.
    ///
    /// `spec.priority` is not range-checked: admission sets it, and system pods exceed
    /// [`HIGHEST_USER_DEFINABLE_PRIORITY`].
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        let obj = self.object_ref();
        let mut errs = Vec::new();
        check_metadata(&obj, &self.namespace, &self.name, &mut errs);
        if !self.scheduler_name.is_empty() {
            check_name(
                &obj,
                "spec.schedulerName",
                &self.scheduler_name,
                names::validate_dns_subdomain,
                &mut errs,
            );
        }
        if let Some(node) = &self.node_name {
            check_name(
                &obj,
                "spec.nodeName",
                node,
                names::validate_dns_subdomain,
                &mut errs,
            );
        }
        for (k, v) in &self.node_selector {
            let field = format!("spec.nodeSelector[\"{k}\"]");
            check_name(&obj, &field, k, names::validate_label_name, &mut errs);
            crate::model::taint::check_label_value(v, &obj, field, &mut errs);
        }
        if let Some(sel) = &self.required_node_affinity {
            sel.validate(
                &obj,
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                &mut errs,
            );
        }
        for (i, t) in self.tolerations.iter().enumerate() {
            t.validate(&obj, &format!("spec.tolerations[{i}]"), &mut errs);
        }
        let mut seen = BTreeSet::new();
        for (i, claim) in self.resource_claims.iter().enumerate() {
            let path = format!("spec.resourceClaims[{i}]");
            let name_path = format!("{path}.name");
            if !claim.name.is_empty() && !seen.insert(claim.name.as_str()) {
                errs.push(ValidationError::new(
                    obj.clone(),
                    name_path,
                    Problem::Duplicate {
                        value: claim.name.clone(),
                    },
                ));
            } else {
                check_name(
                    &obj,
                    &name_path,
                    &claim.name,
                    names::validate_dns_label,
                    &mut errs,
                );
            }
            claim.source.validate(&obj, &path, &mut errs);
        }
        if let Some(group) = &self.scheduling_group {
            check_name(
                &obj,
                "spec.schedulingGroup.podGroupName",
                group,
                names::validate_dns_subdomain,
                &mut errs,
            );
        }
        crate::model::node::validate_resource_list(
            &obj,
            "spec.resources.requests",
            &self.requests,
            &mut errs,
        );
        crate::model::error::finish(errs)
    }
}

// ---------------------------------------------------------------------------------------------
// PodGroups and their templates
// ---------------------------------------------------------------------------------------------

/// A PodGroup (scheduling.k8s.io/v1beta1): the runtime gang, usually copied from a
/// [`PodGroupTemplate`] by [`Workload::instantiate`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PodGroup {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.workloadRef`: the Workload template this group was created from, if any.
    #[cfg_attr(feature = "serde", serde(default))]
    pub workload_ref: Option<WorkloadReference>,
    /// `spec.parentCompositePodGroupName`: the CompositePodGroup this group is a child of
    /// (requires `workload_ref`).
    #[cfg_attr(
        feature = "serde",
        serde(default, rename = "parentCompositePodGroupName")
    )]
    pub parent: Option<String>,
    /// `spec.schedulingPolicy`.
    #[cfg_attr(feature = "serde", serde(rename = "schedulingPolicy"))]
    pub policy: SchedulingPolicy,
    /// `spec.priorityClassName`; `None` or empty means unset.
    #[cfg_attr(feature = "serde", serde(default))]
    pub priority_class_name: Option<String>,
    /// `spec.priority`, resolved by admission; unset reads as 0 (see
    /// [`PodGroup::effective_priority`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub priority: Option<i32>,
    /// `spec.preemptionPolicy`; unset means `PreemptLowerPriority`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub preemption_policy: Option<PreemptionPolicy>,
    /// `spec.disruptionMode` (defaults to `single`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub disruption_mode: DisruptionMode,
    /// `spec.schedulingConstraints.topology` (at most [`MAX_TOPOLOGY_CONSTRAINTS`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub topology: Vec<TopologyConstraint>,
    /// `spec.resourceClaims` (at most [`MAX_POD_GROUP_RESOURCE_CLAIMS`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub resource_claims: Vec<PodGroupResourceClaim>,
    /// `metadata.creationTimestamp`, for queue order.
    #[cfg_attr(feature = "serde", serde(default))]
    pub creation: Time,
}

impl PodGroup {
    /// A standalone group (no Workload) with a policy and every other field unset.
    pub fn new(
        namespace: impl Into<String>,
        name: impl Into<String>,
        policy: SchedulingPolicy,
    ) -> PodGroup {
        PodGroup {
            namespace: namespace.into(),
            name: name.into(),
            workload_ref: None,
            parent: None,
            policy,
            priority_class_name: None,
            priority: None,
            preemption_policy: None,
            disruption_mode: DisruptionMode::Single,
            topology: Vec::new(),
            resource_claims: Vec::new(),
            creation: Time::default(),
        }
    }

    /// The object reference used in errors.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::namespaced(
            ObjectKind::PodGroup,
            self.namespace.clone(),
            self.name.clone(),
        )
    }

    /// `spec.priority`, with unset read as 0 (upstream: without a PriorityClass the group's
    /// priority is zero).
    pub fn effective_priority(&self) -> i32 {
        self.priority.unwrap_or(0)
    }

    /// `spec.preemptionPolicy`, with unset read as `PreemptLowerPriority`.
    pub fn effective_preemption_policy(&self) -> PreemptionPolicy {
        self.preemption_policy.unwrap_or_default()
    }

    /// The group's claim that a pod's claim resolves to: the one with the same name and
    /// the same source (KEP-5729). `None` means the pod's claim is the pod's own.
    pub fn group_claim_for(&self, claim: &PodResourceClaim) -> Option<&PodGroupResourceClaim> {
        self.resource_claims
            .iter()
            .find(|c| c.name == claim.name && c.source == claim.source)
    }

    /// Checks the group as the API server does when it is created (`ValidatePodGroup`),
    /// returning every problem, in this order:
    ///
    /// * `metadata.namespace` a DNS label, `metadata.name` a DNS subdomain;
    /// * `spec.parentCompositePodGroupName` a DNS subdomain, and only with
    ///   `spec.workloadRef` (else `spec.workloadRef` is required);
    /// * `spec.workloadRef.workloadName` a DNS subdomain, `.templateName` a DNS label;
    /// * then the rules shared with [`PodGroupTemplate`], under `spec`:
    ///   `schedulingPolicy.gang.minCount` greater than zero;
    ///   `schedulingConstraints.topology` at most [`MAX_TOPOLOGY_CONSTRAINTS`] entries with
    ///   label-name `key`s; `resourceClaims` at most [`MAX_POD_GROUP_RESOURCE_CLAIMS`] with
    ///   unique DNS-label names (a repeat is reported at the entry) and DNS-subdomain
    ///   sources; `disruptionMode` not `all` with the basic policy; `priorityClassName` a
    ///   DNS subdomain; `priority` at most [`HIGHEST_USER_DEFINABLE_PRIORITY`].
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        let obj = self.object_ref();
        let mut errs = Vec::new();
        check_metadata(&obj, &self.namespace, &self.name, &mut errs);
        if let Some(parent) = &self.parent {
            check_name(
                &obj,
                "spec.parentCompositePodGroupName",
                parent,
                names::validate_dns_subdomain,
                &mut errs,
            );
            if self.workload_ref.is_none() {
                errs.push(ValidationError::new(
                    obj.clone(),
                    "spec.workloadRef",
                    Problem::Required,
                ));
            }
        }
        if let Some(r) = &self.workload_ref {
            r.validate(&obj, "spec.workloadRef", &mut errs);
        }
        GroupSettings {
            policy: self.policy,
            topology: &self.topology,
            resource_claims: &self.resource_claims,
            disruption_mode: self.disruption_mode,
            priority_class_name: self.priority_class_name.as_deref(),
            priority: self.priority,
        }
        .validate(&obj, "spec", &mut errs);
        crate::model::error::finish(errs)
    }
}

/// One entry of a Workload's `spec.podGroupTemplates` (`PodGroupTemplate`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PodGroupTemplate {
    /// `name`: a DNS label, unique within the Workload.
    pub name: String,
    /// `schedulingPolicy`.
    #[cfg_attr(feature = "serde", serde(rename = "schedulingPolicy"))]
    pub policy: SchedulingPolicy,
    /// `priorityClassName`; `None` or empty means unset.
    #[cfg_attr(feature = "serde", serde(default))]
    pub priority_class_name: Option<String>,
    /// `priority`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub priority: Option<i32>,
    /// `preemptionPolicy`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub preemption_policy: Option<PreemptionPolicy>,
    /// `disruptionMode` (unset is `single`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub disruption_mode: DisruptionMode,
    /// `schedulingConstraints.topology`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub topology: Vec<TopologyConstraint>,
    /// `resourceClaims`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub resource_claims: Vec<PodGroupResourceClaim>,
}

impl PodGroupTemplate {
    /// A template with a name, a policy and every other field unset.
    pub fn new(name: impl Into<String>, policy: SchedulingPolicy) -> PodGroupTemplate {
        PodGroupTemplate {
            name: name.into(),
            policy,
            priority_class_name: None,
            priority: None,
            preemption_policy: None,
            disruption_mode: DisruptionMode::Single,
            topology: Vec::new(),
            resource_claims: Vec::new(),
        }
    }
}

/// The fields a PodGroup shares with its template, validated alike.
struct GroupSettings<'a> {
    policy: SchedulingPolicy,
    topology: &'a [TopologyConstraint],
    resource_claims: &'a [PodGroupResourceClaim],
    disruption_mode: DisruptionMode,
    priority_class_name: Option<&'a str>,
    priority: Option<i32>,
}

impl GroupSettings<'_> {
    /// Validates under `prefix` (`spec` or `spec.podGroupTemplates[i]`), in the API's field
    /// order.
    fn validate(&self, obj: &ObjectRef, prefix: &str, errs: &mut Vec<ValidationError>) {
        self.policy
            .validate(obj, &format!("{prefix}.schedulingPolicy"), errs);
        check_topology(
            obj,
            &format!("{prefix}.schedulingConstraints.topology"),
            self.topology,
            errs,
        );
        let claims_path = format!("{prefix}.resourceClaims");
        check_max(
            obj,
            &claims_path,
            self.resource_claims.len(),
            MAX_POD_GROUP_RESOURCE_CLAIMS,
            errs,
        );
        let mut seen = BTreeSet::new();
        for (i, claim) in self.resource_claims.iter().enumerate() {
            let path = format!("{claims_path}[{i}]");
            check_name(
                obj,
                &format!("{path}.name"),
                &claim.name,
                names::validate_dns_label,
                errs,
            );
            if !seen.insert(claim.name.as_str()) {
                errs.push(ValidationError::new(
                    obj.clone(),
                    path.clone(),
                    Problem::Duplicate {
                        value: claim.name.clone(),
                    },
                ));
            }
            claim.source.validate(obj, &path, errs);
        }
        check_disruption_mode(
            obj,
            &format!("{prefix}.disruptionMode"),
            self.disruption_mode,
            !self.policy.is_gang(),
            errs,
        );
        check_priority(obj, prefix, self.priority_class_name, self.priority, errs);
    }
}

// ---------------------------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------------------------

/// A Workload (scheduling.k8s.io/v1beta1): the templates a controller turns into PodGroups.
///
/// `spec.controllerRef` is informational and not modelled; `spec.compositePodGroupTemplates`
/// (alpha) is not modelled either.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct Workload {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.podGroupTemplates`: 1 to [`MAX_POD_GROUP_TEMPLATES`] templates.
    pub pod_group_templates: Vec<PodGroupTemplate>,
}

impl Workload {
    /// A Workload without templates (not valid until one is added).
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Workload {
        Workload {
            namespace: namespace.into(),
            name: name.into(),
            pod_group_templates: Vec::new(),
        }
    }

    /// The object reference used in errors. Until `ObjectKind` has a `Workload` kind, it
    /// carries PodGroup's kind.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::namespaced(WORKLOAD_KIND, self.namespace.clone(), self.name.clone())
    }

    /// The template called `name`, if any.
    pub fn template(&self, name: &str) -> Option<&PodGroupTemplate> {
        self.pod_group_templates.iter().find(|t| t.name == name)
    }

    /// What a workload controller does to start one gang: a PodGroup called `name` in the
    /// Workload's namespace, with `spec.workloadRef` pointing at `template` and every
    /// other spec field copied from it. `None` when the Workload has no such template.
    ///
    /// The group's `creation` is left at [`Time::default`]; the caller sets it.
    pub fn instantiate(&self, template: &str, name: &str) -> Option<PodGroup> {
        let t = self.template(template)?;
        Some(PodGroup {
            namespace: self.namespace.clone(),
            name: name.to_owned(),
            workload_ref: Some(WorkloadReference::new(self.name.clone(), t.name.clone())),
            parent: None,
            policy: t.policy,
            priority_class_name: t.priority_class_name.clone(),
            priority: t.priority,
            preemption_policy: t.preemption_policy,
            disruption_mode: t.disruption_mode,
            topology: t.topology.clone(),
            resource_claims: t.resource_claims.clone(),
            creation: Time::default(),
        })
    }

    /// Checks the Workload as the API server does when it is created (`ValidateWorkload`),
    /// returning every problem:
    ///
    /// * `metadata.namespace` a DNS label, `metadata.name` a DNS subdomain;
    /// * `spec.podGroupTemplates`: required, at most [`MAX_POD_GROUP_TEMPLATES`] (then the
    ///   templates are not looked at, as upstream);
    /// * each template, at `spec.podGroupTemplates[i]`: `name` a DNS label, unique (a repeat
    ///   is reported at the template), then the rules listed on [`PodGroup::validate`].
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        let obj = self.object_ref();
        let mut errs = Vec::new();
        check_metadata(&obj, &self.namespace, &self.name, &mut errs);
        let path = "spec.podGroupTemplates";
        let templates = &self.pod_group_templates;
        if templates.is_empty() {
            errs.push(ValidationError::new(obj.clone(), path, Problem::Required));
        } else if templates.len() > MAX_POD_GROUP_TEMPLATES {
            check_max(
                &obj,
                path,
                templates.len(),
                MAX_POD_GROUP_TEMPLATES,
                &mut errs,
            );
        } else {
            let mut seen = BTreeSet::new();
            for (i, t) in templates.iter().enumerate() {
                let tp = format!("{path}[{i}]");
                check_name(
                    &obj,
                    &format!("{tp}.name"),
                    &t.name,
                    names::validate_dns_label,
                    &mut errs,
                );
                if !seen.insert(t.name.as_str()) {
                    errs.push(ValidationError::new(
                        obj.clone(),
                        tp.clone(),
                        Problem::Duplicate {
                            value: t.name.clone(),
                        },
                    ));
                }
                GroupSettings {
                    policy: t.policy,
                    topology: &t.topology,
                    resource_claims: &t.resource_claims,
                    disruption_mode: t.disruption_mode,
                    priority_class_name: t.priority_class_name.as_deref(),
                    priority: t.priority,
                }
                .validate(&obj, &tp, &mut errs);
            }
        }
        crate::model::error::finish(errs)
    }
}

// ---------------------------------------------------------------------------------------------
// CompositePodGroups (alpha)
// ---------------------------------------------------------------------------------------------

/// A CompositePodGroup (scheduling.k8s.io/v1alpha3, KEP-6012): a group of groups, for
/// multi-level gangs and topology.
///
/// Upstream links the tree from the children (`spec.parentCompositePodGroupName` on
/// PodGroups and CompositePodGroups); `children` is that link read from the parent's side,
/// filled by the adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct CompositePodGroup {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.workloadRef` (required upstream).
    #[cfg_attr(feature = "serde", serde(default))]
    pub workload_ref: Option<WorkloadReference>,
    /// `spec.parentCompositePodGroupName`: `None` for the root of a Workload's tree.
    #[cfg_attr(
        feature = "serde",
        serde(default, rename = "parentCompositePodGroupName")
    )]
    pub parent: Option<String>,
    /// The names of the child groups (PodGroups or CompositePodGroups in the same
    /// namespace); reported at `children[i]`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub children: Vec<String>,
    /// `spec.schedulingPolicy`.
    #[cfg_attr(feature = "serde", serde(rename = "schedulingPolicy"))]
    pub policy: CompositeSchedulingPolicy,
    /// `spec.priorityClassName`; `None` or empty means unset.
    #[cfg_attr(feature = "serde", serde(default))]
    pub priority_class_name: Option<String>,
    /// `spec.priority`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub priority: Option<i32>,
    /// `spec.preemptionPolicy`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub preemption_policy: Option<PreemptionPolicy>,
    /// `spec.disruptionMode` (defaults to `single`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub disruption_mode: DisruptionMode,
    /// `spec.schedulingConstraints.topology` (at most [`MAX_TOPOLOGY_CONSTRAINTS`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub topology: Vec<TopologyConstraint>,
}

impl CompositePodGroup {
    /// A composite group with a policy, a Workload reference and no children.
    pub fn new(
        namespace: impl Into<String>,
        name: impl Into<String>,
        workload_ref: WorkloadReference,
        policy: CompositeSchedulingPolicy,
    ) -> CompositePodGroup {
        CompositePodGroup {
            namespace: namespace.into(),
            name: name.into(),
            workload_ref: Some(workload_ref),
            parent: None,
            children: Vec::new(),
            policy,
            priority_class_name: None,
            priority: None,
            preemption_policy: None,
            disruption_mode: DisruptionMode::Single,
            topology: Vec::new(),
        }
    }

    /// The object reference used in errors. Until `ObjectKind` has a `CompositePodGroup`
    /// kind, it carries PodGroup's kind.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::namespaced(
            COMPOSITE_POD_GROUP_KIND,
            self.namespace.clone(),
            self.name.clone(),
        )
    }

    /// Checks the group as the API server does (`ValidateCompositePodGroup`), returning
    /// every problem:
    ///
    /// * `metadata.namespace` a DNS label, `metadata.name` a DNS subdomain;
    /// * `spec.parentCompositePodGroupName` a DNS subdomain;
    /// * `spec.workloadRef` required, with `workloadName` a DNS subdomain and
    ///   `templateName` a DNS label;
    /// * `children[i]` DNS subdomains, unique (gangpack's own rule: the list is derived);
    /// * `spec.schedulingPolicy.gang.minGroupCount` greater than zero;
    /// * `spec.schedulingConstraints.topology` as for PodGroups;
    /// * `spec.disruptionMode` not `all` with the basic policy;
    /// * `spec.priorityClassName` a DNS subdomain, `spec.priority` at most
    ///   [`HIGHEST_USER_DEFINABLE_PRIORITY`].
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        let obj = self.object_ref();
        let mut errs = Vec::new();
        check_metadata(&obj, &self.namespace, &self.name, &mut errs);
        if let Some(parent) = &self.parent {
            check_name(
                &obj,
                "spec.parentCompositePodGroupName",
                parent,
                names::validate_dns_subdomain,
                &mut errs,
            );
        }
        match &self.workload_ref {
            Some(r) => r.validate(&obj, "spec.workloadRef", &mut errs),
            None => errs.push(ValidationError::new(
                obj.clone(),
                "spec.workloadRef",
                Problem::Required,
            )),
        }
        let mut seen = BTreeSet::new();
        for (i, child) in self.children.iter().enumerate() {
            let path = format!("children[{i}]");
            check_name(&obj, &path, child, names::validate_dns_subdomain, &mut errs);
            if !seen.insert(child.as_str()) {
                errs.push(ValidationError::new(
                    obj.clone(),
                    path,
                    Problem::Duplicate {
                        value: child.clone(),
                    },
                ));
            }
        }
        if let CompositeSchedulingPolicy::Gang { min_group_count } = self.policy {
            check_positive_i32(
                &obj,
                "spec.schedulingPolicy.gang.minGroupCount",
                min_group_count,
                &mut errs,
            );
        }
        check_topology(
            &obj,
            "spec.schedulingConstraints.topology",
            &self.topology,
            &mut errs,
        );
        check_disruption_mode(
            &obj,
            "spec.disruptionMode",
            self.disruption_mode,
            self.policy == CompositeSchedulingPolicy::Basic,
            &mut errs,
        );
        check_priority(
            &obj,
            "spec",
            self.priority_class_name.as_deref(),
            self.priority,
            &mut errs,
        );
        crate::model::error::finish(errs)
    }
}

// ---------------------------------------------------------------------------------------------
// PriorityClasses
// ---------------------------------------------------------------------------------------------

/// A PriorityClass (scheduling.k8s.io/v1): a named priority value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct PriorityClass {
    /// `metadata.name`.
    pub name: String,
    /// `value`.
    pub value: i32,
    /// `globalDefault`: the priority of pods and groups that name no class (the smallest
    /// value wins if several classes claim it).
    pub global_default: bool,
    /// `preemptionPolicy`.
    pub preemption_policy: PreemptionPolicy,
}

impl PriorityClass {
    /// A class with a name and a value, not the global default, preempting lower
    /// priorities.
    pub fn new(name: impl Into<String>, value: i32) -> PriorityClass {
        PriorityClass {
            name: name.into(),
            value,
            ..PriorityClass::default()
        }
    }

    /// The object reference used in errors. Until `ObjectKind` has a `PriorityClass` kind,
    /// it carries PodGroup's kind.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::cluster(PRIORITY_CLASS_KIND, self.name.clone())
    }

    /// Checks the class as the API server does (`ValidatePriorityClass`):
    ///
    /// * `metadata.name` a DNS subdomain;
    /// * a name starting with `system-` must be one of the built-in classes
    ///   (`system-node-critical` = 2000001000, `system-cluster-critical` = 2000000000)
    ///   with its value and `globalDefault: false`, reported at `metadata.name`;
    /// * any other class: `value` at most [`HIGHEST_USER_DEFINABLE_PRIORITY`].
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        let obj = self.object_ref();
        let mut errs = Vec::new();
        check_name(
            &obj,
            "metadata.name",
            &self.name,
            names::validate_dns_subdomain,
            &mut errs,
        );
        if self.name.starts_with(SYSTEM_PRIORITY_CLASS_PREFIX) {
            let known = SYSTEM_PRIORITY_CLASSES
                .iter()
                .any(|&(n, v)| n == self.name && v == self.value && !self.global_default);
            if !known {
                errs.push(ValidationError::new(
                    obj.clone(),
                    "metadata.name",
                    Problem::Forbidden {
                        reason: "priority class names with 'system-' prefix are reserved for system use only",
                    },
                ));
            }
        } else if self.value > HIGHEST_USER_DEFINABLE_PRIORITY {
            errs.push(ValidationError::new(
                obj.clone(),
                "value",
                Problem::Forbidden {
                    reason: "maximum allowed value of a user defined priority is 1000000000",
                },
            ));
        }
        crate::model::error::finish(errs)
    }
}

/// What the Priority admission plugin gives a pod or group that names `class` (`None` or
/// empty: no class): the class's value and preemption policy; for no class, those of the
/// global default class with the smallest value, or `(0, PreemptLowerPriority)` when there
/// is none. The built-in `system-*` classes resolve even when `classes` lacks them.
/// `None` when the named class does not exist (admission rejects the object).
///
/// ```
/// use gangpack::{PreemptionPolicy, PriorityClass, resolve_priority};
///
/// let mut batch = PriorityClass::new("batch", 100);
/// batch.global_default = true;
/// batch.preemption_policy = PreemptionPolicy::Never;
/// let classes = [PriorityClass::new("high", 1000), batch];
/// assert_eq!(resolve_priority(&classes, Some("high")), Some((1000, PreemptionPolicy::PreemptLowerPriority)));
/// assert_eq!(resolve_priority(&classes, None), Some((100, PreemptionPolicy::Never)));
/// assert_eq!(resolve_priority(&classes, Some("missing")), None);
/// ```
pub fn resolve_priority(
    classes: &[PriorityClass],
    class: Option<&str>,
) -> Option<(i32, PreemptionPolicy)> {
    match class.filter(|c| !c.is_empty()) {
        Some(name) => classes
            .iter()
            .find(|c| c.name == name)
            .map(|c| (c.value, c.preemption_policy))
            .or_else(|| {
                SYSTEM_PRIORITY_CLASSES
                    .iter()
                    .find(|&&(n, _)| n == name)
                    .map(|&(_, v)| (v, PreemptionPolicy::PreemptLowerPriority))
            }),
        None => Some(
            classes
                .iter()
                .filter(|c| c.global_default)
                .min_by_key(|c| c.value)
                .map_or((0, PreemptionPolicy::PreemptLowerPriority), |c| {
                    (c.value, c.preemption_policy)
                }),
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// Cross-object rules
// ---------------------------------------------------------------------------------------------

/// The consistency rules the scheduler applies to the members of a group before placing it
/// (KEP-5710, spec gang.md 1.2 and 1.6): a violation makes it fail the whole group with
/// `SchedulerError`. Every problem is reported against the pod that breaks the rule:
///
/// * `spec.schedulingGroup.podGroupName`: the pod must name `group`, in its namespace;
/// * `spec.priority`: must equal the group's priority ([`PodGroup::effective_priority`]);
/// * `spec.schedulerName` and `spec.preemptionPolicy`: must be the same for every member,
///   compared with the first pod of `pods` (an empty scheduler name reads as
///   [`DEFAULT_SCHEDULER_NAME`]).
///
/// These are the rules of Kubernetes 1.37's default configuration, where the
/// `PodGroupPreemptionPolicy` feature gate is off: every member must share one
/// `preemptionPolicy`, the first pod's decides for the group (upstream's
/// `validatePodGroup`: "all pods in a single pod group should have the same preemption
/// policy"), and the group's own `preemptionPolicy` is not read. With the gate on, see
/// [`check_group_members_gated`].
pub fn check_group_members(group: &PodGroup, pods: &[&Pod]) -> Vec<ValidationError> {
    check_group_members_gated(group, pods, false)
}

/// [`check_group_members`] with the `PodGroupPreemptionPolicy` feature gate given
/// (`pod_group_preemption_policy`; off by default in 1.37). With the gate on, every
/// member's `spec.preemptionPolicy` must equal the group's
/// ([`PodGroup::effective_preemption_policy`]; upstream: "all pods in a single pod group
/// should have the same preemption policy as the pod group's preemption policy"),
/// which decides for the group; with it off, the members must agree with each other.
pub fn check_group_members_gated(
    group: &PodGroup,
    pods: &[&Pod],
    pod_group_preemption_policy: bool,
) -> Vec<ValidationError> {
    let mut errs = Vec::new();
    let priority = group.effective_priority();
    let Some(first) = pods.first() else {
        return errs;
    };
    for (i, pod) in pods.iter().enumerate() {
        let obj = pod.object_ref();
        if pod.namespace != group.namespace
            || pod.scheduling_group.as_deref() != Some(group.name.as_str())
        {
            errs.push(ValidationError::new(
                obj.clone(),
                "spec.schedulingGroup.podGroupName",
                Problem::Invalid {
                    value: pod.scheduling_group.clone().unwrap_or_default(),
                    reason: "must name the PodGroup in the pod's namespace",
                },
            ));
        }
        if pod.priority != priority {
            errs.push(ValidationError::new(
                obj.clone(),
                "spec.priority",
                Problem::Invalid {
                    value: pod.priority.to_string(),
                    reason: "must equal the priority of the pod's PodGroup",
                },
            ));
        }
        if pod_group_preemption_policy
            && pod.preemption_policy != group.effective_preemption_policy()
        {
            errs.push(ValidationError::new(
                obj.clone(),
                "spec.preemptionPolicy",
                Problem::Invalid {
                    value: pod.preemption_policy.as_str().to_owned(),
                    reason: "must equal the preemptionPolicy of the pod's PodGroup \
                             (feature gate PodGroupPreemptionPolicy)",
                },
            ));
        }
        if i == 0 {
            continue;
        }
        if pod.effective_scheduler_name() != first.effective_scheduler_name() {
            errs.push(ValidationError::new(
                obj.clone(),
                "spec.schedulerName",
                Problem::Invalid {
                    value: pod.effective_scheduler_name().to_owned(),
                    reason: "must be the same for every pod of a PodGroup",
                },
            ));
        }
        if !pod_group_preemption_policy && pod.preemption_policy != first.preemption_policy {
            errs.push(ValidationError::new(
                obj,
                "spec.preemptionPolicy",
                Problem::Invalid {
                    value: pod.preemption_policy.as_str().to_owned(),
                    reason: "must be the same for every pod of a PodGroup",
                },
            ));
        }
    }
    errs
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// `metadata.namespace` a DNS label, `metadata.name` a DNS subdomain.
fn check_metadata(obj: &ObjectRef, namespace: &str, name: &str, errs: &mut Vec<ValidationError>) {
    check_name(
        obj,
        "metadata.namespace",
        namespace,
        names::validate_dns_label,
        errs,
    );
    check_name(
        obj,
        "metadata.name",
        name,
        names::validate_dns_subdomain,
        errs,
    );
}

/// An `int32` field with `minimum=1`, modelled as `u32`.
fn check_positive_i32(obj: &ObjectRef, field: &str, value: u32, errs: &mut Vec<ValidationError>) {
    let reason = if value == 0 {
        POSITIVE_MSG
    } else if i32::try_from(value).is_err() {
        INT32_MSG
    } else {
        return;
    };
    errs.push(ValidationError::new(
        obj.clone(),
        field,
        Problem::Invalid {
            value: value.to_string(),
            reason,
        },
    ));
}

/// `schedulingConstraints.topology` at `path`: at most one entry, keys label names.
fn check_topology(
    obj: &ObjectRef,
    path: &str,
    topology: &[TopologyConstraint],
    errs: &mut Vec<ValidationError>,
) {
    check_max(obj, path, topology.len(), MAX_TOPOLOGY_CONSTRAINTS, errs);
    for (i, t) in topology.iter().enumerate() {
        check_name(
            obj,
            &format!("{path}[{i}].key"),
            &t.key,
            names::validate_label_name,
            errs,
        );
    }
}

/// `disruptionMode: all` is refused for basic scheduling (KEP-5710).
fn check_disruption_mode(
    obj: &ObjectRef,
    path: &str,
    mode: DisruptionMode,
    basic: bool,
    errs: &mut Vec<ValidationError>,
) {
    if basic && mode == DisruptionMode::All {
        errs.push(ValidationError::new(
            obj.clone(),
            path,
            Problem::Forbidden {
                reason: ALL_WITH_BASIC_MSG,
            },
        ));
    }
}

/// `prefix.priorityClassName` (a DNS subdomain when set and not empty) and
/// `prefix.priority` (at most [`HIGHEST_USER_DEFINABLE_PRIORITY`]).
fn check_priority(
    obj: &ObjectRef,
    prefix: &str,
    class: Option<&str>,
    priority: Option<i32>,
    errs: &mut Vec<ValidationError>,
) {
    if let Some(class) = class.filter(|c| !c.is_empty()) {
        check_name(
            obj,
            &format!("{prefix}.priorityClassName"),
            class,
            names::validate_dns_subdomain,
            errs,
        );
    }
    if let Some(p) = priority.filter(|&p| p > HIGHEST_USER_DEFINABLE_PRIORITY) {
        errs.push(ValidationError::new(
            obj.clone(),
            format!("{prefix}.priority"),
            Problem::Invalid {
                value: p.to_string(),
                reason: MAX_PRIORITY_MSG,
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preemption_policy_parse_round_trip() {
        for p in [
            PreemptionPolicy::PreemptLowerPriority,
            PreemptionPolicy::Never,
        ] {
            assert_eq!(PreemptionPolicy::parse(p.as_str()), Some(p));
            assert_eq!(p.to_string(), p.as_str());
            assert!(PreemptionPolicy::SUPPORTED.contains(&p.as_str()));
        }
        assert_eq!(PreemptionPolicy::parse("never"), None);
        assert_eq!(PreemptionPolicy::parse(""), None);
        assert_eq!(
            PreemptionPolicy::default(),
            PreemptionPolicy::PreemptLowerPriority
        );
    }

    #[test]
    fn positive_i32() {
        let obj = ObjectRef::namespaced(ObjectKind::PodGroup, "ns", "g");
        let mut errs = Vec::new();
        for v in [1, 7, 2_147_483_647] {
            check_positive_i32(&obj, "f", v, &mut errs);
        }
        assert_eq!(errs, vec![]);
        check_positive_i32(&obj, "f", 0, &mut errs);
        check_positive_i32(&obj, "f", 2_147_483_648, &mut errs);
        let printed: Vec<String> = errs.iter().map(|e| e.problem.to_string()).collect();
        assert_eq!(
            printed,
            [
                "invalid value \"0\": must be greater than zero",
                "invalid value \"2147483648\": must be less than or equal to 2147483647",
            ]
        );
    }

    #[test]
    fn system_priority_values() {
        assert_eq!(SYSTEM_CRITICAL_PRIORITY, 2_000_000_000);
        assert_eq!(SYSTEM_PRIORITY_CLASSES[0].1, 2_000_001_000);
    }
}
