//! Pods and the scheduling.k8s.io kinds: k8s-openapi types → the gangpack model.

use std::collections::BTreeMap;

use gangpack::{
    ClaimSource, DisruptionMode, PodGroupResourceClaim, PodGroupTemplate, PodResourceClaim,
    PreemptionPolicy, Problem, Quantity, SchedulingPolicy, TaintEffect, Toleration,
    TolerationOperator, TopologyConstraint, WorkloadReference,
};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::v1 as sched_v1;
use k8s_openapi::api::scheduling::v1beta1 as sched;

use super::de::Ctx;
use super::resource::{creation, node_selector};

// ---------------------------------------------------------------------------------------------
// PriorityClasses
// ---------------------------------------------------------------------------------------------

/// A `scheduling.k8s.io/v1` PriorityClass.
pub(crate) fn priority_class(ctx: &mut Ctx<'_>) -> Option<gangpack::PriorityClass> {
    let c: sched_v1::PriorityClass = ctx.typed()?;
    let Some(value) = c.value else {
        ctx.problem("value", &Problem::Required);
        return None;
    };
    let mut class = gangpack::PriorityClass::new(ctx.obj.name.clone(), value);
    class.global_default = c.global_default.unwrap_or(false);
    if let Some(p) = preemption_policy(ctx, "preemptionPolicy", c.preemption_policy.as_deref()) {
        class.preemption_policy = p;
    }
    ctx.validate(class.validate());
    ctx.ok().then_some(class)
}

fn preemption_policy(ctx: &mut Ctx<'_>, field: &str, p: Option<&str>) -> Option<PreemptionPolicy> {
    let p = p.filter(|p| !p.is_empty())?;
    let parsed = PreemptionPolicy::parse(p);
    if parsed.is_none() {
        ctx.problem(
            field,
            &Problem::NotSupported {
                value: p.to_owned(),
                supported: PreemptionPolicy::SUPPORTED,
            },
        );
    }
    parsed
}

// ---------------------------------------------------------------------------------------------
// PodGroups and Workloads
// ---------------------------------------------------------------------------------------------

const POLICY_FIELDS: &[&str] = &["basic", "gang"];
const DISRUPTION_FIELDS: &[&str] = &["single", "all"];
const CLAIM_SOURCE_FIELDS: &[&str] = &["resourceClaimName", "resourceClaimTemplateName"];

/// A PodGroup as read, with the claims its `status.resourceClaimStatuses` names.
pub(crate) struct GroupInput {
    /// The group (claim entries as written).
    pub(crate) group: gangpack::PodGroup,
    /// `metadata.uid`.
    pub(crate) uid: String,
    /// `status.resourceClaimStatuses`: entry name → generated claim name.
    pub(crate) claim_statuses: BTreeMap<String, String>,
}

/// A `scheduling.k8s.io/v1beta1` PodGroup.
pub(crate) fn pod_group(ctx: &mut Ctx<'_>) -> Option<GroupInput> {
    let g: sched::PodGroup = ctx.typed()?;
    let spec = &g.spec;
    let namespace = ctx.obj.namespace.clone().unwrap_or_default();
    let policy = scheduling_policy(ctx, "spec.schedulingPolicy", &spec.scheduling_policy);
    let mut group = gangpack::PodGroup::new(namespace, ctx.obj.name.clone(), policy);
    group.workload_ref = spec
        .workload_ref
        .as_ref()
        .map(|r| WorkloadReference::new(r.workload_name.clone(), r.template_name.clone()));
    group
        .parent
        .clone_from(&spec.parent_composite_pod_group_name);
    if let Some(parent) = &group.parent {
        // The loader skips CompositePodGroups (alpha): no parent is ever found.
        ctx.warn(format!(
            "spec.parentCompositePodGroupName: CompositePodGroup \"{}/{parent}\" is not read \
             (gangpack does not read that alpha kind): the group is planned on its own, \
             without its parent's policy",
            group.namespace
        ));
    }
    group
        .priority_class_name
        .clone_from(&spec.priority_class_name);
    group.priority = spec.priority;
    group.preemption_policy = preemption_policy(
        ctx,
        "spec.preemptionPolicy",
        spec.preemption_policy.as_deref(),
    );
    group.disruption_mode =
        disruption_mode(ctx, "spec.disruptionMode", spec.disruption_mode.as_ref());
    group.topology = topology(spec.scheduling_constraints.as_ref());
    group.resource_claims =
        group_claims(ctx, "spec.resourceClaims", spec.resource_claims.as_deref());
    group.creation = creation(&g.metadata);
    let claim_statuses = g
        .status
        .iter()
        .flat_map(|s| s.resource_claim_statuses.iter().flatten())
        .filter_map(|s| Some((s.name.clone(), s.resource_claim_name.clone()?)))
        .collect();
    if !ctx.ok() {
        return None;
    }
    ctx.validate(group.validate());
    ctx.ok().then(|| GroupInput {
        group,
        uid: g.metadata.uid.clone().unwrap_or_default(),
        claim_statuses,
    })
}

fn scheduling_policy(
    ctx: &mut Ctx<'_>,
    path: &str,
    p: &sched::PodGroupSchedulingPolicy,
) -> SchedulingPolicy {
    match (&p.basic, &p.gang) {
        (Some(_), None) => SchedulingPolicy::Basic,
        (None, Some(g)) => {
            let Ok(min_count) = u32::try_from(g.min_count) else {
                ctx.problem(
                    format!("{path}.gang.minCount"),
                    &Problem::Invalid {
                        value: g.min_count.to_string(),
                        reason: "must be greater than zero",
                    },
                );
                return SchedulingPolicy::Basic;
            };
            SchedulingPolicy::Gang { min_count }
        }
        (basic, gang) => {
            ctx.problem(
                path,
                &Problem::ExactlyOneOf {
                    fields: POLICY_FIELDS,
                    set: usize::from(basic.is_some()) + usize::from(gang.is_some()),
                },
            );
            SchedulingPolicy::Basic
        }
    }
}

fn disruption_mode(
    ctx: &mut Ctx<'_>,
    path: &str,
    m: Option<&sched::DisruptionMode>,
) -> DisruptionMode {
    match m.map(|m| (m.single.is_some(), m.all.is_some())) {
        None | Some((true, false)) => DisruptionMode::Single,
        Some((false, true)) => DisruptionMode::All,
        Some((single, all)) => {
            ctx.problem(
                path,
                &Problem::ExactlyOneOf {
                    fields: DISRUPTION_FIELDS,
                    set: usize::from(single) + usize::from(all),
                },
            );
            DisruptionMode::Single
        }
    }
}

fn topology(c: Option<&sched::PodGroupSchedulingConstraints>) -> Vec<TopologyConstraint> {
    c.iter()
        .flat_map(|c| c.topology.iter().flatten())
        .map(|t| TopologyConstraint::new(t.key.clone()))
        .collect()
}

fn claim_source(
    ctx: &mut Ctx<'_>,
    path: &str,
    claim: Option<&String>,
    template: Option<&String>,
) -> Option<ClaimSource> {
    match (claim, template) {
        (Some(c), None) => Some(ClaimSource::ClaimName(c.clone())),
        (None, Some(t)) => Some(ClaimSource::Template(t.clone())),
        (c, t) => {
            ctx.problem(
                path,
                &Problem::ExactlyOneOf {
                    fields: CLAIM_SOURCE_FIELDS,
                    set: usize::from(c.is_some()) + usize::from(t.is_some()),
                },
            );
            None
        }
    }
}

fn group_claims(
    ctx: &mut Ctx<'_>,
    path: &str,
    claims: Option<&[sched::PodGroupResourceClaim]>,
) -> Vec<PodGroupResourceClaim> {
    let mut out = Vec::new();
    for (i, c) in claims.unwrap_or_default().iter().enumerate() {
        let source = claim_source(
            ctx,
            &format!("{path}[{i}]"),
            c.resource_claim_name.as_ref(),
            c.resource_claim_template_name.as_ref(),
        );
        if let Some(source) = source {
            out.push(PodGroupResourceClaim {
                name: c.name.clone(),
                source,
            });
        }
    }
    out
}

/// A `scheduling.k8s.io/v1beta1` Workload (validated; the scheduler reads PodGroups).
pub(crate) fn workload(ctx: &mut Ctx<'_>) -> Option<gangpack::Workload> {
    let w: sched::Workload = ctx.typed()?;
    let namespace = ctx.obj.namespace.clone().unwrap_or_default();
    let mut workload = gangpack::Workload::new(namespace, ctx.obj.name.clone());
    for (i, t) in w.spec.pod_group_templates.iter().flatten().enumerate() {
        let path = format!("spec.podGroupTemplates[{i}]");
        let mut template = PodGroupTemplate::new(
            t.name.clone(),
            scheduling_policy(
                ctx,
                &format!("{path}.schedulingPolicy"),
                &t.scheduling_policy,
            ),
        );
        template
            .priority_class_name
            .clone_from(&t.priority_class_name);
        template.priority = t.priority;
        template.preemption_policy = preemption_policy(
            ctx,
            &format!("{path}.preemptionPolicy"),
            t.preemption_policy.as_deref(),
        );
        template.disruption_mode = disruption_mode(
            ctx,
            &format!("{path}.disruptionMode"),
            t.disruption_mode.as_ref(),
        );
        template.topology = topology(t.scheduling_constraints.as_ref());
        template.resource_claims = group_claims(
            ctx,
            &format!("{path}.resourceClaims"),
            t.resource_claims.as_deref(),
        );
        workload.pod_group_templates.push(template);
    }
    if w.spec
        .composite_pod_group_templates
        .as_ref()
        .is_some_and(|c| !c.is_empty())
    {
        ctx.warn("spec.compositePodGroupTemplates (alpha) is not modelled: ignored");
    }
    if !ctx.ok() {
        return None;
    }
    ctx.validate(workload.validate());
    ctx.ok().then_some(workload)
}

// ---------------------------------------------------------------------------------------------
// Pods
// ---------------------------------------------------------------------------------------------

/// One container's effective requests (`requests`, with `limits` standing in for a
/// resource that has no request, as API defaulting does).
pub(crate) struct ContainerInput {
    /// `spec.initContainers[i]` or `spec.containers[i]`.
    pub(crate) path: String,
    /// Effective requests.
    pub(crate) requests: BTreeMap<String, Quantity>,
    /// Where each request was written (`resources.requests` or `resources.limits`).
    pub(crate) written_at: BTreeMap<String, String>,
}

/// A pod as read: the scheduling view plus what the snapshot decides on.
pub(crate) struct PodInput {
    /// The pod; `requests` holds the effective requests, extended resources included;
    /// `priority` and `preemption_policy` are resolved by the snapshot.
    pub(crate) pod: gangpack::Pod,
    /// `spec.priority`.
    pub(crate) priority: Option<i32>,
    /// `spec.priorityClassName`.
    pub(crate) priority_class_name: Option<String>,
    /// `spec.preemptionPolicy`.
    pub(crate) preemption_policy: Option<PreemptionPolicy>,
    /// `metadata.uid`.
    pub(crate) uid: String,
    /// `status.phase`.
    pub(crate) phase: Option<String>,
    /// `metadata.deletionTimestamp` is set.
    pub(crate) deleting: bool,
    /// `spec.schedulingGates` names.
    pub(crate) gates: Vec<String>,
    /// `status.resourceClaimStatuses`: entry name → generated claim name.
    pub(crate) claim_statuses: BTreeMap<String, String>,
    /// `status.extendedResourceClaimStatus`: the claim and the resources it serves.
    pub(crate) extended_claim: Option<(String, Vec<String>)>,
    /// Init containers then containers (the index upstream uses in request names).
    pub(crate) containers: Vec<ContainerInput>,
}

const TOLERATION_OPERATORS: &[&str] = &["Equal", "Exists", "Gt", "Lt"];

/// A `v1` Pod.
pub(crate) fn pod(ctx: &mut Ctx<'_>) -> Option<PodInput> {
    let p: core::Pod = ctx.typed()?;
    let namespace = ctx.obj.namespace.clone().unwrap_or_default();
    let mut pod = gangpack::Pod::new(namespace, ctx.obj.name.clone());
    let spec = p.spec.clone().unwrap_or_default();
    pod.scheduler_name = spec.scheduler_name.clone().unwrap_or_default();
    pod.node_name = spec.node_name.clone().filter(|n| !n.is_empty());
    pod.node_selector = spec.node_selector.clone().unwrap_or_default();
    pod.creation = creation(&p.metadata);
    for (i, t) in spec.tolerations.iter().flatten().enumerate() {
        if let Some(t) = toleration(ctx, &format!("spec.tolerations[{i}]"), t) {
            pod.tolerations.push(t);
        }
    }
    if let Some(a) = &spec.affinity {
        if let Some(sel) = a.node_affinity.as_ref().and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        }) {
            pod.required_node_affinity = Some(node_selector(
                ctx,
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                sel,
            ));
        }
        let required_pod_affinity = a.pod_affinity.as_ref().is_some_and(|x| {
            x.required_during_scheduling_ignored_during_execution
                .is_some()
        }) || a.pod_anti_affinity.as_ref().is_some_and(|x| {
            x.required_during_scheduling_ignored_during_execution
                .is_some()
        });
        if required_pod_affinity && pod.node_name.is_none() {
            ctx.warn("required pod affinity / anti-affinity is not modelled: ignored");
        }
    }
    if spec
        .topology_spread_constraints
        .as_ref()
        .is_some_and(|t| !t.is_empty())
        && pod.node_name.is_none()
    {
        ctx.warn("spec.topologySpreadConstraints is not modelled: ignored");
    }
    for (i, c) in spec.resource_claims.iter().flatten().enumerate() {
        let source = claim_source(
            ctx,
            &format!("spec.resourceClaims[{i}]"),
            c.resource_claim_name.as_ref(),
            c.resource_claim_template_name.as_ref(),
        );
        if let Some(source) = source {
            pod.resource_claims.push(PodResourceClaim {
                name: c.name.clone(),
                source,
            });
        }
    }
    pod.scheduling_group = spec
        .scheduling_group
        .as_ref()
        .and_then(|g| g.pod_group_name.clone());

    // Effective requests, as kube-scheduler computes them.
    let mut containers = Vec::new();
    let mut restartable = Vec::new();
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        containers.push(container(ctx, &format!("spec.initContainers[{i}]"), c));
        restartable.push(c.restart_policy.as_deref() == Some("Always"));
    }
    for (i, c) in spec.containers.iter().enumerate() {
        containers.push(container(ctx, &format!("spec.containers[{i}]"), c));
    }
    let inits = restartable.len();
    let mut requests = BTreeMap::new();
    for c in &containers[inits..] {
        add(&mut requests, &c.requests);
    }
    // Init containers run one at a time, each next to the sidecars started before it;
    // sidecars (restartPolicy Always) keep running next to the containers.
    let mut sidecars = BTreeMap::new();
    let mut init_peak = BTreeMap::new();
    for (c, &is_sidecar) in containers[..inits].iter().zip(&restartable) {
        let during = if is_sidecar {
            add(&mut requests, &c.requests);
            add(&mut sidecars, &c.requests);
            sidecars.clone()
        } else {
            let mut during = c.requests.clone();
            add(&mut during, &sidecars);
            during
        };
        max(&mut init_peak, &during);
    }
    max(&mut requests, &init_peak);
    // Pod-level resources (cpu, memory, hugepages) replace the containers' sum.
    if let Some(r) = &spec.resources {
        let (level, _) = effective(ctx, "spec.resources", r);
        for (name, q) in level {
            if name == "cpu" || name == "memory" || name.starts_with("hugepages-") {
                requests.insert(name, q);
            }
        }
    }
    let overhead = ctx.quantities("spec.overhead", spec.overhead.as_ref());
    add(&mut requests, &overhead);
    pod.requests = requests;

    let status = p.status.as_ref();
    let claim_statuses = status
        .into_iter()
        .flat_map(|s| s.resource_claim_statuses.iter().flatten())
        .filter_map(|s| Some((s.name.clone(), s.resource_claim_name.clone()?)))
        .collect();
    let extended_claim = status
        .and_then(|s| s.extended_resource_claim_status.as_ref())
        .map(|e| {
            let mut resources: Vec<String> = e
                .request_mappings
                .iter()
                .map(|m| m.resource_name.clone())
                .collect();
            resources.sort();
            resources.dedup();
            (e.resource_claim_name.clone(), resources)
        });
    if !ctx.ok() {
        return None;
    }
    Some(PodInput {
        pod,
        priority: spec.priority,
        priority_class_name: spec.priority_class_name.clone().filter(|c| !c.is_empty()),
        preemption_policy: preemption_policy(
            ctx,
            "spec.preemptionPolicy",
            spec.preemption_policy.as_deref(),
        ),
        uid: p.metadata.uid.clone().unwrap_or_default(),
        phase: status.and_then(|s| s.phase.clone()),
        deleting: p.metadata.deletion_timestamp.is_some(),
        gates: spec
            .scheduling_gates
            .iter()
            .flatten()
            .map(|g| g.name.clone())
            .collect(),
        claim_statuses,
        extended_claim,
        containers,
    })
}

fn toleration(ctx: &mut Ctx<'_>, path: &str, t: &core::Toleration) -> Option<Toleration> {
    let operator = match t.operator.as_deref().unwrap_or_default() {
        "" => TolerationOperator::default(),
        op => {
            let Some(op) = TolerationOperator::parse(op) else {
                ctx.problem(
                    format!("{path}.operator"),
                    &Problem::NotSupported {
                        value: op.to_owned(),
                        supported: TOLERATION_OPERATORS,
                    },
                );
                return None;
            };
            op
        }
    };
    let effect = match t.effect.as_deref().unwrap_or_default() {
        "" => None,
        e => {
            let Some(e) = TaintEffect::parse(e) else {
                ctx.problem(
                    format!("{path}.effect"),
                    &Problem::NotSupported {
                        value: e.to_owned(),
                        supported: TaintEffect::SUPPORTED,
                    },
                );
                return None;
            };
            Some(e)
        }
    };
    Some(Toleration {
        key: t.key.clone().unwrap_or_default(),
        operator,
        value: t.value.clone().unwrap_or_default(),
        effect,
        toleration_seconds: t.toleration_seconds,
    })
}

fn container(ctx: &mut Ctx<'_>, path: &str, c: &core::Container) -> ContainerInput {
    let (requests, written_at) = match &c.resources {
        Some(r) => effective(ctx, &format!("{path}.resources"), r),
        None => (BTreeMap::new(), BTreeMap::new()),
    };
    ContainerInput {
        path: path.to_owned(),
        requests,
        written_at,
    }
}

/// `requests`, plus `limits` for resources without a request (API defaulting), and
/// where each was written.
fn effective(
    ctx: &mut Ctx<'_>,
    path: &str,
    r: &core::ResourceRequirements,
) -> (BTreeMap<String, Quantity>, BTreeMap<String, String>) {
    let mut out = ctx.quantities(&format!("{path}.requests"), r.requests.as_ref());
    let mut at: BTreeMap<String, String> = out
        .keys()
        .map(|k| (k.clone(), format!("{path}.requests[\"{k}\"]")))
        .collect();
    let limits = ctx.quantities(&format!("{path}.limits"), r.limits.as_ref());
    for (k, q) in limits {
        if !r.requests.as_ref().is_some_and(|m| m.contains_key(&k)) {
            at.insert(k.clone(), format!("{path}.limits[\"{k}\"]"));
            out.insert(k, q);
        }
    }
    (out, at)
}

fn add(into: &mut BTreeMap<String, Quantity>, other: &BTreeMap<String, Quantity>) {
    for (k, q) in other {
        let e = into.entry(k.clone()).or_insert(Quantity::ZERO);
        *e = e.saturating_add(*q);
    }
}

fn max(into: &mut BTreeMap<String, Quantity>, other: &BTreeMap<String, Quantity>) {
    for (k, q) in other {
        let e = into.entry(k.clone()).or_insert(*q);
        if *q > *e {
            *e = *q;
        }
    }
}
