#![cfg(not(target_arch = "wasm32"))]
//! The scheduling view of pods and gangs (spec gang.md 1.2, 1.4-1.6; scheduling.k8s.io/v1beta1):
//! validation of Pods, PodGroups, Workloads, CompositePodGroups and PriorityClasses with
//! exact field paths and messages, `Workload::instantiate`, the node-label filter
//! (`nodeSelector` AND required node affinity) and the group-member consistency rules.

use std::collections::BTreeMap;

use gangpack::{
    ClaimSource, CompositePodGroup, CompositeSchedulingPolicy, DEFAULT_SCHEDULER_NAME,
    DisruptionMode, HIGHEST_USER_DEFINABLE_PRIORITY, MAX_POD_GROUP_RESOURCE_CLAIMS,
    MAX_POD_GROUP_TEMPLATES, MAX_TOPOLOGY_CONSTRAINTS, Node, NodeSelector, NodeSelectorOperator,
    NodeSelectorRequirement, NodeSelectorTerm, ObjectKind, ObjectRef, Pod, PodGroup,
    PodGroupResourceClaim, PodGroupTemplate, PodResourceClaim, PreemptionPolicy, PriorityClass,
    Quantity, SYSTEM_CRITICAL_PRIORITY, SchedulingPolicy, Time, Toleration, TolerationOperator,
    TopologyConstraint, ValidationError, Workload, WorkloadReference, check_group_members,
    resolve_priority,
};

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const PREFIX_MSG: &str = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const ALL_WITH_BASIC: &str =
    "forbidden: the disruptionMode `all` is not supported with the Basic scheduling policy";

/// `field: problem` for every error, checking that each names `obj`.
fn printed(obj: &ObjectRef, result: Result<(), Vec<ValidationError>>) -> Vec<String> {
    match result {
        Ok(()) => vec![],
        Err(errs) => {
            assert!(!errs.is_empty(), "Err(vec![]) is not a valid outcome");
            errs.iter()
                .map(|e| {
                    assert_eq!(&e.object, obj, "{e}");
                    format!("{}: {}", e.field, e.problem)
                })
                .collect()
        }
    }
}

/// A validation table row: what, how to break the valid fixture, the printed errors.
type Case<T> = (&'static str, fn(&mut T), Vec<String>);

/// A node-label row: nodeSelector, required affinity, node name, fits.
type LabelCase = (
    Vec<(&'static str, &'static str)>,
    Option<NodeSelector>,
    &'static str,
    bool,
);

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap()
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|&(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn req(key: &str, op: NodeSelectorOperator, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement::new(key, op, values.iter().copied())
}

/// A selector with one term per entry, each term ANDing its requirements.
fn selector(terms: Vec<Vec<NodeSelectorRequirement>>) -> NodeSelector {
    NodeSelector {
        terms: terms
            .into_iter()
            .map(|match_expressions| NodeSelectorTerm {
                match_expressions,
                match_fields: vec![],
            })
            .collect(),
    }
}

fn claim_ref(name: &str, claim: &str) -> PodGroupResourceClaim {
    PodGroupResourceClaim {
        name: name.into(),
        source: ClaimSource::ClaimName(claim.into()),
    }
}

/// `team-a/trainer-0-w0`: every field set, all valid.
fn pod() -> Pod {
    let mut p = Pod::new("team-a", "trainer-0-w0");
    p.priority = 1000;
    p.requests.insert("cpu".into(), q("4"));
    p.requests.insert("nvidia.com/gpu".into(), q("8"));
    p.tolerations.push(Toleration {
        key: "nvidia.com/gpu".into(),
        operator: TolerationOperator::Exists,
        value: String::new(),
        effect: None,
        toleration_seconds: None,
    });
    p.node_selector.insert("pool".into(), "h100".into());
    p.required_node_affinity = Some(selector(vec![vec![req(
        "topology.kubernetes.io/zone",
        NodeSelectorOperator::In,
        &["a", "b"],
    )]]));
    p.resource_claims.push(PodResourceClaim {
        name: "gpus".into(),
        source: ClaimSource::Template("gpu-template".into()),
    });
    p.scheduling_group = Some("trainer-0".into());
    p.node_name = Some("node-1".into());
    p
}

/// `team-a/trainer-0`: a gang of 4 with every optional field set, all valid.
fn group() -> PodGroup {
    let mut g = PodGroup::new(
        "team-a",
        "trainer-0",
        SchedulingPolicy::Gang { min_count: 4 },
    );
    g.workload_ref = Some(WorkloadReference::new("trainer", "workers"));
    g.parent = Some("trainer-root".into());
    g.priority_class_name = Some("high".into());
    g.priority = Some(1000);
    g.preemption_policy = Some(PreemptionPolicy::Never);
    g.disruption_mode = DisruptionMode::All;
    g.topology
        .push(TopologyConstraint::new("topology.kubernetes.io/rack"));
    g.resource_claims.push(claim_ref("shared", "fabric"));
    g
}

/// A template like [`group`]'s spec.
fn template(name: &str) -> PodGroupTemplate {
    let mut t = PodGroupTemplate::new(name, SchedulingPolicy::Gang { min_count: 4 });
    t.priority_class_name = Some("high".into());
    t.priority = Some(1000);
    t.preemption_policy = Some(PreemptionPolicy::Never);
    t.disruption_mode = DisruptionMode::All;
    t.topology
        .push(TopologyConstraint::new("topology.kubernetes.io/rack"));
    t.resource_claims.push(PodGroupResourceClaim {
        name: "shared".into(),
        source: ClaimSource::Template("fabric-template".into()),
    });
    t
}

/// `team-a/trainer` with templates `leader` (basic) and `workers` (gang of 4).
fn workload() -> Workload {
    let mut w = Workload::new("team-a", "trainer");
    w.pod_group_templates
        .push(PodGroupTemplate::new("leader", SchedulingPolicy::Basic));
    w.pod_group_templates.push(template("workers"));
    w
}

fn composite() -> CompositePodGroup {
    let mut c = CompositePodGroup::new(
        "team-a",
        "trainer-root",
        WorkloadReference::new("trainer", "root"),
        CompositeSchedulingPolicy::Gang { min_group_count: 2 },
    );
    c.children = vec!["trainer-0".into(), "trainer-1".into()];
    c.topology
        .push(TopologyConstraint::new("example.com/block"));
    c.priority_class_name = Some("high".into());
    c.priority = Some(1000);
    c.disruption_mode = DisruptionMode::All;
    c
}

// ------------------------------------------------------------------------------------------
// Pods
// ------------------------------------------------------------------------------------------

#[test]
fn pod_valid() {
    assert_eq!(pod().validate(), Ok(()));
    assert_eq!(Pod::new("ns", "p").validate(), Ok(()));
    // An empty scheduler name is the default scheduler.
    let mut p = pod();
    p.scheduler_name.clear();
    assert_eq!(p.validate(), Ok(()));
    assert_eq!(p.effective_scheduler_name(), DEFAULT_SCHEDULER_NAME);
    assert_eq!(Pod::new("ns", "p").scheduler_name, DEFAULT_SCHEDULER_NAME);
    // Priority is not range-checked (system pods are above the user maximum).
    p.priority = SYSTEM_CRITICAL_PRIORITY;
    assert_eq!(p.validate(), Ok(()));
    p.priority = i32::MIN;
    assert_eq!(p.validate(), Ok(()));
}

#[test]
fn pod_validation_table() {
    let affinity = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
    let cases: Vec<Case<Pod>> = vec![
        (
            "empty namespace and name",
            |p| {
                p.namespace.clear();
                p.name.clear();
            },
            vec![
                "metadata.namespace: required value".into(),
                "metadata.name: required value".into(),
            ],
        ),
        (
            "namespace is a DNS label, name a DNS subdomain",
            |p| {
                p.namespace = "team.a".into();
                p.name = "Trainer_0".into();
            },
            vec![
                "metadata.namespace: invalid value \"team.a\": must not contain dots".into(),
                format!("metadata.name: invalid value \"Trainer_0\": {SUBDOMAIN_MSG}"),
            ],
        ),
        (
            "dotted pod names are fine",
            |p| p.name = "trainer.0".into(),
            vec![],
        ),
        (
            "scheduler name",
            |p| p.scheduler_name = "My Scheduler".into(),
            vec![format!(
                "spec.schedulerName: invalid value \"My Scheduler\": {SUBDOMAIN_MSG}"
            )],
        ),
        (
            "node name",
            |p| p.node_name = Some("Node_1".into()),
            vec![format!(
                "spec.nodeName: invalid value \"Node_1\": {SUBDOMAIN_MSG}"
            )],
        ),
        (
            "empty node name",
            |p| p.node_name = Some(String::new()),
            vec!["spec.nodeName: required value".into()],
        ),
        (
            "nodeSelector key and value",
            |p| {
                p.node_selector.insert("bad key".into(), "ok".into());
                p.node_selector.insert("zone".into(), "not ok".into());
            },
            vec![
                format!("spec.nodeSelector[\"bad key\"]: invalid value \"bad key\": {NAME_PART_MSG}"),
                format!("spec.nodeSelector[\"zone\"]: invalid value \"not ok\": {LABEL_VALUE_MSG}"),
            ],
        ),
        (
            "nodeSelector empty value is fine",
            |p| {
                p.node_selector.insert("example.com/flag".into(), String::new());
            },
            vec![],
        ),
        (
            "required affinity without terms",
            |p| p.required_node_affinity = Some(NodeSelector { terms: vec![] }),
            vec![format!("{affinity}.nodeSelectorTerms: required value")],
        ),
        (
            "required affinity with a bad requirement",
            |p| {
                p.required_node_affinity = Some(selector(vec![vec![
                    req("zone", NodeSelectorOperator::In, &["a"]),
                    req("gpus", NodeSelectorOperator::Gt, &["many"]),
                ]]));
            },
            vec![format!(
                "{affinity}.nodeSelectorTerms[0].matchExpressions[1].values[0]: invalid value \"many\": must be an integer when `operator` is 'Gt' or 'Lt'"
            )],
        ),
        (
            "toleration",
            |p| {
                p.tolerations.push(Toleration {
                    key: String::new(),
                    operator: TolerationOperator::Equal,
                    value: String::new(),
                    effect: None,
                    toleration_seconds: None,
                });
            },
            vec!["spec.tolerations[1].operator: invalid value \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"".into()],
        ),
        (
            "resource claim names",
            |p| {
                p.resource_claims.push(PodResourceClaim {
                    name: "gpus".into(),
                    source: ClaimSource::ClaimName("other".into()),
                });
                p.resource_claims.push(PodResourceClaim {
                    name: String::new(),
                    source: ClaimSource::ClaimName("Bad_Claim".into()),
                });
                p.resource_claims.push(PodResourceClaim {
                    name: "my.claim".into(),
                    source: ClaimSource::Template(".tpl".into()),
                });
            },
            vec![
                "spec.resourceClaims[1].name: duplicate value \"gpus\"".into(),
                "spec.resourceClaims[2].name: required value".into(),
                format!("spec.resourceClaims[2].resourceClaimName: invalid value \"Bad_Claim\": {SUBDOMAIN_MSG}"),
                "spec.resourceClaims[3].name: invalid value \"my.claim\": must not contain dots".into(),
                format!("spec.resourceClaims[3].resourceClaimTemplateName: invalid value \".tpl\": {SUBDOMAIN_MSG}"),
            ],
        ),
        (
            "scheduling group",
            |p| p.scheduling_group = Some("Trainer".into()),
            vec![format!(
                "spec.schedulingGroup.podGroupName: invalid value \"Trainer\": {SUBDOMAIN_MSG}"
            )],
        ),
        (
            "empty scheduling group",
            |p| p.scheduling_group = Some(String::new()),
            vec!["spec.schedulingGroup.podGroupName: required value".into()],
        ),
        (
            "requests",
            |p| {
                p.requests.insert("memory".into(), q("-1Gi"));
                p.requests.insert("bad resource".into(), q("1"));
            },
            vec![
                format!("spec.resources.requests[\"bad resource\"]: invalid value \"bad resource\": {NAME_PART_MSG}"),
                "spec.resources.requests[\"memory\"]: invalid value \"-1Gi\": must be greater than or equal to 0".into(),
            ],
        ),
    ];
    for (what, mutate, want) in cases {
        let mut p = pod();
        mutate(&mut p);
        assert_eq!(printed(&p.object_ref(), p.validate()), want, "{what}");
    }
}

#[test]
fn pod_errors_print_the_object() {
    let mut p = pod();
    p.scheduling_group = Some(String::new());
    let errs = p.validate().unwrap_err();
    assert_eq!(
        errs[0].to_string(),
        "Pod \"team-a/trainer-0-w0\": spec.schedulingGroup.podGroupName: required value"
    );
    assert_eq!(errs[0].object.kind, ObjectKind::Pod);
}

// ------------------------------------------------------------------------------------------
// PodGroups
// ------------------------------------------------------------------------------------------

#[test]
fn pod_group_valid() {
    assert_eq!(group().validate(), Ok(()));
    let g = PodGroup::new("ns", "g", SchedulingPolicy::Basic);
    assert_eq!(g.validate(), Ok(()));
    assert_eq!(g.disruption_mode, DisruptionMode::Single);
    assert_eq!(g.effective_priority(), 0);
    assert_eq!(
        g.effective_preemption_policy(),
        PreemptionPolicy::PreemptLowerPriority
    );
    assert_eq!(g.policy.min_count(), None);
    assert_eq!(group().policy.min_count(), Some(4));
    assert!(group().policy.is_gang());
    // Limits at their maximum.
    let mut g = group();
    g.priority = Some(HIGHEST_USER_DEFINABLE_PRIORITY);
    g.policy = SchedulingPolicy::Gang {
        min_count: i32::MAX.unsigned_abs(),
    };
    g.resource_claims = (0..MAX_POD_GROUP_RESOURCE_CLAIMS)
        .map(|i| claim_ref(&format!("c{i}"), "x"))
        .collect();
    assert_eq!(g.topology.len(), MAX_TOPOLOGY_CONSTRAINTS);
    assert_eq!(g.validate(), Ok(()));
    // Negative priorities are fine; an empty class name means unset.
    g.priority = Some(i32::MIN);
    g.priority_class_name = Some(String::new());
    assert_eq!(g.validate(), Ok(()));
}

#[test]
fn pod_group_validation_table() {
    let cases: Vec<Case<PodGroup>> = vec![
        (
            "metadata",
            |g| {
                g.namespace = "Team".into();
                g.name = String::new();
            },
            vec![
                format!("metadata.namespace: invalid value \"Team\": {LABEL_MSG}"),
                "metadata.name: required value".into(),
            ],
        ),
        (
            "minCount zero",
            |g| g.policy = SchedulingPolicy::Gang { min_count: 0 },
            vec!["spec.schedulingPolicy.gang.minCount: invalid value \"0\": must be greater than zero".into()],
        ),
        (
            "minCount beyond int32",
            |g| g.policy = SchedulingPolicy::Gang { min_count: 1 << 31 },
            vec!["spec.schedulingPolicy.gang.minCount: invalid value \"2147483648\": must be less than or equal to 2147483647".into()],
        ),
        (
            "disruptionMode all with basic",
            |g| g.policy = SchedulingPolicy::Basic,
            vec![format!("spec.disruptionMode: {ALL_WITH_BASIC}")],
        ),
        (
            "disruptionMode single with basic",
            |g| {
                g.policy = SchedulingPolicy::Basic;
                g.disruption_mode = DisruptionMode::Single;
            },
            vec![],
        ),
        (
            "two topology constraints",
            |g| g.topology.push(TopologyConstraint::new("topology.kubernetes.io/zone")),
            vec!["spec.schedulingConstraints.topology: too many: 2, must have at most 1 items".into()],
        ),
        (
            "topology keys",
            |g| {
                g.topology = vec![
                    TopologyConstraint::new(""),
                    TopologyConstraint::new("Example.com/Foo"),
                    TopologyConstraint::new("b".repeat(64)),
                ];
            },
            vec![
                "spec.schedulingConstraints.topology: too many: 3, must have at most 1 items".into(),
                "spec.schedulingConstraints.topology[0].key: required value".into(),
                format!("spec.schedulingConstraints.topology[1].key: invalid value \"Example.com/Foo\": {PREFIX_MSG}"),
                format!("spec.schedulingConstraints.topology[2].key: invalid value \"{}\": name part must be no more than 63 bytes", "b".repeat(64)),
            ],
        ),
        (
            "topology key with a prefix and uppercase name",
            |g| g.topology = vec![TopologyConstraint::new("example.com/Foo")],
            vec![],
        ),
        (
            "too many resource claims",
            |g| {
                g.resource_claims = (0..=MAX_POD_GROUP_RESOURCE_CLAIMS)
                    .map(|i| claim_ref(&format!("c{i}"), "x"))
                    .collect();
            },
            vec!["spec.resourceClaims: too many: 5, must have at most 4 items".into()],
        ),
        (
            "resource claim entries",
            |g| {
                g.resource_claims = vec![
                    claim_ref("shared", "a"),
                    claim_ref("shared", "b"),
                    PodGroupResourceClaim {
                        name: "my/claim".into(),
                        source: ClaimSource::Template(".foo_bar".into()),
                    },
                    claim_ref("", ".foo_bar"),
                ];
            },
            vec![
                "spec.resourceClaims[1]: duplicate value \"shared\"".into(),
                format!("spec.resourceClaims[2].name: invalid value \"my/claim\": {LABEL_MSG}"),
                format!("spec.resourceClaims[2].resourceClaimTemplateName: invalid value \".foo_bar\": {SUBDOMAIN_MSG}"),
                "spec.resourceClaims[3].name: required value".into(),
                format!("spec.resourceClaims[3].resourceClaimName: invalid value \".foo_bar\": {SUBDOMAIN_MSG}"),
            ],
        ),
        (
            "priority class name",
            |g| g.priority_class_name = Some("high/priority".into()),
            vec![format!("spec.priorityClassName: invalid value \"high/priority\": {SUBDOMAIN_MSG}")],
        ),
        (
            "priority above the user maximum",
            |g| g.priority = Some(HIGHEST_USER_DEFINABLE_PRIORITY + 1),
            vec!["spec.priority: invalid value \"1000000001\": must be less than or equal to 1000000000".into()],
        ),
        (
            "workloadRef names",
            |g| g.workload_ref = Some(WorkloadReference::new("Trainer", "workers.0")),
            vec![
                format!("spec.workloadRef.workloadName: invalid value \"Trainer\": {SUBDOMAIN_MSG}"),
                "spec.workloadRef.templateName: invalid value \"workers.0\": must not contain dots".into(),
            ],
        ),
        (
            "empty workloadRef names",
            |g| g.workload_ref = Some(WorkloadReference::new("", "")),
            vec![
                "spec.workloadRef.workloadName: required value".into(),
                "spec.workloadRef.templateName: required value".into(),
            ],
        ),
        (
            "parent requires workloadRef",
            |g| g.workload_ref = None,
            vec!["spec.workloadRef: required value".into()],
        ),
        (
            "standalone group without a parent",
            |g| {
                g.workload_ref = None;
                g.parent = None;
            },
            vec![],
        ),
        (
            "parent name",
            |g| g.parent = Some("Root".into()),
            vec![format!("spec.parentCompositePodGroupName: invalid value \"Root\": {SUBDOMAIN_MSG}")],
        ),
    ];
    for (what, mutate, want) in cases {
        let mut g = group();
        mutate(&mut g);
        assert_eq!(printed(&g.object_ref(), g.validate()), want, "{what}");
    }
}

#[test]
fn pod_group_errors_print_the_object() {
    let mut g = group();
    g.policy = SchedulingPolicy::Gang { min_count: 0 };
    g.topology.push(TopologyConstraint::new("zone"));
    let errs: Vec<String> = g
        .validate()
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        [
            "PodGroup \"team-a/trainer-0\": spec.schedulingPolicy.gang.minCount: invalid value \"0\": must be greater than zero",
            "PodGroup \"team-a/trainer-0\": spec.schedulingConstraints.topology: too many: 2, must have at most 1 items",
        ]
    );
    g.policy = SchedulingPolicy::Basic;
    g.topology.pop();
    let errs = g.validate().unwrap_err();
    assert_eq!(
        errs[0].to_string(),
        format!("PodGroup \"team-a/trainer-0\": spec.disruptionMode: {ALL_WITH_BASIC}")
    );
}

#[test]
fn group_claims_resolve_pod_claims() {
    let g = group();
    let same = PodResourceClaim {
        name: "shared".into(),
        source: ClaimSource::ClaimName("fabric".into()),
    };
    assert_eq!(g.group_claim_for(&same), Some(&g.resource_claims[0]));
    // Same name, other source: the pod's own claim.
    let other_source = PodResourceClaim {
        name: "shared".into(),
        source: ClaimSource::Template("fabric".into()),
    };
    assert_eq!(g.group_claim_for(&other_source), None);
    let other_name = PodResourceClaim {
        name: "mine".into(),
        source: ClaimSource::ClaimName("fabric".into()),
    };
    assert_eq!(g.group_claim_for(&other_name), None);
}

// ------------------------------------------------------------------------------------------
// Workloads
// ------------------------------------------------------------------------------------------

#[test]
fn workload_valid() {
    assert_eq!(workload().validate(), Ok(()));
    let mut w = Workload::new("ns", "w");
    w.pod_group_templates = (0..MAX_POD_GROUP_TEMPLATES)
        .map(|i| PodGroupTemplate::new(format!("t{i}"), SchedulingPolicy::Basic))
        .collect();
    assert_eq!(w.validate(), Ok(()));
}

#[test]
fn workload_validation_table() {
    let t = "spec.podGroupTemplates";
    let cases: Vec<Case<Workload>> = vec![
        (
            "metadata",
            |w| {
                w.namespace.clear();
                w.name = "-trainer".into();
            },
            vec![
                "metadata.namespace: required value".into(),
                format!("metadata.name: invalid value \"-trainer\": {SUBDOMAIN_MSG}"),
            ],
        ),
        (
            "no templates",
            |w| w.pod_group_templates.clear(),
            vec![format!("{t}: required value")],
        ),
        (
            "too many templates (their contents are not checked)",
            |w| {
                w.pod_group_templates = (0..=MAX_POD_GROUP_TEMPLATES)
                    .map(|_| PodGroupTemplate::new("Bad_Name", SchedulingPolicy::Basic))
                    .collect();
            },
            vec![format!("{t}: too many: 9, must have at most 8 items")],
        ),
        (
            "template names",
            |w| {
                w.pod_group_templates[0].name.clear();
                w.pod_group_templates[1].name = "Invalid_Name".into();
            },
            vec![
                format!("{t}[0].name: required value"),
                format!("{t}[1].name: invalid value \"Invalid_Name\": {LABEL_MSG}"),
            ],
        ),
        (
            "duplicate template",
            |w| w.pod_group_templates.push(template("workers")),
            vec![format!("{t}[2]: duplicate value \"workers\"")],
        ),
        (
            "minCount zero",
            |w| w.pod_group_templates[1].policy = SchedulingPolicy::Gang { min_count: 0 },
            vec![format!(
                "{t}[1].schedulingPolicy.gang.minCount: invalid value \"0\": must be greater than zero"
            )],
        ),
        (
            "disruptionMode all with basic",
            |w| w.pod_group_templates[0].disruption_mode = DisruptionMode::All,
            vec![format!("{t}[0].disruptionMode: {ALL_WITH_BASIC}")],
        ),
        (
            "topology",
            |w| {
                w.pod_group_templates[1]
                    .topology
                    .push(TopologyConstraint::new(""));
            },
            vec![
                format!(
                    "{t}[1].schedulingConstraints.topology: too many: 2, must have at most 1 items"
                ),
                format!("{t}[1].schedulingConstraints.topology[1].key: required value"),
            ],
        ),
        (
            "resource claims",
            |w| {
                let claims = &mut w.pod_group_templates[1].resource_claims;
                claims.push(claim_ref("shared", "other"));
                claims.push(claim_ref("../my-claim", "x"));
            },
            vec![
                format!("{t}[1].resourceClaims[1]: duplicate value \"shared\""),
                format!(
                    "{t}[1].resourceClaims[2].name: invalid value \"../my-claim\": {LABEL_MSG}"
                ),
            ],
        ),
        (
            "priority",
            |w| {
                w.pod_group_templates[1].priority_class_name = Some("High".into());
                w.pod_group_templates[1].priority = Some(HIGHEST_USER_DEFINABLE_PRIORITY + 1);
            },
            vec![
                format!("{t}[1].priorityClassName: invalid value \"High\": {SUBDOMAIN_MSG}"),
                format!(
                    "{t}[1].priority: invalid value \"1000000001\": must be less than or equal to 1000000000"
                ),
            ],
        ),
    ];
    for (what, mutate, want) in cases {
        let mut w = workload();
        mutate(&mut w);
        assert_eq!(printed(&w.object_ref(), w.validate()), want, "{what}");
    }
}

#[test]
fn instantiate_copies_the_template() {
    let w = workload();
    let g = w.instantiate("workers", "trainer-0").unwrap();
    let t = w.template("workers").unwrap();
    assert_eq!(g.namespace, "team-a");
    assert_eq!(g.name, "trainer-0");
    assert_eq!(
        g.workload_ref,
        Some(WorkloadReference::new("trainer", "workers"))
    );
    assert_eq!(g.parent, None);
    assert_eq!(g.policy, t.policy);
    assert_eq!(g.priority_class_name, t.priority_class_name);
    assert_eq!(g.priority, t.priority);
    assert_eq!(g.preemption_policy, t.preemption_policy);
    assert_eq!(g.disruption_mode, DisruptionMode::All);
    assert_eq!(g.topology, t.topology);
    assert_eq!(g.resource_claims, t.resource_claims);
    assert_eq!(g.creation, Time::default());
    assert_eq!(g.validate(), Ok(()));

    // The whole value, for the basic template.
    let leader = w.instantiate("leader", "trainer-0-leader").unwrap();
    let mut want = PodGroup::new("team-a", "trainer-0-leader", SchedulingPolicy::Basic);
    want.workload_ref = Some(WorkloadReference::new("trainer", "leader"));
    assert_eq!(leader, want);

    // One group per replica, each pointing at the same template.
    let g1 = w.instantiate("workers", "trainer-1").unwrap();
    assert_eq!(g1.workload_ref, g.workload_ref);
    assert_ne!(g1.name, g.name);

    assert_eq!(w.instantiate("missing", "x"), None);
    assert_eq!(Workload::new("ns", "w").instantiate("workers", "x"), None);
}

// ------------------------------------------------------------------------------------------
// CompositePodGroups
// ------------------------------------------------------------------------------------------

#[test]
fn composite_valid() {
    assert_eq!(composite().validate(), Ok(()));
    let mut c = composite();
    c.policy = CompositeSchedulingPolicy::Basic;
    c.disruption_mode = DisruptionMode::Single;
    c.children.clear();
    c.parent = Some("trainer-super".into());
    assert_eq!(c.validate(), Ok(()));
    assert_eq!(c.policy.min_group_count(), None);
    assert_eq!(composite().policy.min_group_count(), Some(2));
}

#[test]
fn composite_validation_table() {
    let cases: Vec<Case<CompositePodGroup>> = vec![
        (
            "workloadRef is required",
            |c| c.workload_ref = None,
            vec!["spec.workloadRef: required value".into()],
        ),
        (
            "workloadRef names",
            |c| c.workload_ref = Some(WorkloadReference::new("", "Root")),
            vec![
                "spec.workloadRef.workloadName: required value".into(),
                format!("spec.workloadRef.templateName: invalid value \"Root\": {LABEL_MSG}"),
            ],
        ),
        (
            "parent",
            |c| c.parent = Some(String::new()),
            vec!["spec.parentCompositePodGroupName: required value".into()],
        ),
        (
            "children",
            |c| c.children = vec!["a".into(), "Bad".into(), "a".into()],
            vec![
                format!("children[1]: invalid value \"Bad\": {SUBDOMAIN_MSG}"),
                "children[2]: duplicate value \"a\"".into(),
            ],
        ),
        (
            "minGroupCount zero",
            |c| c.policy = CompositeSchedulingPolicy::Gang { min_group_count: 0 },
            vec!["spec.schedulingPolicy.gang.minGroupCount: invalid value \"0\": must be greater than zero".into()],
        ),
        (
            "disruptionMode all with basic",
            |c| c.policy = CompositeSchedulingPolicy::Basic,
            vec![format!("spec.disruptionMode: {ALL_WITH_BASIC}")],
        ),
        (
            "topology",
            |c| c.topology.push(TopologyConstraint::new("rack")),
            vec!["spec.schedulingConstraints.topology: too many: 2, must have at most 1 items".into()],
        ),
        (
            "priority",
            |c| {
                c.priority_class_name = Some("a/b".into());
                c.priority = Some(SYSTEM_CRITICAL_PRIORITY);
            },
            vec![
                format!("spec.priorityClassName: invalid value \"a/b\": {SUBDOMAIN_MSG}"),
                "spec.priority: invalid value \"2000000000\": must be less than or equal to 1000000000".into(),
            ],
        ),
        (
            "metadata",
            |c| c.name = "Root".into(),
            vec![format!("metadata.name: invalid value \"Root\": {SUBDOMAIN_MSG}")],
        ),
    ];
    for (what, mutate, want) in cases {
        let mut c = composite();
        mutate(&mut c);
        assert_eq!(printed(&c.object_ref(), c.validate()), want, "{what}");
    }
}

// ------------------------------------------------------------------------------------------
// PriorityClasses
// ------------------------------------------------------------------------------------------

#[test]
fn priority_class_validation_table() {
    const RESERVED: &str = "metadata.name: forbidden: priority class names with 'system-' prefix are reserved for system use only";
    let class = |name: &str, value: i32, global_default: bool| PriorityClass {
        name: name.into(),
        value,
        global_default,
        preemption_policy: PreemptionPolicy::Never,
    };
    let cases: Vec<(PriorityClass, Vec<String>)> = vec![
        (class("high", 1000, false), vec![]),
        (class("batch", -5, true), vec![]),
        (class("max", HIGHEST_USER_DEFINABLE_PRIORITY, false), vec![]),
        (
            class("too-high", HIGHEST_USER_DEFINABLE_PRIORITY + 1, false),
            vec![
                "value: forbidden: maximum allowed value of a user defined priority is 1000000000"
                    .into(),
            ],
        ),
        (
            class("system-cluster-critical", 2_000_000_000, false),
            vec![],
        ),
        (class("system-node-critical", 2_000_001_000, false), vec![]),
        (
            class("system-node-critical", 2_000_000_000, false),
            vec![RESERVED.into()],
        ),
        (
            class("system-cluster-critical", 2_000_000_000, true),
            vec![RESERVED.into()],
        ),
        (class("system-mine", 10, false), vec![RESERVED.into()]),
        (
            class("", 0, false),
            vec!["metadata.name: required value".into()],
        ),
        (
            class("High", 0, false),
            vec![format!(
                "metadata.name: invalid value \"High\": {SUBDOMAIN_MSG}"
            )],
        ),
    ];
    for (pc, want) in cases {
        assert_eq!(printed(&pc.object_ref(), pc.validate()), want, "{pc:?}");
    }
    assert_eq!(
        PriorityClass::new("p", 7).preemption_policy,
        PreemptionPolicy::PreemptLowerPriority
    );
}

#[test]
fn resolve_priority_follows_admission() {
    use PreemptionPolicy::{Never, PreemptLowerPriority};
    let mut low_default = PriorityClass::new("low-default", 10);
    low_default.global_default = true;
    low_default.preemption_policy = Never;
    let mut high_default = PriorityClass::new("high-default", 20);
    high_default.global_default = true;
    let classes = [PriorityClass::new("high", 1000), high_default, low_default];

    assert_eq!(
        resolve_priority(&classes, Some("high")),
        Some((1000, PreemptLowerPriority))
    );
    assert_eq!(
        resolve_priority(&classes, Some("low-default")),
        Some((10, Never))
    );
    // No class: the global default with the smallest value.
    assert_eq!(resolve_priority(&classes, None), Some((10, Never)));
    assert_eq!(resolve_priority(&classes, Some("")), Some((10, Never)));
    // No default at all: zero.
    assert_eq!(
        resolve_priority(&classes[..1], None),
        Some((0, PreemptLowerPriority))
    );
    assert_eq!(resolve_priority(&[], None), Some((0, PreemptLowerPriority)));
    // Built-in classes exist without being listed.
    assert_eq!(
        resolve_priority(&[], Some("system-node-critical")),
        Some((2_000_001_000, PreemptLowerPriority))
    );
    assert_eq!(
        resolve_priority(&[], Some("system-cluster-critical")),
        Some((SYSTEM_CRITICAL_PRIORITY, PreemptLowerPriority))
    );
    assert_eq!(resolve_priority(&classes, Some("missing")), None);
}

// ------------------------------------------------------------------------------------------
// Node labels: nodeSelector AND required node affinity
// ------------------------------------------------------------------------------------------

#[test]
fn fits_node_labels_truth_table() {
    use NodeSelectorOperator::{DoesNotExist, Exists, Gt, In, Lt, NotIn};
    let node = labels(&[("zone", "a"), ("gpus", "8"), ("rack", "r1")]);
    let by_name = |name: &str| NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![],
            match_fields: vec![req(NodeSelectorRequirement::NODE_NAME_FIELD, In, &[name])],
        }],
    };
    let one = |r: NodeSelectorRequirement| Some(selector(vec![vec![r]]));
    // (nodeSelector, required affinity, node name, fits)
    let cases: Vec<LabelCase> = vec![
        // No constraint at all.
        (vec![], None, "n1", true),
        // nodeSelector: every entry must be a label with exactly that value.
        (vec![("zone", "a")], None, "n1", true),
        (vec![("zone", "a"), ("rack", "r1")], None, "n1", true),
        (vec![("zone", "b")], None, "n1", false),
        (vec![("zone", "a"), ("rack", "r2")], None, "n1", false),
        (vec![("pool", "x")], None, "n1", false),
        (vec![("zone", "")], None, "n1", false),
        (vec![("Zone", "a")], None, "n1", false),
        // Affinity operators.
        (vec![], one(req("zone", In, &["a", "b"])), "n1", true),
        (vec![], one(req("zone", In, &["b"])), "n1", false),
        (vec![], one(req("pool", In, &["a"])), "n1", false),
        (vec![], one(req("zone", NotIn, &["b"])), "n1", true),
        (vec![], one(req("zone", NotIn, &["a"])), "n1", false),
        (vec![], one(req("pool", NotIn, &["a"])), "n1", true),
        (vec![], one(req("zone", Exists, &[])), "n1", true),
        (vec![], one(req("pool", Exists, &[])), "n1", false),
        (vec![], one(req("pool", DoesNotExist, &[])), "n1", true),
        (vec![], one(req("zone", DoesNotExist, &[])), "n1", false),
        (vec![], one(req("gpus", Gt, &["4"])), "n1", true),
        (vec![], one(req("gpus", Gt, &["8"])), "n1", false),
        (vec![], one(req("gpus", Lt, &["9"])), "n1", true),
        (vec![], one(req("gpus", Lt, &["8"])), "n1", false),
        (vec![], one(req("zone", Gt, &["1"])), "n1", false),
        (vec![], one(req("pool", Lt, &["1"])), "n1", false),
        // Requirements in one term are ANDed, terms are ORed.
        (
            vec![],
            Some(selector(vec![vec![
                req("zone", In, &["a"]),
                req("gpus", Gt, &["4"]),
            ]])),
            "n1",
            true,
        ),
        (
            vec![],
            Some(selector(vec![vec![
                req("zone", In, &["a"]),
                req("gpus", Gt, &["8"]),
            ]])),
            "n1",
            false,
        ),
        (
            vec![],
            Some(selector(vec![
                vec![req("zone", In, &["b"])],
                vec![req("gpus", Gt, &["4"])],
            ])),
            "n1",
            true,
        ),
        (
            vec![],
            Some(selector(vec![
                vec![req("zone", In, &["b"])],
                vec![req("rack", DoesNotExist, &[])],
            ])),
            "n1",
            false,
        ),
        // A selector without terms, or with only an empty term, matches nothing.
        (vec![], Some(NodeSelector { terms: vec![] }), "n1", false),
        (vec![], Some(selector(vec![vec![]])), "n1", false),
        // Node name fields.
        (vec![], Some(by_name("n1")), "n1", true),
        (vec![], Some(by_name("n1")), "n2", false),
        // nodeSelector AND affinity: both must hold.
        (
            vec![("zone", "a")],
            one(req("gpus", Gt, &["4"])),
            "n1",
            true,
        ),
        (
            vec![("zone", "b")],
            one(req("gpus", Gt, &["4"])),
            "n1",
            false,
        ),
        (
            vec![("zone", "a")],
            one(req("gpus", Lt, &["4"])),
            "n1",
            false,
        ),
        (
            vec![("zone", "b")],
            one(req("gpus", Lt, &["4"])),
            "n1",
            false,
        ),
        (vec![("rack", "r1")], Some(by_name("n2")), "n1", false),
    ];
    for (i, (node_selector, affinity, name, want)) in cases.into_iter().enumerate() {
        let mut p = Pod::new("ns", "p");
        p.node_selector = labels(&node_selector);
        p.required_node_affinity = affinity;
        assert_eq!(
            p.fits_node_labels(name, &node),
            want,
            "case {i}: {:?} / {:?} on {name}",
            p.node_selector,
            p.required_node_affinity
        );
        let mut n = Node::new(name);
        n.labels = node.clone();
        assert_eq!(p.fits_node(&n), want, "case {i} via fits_node");
    }
}

#[test]
fn fits_node_labels_ignores_taints_and_binding() {
    let mut p = Pod::new("ns", "p");
    p.node_name = Some("elsewhere".into());
    let n = Node::new("n1").with_taint("gpu=broken:NoSchedule".parse().unwrap());
    assert!(p.fits_node(&n));
}

// ------------------------------------------------------------------------------------------
// Group members
// ------------------------------------------------------------------------------------------

/// A member of [`group`] (priority 1000).
fn member(name: &str) -> Pod {
    let mut p = Pod::new("team-a", name);
    p.priority = 1000;
    p.scheduling_group = Some("trainer-0".into());
    p
}

fn member_errors(grp: &PodGroup, pods: &[&Pod]) -> Vec<String> {
    check_group_members(grp, pods)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn consistent_members() {
    let grp = group();
    let (a, b, c) = (member("w0"), member("w1"), member("w2"));
    assert_eq!(member_errors(&grp, &[&a, &b, &c]), Vec::<String>::new());
    assert_eq!(member_errors(&grp, &[]), Vec::<String>::new());
    // An empty scheduler name is the default scheduler.
    let mut d = member("w3");
    d.scheduler_name.clear();
    assert_eq!(member_errors(&grp, &[&a, &d]), Vec::<String>::new());
    assert_eq!(member_errors(&grp, &[&d, &a]), Vec::<String>::new());
    // The group's own preemption policy (Never) is not compared with its pods'.
    assert_eq!(grp.preemption_policy, Some(PreemptionPolicy::Never));
    assert_eq!(a.preemption_policy, PreemptionPolicy::PreemptLowerPriority);
}

#[test]
fn priority_must_match_the_group() {
    let grp = group();
    let a = member("w0");
    let mut b = member("w1");
    b.priority = 999;
    assert_eq!(
        member_errors(&grp, &[&a, &b]),
        [
            "Pod \"team-a/w1\": spec.priority: invalid value \"999\": must equal the priority of the pod's PodGroup"
        ]
    );
    // Every member is compared with the group, not with the first member.
    assert_eq!(member_errors(&grp, &[&b, &a]).len(), 1);

    // An unset group priority is 0.
    let mut grp0 = group();
    grp0.priority = None;
    let mut z = member("w2");
    z.priority = 0;
    assert_eq!(member_errors(&grp0, &[&z]), Vec::<String>::new());
    assert_eq!(
        member_errors(&grp0, &[&z, &a]),
        [
            "Pod \"team-a/w0\": spec.priority: invalid value \"1000\": must equal the priority of the pod's PodGroup"
        ]
    );
}

#[test]
fn scheduler_name_and_preemption_policy_must_agree() {
    let grp = group();
    let a = member("w0");
    let mut b = member("w1");
    b.scheduler_name = "volcano".into();
    let mut c = member("w2");
    c.preemption_policy = PreemptionPolicy::Never;
    let mut d = member("w3");
    d.scheduler_name = "volcano".into();
    d.preemption_policy = PreemptionPolicy::Never;
    d.priority = 1;
    assert_eq!(
        member_errors(&grp, &[&a, &b, &c, &d]),
        [
            "Pod \"team-a/w1\": spec.schedulerName: invalid value \"volcano\": must be the same for every pod of a PodGroup",
            "Pod \"team-a/w2\": spec.preemptionPolicy: invalid value \"Never\": must be the same for every pod of a PodGroup",
            "Pod \"team-a/w3\": spec.priority: invalid value \"1\": must equal the priority of the pod's PodGroup",
            "Pod \"team-a/w3\": spec.schedulerName: invalid value \"volcano\": must be the same for every pod of a PodGroup",
            "Pod \"team-a/w3\": spec.preemptionPolicy: invalid value \"Never\": must be the same for every pod of a PodGroup",
        ]
    );
    // The first pod sets the reference: here `a` is the odd one out.
    assert_eq!(
        member_errors(&grp, &[&b, &a]),
        [
            "Pod \"team-a/w0\": spec.schedulerName: invalid value \"default-scheduler\": must be the same for every pod of a PodGroup"
        ]
    );
}

#[test]
fn members_must_reference_the_group() {
    let grp = group();
    let mut none = member("w0");
    none.scheduling_group = None;
    let mut other = member("w1");
    other.scheduling_group = Some("trainer-1".into());
    let mut elsewhere = member("w2");
    elsewhere.namespace = "team-b".into();
    assert_eq!(
        member_errors(&grp, &[&none, &other, &elsewhere]),
        [
            "Pod \"team-a/w0\": spec.schedulingGroup.podGroupName: invalid value \"\": must name the PodGroup in the pod's namespace",
            "Pod \"team-a/w1\": spec.schedulingGroup.podGroupName: invalid value \"trainer-1\": must name the PodGroup in the pod's namespace",
            "Pod \"team-b/w2\": spec.schedulingGroup.podGroupName: invalid value \"trainer-0\": must name the PodGroup in the pod's namespace",
        ]
    );
}

#[test]
fn instantiated_group_and_its_pods() {
    // Workload -> PodGroup -> pods, end to end.
    let w = workload();
    let mut g = w.instantiate("workers", "trainer-0").unwrap();
    g.creation = Time(1_700_000_000);
    assert_eq!(g.validate(), Ok(()));
    let pods: Vec<Pod> = (0..4).map(|i| member(&format!("trainer-0-w{i}"))).collect();
    for p in &pods {
        assert_eq!(p.validate(), Ok(()));
    }
    let refs: Vec<&Pod> = pods.iter().collect();
    assert_eq!(member_errors(&g, &refs), Vec::<String>::new());
    assert!(refs.len() >= g.policy.min_count().unwrap() as usize);
}

// ------------------------------------------------------------------------------------------
// Serde
// ------------------------------------------------------------------------------------------

#[cfg(feature = "serde")]
#[test]
fn serde_round_trips() {
    let g = group();
    let json = serde_json::to_string(&g).unwrap();
    assert!(
        json.contains(r#""schedulingPolicy":{"gang":{"minCount":4}}"#),
        "{json}"
    );
    assert!(json.contains(r#""disruptionMode":"all""#), "{json}");
    assert!(
        json.contains(r#""parentCompositePodGroupName":"trainer-root""#),
        "{json}"
    );
    assert!(
        json.contains(r#""workloadRef":{"workloadName":"trainer","templateName":"workers"}"#),
        "{json}"
    );
    assert!(
        json.contains(r#"{"name":"shared","resourceClaimName":"fabric"}"#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<PodGroup>(&json).unwrap(), g);

    let minimal: PodGroup =
        serde_json::from_str(r#"{"namespace":"ns","name":"g","schedulingPolicy":"basic"}"#)
            .unwrap();
    assert_eq!(minimal, PodGroup::new("ns", "g", SchedulingPolicy::Basic));

    let p = pod();
    let json = serde_json::to_string(&p).unwrap();
    assert!(
        json.contains(r#""preemptionPolicy":"PreemptLowerPriority""#),
        "{json}"
    );
    assert!(
        json.contains(r#"{"name":"gpus","resourceClaimTemplateName":"gpu-template"}"#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<Pod>(&json).unwrap(), p);

    let w = workload();
    assert_eq!(
        serde_json::from_str::<Workload>(&serde_json::to_string(&w).unwrap()).unwrap(),
        w
    );
    let c = composite();
    let json = serde_json::to_string(&c).unwrap();
    assert!(
        json.contains(r#""schedulingPolicy":{"gang":{"minGroupCount":2}}"#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<CompositePodGroup>(&json).unwrap(), c);
    let pc = PriorityClass::new("high", 1000);
    assert_eq!(
        serde_json::from_str::<PriorityClass>(&serde_json::to_string(&pc).unwrap()).unwrap(),
        pc
    );
}
