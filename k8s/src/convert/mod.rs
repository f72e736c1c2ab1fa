//! k8s-openapi types → the gangpack model.
//!
//! Each object is read into its `k8s-openapi` 1.37 type (a type error names the field
//! path, `spec.devices[0].attributes["numaNode"].int`), converted field by field (a bad
//! value names its path too, `spec.devices[2].capacity["memory"].value`), then checked
//! with the core's `validate()`, whose errors carry their own paths. Every problem is an
//! [`InputError`](crate::InputError) naming the source, the object and the field.

use std::collections::BTreeMap;

use k8s_openapi::api::resource::v1 as res;
use serde_json::Value;

use crate::object::{InputErrors, Kind, Object, Warning};

pub(crate) mod de;
pub(crate) mod resource;
pub(crate) mod versions;
pub(crate) mod workload;

pub(crate) use de::Ctx;

/// Converts a loaded DeviceTaintRule (for `gangpack taint --rule FILE`).
pub fn device_taint_rule(object: &Object) -> Result<gangpack::DeviceTaintRule, InputErrors> {
    let mut ctx = Ctx::new(object);
    if object.kind != Kind::DeviceTaintRule {
        ctx.err(
            "kind",
            format!("expected a DeviceTaintRule, found {}", object.kind),
        );
        return Err(ctx.errs);
    }
    match resource::device_taint_rule(&mut ctx) {
        Some(rule) if ctx.ok() => Ok(rule),
        _ => Err(ctx.errs),
    }
}

/// A Namespace's labels.
pub(crate) fn namespace_labels(ctx: &mut Ctx<'_>) -> Option<BTreeMap<String, String>> {
    let ns: k8s_openapi::api::core::v1::Namespace = ctx.typed()?;
    Some(ns.metadata.labels.unwrap_or_default())
}

/// A ResourceClaim as read.
pub(crate) struct ClaimInput {
    /// The claim, with its `status.allocation`.
    pub(crate) claim: gangpack::ResourceClaim,
}

/// A `resource.k8s.io/v1` ResourceClaim. Selectors are compiled for pending claims only
/// (an allocated claim's selectors are not used again).
pub(crate) fn resource_claim(ctx: &mut Ctx<'_>) -> Option<ClaimInput> {
    let c: res::ResourceClaim = ctx.typed()?;
    let namespace = ctx.obj.namespace.clone().unwrap_or_default();
    let mut claim = gangpack::ResourceClaim::new(namespace, ctx.obj.name.clone());
    claim.spec = resource::claim_spec(
        ctx,
        "spec.devices",
        c.spec.as_ref().and_then(|s| s.devices.as_ref()),
    );
    claim.allocation = c
        .status
        .as_ref()
        .and_then(|s| s.allocation.as_ref())
        .map(|a| resource::allocation(ctx, "status.allocation", a));
    if !ctx.ok() {
        return None;
    }
    ctx.validate(claim.validate());
    if claim.allocation.is_none() {
        resource::check_selectors(ctx, "spec.devices", &claim.spec);
    }
    ctx.ok().then_some(ClaimInput { claim })
}

/// A ResourceClaimTemplate as read, with what generated claims copy from it.
pub(crate) struct TemplateInput {
    /// The template.
    pub(crate) template: gangpack::ResourceClaimTemplate,
    /// `spec.metadata.labels`.
    pub(crate) labels: BTreeMap<String, String>,
    /// `spec.metadata.annotations`.
    pub(crate) annotations: BTreeMap<String, String>,
    /// `spec.spec` as written (copied verbatim into generated claims).
    pub(crate) spec: Value,
}

/// A `resource.k8s.io/v1` ResourceClaimTemplate.
pub(crate) fn claim_template(ctx: &mut Ctx<'_>) -> Option<TemplateInput> {
    let t: res::ResourceClaimTemplate = ctx.typed()?;
    let namespace = ctx.obj.namespace.clone().unwrap_or_default();
    let mut template = gangpack::ResourceClaimTemplate::new(namespace, ctx.obj.name.clone());
    let spec = t.spec.as_ref();
    template.spec = resource::claim_spec(
        ctx,
        "spec.spec.devices",
        spec.and_then(|s| s.spec.as_ref())
            .and_then(|s| s.devices.as_ref()),
    );
    if !ctx.ok() {
        return None;
    }
    ctx.validate(template.validate());
    resource::check_selectors(ctx, "spec.spec.devices", &template.spec);
    let meta = spec.and_then(|s| s.metadata.as_ref());
    let raw_spec = ctx
        .obj
        .raw
        .get("spec")
        .and_then(|s| s.get("spec"))
        .cloned()
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    ctx.ok().then(|| TemplateInput {
        template,
        labels: meta.and_then(|m| m.labels.clone()).unwrap_or_default(),
        annotations: meta.and_then(|m| m.annotations.clone()).unwrap_or_default(),
        spec: raw_spec,
    })
}

/// Converts one object on its own, as a snapshot converts it (through its
/// `k8s-openapi` type into the model, then the core's validation), and keeps nothing:
/// every problem the object has by itself, and its warnings. What depends on other
/// objects (a pod's node, a claim's class) is not checked here.
pub(crate) fn check(obj: &Object) -> (Result<(), InputErrors>, Vec<Warning>) {
    fn discard<T>(
        r: (Result<T, InputErrors>, Vec<Warning>),
    ) -> (Result<(), InputErrors>, Vec<Warning>) {
        (r.0.map(|_| ()), r.1)
    }
    match obj.kind {
        Kind::Namespace => discard(run(obj, namespace_labels)),
        Kind::Node => discard(run(obj, resource::node)),
        Kind::PriorityClass => discard(run(obj, workload::priority_class)),
        Kind::DeviceClass => discard(run(obj, resource::device_class)),
        Kind::ResourceSlice => discard(run(obj, resource::resource_slice)),
        Kind::DeviceTaintRule => discard(run(obj, resource::device_taint_rule)),
        Kind::ResourceClaimTemplate => discard(run(obj, claim_template)),
        Kind::ResourceClaim => discard(run(obj, resource_claim)),
        Kind::Workload => discard(run(obj, workload::workload)),
        Kind::PodGroup => discard(run(obj, workload::pod_group)),
        Kind::Pod => discard(run(obj, workload::pod)),
    }
}

/// Runs a conversion on one object: the value, or every problem; warnings either way.
pub(crate) fn run<T>(
    obj: &Object,
    f: impl FnOnce(&mut Ctx<'_>) -> Option<T>,
) -> (Result<T, InputErrors>, Vec<Warning>) {
    let mut ctx = Ctx::new(obj);
    let value = f(&mut ctx);
    let result = match value {
        Some(v) if ctx.ok() => Ok(v),
        _ => {
            if ctx.errs.is_empty() {
                ctx.err("", "invalid object");
            }
            Err(ctx.errs)
        }
    };
    (result, ctx.warnings)
}
