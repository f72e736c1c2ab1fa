//! Workload objects: PriorityClasses, Workloads, PodGroups and pods.

use gangpack::{ClaimSource, PodGroup, PodResourceClaim, Problem, ResourceClaimTemplate};

use super::claims::{Earlier, entry_name, generated_raw};
use super::{Builder, GeneratedClaim, Owner, ReadyGroup, ReadyPod, Waiting, WaitingOn};
use crate::convert;
use crate::convert::de::input_error;
use crate::convert::workload::{GroupInput, PodInput};
use crate::object::{InputError, InputErrors, Kind, Object};

impl Builder<'_> {
    pub(super) fn priority_class(&mut self, i: usize) {
        if let Some(c) = self.convert(i, convert::workload::priority_class) {
            self.classes.push(c);
        }
    }

    pub(super) fn workload(&mut self, i: usize) {
        let _ = self.convert(i, convert::workload::workload);
    }

    pub(super) fn group(&mut self, i: usize) {
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
        let mut waits = Vec::new();
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
                        waits.push(WaitingOn::Missing {
                            kind: Kind::ResourceClaim,
                            name: c,
                            field: format!("{path}.resourceClaimName"),
                        });
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
                        waits.push(WaitingOn::Missing {
                            kind: Kind::ResourceClaimTemplate,
                            name: t,
                            field: format!("{path}.resourceClaimTemplateName"),
                        });
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
        if let Some(on) = waits.into_iter().next() {
            // Held back with its pods until the object exists (PreEnqueue).
            self.waiting_groups
                .insert((ns.clone(), partial.name.clone()));
            self.hold(i, Kind::PodGroup, &ns, &partial.name, None, on);
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

    pub(super) fn add_pod(&mut self, i: usize, input: PodInput) {
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
        if !bound
            && let Some(key) = group_key.as_ref()
            && self.waiting_groups.contains(key)
        {
            let name = input.pod.name.clone();
            let (gns, gname) = key;
            self.hold(
                i,
                Kind::Pod,
                gns,
                &name,
                Some(gname.clone()),
                WaitingOn::Group,
            );
            return;
        }
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
        let mut waits: Vec<(usize, WaitingOn)> = Vec::new();
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
                    Err(false) => waits.push((
                        e,
                        WaitingOn::Missing {
                            kind: Kind::ResourceClaim,
                            name: c,
                            field: format!("{path}.resourceClaimName"),
                        },
                    )),
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
                        Err(false) => waits.push((
                            e,
                            WaitingOn::Missing {
                                kind: Kind::ResourceClaimTemplate,
                                name: t,
                                field: format!("{path}.resourceClaimTemplateName"),
                            },
                        )),
                    }
                }
            }
        }
        if !errs.is_empty() {
            self.reject(i, errs);
            return;
        }
        if bound {
            // Running already: what the missing claims hold is unknown; the rest counts.
            for (e, on) in waits.iter().rev() {
                if let WaitingOn::Missing { kind, name, field } = on {
                    self.warn(
                        i,
                        format!(
                            "{field}: {kind} \"{name}\" is not in the input: the devices the \
                             running pod holds through it are not known"
                        ),
                    );
                }
                pod.resource_claims.remove(*e);
            }
        } else if let Some((_, on)) = waits.into_iter().next() {
            let name = input.pod.name.clone();
            let group = input.pod.scheduling_group.clone();
            self.hold(i, Kind::Pod, &ns, &name, group, on);
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

    /// Holds a unit back (see [`Waiting`]), with a warning naming what it waits for.
    fn hold(
        &mut self,
        i: usize,
        kind: Kind,
        namespace: &str,
        name: &str,
        group: Option<String>,
        on: WaitingOn,
    ) {
        let w = Waiting {
            kind,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            group,
            on,
        };
        if let WaitingOn::Missing { kind, name, field } = &w.on {
            let what = if w.kind == Kind::PodGroup {
                "the PodGroup and its pods wait"
            } else {
                "the pod waits"
            };
            self.warn(
                i,
                format!("{field}: {kind} \"{name}\" is not in the input: {what} for it"),
            );
        }
        self.waiting.push((i, w));
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
