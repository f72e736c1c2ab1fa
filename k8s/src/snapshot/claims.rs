//! ResourceClaimTemplates, ResourceClaims, and the claims gangpack generates.

use std::collections::{BTreeMap, BTreeSet};

use gangpack::{
    AllocationMode, ClaimSource, ClusterError, DeviceAllocation, DeviceRef, DeviceRequest,
    ExactDeviceRequest, PodResourceClaim, Problem, Quantity, ResourceClaim,
};
use serde_json::{Value, json};

use super::{
    ADMIN_ACCESS_LABEL, Builder, DEVICE_CLASS_RESOURCE_PREFIX, GeneratedClaim, Owner,
    RequestMapping,
};
use crate::convert::de::{input_error, warning};
use crate::convert::workload::PodInput;
use crate::convert::{self, ClaimInput, TemplateInput};
use crate::object::{InputErrors, Kind};

/// What [`Builder::earlier_claim`] found for a template entry.
pub(super) enum Earlier {
    /// Use this existing claim.
    Use(String),
    /// The object was rejected (it depends on a rejected claim).
    Rejected,
    /// Generate one.
    None,
}

impl Builder<'_> {
    pub(super) fn template(&mut self, i: usize) {
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

    pub(super) fn add_claim(&mut self, i: usize, c: ClaimInput) {
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
            if self.options.admit_admin_access {
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
    pub(super) fn allocate_claims(&mut self) {
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
    pub(super) fn index_owned_claims(&mut self) {
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
    pub(super) fn earlier_claim(
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

    /// Extended resources (`nvidia.com/gpu: 8` in a container): kept as node resources
    /// where a node advertises them (device plugins), else served by a claim for the
    /// DeviceClass that names them (`spec.extendedResourceName`, or the implicit
    /// `deviceclass.resource.kubernetes.io/<class>`), as Kubernetes 1.34+ does: one
    /// claim per pod, one request `container-<i>-request-<j>` per container and
    /// resource. Else kept, with a warning (the pod cannot be scheduled).
    ///
    /// `Err` when the pod was rejected as a dependent.
    pub(super) fn extended_resources(
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
                "ownerReferences": [owner_reference("v1", "Pod", &ns, &input.pod.name, &input.uid)],
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
pub(super) fn entry_name(entries: &[PodResourceClaim]) -> String {
    let taken = |n: &str| entries.iter().any(|e| e.name == n);
    let mut name = "extended-resources".to_owned();
    let mut k = 1;
    while taken(&name) {
        name = format!("extended-resources-{k}");
        k += 1;
    }
    name
}

/// An owner reference; the owner's uid derived ([`Snapshot::derived_uid`]) when the
/// input has none.
fn owner_reference(api_version: &str, kind: &str, namespace: &str, name: &str, uid: &str) -> Value {
    let uid = if uid.is_empty() {
        super::Snapshot::derived_uid(kind, namespace, name)
    } else {
        uid.to_owned()
    };
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
pub(super) fn generated_raw(
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
        json!([owner_reference(
            api_version,
            kind,
            &claim.namespace,
            name,
            uid
        )]),
    );
    json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": template.spec,
    })
}
