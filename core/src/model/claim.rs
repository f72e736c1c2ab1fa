//! ResourceClaims (resource.k8s.io/v1): what a pod asks for, how the API server validates
//! it, and the shape of the allocation result the allocator writes back.
//!
//! A claim lists *requests*. Each request either asks for devices of one class
//! ([`DeviceRequestKind::Exactly`]) or lists alternatives tried in order
//! ([`DeviceRequestKind::FirstAvailable`]), of which exactly one is used. Constraints and
//! configurations name the requests they apply to as `req` or `req/sub`.
//!
//! ```
//! use gangpack::{
//!     AllocationMode, ConstraintKind, DeviceConstraint, DeviceRequest, ExactDeviceRequest,
//!     ResourceClaim,
//! };
//!
//! let mut claim = ResourceClaim::new("team-a", "trainer");
//! claim.spec.requests.push(DeviceRequest::exactly(
//!     "gpus",
//!     ExactDeviceRequest::new("gpu.example.com").with_mode(AllocationMode::ExactCount(4)),
//! ));
//! claim.spec.constraints.push(DeviceConstraint {
//!     requests: vec![],
//!     kind: ConstraintKind::MatchAttribute("gpu.example.com/numa".into()),
//! });
//! assert!(claim.validate().is_ok());
//! assert_eq!(claim.spec.min_device_count(), 4);
//!
//! claim.spec.constraints[0].requests.push("nics".into());
//! let errs = claim.validate().unwrap_err();
//! assert_eq!(
//!     errs[0].to_string(),
//!     "ResourceClaim \"team-a/trainer\": spec.devices.constraints[0].requests[0]: invalid value \
//!      \"nics\": must be the name of a request in the claim or the name of a request and a \
//!      subrequest separated by '/'"
//! );
//! ```

use crate::alloc_prelude::*;
use crate::model::class::validate_selectors;
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError, check_name};
use crate::model::names;
use crate::{DeviceSelector, DeviceToleration, NodeSelector, Quantity};

/// Upstream `DeviceRequestsMaxSize`: requests per claim, and request references per
/// constraint or configuration.
pub const MAX_REQUESTS: usize = 32;
/// Upstream `AllocationResultsMaxSize`: devices allocated to one claim.
pub const MAX_ALLOCATION_RESULTS: usize = 32;
/// Upstream `FirstAvailableDeviceRequestMaxSize`: subrequests per request.
pub const MAX_SUBREQUESTS: usize = 8;
/// Upstream `DeviceTolerationsMaxLength`: tolerations per request, subrequest or result.
pub const MAX_TOLERATIONS: usize = 16;
/// Upstream `DeviceConstraintsMaxSize`: constraints per claim.
pub const MAX_CONSTRAINTS: usize = 32;
/// Upstream `DeviceConfigMaxSize`: configurations per claim (and per class).
pub const MAX_CONFIGS: usize = 32;
/// Upstream: configurations per allocation result (class plus claim configurations).
pub const MAX_ALLOCATION_CONFIGS: usize = 2 * MAX_CONFIGS;
/// Upstream `OpaqueParametersMaxLength`: bytes of one opaque configuration's parameters.
pub const MAX_OPAQUE_PARAMETERS_LEN: usize = 10 * 1024;

/// Upstream's message for a request reference that names no request or subrequest.
const REQUEST_REF_MSG: &str = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";

// ---------------------------------------------------------------------------------------------
// The claim
// ---------------------------------------------------------------------------------------------

/// A ResourceClaim: a namespaced request for devices.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct ResourceClaim {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.devices`.
    pub spec: ResourceClaimSpec,
    /// `status.allocation`: set once the claim is allocated. The placer does not
    /// allocate such a claim again; pods using it must run where its devices are
    /// reachable (the result's node selector).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub allocation: Option<AllocationResult>,
}

impl ResourceClaim {
    /// A claim with no requests (nothing to allocate).
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> ResourceClaim {
        ResourceClaim {
            namespace: namespace.into(),
            name: name.into(),
            spec: ResourceClaimSpec::default(),
            allocation: None,
        }
    }

    /// The object reference used in errors.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::namespaced(
            ObjectKind::ResourceClaim,
            self.namespace.clone(),
            self.name.clone(),
        )
    }

    /// Every name a constraint, a configuration or an allocation result may use for a
    /// request of this claim (see [`ResourceClaimSpec::request_names`]).
    pub fn request_names(&self) -> Vec<String> {
        self.spec.request_names()
    }

    /// Checks the claim as the API server does when it is created (`ValidateResourceClaim`),
    /// returning every problem. CEL expressions are only checked for presence and length;
    /// they are compiled when they are used.
    ///
    /// The rules, with the field each one reports at:
    ///
    /// * `metadata.name` a DNS subdomain, `metadata.namespace` a DNS label;
    /// * `spec.devices.requests`: at most [`MAX_REQUESTS`]; each `name` a DNS label, unique
    ///   (a duplicate is reported at the request, `spec.devices.requests[3]`);
    ///   `firstAvailable` must not be empty, has at most [`MAX_SUBREQUESTS`] entries with
    ///   unique DNS-label names;
    /// * every request and subrequest: `deviceClassName` a DNS subdomain; at most
    ///   [`MAX_SELECTORS`](crate::limits::MAX_SELECTORS) selectors, each expression non-empty and at most [`MAX_CEL_LEN`](crate::limits::MAX_CEL_LEN)
    ///   bytes; `count` greater than zero; at most [`MAX_TOLERATIONS`] tolerations, each
    ///   valid; `capacity.requests` keyed by qualified names, amounts not negative;
    /// * `spec.devices.constraints`: at most [`MAX_CONSTRAINTS`]; `requests` at most
    ///   [`MAX_REQUESTS`], unique, each the name of a request or `request/subrequest`;
    ///   `matchAttribute` / `distinctAttribute` a fully qualified name;
    /// * `spec.devices.config`: at most [`MAX_CONFIGS`]; `requests` as for constraints;
    ///   `opaque.driver` a driver name; `opaque.parameters` a JSON object of at most
    ///   [`MAX_OPAQUE_PARAMETERS_LEN`] bytes.
    ///
    /// As upstream, a list over its limit is reported once and its entries are not checked.
    ///
    /// Two rules are enforced although upstream validation (as of Kubernetes 1.37) does
    /// not: the documented limit of 16 tolerations, and `capacity.requests` (names must
    /// be qualified names as the field's type says; negative amounts are refused because
    /// they would give capacity back).
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        let obj = self.object_ref();
        let mut errs = Vec::new();
        self.validate_metadata_into(&obj, &mut errs);
        self.spec.validate_into(&obj, "spec.devices", &mut errs);
        crate::model::error::finish(errs)
    }

    /// [`validate`](Self::validate) for a claim whose spec equals one that passed it
    /// (the placer's pods of one shape): only the metadata can fail.
    pub(crate) fn validate_metadata(&self) -> Result<(), Vec<ValidationError>> {
        if names::validate_dns_subdomain(&self.name).is_ok()
            && names::validate_dns_label(&self.namespace).is_ok()
        {
            return Ok(());
        }
        let mut errs = Vec::new();
        self.validate_metadata_into(&self.object_ref(), &mut errs);
        crate::model::error::finish(errs)
    }

    fn validate_metadata_into(&self, obj: &ObjectRef, errs: &mut Vec<ValidationError>) {
        check_name(
            obj,
            "metadata.name",
            &self.name,
            names::validate_dns_subdomain,
            errs,
        );
        check_name(
            obj,
            "metadata.namespace",
            &self.namespace,
            names::validate_dns_label,
            errs,
        );
    }
}

/// `ResourceClaimSpec.devices` (upstream `DeviceClaim`): requests, constraints and
/// configuration.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct ResourceClaimSpec {
    /// `requests`: all must be satisfied; empty means nothing to allocate.
    pub requests: Vec<DeviceRequest>,
    /// `constraints`: must hold for the set of allocated devices.
    pub constraints: Vec<DeviceConstraint>,
    /// `config`: driver configuration, carried into the allocation result and otherwise
    /// ignored by allocation.
    pub config: Vec<DeviceClaimConfiguration>,
}

impl ResourceClaimSpec {
    /// The request named `name`.
    pub fn request(&self, name: &str) -> Option<&DeviceRequest> {
        self.requests.iter().find(|r| r.name == name)
    }

    /// Every name a constraint or configuration may reference, in spec order: each
    /// request's name, and after a `firstAvailable` request's name each
    /// `request/subrequest`. Allocation results use the names of `exactly` requests and
    /// the `request/subrequest` names.
    ///
    /// ```
    /// use gangpack::{DeviceRequest, DeviceSubRequest, ExactDeviceRequest, ResourceClaimSpec};
    ///
    /// let spec = ResourceClaimSpec {
    ///     requests: vec![
    ///         DeviceRequest::exactly("nic", ExactDeviceRequest::new("nic.example.com")),
    ///         DeviceRequest::first_available(
    ///             "gpu",
    ///             vec![
    ///                 DeviceSubRequest::new("big", "big-gpu.example.com"),
    ///                 DeviceSubRequest::new("small", "small-gpu.example.com"),
    ///             ],
    ///         ),
    ///     ],
    ///     ..ResourceClaimSpec::default()
    /// };
    /// assert_eq!(spec.request_names(), ["nic", "gpu", "gpu/big", "gpu/small"]);
    /// assert!(spec.has_request_ref("gpu/small"));
    /// assert!(!spec.has_request_ref("nic/big"));
    /// ```
    pub fn request_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.requests {
            out.push(r.name.clone());
            if let DeviceRequestKind::FirstAvailable(subs) = &r.kind {
                for s in subs {
                    out.push(format!("{}/{}", r.name, s.name));
                }
            }
        }
        out
    }

    /// Whether `reference` names a request (`req`) or a subrequest (`req/sub`) of this
    /// claim (upstream `requestNames.Has`). A reference with more than one `/` never does;
    /// `req/sub` requires `req` to be a `firstAvailable` request with a subrequest `sub`.
    pub fn has_request_ref(&self, reference: &str) -> bool {
        let (request, sub) = split_request_ref(reference);
        if sub.is_some_and(|s| s.contains('/')) {
            return false;
        }
        let Some(r) = self.request(request) else {
            return false;
        };
        match (sub, &r.kind) {
            (None, _) => true,
            (Some(s), DeviceRequestKind::FirstAvailable(subs)) => subs.iter().any(|x| x.name == s),
            (Some(_), DeviceRequestKind::Exactly(_)) => false,
        }
    }

    /// The request or subrequest that allocation results name `reference`: an `exactly`
    /// request's name, or `req/sub`. A bare `firstAvailable` request name resolves to
    /// nothing (results always name the chosen subrequest).
    pub fn resolve(&self, reference: &str) -> Option<RequestView<'_>> {
        let (request, sub) = split_request_ref(reference);
        let r = self.request(request)?;
        match (sub, &r.kind) {
            (None, DeviceRequestKind::Exactly(e)) => Some(RequestView::exact(&r.name, e)),
            (Some(s), DeviceRequestKind::FirstAvailable(subs)) => subs
                .iter()
                .find(|x| x.name == s)
                .map(|x| RequestView::sub(&r.name, x)),
            _ => None,
        }
    }

    /// The least number of devices an allocation of this claim holds: the sum over
    /// requests of `count` (`ExactCount`), 1 (`All`, which needs at least one device) or,
    /// for `firstAvailable`, the least of its alternatives. Upstream refuses to allocate a
    /// claim when this exceeds [`MAX_ALLOCATION_RESULTS`] (spec 3.4).
    ///
    /// ```
    /// use gangpack::{
    ///     AllocationMode, DeviceRequest, DeviceSubRequest, ExactDeviceRequest, ResourceClaimSpec,
    /// };
    ///
    /// let spec = ResourceClaimSpec {
    ///     requests: vec![
    ///         DeviceRequest::exactly(
    ///             "a",
    ///             ExactDeviceRequest::new("c").with_mode(AllocationMode::ExactCount(3)),
    ///         ),
    ///         DeviceRequest::exactly("b", ExactDeviceRequest::new("c").with_mode(AllocationMode::All)),
    ///         DeviceRequest::first_available(
    ///             "c",
    ///             vec![
    ///                 DeviceSubRequest::new("x", "c").with_mode(AllocationMode::ExactCount(8)),
    ///                 DeviceSubRequest::new("y", "c").with_mode(AllocationMode::ExactCount(2)),
    ///             ],
    ///         ),
    ///     ],
    ///     ..ResourceClaimSpec::default()
    /// };
    /// assert_eq!(spec.min_device_count(), 3 + 1 + 2);
    /// ```
    pub fn min_device_count(&self) -> u64 {
        self.requests
            .iter()
            .map(DeviceRequest::min_device_count)
            .sum()
    }

    /// Validates the spec under `path` (`spec.devices`, or `spec.spec.devices` in a
    /// template); see [`ResourceClaim::validate`] for the rules.
    pub(crate) fn validate_into(
        &self,
        obj: &ObjectRef,
        path: &str,
        errs: &mut Vec<ValidationError>,
    ) {
        let requests = format!("{path}.requests");
        if within_max(obj, &requests, self.requests.len(), MAX_REQUESTS, errs) {
            for (i, r) in self.requests.iter().enumerate() {
                r.validate(obj, &format!("{requests}[{i}]"), errs);
            }
            report_duplicates(
                obj,
                &requests,
                self.requests.iter().map(|r| r.name.as_str()),
                errs,
            );
        }
        let constraints = format!("{path}.constraints");
        if within_max(
            obj,
            &constraints,
            self.constraints.len(),
            MAX_CONSTRAINTS,
            errs,
        ) {
            for (i, c) in self.constraints.iter().enumerate() {
                let field = format!("{constraints}[{i}]");
                self.validate_refs(obj, &format!("{field}.requests"), &c.requests, errs);
                let (name, value) = match &c.kind {
                    ConstraintKind::MatchAttribute(a) => ("matchAttribute", a),
                    ConstraintKind::DistinctAttribute(a) => ("distinctAttribute", a),
                };
                check_name(
                    obj,
                    &format!("{field}.{name}"),
                    value,
                    names::validate_fully_qualified_name,
                    errs,
                );
            }
        }
        let config = format!("{path}.config");
        if within_max(obj, &config, self.config.len(), MAX_CONFIGS, errs) {
            for (i, c) in self.config.iter().enumerate() {
                let field = format!("{config}[{i}]");
                self.validate_refs(obj, &format!("{field}.requests"), &c.requests, errs);
                c.opaque.validate(obj, &format!("{field}.opaque"), errs);
            }
        }
    }

    /// Checks a list of request references (upstream `validateRequestNameRef` over a set).
    fn validate_refs(
        &self,
        obj: &ObjectRef,
        path: &str,
        refs: &[String],
        errs: &mut Vec<ValidationError>,
    ) {
        if !within_max(obj, path, refs.len(), MAX_REQUESTS, errs) {
            return;
        }
        for (i, reference) in refs.iter().enumerate() {
            let field = format!("{path}[{i}]");
            let invalid = |errs: &mut Vec<ValidationError>| {
                errs.push(ValidationError::new(
                    obj.clone(),
                    field.clone(),
                    Problem::Invalid {
                        value: reference.clone(),
                        reason: REQUEST_REF_MSG,
                    },
                ));
            };
            if reference.matches('/').count() > 1 {
                invalid(errs);
                continue;
            }
            for segment in reference.split('/') {
                check_name(obj, &field, segment, names::validate_dns_label, errs);
            }
            if !self.has_request_ref(reference) {
                invalid(errs);
            }
        }
        report_duplicates(obj, path, refs.iter().map(String::as_str), errs);
    }
}

/// Splits a request reference into the request name and the optional subrequest name, at
/// the first `/`: `"gpu/big"` gives `("gpu", Some("big"))`, `"gpu"` gives `("gpu", None)`.
pub fn split_request_ref(reference: &str) -> (&str, Option<&str>) {
    match reference.split_once('/') {
        Some((request, sub)) => (request, Some(sub)),
        None => (reference, None),
    }
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/// One request of a claim (`DeviceRequest`): a DNS-label name and what it asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceRequest {
    /// `name`: referenced by constraints, configuration and containers.
    pub name: String,
    /// Exactly one of `exactly` / `firstAvailable` (serialized as that field, next to
    /// `name`).
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub kind: DeviceRequestKind,
}

impl DeviceRequest {
    /// An `exactly` request.
    pub fn exactly(name: impl Into<String>, request: ExactDeviceRequest) -> DeviceRequest {
        DeviceRequest {
            name: name.into(),
            kind: DeviceRequestKind::Exactly(request),
        }
    }

    /// A `firstAvailable` request with its alternatives in preference order.
    pub fn first_available(
        name: impl Into<String>,
        subrequests: Vec<DeviceSubRequest>,
    ) -> DeviceRequest {
        DeviceRequest {
            name: name.into(),
            kind: DeviceRequestKind::FirstAvailable(subrequests),
        }
    }

    /// The subrequest named `name` (none for an `exactly` request).
    pub fn subrequest(&self, name: &str) -> Option<&DeviceSubRequest> {
        match &self.kind {
            DeviceRequestKind::Exactly(_) => None,
            DeviceRequestKind::FirstAvailable(subs) => subs.iter().find(|s| s.name == name),
        }
    }

    /// The alternatives the allocator tries, in order: the request itself for `exactly`,
    /// each subrequest for `firstAvailable`.
    pub fn alternatives(&self) -> Vec<RequestView<'_>> {
        match &self.kind {
            DeviceRequestKind::Exactly(e) => vec![RequestView::exact(&self.name, e)],
            DeviceRequestKind::FirstAvailable(subs) => subs
                .iter()
                .map(|s| RequestView::sub(&self.name, s))
                .collect(),
        }
    }

    /// The least number of devices this request is allocated (see
    /// [`ResourceClaimSpec::min_device_count`]); 0 for an empty `firstAvailable`.
    pub fn min_device_count(&self) -> u64 {
        match &self.kind {
            DeviceRequestKind::Exactly(e) => e.allocation_mode.min_device_count(),
            DeviceRequestKind::FirstAvailable(subs) => subs
                .iter()
                .map(|s| s.allocation_mode.min_device_count())
                .min()
                .unwrap_or(0),
        }
    }

    fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        check_name(
            obj,
            &format!("{path}.name"),
            &self.name,
            names::validate_dns_label,
            errs,
        );
        match &self.kind {
            DeviceRequestKind::Exactly(e) => e.validate(obj, &format!("{path}.exactly"), errs),
            // Upstream treats an empty list as unset: neither field is set.
            DeviceRequestKind::FirstAvailable(subs) if subs.is_empty() => {
                errs.push(ValidationError::new(
                    obj.clone(),
                    path.to_owned(),
                    Problem::ExactlyOneOf {
                        fields: &["exactly", "firstAvailable"],
                        set: 0,
                    },
                ));
            }
            DeviceRequestKind::FirstAvailable(subs) => {
                let field = format!("{path}.firstAvailable");
                if within_max(obj, &field, subs.len(), MAX_SUBREQUESTS, errs) {
                    for (i, s) in subs.iter().enumerate() {
                        s.validate(obj, &format!("{field}[{i}]"), errs);
                    }
                    report_duplicates(obj, &field, subs.iter().map(|s| s.name.as_str()), errs);
                }
            }
        }
    }
}

/// What a request asks for: exactly one of `exactly` and `firstAvailable`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum DeviceRequestKind {
    /// `exactly`: devices of one class.
    Exactly(ExactDeviceRequest),
    /// `firstAvailable`: alternatives in preference order; exactly one is allocated.
    /// Must not be empty.
    FirstAvailable(Vec<DeviceSubRequest>),
}

/// How many devices a request or subrequest wants (`allocationMode` + `count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AllocationMode {
    /// `ExactCount` with `count` (the default, with count 1). The count must be > 0.
    ExactCount(u32),
    /// `All`: every matching device of the node's pools; at least one must exist, and
    /// allocation fails if any of them is already allocated (unless admin access).
    All,
}

impl Default for AllocationMode {
    fn default() -> AllocationMode {
        AllocationMode::ExactCount(1)
    }
}

impl AllocationMode {
    /// The least number of devices this mode allocates: the count, or 1 for `All`.
    pub fn min_device_count(self) -> u64 {
        match self {
            AllocationMode::ExactCount(n) => u64::from(n),
            AllocationMode::All => 1,
        }
    }

    fn validate(self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        if self == AllocationMode::ExactCount(0) {
            errs.push(ValidationError::new(
                obj.clone(),
                format!("{path}.count"),
                Problem::Invalid {
                    value: "0".into(),
                    reason: "must be greater than zero",
                },
            ));
        }
    }
}

/// `ExactDeviceRequest`: one or more identical devices of one class.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct ExactDeviceRequest {
    /// `deviceClassName` (required): the class whose selectors and configuration apply.
    pub device_class_name: String,
    /// `selectors`: CEL selectors every device must also satisfy.
    pub selectors: Vec<DeviceSelector>,
    /// `allocationMode` and `count`.
    pub allocation_mode: AllocationMode,
    /// `adminAccess`: monitoring access that ignores other allocations of the devices.
    /// Upstream only admits it in namespaces labelled
    /// `resource.kubernetes.io/admin-access: "true"` (an admission check, not validation).
    pub admin_access: bool,
    /// `tolerations`: device taints this request tolerates.
    pub tolerations: Vec<DeviceToleration>,
    /// `capacity.requests`: capacity name → amount each allocated device must provide
    /// (and, on shareable devices, consume).
    pub capacity: BTreeMap<String, Quantity>,
}

impl ExactDeviceRequest {
    /// One device of class `device_class_name`.
    pub fn new(device_class_name: impl Into<String>) -> ExactDeviceRequest {
        ExactDeviceRequest {
            device_class_name: device_class_name.into(),
            ..ExactDeviceRequest::default()
        }
    }

    /// Sets the allocation mode (builder style).
    #[must_use]
    pub fn with_mode(mut self, mode: AllocationMode) -> ExactDeviceRequest {
        self.allocation_mode = mode;
        self
    }

    fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        validate_leaf(
            obj,
            path,
            &Leaf {
                device_class_name: &self.device_class_name,
                selectors: &self.selectors,
                allocation_mode: self.allocation_mode,
                tolerations: &self.tolerations,
                capacity: &self.capacity,
            },
            errs,
        );
    }
}

/// `DeviceSubRequest`: one alternative of a `firstAvailable` request; like
/// [`ExactDeviceRequest`] without admin access. Referenced as `request/subrequest`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct DeviceSubRequest {
    /// `name`: a DNS label, unique within the request.
    pub name: String,
    /// `deviceClassName` (required).
    pub device_class_name: String,
    /// `selectors`.
    pub selectors: Vec<DeviceSelector>,
    /// `allocationMode` and `count`.
    pub allocation_mode: AllocationMode,
    /// `tolerations`.
    pub tolerations: Vec<DeviceToleration>,
    /// `capacity.requests`.
    pub capacity: BTreeMap<String, Quantity>,
}

impl DeviceSubRequest {
    /// One device of class `device_class_name`.
    pub fn new(name: impl Into<String>, device_class_name: impl Into<String>) -> DeviceSubRequest {
        DeviceSubRequest {
            name: name.into(),
            device_class_name: device_class_name.into(),
            ..DeviceSubRequest::default()
        }
    }

    /// Sets the allocation mode (builder style).
    #[must_use]
    pub fn with_mode(mut self, mode: AllocationMode) -> DeviceSubRequest {
        self.allocation_mode = mode;
        self
    }

    fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        check_name(
            obj,
            &format!("{path}.name"),
            &self.name,
            names::validate_dns_label,
            errs,
        );
        validate_leaf(
            obj,
            path,
            &Leaf {
                device_class_name: &self.device_class_name,
                selectors: &self.selectors,
                allocation_mode: self.allocation_mode,
                tolerations: &self.tolerations,
                capacity: &self.capacity,
            },
            errs,
        );
    }
}

/// A borrowed view of one allocatable alternative (an `exactly` request or one
/// subrequest), with the fields both kinds share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestView<'a> {
    /// The request's name.
    pub request: &'a str,
    /// The subrequest's name, for `firstAvailable` alternatives.
    pub subrequest: Option<&'a str>,
    /// `deviceClassName`.
    pub device_class_name: &'a str,
    /// `selectors`.
    pub selectors: &'a [DeviceSelector],
    /// `allocationMode` and `count`.
    pub allocation_mode: AllocationMode,
    /// `adminAccess` (always false for subrequests).
    pub admin_access: bool,
    /// `tolerations`.
    pub tolerations: &'a [DeviceToleration],
    /// `capacity.requests`.
    pub capacity: &'a BTreeMap<String, Quantity>,
}

impl<'a> RequestView<'a> {
    fn exact(request: &'a str, e: &'a ExactDeviceRequest) -> RequestView<'a> {
        RequestView {
            request,
            subrequest: None,
            device_class_name: &e.device_class_name,
            selectors: &e.selectors,
            allocation_mode: e.allocation_mode,
            admin_access: e.admin_access,
            tolerations: &e.tolerations,
            capacity: &e.capacity,
        }
    }

    fn sub(request: &'a str, s: &'a DeviceSubRequest) -> RequestView<'a> {
        RequestView {
            request,
            subrequest: Some(&s.name),
            device_class_name: &s.device_class_name,
            selectors: &s.selectors,
            allocation_mode: s.allocation_mode,
            admin_access: false,
            tolerations: &s.tolerations,
            capacity: &s.capacity,
        }
    }

    /// The name allocation results use: `request` or `request/subrequest`.
    pub fn reference(&self) -> String {
        match self.subrequest {
            Some(s) => format!("{}/{s}", self.request),
            None => self.request.to_owned(),
        }
    }
}

/// The fields requests and subrequests share, for validation.
struct Leaf<'a> {
    device_class_name: &'a str,
    selectors: &'a [DeviceSelector],
    allocation_mode: AllocationMode,
    tolerations: &'a [DeviceToleration],
    capacity: &'a BTreeMap<String, Quantity>,
}

fn validate_leaf(obj: &ObjectRef, path: &str, leaf: &Leaf<'_>, errs: &mut Vec<ValidationError>) {
    check_name(
        obj,
        &format!("{path}.deviceClassName"),
        leaf.device_class_name,
        names::validate_dns_subdomain,
        errs,
    );
    validate_selectors(obj, &format!("{path}.selectors"), leaf.selectors, errs);
    leaf.allocation_mode.validate(obj, path, errs);
    let tolerations = format!("{path}.tolerations");
    if within_max(
        obj,
        &tolerations,
        leaf.tolerations.len(),
        MAX_TOLERATIONS,
        errs,
    ) {
        for (i, t) in leaf.tolerations.iter().enumerate() {
            t.validate(obj, &format!("{tolerations}[{i}]"), errs);
        }
    }
    for (name, amount) in leaf.capacity {
        let field = format!("{path}.capacity.requests[\"{name}\"]");
        check_name(obj, &field, name, names::validate_qualified_name, errs);
        if amount.is_negative() {
            errs.push(ValidationError::new(
                obj.clone(),
                field,
                Problem::Invalid {
                    value: amount.to_string(),
                    reason: "must not be negative",
                },
            ));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Constraints and configuration
// ---------------------------------------------------------------------------------------------

/// `DeviceConstraint`: a condition on the devices allocated for some requests.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceConstraint {
    /// `requests`: `req` or `req/sub` names; empty means every request of the claim.
    #[cfg_attr(feature = "serde", serde(default))]
    pub requests: Vec<String>,
    /// `matchAttribute` or `distinctAttribute` (serialized as that field).
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub kind: ConstraintKind,
}

impl DeviceConstraint {
    /// Whether the constraint covers devices allocated for `request` (through
    /// `subrequest`, for `firstAvailable` requests), as the allocator decides it: an empty
    /// `requests` list covers everything; a listed request name covers the request and
    /// every one of its subrequests; `req/sub` covers only that subrequest.
    ///
    /// ```
    /// use gangpack::{ConstraintKind, DeviceConstraint};
    ///
    /// let c = DeviceConstraint {
    ///     requests: vec!["nic".into(), "gpu/big".into()],
    ///     kind: ConstraintKind::MatchAttribute("example.com/numa".into()),
    /// };
    /// assert!(c.applies_to("nic", None));
    /// assert!(c.applies_to("gpu", Some("big")));
    /// assert!(!c.applies_to("gpu", Some("small")));
    /// assert!(!c.applies_to("gpu", None));
    /// ```
    pub fn applies_to(&self, request: &str, subrequest: Option<&str>) -> bool {
        self.requests.is_empty()
            || self.requests.iter().any(|r| match subrequest {
                None => r == request,
                Some(sub) => r == request || split_request_ref(r) == (request, Some(sub)),
            })
    }

    /// The fully qualified attribute name the constraint is about.
    pub fn attribute(&self) -> &str {
        match &self.kind {
            ConstraintKind::MatchAttribute(a) | ConstraintKind::DistinctAttribute(a) => a,
        }
    }
}

/// What a constraint requires; attribute names are fully qualified (`domain/id`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum ConstraintKind {
    /// `matchAttribute`: every device in scope has the attribute, with one common value.
    MatchAttribute(String),
    /// `distinctAttribute`: every device in scope has the attribute, with pairwise
    /// different values.
    DistinctAttribute(String),
}

/// `DeviceClaimConfiguration`: driver configuration for some requests of a claim.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceClaimConfiguration {
    /// `requests`: `req` or `req/sub` names; empty means every request.
    #[cfg_attr(feature = "serde", serde(default))]
    pub requests: Vec<String>,
    /// `opaque`.
    pub opaque: OpaqueDeviceConfiguration,
}

/// `OpaqueDeviceConfiguration`: parameters only the driver understands.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OpaqueDeviceConfiguration {
    /// `driver`: which driver the parameters are for.
    pub driver: String,
    /// `parameters`: a JSON object, kept as its raw text (serialized as a string).
    pub parameters: String,
}

impl OpaqueDeviceConfiguration {
    fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        check_name(
            obj,
            &format!("{path}.driver"),
            &self.driver,
            names::validate_driver_name,
            errs,
        );
        let field = format!("{path}.parameters");
        let omitted = |reason: &'static str| Problem::Invalid {
            value: "<value omitted>".into(),
            reason,
        };
        // Upstream `validateRawExtension`: empty, too long, not JSON, `null`, not an object.
        let problem = if self.parameters.is_empty() {
            Some(Problem::Required)
        } else if self.parameters.len() > MAX_OPAQUE_PARAMETERS_LEN {
            Some(Problem::TooLong {
                max: MAX_OPAQUE_PARAMETERS_LEN,
                actual: self.parameters.len(),
            })
        } else {
            match json::top_level_kind(&self.parameters) {
                None => Some(omitted("error parsing data as JSON")),
                Some(json::Kind::Null) => Some(Problem::Required),
                Some(json::Kind::Other) => Some(omitted("must be a valid JSON object")),
                Some(json::Kind::Object) => None,
            }
        };
        if let Some(problem) = problem {
            errs.push(ValidationError::new(obj.clone(), field, problem));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Allocation results
// ---------------------------------------------------------------------------------------------

/// `AllocationResult` (`status.allocation`): the devices chosen for a claim.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct AllocationResult {
    /// `devices.results`: one entry per allocated device, in allocation order (at most
    /// [`MAX_ALLOCATION_RESULTS`]).
    pub devices: Vec<DeviceRequestAllocationResult>,
    /// `devices.config`: class configurations, then claim configurations (at most
    /// [`MAX_ALLOCATION_CONFIGS`]).
    pub config: Vec<DeviceAllocationConfiguration>,
    /// `nodeSelector`: where the devices can be used; `None` means every node.
    pub node_selector: Option<NodeSelector>,
}

/// `DeviceRequestAllocationResult`: one allocated device.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct DeviceRequestAllocationResult {
    /// `request`: the request name, or `request/subrequest` for `firstAvailable`.
    pub request: String,
    /// `driver`.
    pub driver: String,
    /// `pool`.
    pub pool: String,
    /// `device`.
    pub device: String,
    /// `adminAccess` (serialized only when true).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "core::ops::Not::not"))]
    pub admin_access: bool,
    /// `tolerations`: the request's tolerations at allocation time.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Vec::is_empty"))]
    pub tolerations: Vec<DeviceToleration>,
    /// `bindingConditions`: copied from the device.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Vec::is_empty"))]
    pub binding_conditions: Vec<String>,
    /// `bindingFailureConditions`: copied from the device.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Vec::is_empty"))]
    pub binding_failure_conditions: Vec<String>,
    /// `shareID`: set only for devices that allow multiple allocations (see [`share_id`]).
    #[cfg_attr(
        feature = "serde",
        serde(rename = "shareID", skip_serializing_if = "Option::is_none")
    )]
    pub share_id: Option<String>,
    /// `consumedCapacity`: set only for devices that allow multiple allocations, and then
    /// with every capacity of the device.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "BTreeMap::is_empty"))]
    pub consumed_capacity: BTreeMap<String, Quantity>,
}

/// `DeviceAllocationConfiguration`: configuration copied into an allocation result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceAllocationConfiguration {
    /// `source`: a class or the claim.
    pub source: AllocationConfigSource,
    /// `requests`: `req` or `req/sub` names; empty means every request.
    #[cfg_attr(feature = "serde", serde(default))]
    pub requests: Vec<String>,
    /// `opaque`.
    pub opaque: OpaqueDeviceConfiguration,
}

/// Where an allocation result's configuration came from (`AllocationConfigSource`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AllocationConfigSource {
    /// `FromClass`: set by the administrator in a DeviceClass.
    FromClass,
    /// `FromClaim`: set by the user in the claim.
    FromClaim,
}

// ---------------------------------------------------------------------------------------------
// Share ids
// ---------------------------------------------------------------------------------------------

/// A deterministic share id for one allocation of a multi-allocatable device: a UUID in
/// the normalized lowercase `xxxxxxxx-xxxx-8xxx-yxxx-xxxxxxxxxxxx` form upstream validates.
///
/// Upstream draws a random UUID for every share; gangpack derives it on purpose from its
/// inputs (the claim's uid or `namespace/name`, the result's request reference, the
/// device as `driver/pool/device`, and an ordinal that separates several shares of the
/// same device for the same request), so that repeated runs, native and wasm, produce
/// byte-identical allocations. The hash is 128-bit FNV-1a over the length-prefixed
/// inputs followed by a mixing step; it is not cryptographic, and equal inputs give equal
/// ids by design. The version nibble is `8` (RFC 9562 "custom" layout, since this is not
/// a SHA-1 name-based v5 UUID) and the variant bits are RFC 4122's `10`.
///
/// ```
/// use gangpack::share_id;
///
/// let a = share_id("team-a/trainer", "gpus", "gpu.example.com/node-1/gpu-0", 0);
/// assert_eq!(a, share_id("team-a/trainer", "gpus", "gpu.example.com/node-1/gpu-0", 0));
/// assert_ne!(a, share_id("team-a/trainer", "gpus", "gpu.example.com/node-1/gpu-0", 1));
/// assert_eq!(a.len(), 36);
/// assert_eq!(&a[14..15], "8");
/// ```
pub fn share_id(claim_uid_or_name: &str, request: &str, device: &str, ordinal: u32) -> String {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let mut h = OFFSET;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u128::from(b);
            h = h.wrapping_mul(PRIME);
        }
    };
    for part in [claim_uid_or_name, request, device] {
        feed(&(part.len() as u64).to_le_bytes());
        feed(part.as_bytes());
    }
    feed(&ordinal.to_le_bytes());
    // FNV's last bytes only reach the low bits; fold the halves together so every input
    // byte moves every output bit.
    let (mut hi, mut lo) = ((h >> 64) as u64, h as u64);
    for _ in 0..2 {
        lo = mix64(lo ^ hi.rotate_left(29));
        hi = mix64(hi ^ lo.rotate_left(17));
    }
    uuid_v8((u128::from(hi) << 64) | u128::from(lo))
}

/// `bits` as an RFC 9562 version-8 ("custom") UUID in the normalized lowercase
/// `xxxxxxxx-xxxx-8xxx-yxxx-xxxxxxxxxxxx` form: the version nibble (bits 76..80) set to
/// `8` and the variant bits (62..64) to RFC 4122's `10`, the other 122 bits kept. For
/// ids derived from a hash ([`share_id`], the Kubernetes adapter's derived uids).
///
/// ```
/// use gangpack::uuid_v8;
///
/// assert_eq!(uuid_v8(0), "00000000-0000-8000-8000-000000000000");
/// assert_eq!(uuid_v8(u128::MAX), "ffffffff-ffff-8fff-bfff-ffffffffffff");
/// ```
pub fn uuid_v8(bits: u128) -> String {
    let mut v = bits;
    v = (v & !(0xf << 76)) | (0x8 << 76); // version 8
    v = (v & !(0x3 << 62)) | (0x2 << 62); // variant 10
    let hex = format!("{v:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The SplitMix64 finalizer.
fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Records [`Problem::TooMany`] and returns false when `len > max` (upstream then skips the
/// entries, "for DOS protection").
fn within_max(
    obj: &ObjectRef,
    field: &str,
    len: usize,
    max: usize,
    errs: &mut Vec<ValidationError>,
) -> bool {
    crate::model::error::check_max(obj, field, len, max, errs);
    len <= max
}

/// Records a [`Problem::Duplicate`] at `path[i]` for every key seen before (upstream
/// `validateSet`).
fn report_duplicates<'a>(
    obj: &ObjectRef,
    path: &str,
    keys: impl Iterator<Item = &'a str>,
    errs: &mut Vec<ValidationError>,
) {
    let mut seen = BTreeSet::new();
    for (i, key) in keys.enumerate() {
        if !seen.insert(key) {
            errs.push(ValidationError::new(
                obj.clone(),
                format!("{path}[{i}]"),
                Problem::Duplicate {
                    value: key.to_owned(),
                },
            ));
        }
    }
}

/// Just enough JSON (RFC 8259) to tell whether opaque parameters are a JSON object, as
/// upstream's `json.Unmarshal` into `any` would: an iterative syntax check (no recursion,
/// so deep nesting cannot overflow the stack) that reports the top-level kind.
mod json {
    use crate::alloc_prelude::*;

    /// The kind of a syntactically valid JSON text's top-level value.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum Kind {
        Object,
        Null,
        Other,
    }

    /// `None` when `text` is not one JSON value surrounded by optional whitespace.
    pub(super) fn top_level_kind(text: &str) -> Option<Kind> {
        let mut p = Parser {
            b: text.as_bytes(),
            i: 0,
        };
        p.ws();
        let kind = match p.peek() {
            Some(b'{') => Kind::Object,
            Some(b'n') => Kind::Null,
            _ => Kind::Other,
        };
        p.value()?;
        p.ws();
        (p.i == p.b.len()).then_some(kind)
    }

    struct Parser<'a> {
        b: &'a [u8],
        i: usize,
    }

    impl Parser<'_> {
        fn peek(&self) -> Option<u8> {
            self.b.get(self.i).copied()
        }

        fn ws(&mut self) {
            while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                self.i += 1;
            }
        }

        fn eat(&mut self, byte: u8) -> Option<()> {
            (self.peek()? == byte).then(|| self.i += 1)
        }

        fn literal(&mut self, word: &[u8]) -> Option<()> {
            self.b[self.i..]
                .starts_with(word)
                .then(|| self.i += word.len())
        }

        fn digits(&mut self) -> Option<()> {
            let start = self.i;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1;
            }
            (self.i > start).then_some(())
        }

        fn number(&mut self) -> Option<()> {
            let _ = self.eat(b'-');
            if self.eat(b'0').is_none() {
                if !self.peek()?.is_ascii_digit() {
                    return None;
                }
                self.digits()?;
            }
            if self.eat(b'.').is_some() {
                self.digits()?;
            }
            if matches!(self.peek(), Some(b'e' | b'E')) {
                self.i += 1;
                if matches!(self.peek(), Some(b'+' | b'-')) {
                    self.i += 1;
                }
                self.digits()?;
            }
            Some(())
        }

        fn string(&mut self) -> Option<()> {
            self.eat(b'"')?;
            loop {
                let c = self.peek()?;
                self.i += 1;
                match c {
                    b'"' => return Some(()),
                    b'\\' => {
                        let e = self.peek()?;
                        self.i += 1;
                        match e {
                            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                            b'u' => {
                                for _ in 0..4 {
                                    if !self.peek()?.is_ascii_hexdigit() {
                                        return None;
                                    }
                                    self.i += 1;
                                }
                            }
                            _ => return None,
                        }
                    }
                    0x00..=0x1f => return None,
                    _ => {}
                }
            }
        }

        /// An object member's key and colon.
        fn key(&mut self) -> Option<()> {
            self.ws();
            self.string()?;
            self.ws();
            self.eat(b':')
        }

        fn value(&mut self) -> Option<()> {
            // Open containers, innermost last: `{` or `[`.
            let mut stack: Vec<u8> = Vec::new();
            loop {
                self.ws();
                match self.peek()? {
                    open @ (b'{' | b'[') => {
                        self.i += 1;
                        self.ws();
                        let close = if open == b'{' { b'}' } else { b']' };
                        if self.eat(close).is_none() {
                            stack.push(open);
                            if open == b'{' {
                                self.key()?;
                            }
                            continue;
                        }
                    }
                    b'"' => self.string()?,
                    b't' => self.literal(b"true")?,
                    b'f' => self.literal(b"false")?,
                    b'n' => self.literal(b"null")?,
                    b'-' | b'0'..=b'9' => self.number()?,
                    _ => return None,
                }
                // A value is complete: close containers until one wants another element.
                loop {
                    let Some(&open) = stack.last() else {
                        return Some(());
                    };
                    self.ws();
                    match (self.peek()?, open) {
                        (b',', _) => {
                            self.i += 1;
                            if open == b'{' {
                                self.key()?;
                            }
                            break;
                        }
                        (b'}', b'{') | (b']', b'[') => {
                            self.i += 1;
                            stack.pop();
                        }
                        _ => return None,
                    }
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::{Kind, top_level_kind};
        use crate::alloc_prelude::*;

        #[test]
        fn kinds() {
            let table = [
                (
                    r#"{"kind": "foo", "apiVersion": "dra.example.com/v1"}"#,
                    Some(Kind::Object),
                ),
                ("{}", Some(Kind::Object)),
                (
                    " {\"a\":[1,-2.5e+3,true,false,null,{\"b\":\"\\u00e9\\n\"}]} \n",
                    Some(Kind::Object),
                ),
                ("null", Some(Kind::Null)),
                (r#""hello-world""#, Some(Kind::Other)),
                ("[1,2]", Some(Kind::Other)),
                ("0", Some(Kind::Other)),
                ("-0.0e0", Some(Kind::Other)),
                ("{", None),
                ("}", None),
                ("", None),
                ("{\"a\"}", None),
                ("{\"a\":}", None),
                ("{\"a\":1,}", None),
                ("[1,]", None),
                ("[1 2]", None),
                ("{\"a\":1]", None),
                ("01", None),
                ("1.", None),
                ("-", None),
                ("1e", None),
                ("nul", None),
                ("{} {}", None),
                ("\"\\x\"", None),
                ("\"\\u12g4\"", None),
                ("\"a\nb\"", None),
                ("{'a':1}", None),
            ];
            for (text, want) in table {
                assert_eq!(top_level_kind(text), want, "{text:?}");
            }
            let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
            assert_eq!(top_level_kind(&deep), Some(Kind::Other));
        }
    }
}
