#![cfg(not(target_arch = "wasm32"))]
//! ResourceClaim validation (spec dra.md 1.8, 1.11; upstream `validateDeviceClaim`), the
//! request-reference helpers, constraint scope, the minimum device count and share ids.
//!
//! Every validation case pins the exact printed errors (`ValidationError`'s `Display`),
//! so the field paths and messages are part of the contract.

use std::collections::BTreeSet;

use gangpack::limits::{
    MAX_CEL_LEN, MAX_CONFIGS, MAX_CONSTRAINTS, MAX_OPAQUE_PARAMETERS_LEN, MAX_REQUESTS,
    MAX_SELECTORS, MAX_SUBREQUESTS, MAX_TOLERATIONS,
};
use gangpack::{
    AllocationMode, ConstraintKind, DeviceClaimConfiguration, DeviceConstraint, DeviceRequest,
    DeviceRequestKind, DeviceSelector, DeviceSubRequest, DeviceTaintEffect, DeviceToleration,
    DeviceTolerationOperator, ExactDeviceRequest, OpaqueDeviceConfiguration, Quantity,
    ResourceClaim, ResourceClaimSpec, share_id, split_request_ref,
};

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

const PREFIX: &str = "ResourceClaim \"ns/claim\": ";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const C_ID_MSG: &str = "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'";
const REF_MSG: &str = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";

fn exact(class: &str) -> ExactDeviceRequest {
    ExactDeviceRequest::new(class)
}

fn sub(name: &str) -> DeviceSubRequest {
    DeviceSubRequest::new(name, "gpu.example.com")
}

/// `ns/claim` with one valid `exactly` request `req-0`.
fn claim() -> ResourceClaim {
    let mut c = ResourceClaim::new("ns", "claim");
    c.spec
        .requests
        .push(DeviceRequest::exactly("req-0", exact("gpu.example.com")));
    c
}

/// `ns/claim` with `req-0` (exactly) and `fa` (firstAvailable: `big`, `small`).
fn claim_with_subrequests() -> ResourceClaim {
    let mut c = claim();
    c.spec.requests.push(DeviceRequest::first_available(
        "fa",
        vec![sub("big"), sub("small")],
    ));
    c
}

fn exactly_mut(c: &mut ResourceClaim, i: usize) -> &mut ExactDeviceRequest {
    match &mut c.spec.requests[i].kind {
        DeviceRequestKind::Exactly(e) => e,
        DeviceRequestKind::FirstAvailable(_) => panic!("request {i} is not `exactly`"),
    }
}

fn subs_mut(c: &mut ResourceClaim, i: usize) -> &mut Vec<DeviceSubRequest> {
    match &mut c.spec.requests[i].kind {
        DeviceRequestKind::FirstAvailable(s) => s,
        DeviceRequestKind::Exactly(_) => panic!("request {i} is not `firstAvailable`"),
    }
}

fn constraint(requests: &[&str], kind: ConstraintKind) -> DeviceConstraint {
    DeviceConstraint {
        requests: requests.iter().map(|s| (*s).to_string()).collect(),
        kind,
    }
}

fn matching(attr: &str) -> ConstraintKind {
    ConstraintKind::MatchAttribute(attr.into())
}

fn config(requests: &[&str], driver: &str, parameters: &str) -> DeviceClaimConfiguration {
    DeviceClaimConfiguration {
        requests: requests.iter().map(|s| (*s).to_string()).collect(),
        opaque: OpaqueDeviceConfiguration {
            driver: driver.into(),
            parameters: parameters.into(),
        },
    }
}

const PARAMS: &str = r#"{"kind": "foo", "apiVersion": "dra.example.com/v1"}"#;

fn tol(key: &str, op: DeviceTolerationOperator, value: &str) -> DeviceToleration {
    DeviceToleration {
        key: key.into(),
        operator: op,
        value: value.into(),
        effect: None,
        toleration_seconds: None,
    }
}

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap()
}

/// The printed errors, without the common `ResourceClaim "ns/claim": ` prefix.
fn errors(c: &ResourceClaim) -> Vec<String> {
    match c.validate() {
        Ok(()) => vec![],
        Err(errs) => errs
            .iter()
            .map(|e| {
                let s = e.to_string();
                s.strip_prefix(PREFIX)
                    .unwrap_or_else(|| panic!("unexpected object in {s:?}"))
                    .to_owned()
            })
            .collect(),
    }
}

/// Applies `edit` to [`claim_with_subrequests`] and checks the printed errors.
fn case(name: &str, edit: impl FnOnce(&mut ResourceClaim), want: &[String]) {
    let mut c = claim_with_subrequests();
    edit(&mut c);
    assert_eq!(errors(&c), want, "case {name}");
}

fn s(text: impl Into<String>) -> String {
    text.into()
}

// ------------------------------------------------------------------------------------------
// Valid claims
// ------------------------------------------------------------------------------------------

#[test]
fn valid_claims() {
    assert_eq!(errors(&claim()), Vec::<String>::new());
    assert_eq!(errors(&claim_with_subrequests()), Vec::<String>::new());
    // An empty claim is valid: nothing to allocate.
    assert_eq!(
        errors(&ResourceClaim::new("ns", "claim")),
        Vec::<String>::new()
    );
}

#[test]
fn valid_claim_at_every_limit() {
    let mut c = ResourceClaim::new("ns", "claim");
    let long_cel = "x".repeat(MAX_CEL_LEN);
    for i in 0..MAX_REQUESTS - 1 {
        let mut e = exact("gpu.example.com").with_mode(AllocationMode::ExactCount(u32::MAX));
        e.admin_access = true;
        e.selectors = vec![
            DeviceSelector {
                cel: long_cel.clone()
            };
            MAX_SELECTORS
        ];
        e.tolerations = vec![tol("", DeviceTolerationOperator::Exists, ""); MAX_TOLERATIONS];
        e.capacity.insert("memory".into(), q("0"));
        e.capacity.insert("gpu.example.com/cores".into(), q("1.5"));
        c.spec
            .requests
            .push(DeviceRequest::exactly(format!("r{i}"), e));
    }
    let subs = (0..MAX_SUBREQUESTS)
        .map(|i| sub(&format!("s{i}")).with_mode(AllocationMode::All))
        .collect();
    c.spec
        .requests
        .push(DeviceRequest::first_available("fa", subs));
    let refs: Vec<String> = (0..MAX_REQUESTS - 1)
        .map(|i| format!("r{i}"))
        .chain(["fa/s7".to_string()])
        .collect();
    let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
    for i in 0..MAX_CONSTRAINTS {
        let kind = if i % 2 == 0 {
            matching("gpu.example.com/numa")
        } else {
            ConstraintKind::DistinctAttribute("gpu.example.com/index".into())
        };
        c.spec.constraints.push(constraint(&refs, kind));
    }
    let max_params = format!(
        "{{\"s\": \"{}\"}}",
        "x".repeat(MAX_OPAQUE_PARAMETERS_LEN - 9)
    );
    assert_eq!(max_params.len(), MAX_OPAQUE_PARAMETERS_LEN);
    for _ in 0..MAX_CONFIGS {
        c.spec
            .config
            .push(config(&refs, "gpu.example.com", &max_params));
    }
    assert_eq!(errors(&c), Vec::<String>::new());
}

// ------------------------------------------------------------------------------------------
// Metadata
// ------------------------------------------------------------------------------------------

#[test]
fn metadata() {
    let mut c = claim();
    c.name = String::new();
    c.namespace = "a.b".into();
    let errs = c.validate().unwrap_err();
    let printed: Vec<String> = errs.iter().map(ToString::to_string).collect();
    assert_eq!(
        printed,
        [
            "ResourceClaim \"a.b/\": metadata.name: required value".to_string(),
            "ResourceClaim \"a.b/\": metadata.namespace: invalid value \"a.b\": must not contain dots"
                .to_string(),
        ]
    );

    let mut c = claim();
    c.name = "Claim_1".into();
    c.namespace = String::new();
    let printed: Vec<String> = c
        .validate()
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        printed,
        [
            format!(
                "ResourceClaim \"/Claim_1\": metadata.name: invalid value \"Claim_1\": {SUBDOMAIN_MSG}"
            ),
            "ResourceClaim \"/Claim_1\": metadata.namespace: required value".to_string(),
        ]
    );
    // A subdomain name with dots is fine.
    let mut c = claim();
    c.name = "pod-0.gpu".into();
    assert_eq!(errors(&c), Vec::<String>::new());
}

// ------------------------------------------------------------------------------------------
// Requests
// ------------------------------------------------------------------------------------------

#[test]
fn request_list() {
    case(
        "too many requests: reported once, entries not checked",
        |c| {
            for i in 0..MAX_REQUESTS {
                // Invalid and duplicate, but never looked at.
                c.spec
                    .requests
                    .push(DeviceRequest::exactly(format!("Bad{}", i % 2), exact("")));
            }
        },
        &[s(
            "spec.devices.requests: too many: 34, must have at most 32 items",
        )],
    );
    case(
        "duplicate names, reported at the later request",
        |c| {
            c.spec
                .requests
                .push(DeviceRequest::exactly("req-0", exact("gpu.example.com")));
            c.spec
                .requests
                .push(DeviceRequest::exactly("fa", exact("gpu.example.com")));
        },
        &[
            s("spec.devices.requests[2]: duplicate value \"req-0\""),
            s("spec.devices.requests[3]: duplicate value \"fa\""),
        ],
    );
    case(
        "names",
        |c| {
            c.spec.requests[0].name = "Req".into();
            c.spec.requests[1].name = String::new();
        },
        &[
            format!("spec.devices.requests[0].name: invalid value \"Req\": {LABEL_MSG}"),
            s("spec.devices.requests[1].name: required value"),
        ],
    );
    case(
        "a name longer than a DNS label",
        |c| c.spec.requests[0].name = "r".repeat(64),
        &[format!(
            "spec.devices.requests[0].name: invalid value \"{}\": DNS label must be no more than 63 bytes",
            "r".repeat(64)
        )],
    );
    case(
        "empty firstAvailable is neither `exactly` nor `firstAvailable`",
        |c| subs_mut(c, 1).clear(),
        &[s(
            "spec.devices.requests[1]: exactly one of `exactly`, `firstAvailable` must be set, found 0",
        )],
    );
}

#[test]
fn subrequests() {
    case(
        "too many subrequests: reported once, entries not checked",
        |c| {
            let subs = subs_mut(c, 1);
            subs.clear();
            subs.extend((0..=MAX_SUBREQUESTS).map(|_| sub("Bad")));
        },
        &[s(
            "spec.devices.requests[1].firstAvailable: too many: 9, must have at most 8 items",
        )],
    );
    case(
        "duplicate subrequest names, reported at the later one",
        |c| subs_mut(c, 1)[1].name = "big".into(),
        &[s(
            "spec.devices.requests[1].firstAvailable[1]: duplicate value \"big\"",
        )],
    );
    case(
        "subrequest name and class",
        |c| {
            let subs = subs_mut(c, 1);
            subs[0] = DeviceSubRequest::new("Big", "");
            subs[1].device_class_name = "GPU.example.com".into();
        },
        &[
            format!(
                "spec.devices.requests[1].firstAvailable[0].name: invalid value \"Big\": {LABEL_MSG}"
            ),
            s("spec.devices.requests[1].firstAvailable[0].deviceClassName: required value"),
            format!(
                "spec.devices.requests[1].firstAvailable[1].deviceClassName: invalid value \"GPU.example.com\": {SUBDOMAIN_MSG}"
            ),
        ],
    );
    case(
        "a subrequest with count 0",
        |c| subs_mut(c, 1)[1].allocation_mode = AllocationMode::ExactCount(0),
        &[s(
            "spec.devices.requests[1].firstAvailable[1].count: invalid value \"0\": must be greater than zero",
        )],
    );
    case(
        "subrequest selectors, tolerations and capacity",
        |c| {
            let x = &mut subs_mut(c, 1)[0];
            x.selectors.push(DeviceSelector { cel: "  ".into() });
            x.tolerations
                .push(tol("k", DeviceTolerationOperator::Exists, "v"));
            x.capacity.insert("mem-ory".into(), q("1"));
        },
        &[
            s(
                "spec.devices.requests[1].firstAvailable[0].selectors[0].cel.expression: required value",
            ),
            s(
                "spec.devices.requests[1].firstAvailable[0].tolerations[0].value: invalid value \"v\": must be empty for operator `Exists`",
            ),
            format!(
                "spec.devices.requests[1].firstAvailable[0].capacity.requests[\"mem-ory\"]: invalid value \"mem-ory\": {C_ID_MSG}"
            ),
        ],
    );
}

#[test]
fn device_class_name() {
    case(
        "missing",
        |c| exactly_mut(c, 0).device_class_name = String::new(),
        &[s(
            "spec.devices.requests[0].exactly.deviceClassName: required value",
        )],
    );
    case(
        "not a DNS subdomain",
        |c| exactly_mut(c, 0).device_class_name = "gpu_class".into(),
        &[format!(
            "spec.devices.requests[0].exactly.deviceClassName: invalid value \"gpu_class\": {SUBDOMAIN_MSG}"
        )],
    );
    case(
        "a subdomain with dots is fine",
        |c| exactly_mut(c, 0).device_class_name = "a.b-c.d".into(),
        &[],
    );
}

#[test]
fn selectors() {
    let at_limit = "x".repeat(MAX_CEL_LEN);
    let over = "x".repeat(MAX_CEL_LEN + 1);
    case(
        "empty and too long expressions",
        |c| {
            exactly_mut(c, 0).selectors = vec![
                DeviceSelector {
                    cel: "device.driver == \"gpu.example.com\"".into(),
                },
                DeviceSelector { cel: String::new() },
                DeviceSelector { cel: at_limit },
                DeviceSelector { cel: over },
            ];
        },
        &[
            s("spec.devices.requests[0].exactly.selectors[1].cel.expression: required value"),
            s(
                "spec.devices.requests[0].exactly.selectors[3].cel.expression: too long: 10241 bytes, may not be more than 10240 bytes",
            ),
        ],
    );
    case(
        "too many selectors: reported once, entries not checked",
        |c| {
            exactly_mut(c, 0).selectors =
                vec![DeviceSelector { cel: String::new() }; MAX_SELECTORS + 1];
        },
        &[s(
            "spec.devices.requests[0].exactly.selectors: too many: 33, must have at most 32 items",
        )],
    );
}

#[test]
fn allocation_mode() {
    let table = [
        (AllocationMode::ExactCount(1), vec![]),
        (AllocationMode::ExactCount(32), vec![]),
        (AllocationMode::All, vec![]),
        (
            AllocationMode::ExactCount(0),
            vec![s(
                "spec.devices.requests[0].exactly.count: invalid value \"0\": must be greater than zero",
            )],
        ),
    ];
    for (mode, want) in table {
        case(
            &format!("{mode:?}"),
            |c| exactly_mut(c, 0).allocation_mode = mode,
            &want,
        );
    }
    assert_eq!(AllocationMode::default(), AllocationMode::ExactCount(1));
    assert_eq!(
        ExactDeviceRequest::new("c").allocation_mode,
        AllocationMode::ExactCount(1)
    );
}

#[test]
fn admin_access_is_not_validated() {
    // Admin access needs a namespace label: an admission check, not validation.
    case(
        "admin access",
        |c| exactly_mut(c, 0).admin_access = true,
        &[],
    );
}

#[test]
fn tolerations() {
    case(
        "each toleration is validated at its own path",
        |c| {
            exactly_mut(c, 0).tolerations = vec![
                tol(
                    "gpu.example.com/ecc",
                    DeviceTolerationOperator::Equal,
                    "fatal",
                ),
                tol("bad key", DeviceTolerationOperator::Exists, ""),
                tol("k", DeviceTolerationOperator::Exists, "x"),
                tol("k", DeviceTolerationOperator::Equal, "bad value"),
                DeviceToleration {
                    effect: Some(DeviceTaintEffect::parse("Sometimes")),
                    ..tol("k", DeviceTolerationOperator::Exists, "")
                },
            ];
        },
        &[
            s(
                "spec.devices.requests[0].exactly.tolerations[1].key: invalid value \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            ),
            s(
                "spec.devices.requests[0].exactly.tolerations[2].value: invalid value \"x\": must be empty for operator `Exists`",
            ),
            s(
                "spec.devices.requests[0].exactly.tolerations[3].value: invalid value \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            ),
            s(
                "spec.devices.requests[0].exactly.tolerations[4].effect: unsupported value \"Sometimes\": supported values: \"NoExecute\", \"NoSchedule\", \"None\"",
            ),
        ],
    );
    case(
        "16 tolerations is the documented maximum",
        |c| {
            exactly_mut(c, 0).tolerations =
                vec![tol("", DeviceTolerationOperator::Exists, ""); MAX_TOLERATIONS];
        },
        &[],
    );
    case(
        "17 tolerations: reported once, entries not checked",
        |c| {
            exactly_mut(c, 0).tolerations =
                vec![tol("bad key", DeviceTolerationOperator::Exists, ""); MAX_TOLERATIONS + 1];
        },
        &[s(
            "spec.devices.requests[0].exactly.tolerations: too many: 17, must have at most 16 items",
        )],
    );
}

#[test]
fn capacity_requests() {
    case(
        "names are qualified names; amounts may be zero but not negative",
        |c| {
            let cap = &mut exactly_mut(c, 0).capacity;
            cap.insert("memory".into(), q("40Gi"));
            cap.insert("gpu.example.com/cores".into(), q("0"));
            cap.insert("1cores".into(), q("1"));
            cap.insert("ex.com/a/b".into(), q("1"));
            cap.insert("slices".into(), q("-1"));
        },
        &[
            format!(
                "spec.devices.requests[0].exactly.capacity.requests[\"1cores\"]: invalid value \"1cores\": {C_ID_MSG}"
            ),
            s(
                "spec.devices.requests[0].exactly.capacity.requests[\"ex.com/a/b\"]: invalid value \"ex.com/a/b\": a qualified name must be a C identifier, optionally prefixed by a domain and a single '/'",
            ),
            s(
                "spec.devices.requests[0].exactly.capacity.requests[\"slices\"]: invalid value \"-1\": must not be negative",
            ),
        ],
    );
}

// ------------------------------------------------------------------------------------------
// Constraints
// ------------------------------------------------------------------------------------------

#[test]
fn constraint_references() {
    let refs = |requests: &'static [&'static str]| {
        move |c: &mut ResourceClaim| {
            c.spec
                .constraints
                .push(constraint(requests, matching("gpu.example.com/numa")));
        }
    };
    let valid: [&'static [&'static str]; 5] = [
        &[],
        &["req-0"],
        &["fa"],
        &["fa/big"],
        &["req-0", "fa/small"],
    ];
    for requests in valid {
        case(&format!("{requests:?}"), refs(requests), &[]);
    }
    let p = "spec.devices.constraints[0].requests";
    case(
        "unknown request",
        refs(&["nic"]),
        &[format!("{p}[0]: invalid value \"nic\": {REF_MSG}")],
    );
    case(
        "unknown subrequest",
        refs(&["fa/medium"]),
        &[format!("{p}[0]: invalid value \"fa/medium\": {REF_MSG}")],
    );
    case(
        "an `exactly` request has no subrequests",
        refs(&["req-0/big"]),
        &[format!("{p}[0]: invalid value \"req-0/big\": {REF_MSG}")],
    );
    case(
        "two slashes: one error, segments not checked",
        refs(&["fa/big/X"]),
        &[format!("{p}[0]: invalid value \"fa/big/X\": {REF_MSG}")],
    );
    case(
        "bad segments are reported before the lookup",
        refs(&["Fa/big", "fa/"]),
        &[
            format!("{p}[0]: invalid value \"Fa\": {LABEL_MSG}"),
            format!("{p}[0]: invalid value \"Fa/big\": {REF_MSG}"),
            format!("{p}[1]: required value"),
            format!("{p}[1]: invalid value \"fa/\": {REF_MSG}"),
        ],
    );
    case(
        "duplicates, reported at the later entry",
        refs(&["req-0", "fa", "req-0"]),
        &[format!("{p}[2]: duplicate value \"req-0\"")],
    );
    case(
        "too many references: reported once",
        |c| {
            let many: Vec<String> = (0..=MAX_REQUESTS).map(|i| format!("x{i}")).collect();
            let many: Vec<&str> = many.iter().map(String::as_str).collect();
            c.spec
                .constraints
                .push(constraint(&many, matching("gpu.example.com/numa")));
        },
        &[format!("{p}: too many: 33, must have at most 32 items")],
    );
}

#[test]
fn constraint_attributes() {
    let table: &[(ConstraintKind, &[String])] = &[
        (matching("gpu.example.com/numa"), &[]),
        (ConstraintKind::DistinctAttribute("a/b".into()), &[]),
        (ConstraintKind::DistinctAttribute("Ex.com/_".into()), &[]),
        (
            matching("numa"),
            &[s(
                "spec.devices.constraints[0].matchAttribute: invalid value \"numa\": a fully qualified name must be a domain and a name separated by a slash",
            )],
        ),
        (
            ConstraintKind::DistinctAttribute(String::new()),
            &[s(
                "spec.devices.constraints[0].distinctAttribute: required value",
            )],
        ),
        (
            matching("ex.com/1numa"),
            &[format!(
                "spec.devices.constraints[0].matchAttribute: invalid value \"ex.com/1numa\": {C_ID_MSG}"
            )],
        ),
        (
            matching("/numa"),
            &[s(
                "spec.devices.constraints[0].matchAttribute: invalid value \"/numa\": the domain must not be empty",
            )],
        ),
        (
            ConstraintKind::DistinctAttribute("a/b/c".into()),
            &[s(
                "spec.devices.constraints[0].distinctAttribute: invalid value \"a/b/c\": a qualified name must be a C identifier, optionally prefixed by a domain and a single '/'",
            )],
        ),
    ];
    for (kind, want) in table {
        case(
            &format!("{kind:?}"),
            |c| c.spec.constraints.push(constraint(&[], kind.clone())),
            want,
        );
    }
}

#[test]
fn constraint_list() {
    case(
        "too many constraints: reported once, entries not checked",
        |c| {
            c.spec.constraints = vec![constraint(&["nope"], matching("bad")); MAX_CONSTRAINTS + 1];
        },
        &[s(
            "spec.devices.constraints: too many: 33, must have at most 32 items",
        )],
    );
}

// ------------------------------------------------------------------------------------------
// Configuration
// ------------------------------------------------------------------------------------------

#[test]
fn configuration() {
    let over = format!(
        "{{\"s\": \"{}\"}}",
        "x".repeat(MAX_OPAQUE_PARAMETERS_LEN - 8)
    );
    let table: Vec<(DeviceClaimConfiguration, Vec<String>)> = vec![
        (config(&[], "gpu.example.com", PARAMS), vec![]),
        (
            config(&["fa/small", "req-0"], "GPU.Example.com", " {} "),
            vec![],
        ),
        (
            config(&["fa/x"], "", ""),
            vec![
                format!("spec.devices.config[0].requests[0]: invalid value \"fa/x\": {REF_MSG}"),
                s("spec.devices.config[0].opaque.driver: required value"),
                s("spec.devices.config[0].opaque.parameters: required value"),
            ],
        ),
        (
            config(&["req-0", "req-0"], "gpu_example", "{"),
            vec![
                s("spec.devices.config[0].requests[1]: duplicate value \"req-0\""),
                s(
                    "spec.devices.config[0].opaque.driver: invalid value \"gpu_example\": an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
                ),
                s(
                    "spec.devices.config[0].opaque.parameters: invalid value \"<value omitted>\": error parsing data as JSON",
                ),
            ],
        ),
        (
            config(&[], "gpu.example.com", "\"hello-world\""),
            vec![s(
                "spec.devices.config[0].opaque.parameters: invalid value \"<value omitted>\": must be a valid JSON object",
            )],
        ),
        (
            config(&[], "gpu.example.com", "null"),
            vec![s(
                "spec.devices.config[0].opaque.parameters: required value",
            )],
        ),
        (
            config(&[], "gpu.example.com", "[{}]"),
            vec![s(
                "spec.devices.config[0].opaque.parameters: invalid value \"<value omitted>\": must be a valid JSON object",
            )],
        ),
        (
            config(&[], "gpu.example.com", &over),
            vec![s(
                "spec.devices.config[0].opaque.parameters: too long: 10241 bytes, may not be more than 10240 bytes",
            )],
        ),
    ];
    for (i, (cfg, want)) in table.into_iter().enumerate() {
        case(&format!("config {i}"), |c| c.spec.config.push(cfg), &want);
    }
    case(
        "too many configurations: reported once, entries not checked",
        |c| c.spec.config = vec![config(&["nope"], "", ""); MAX_CONFIGS + 1],
        &[s(
            "spec.devices.config: too many: 33, must have at most 32 items",
        )],
    );
}

#[test]
fn references_use_every_request_even_over_the_limit() {
    // Upstream gathers request names from the whole list, so constraints and configs
    // referencing a request past the limit are not also reported.
    let mut c = claim();
    for i in 1..=MAX_REQUESTS {
        c.spec.requests.push(DeviceRequest::exactly(
            format!("req-{i}"),
            exact("gpu.example.com"),
        ));
    }
    c.spec
        .constraints
        .push(constraint(&["req-32"], matching("gpu.example.com/numa")));
    assert_eq!(
        errors(&c),
        [s(
            "spec.devices.requests: too many: 33, must have at most 32 items"
        )]
    );
}

#[test]
fn errors_come_in_field_order() {
    let mut c = claim_with_subrequests();
    c.name = String::new();
    exactly_mut(&mut c, 0).device_class_name = String::new();
    c.spec
        .constraints
        .push(constraint(&["x"], matching("numa")));
    c.spec.config.push(config(&[], "", PARAMS));
    let fields: Vec<String> = c
        .validate()
        .unwrap_err()
        .into_iter()
        .map(|e| e.field)
        .collect();
    assert_eq!(
        fields,
        [
            "metadata.name",
            "spec.devices.requests[0].exactly.deviceClassName",
            "spec.devices.constraints[0].requests[0]",
            "spec.devices.constraints[0].matchAttribute",
            "spec.devices.config[0].opaque.driver",
        ]
    );
}

// ------------------------------------------------------------------------------------------
// Request references and resolution
// ------------------------------------------------------------------------------------------

#[test]
fn request_names_and_references() {
    let c = claim_with_subrequests();
    assert_eq!(c.request_names(), ["req-0", "fa", "fa/big", "fa/small"]);
    let table = [
        ("req-0", true),
        ("fa", true),
        ("fa/big", true),
        ("fa/small", true),
        ("fa/medium", false),
        ("req-0/big", false),
        ("nope", false),
        ("", false),
        ("fa/", false),
        ("/big", false),
        ("fa/big/x", false),
    ];
    for (reference, want) in table {
        assert_eq!(c.spec.has_request_ref(reference), want, "{reference:?}");
    }
    assert_eq!(split_request_ref("fa/big"), ("fa", Some("big")));
    assert_eq!(split_request_ref("fa"), ("fa", None));
    assert_eq!(split_request_ref("a/b/c"), ("a", Some("b/c")));
}

#[test]
fn resolve_names_a_leaf() {
    let mut c = claim_with_subrequests();
    exactly_mut(&mut c, 0).admin_access = true;
    subs_mut(&mut c, 1)[1].allocation_mode = AllocationMode::All;
    let spec = &c.spec;

    let r = spec.resolve("req-0").unwrap();
    assert_eq!((r.request, r.subrequest), ("req-0", None));
    assert!(r.admin_access);
    assert_eq!(r.reference(), "req-0");

    let r = spec.resolve("fa/small").unwrap();
    assert_eq!((r.request, r.subrequest), ("fa", Some("small")));
    assert_eq!(r.allocation_mode, AllocationMode::All);
    assert_eq!(r.device_class_name, "gpu.example.com");
    assert!(!r.admin_access);
    assert_eq!(r.reference(), "fa/small");

    // Results always name the chosen subrequest: a bare `firstAvailable` name is not a leaf.
    for reference in ["fa", "fa/x", "req-0/big", "x", "fa/big/x"] {
        assert_eq!(spec.resolve(reference), None, "{reference:?}");
    }

    let alternatives: Vec<String> = spec.requests[1]
        .alternatives()
        .iter()
        .map(gangpack::RequestView::reference)
        .collect();
    assert_eq!(alternatives, ["fa/big", "fa/small"]);
    assert_eq!(spec.requests[0].alternatives()[0].reference(), "req-0");
    assert_eq!(spec.requests[1].subrequest("big").unwrap().name, "big");
    assert!(spec.requests[0].subrequest("big").is_none());
    assert_eq!(spec.request("fa").unwrap().name, "fa");
}

// ------------------------------------------------------------------------------------------
// Constraint scope (spec 1.8, 3.7)
// ------------------------------------------------------------------------------------------

#[test]
fn applies_to_truth_table() {
    // (constraint requests, request, subrequest, applies)
    let table: &[(&[&str], &str, Option<&str>, bool)] = &[
        // Empty list: every request and subrequest.
        (&[], "a", None, true),
        (&[], "fa", Some("big"), true),
        // A plain request name.
        (&["a"], "a", None, true),
        (&["a"], "b", None, false),
        // A bare parent name covers all its subrequests.
        (&["fa"], "fa", Some("big"), true),
        (&["fa"], "fa", Some("small"), true),
        (&["fa"], "fb", Some("big"), false),
        // `req/sub` covers only that subrequest...
        (&["fa/big"], "fa", Some("big"), true),
        (&["fa/big"], "fa", Some("small"), false),
        // ... and not the parent without a subrequest, nor another request's subrequest.
        (&["fa/big"], "fa", None, false),
        (&["fa/big"], "fb", Some("big"), false),
        // Any listed entry suffices.
        (&["a", "fa/small"], "fa", Some("small"), true),
        (&["a", "fa/small"], "a", None, true),
        (&["a", "fa/small"], "b", None, false),
        // Names are compared exactly.
        (&["A"], "a", None, false),
        (&["fa/big/x"], "fa", Some("big"), false),
    ];
    for &(requests, request, subrequest, want) in table {
        let c = constraint(requests, matching("example.com/numa"));
        assert_eq!(
            c.applies_to(request, subrequest),
            want,
            "{requests:?} applies to {request:?}/{subrequest:?}"
        );
    }
    let c = constraint(
        &[],
        ConstraintKind::DistinctAttribute("example.com/nic".into()),
    );
    assert_eq!(c.attribute(), "example.com/nic");
}

// ------------------------------------------------------------------------------------------
// Minimum device count (spec 3.4)
// ------------------------------------------------------------------------------------------

#[test]
fn min_device_count() {
    use AllocationMode::{All, ExactCount};

    let ex = |name: &str, mode| DeviceRequest::exactly(name, exact("c").with_mode(mode));
    let fa = |name: &str, modes: &[AllocationMode]| {
        DeviceRequest::first_available(
            name,
            modes
                .iter()
                .enumerate()
                .map(|(i, m)| sub(&format!("s{i}")).with_mode(*m))
                .collect(),
        )
    };
    let table: Vec<(Vec<DeviceRequest>, u64)> = vec![
        (vec![], 0),
        (vec![ex("a", ExactCount(1))], 1),
        (vec![ex("a", ExactCount(4))], 4),
        // `All` needs at least one device.
        (vec![ex("a", All)], 1),
        (vec![ex("a", ExactCount(3)), ex("b", All)], 4),
        // `firstAvailable`: the least of the alternatives, wherever it is.
        (
            vec![fa("a", &[ExactCount(8), ExactCount(2), ExactCount(4)])],
            2,
        ),
        (vec![fa("a", &[All, ExactCount(5)])], 1),
        (vec![fa("a", &[])], 0),
        (
            vec![
                ex("a", ExactCount(30)),
                fa("b", &[ExactCount(3), ExactCount(2)]),
                ex("c", All),
            ],
            33,
        ),
        // Counts add up without overflowing.
        (
            vec![ex("a", ExactCount(u32::MAX)), ex("b", ExactCount(u32::MAX))],
            2 * u64::from(u32::MAX),
        ),
    ];
    for (requests, want) in table {
        let spec = ResourceClaimSpec {
            requests,
            ..ResourceClaimSpec::default()
        };
        assert_eq!(spec.min_device_count(), want, "{:?}", spec.requests);
    }
    assert_eq!(All.min_device_count(), 1);
    assert_eq!(ExactCount(7).min_device_count(), 7);
}

// ------------------------------------------------------------------------------------------
// Share ids
// ------------------------------------------------------------------------------------------

fn assert_uuid_form(id: &str) {
    let bytes = id.as_bytes();
    assert_eq!(bytes.len(), 36, "{id}");
    for (i, &b) in bytes.iter().enumerate() {
        if [8, 13, 18, 23].contains(&i) {
            assert_eq!(b, b'-', "{id}");
        } else {
            assert!(b.is_ascii_digit() || (b'a'..=b'f').contains(&b), "{id}");
        }
    }
    assert_eq!(bytes[14], b'8', "version nibble in {id}");
    assert!(b"89ab".contains(&bytes[19]), "variant in {id}");
}

#[test]
fn share_id_is_deterministic_and_uuid_shaped() {
    let id = share_id("ns/claim", "gpus", "gpu.example.com/node-1/gpu-0", 0);
    assert_uuid_form(&id);
    // Pinned: the value is part of the determinism contract (same natively and in wasm).
    assert_eq!(
        id,
        share_id("ns/claim", "gpus", "gpu.example.com/node-1/gpu-0", 0)
    );
    assert_eq!(id, PINNED_SHARE_ID);

    let mut seen = BTreeSet::new();
    for claim in ["ns/a", "ns/b", "0b5c1a8e-3f5d-4c55-a9a4-5f1f5f2b6f0e", ""] {
        for request in ["gpus", "fa/big", ""] {
            for device in ["d/p/gpu-0", "d/p/gpu-1", ""] {
                for ordinal in 0..8 {
                    let id = share_id(claim, request, device, ordinal);
                    assert_uuid_form(&id);
                    assert!(seen.insert(id), "collision");
                }
            }
        }
    }
    // Inputs are length-prefixed: moving a byte from one part to the next changes the id.
    assert_ne!(share_id("ab", "c", "d", 0), share_id("a", "bc", "d", 0));
    assert_ne!(share_id("a", "b", "cd", 0), share_id("a", "bc", "d", 0));
}

const PINNED_SHARE_ID: &str = "cb6d29db-836f-8542-b935-9fab5e72955b";

// ------------------------------------------------------------------------------------------
// Serde shape (run with `--features serde`)
// ------------------------------------------------------------------------------------------

#[cfg(feature = "serde")]
#[test]
fn serde_shape() {
    use gangpack::{AllocationResult, DeviceRequestAllocationResult};

    let mut c = claim_with_subrequests();
    exactly_mut(&mut c, 0)
        .capacity
        .insert("memory".into(), q("40Gi"));
    c.spec
        .constraints
        .push(constraint(&["fa"], matching("gpu.example.com/numa")));
    c.spec.config.push(config(&[], "gpu.example.com", PARAMS));
    let json = serde_json::to_value(&c).unwrap();
    let requests = &json["spec"]["requests"];
    assert_eq!(requests[0]["name"], "req-0");
    assert_eq!(requests[0]["exactly"]["deviceClassName"], "gpu.example.com");
    assert_eq!(requests[0]["exactly"]["capacity"]["memory"], "40Gi");
    assert_eq!(requests[1]["firstAvailable"][1]["name"], "small");
    assert_eq!(
        json["spec"]["constraints"][0],
        serde_json::json!({"requests": ["fa"], "matchAttribute": "gpu.example.com/numa"})
    );
    let back: ResourceClaim = serde_json::from_value(json).unwrap();
    assert_eq!(back, c);

    let result = AllocationResult {
        devices: vec![DeviceRequestAllocationResult {
            request: "fa/big".into(),
            driver: "gpu.example.com".into(),
            pool: "node-1".into(),
            device: "gpu-0".into(),
            share_id: Some(share_id(
                "ns/claim",
                "fa/big",
                "gpu.example.com/node-1/gpu-0",
                0,
            )),
            ..DeviceRequestAllocationResult::default()
        }],
        ..AllocationResult::default()
    };
    let json = serde_json::to_value(&result).unwrap();
    let device = json["devices"][0].as_object().unwrap();
    assert!(device.contains_key("shareID"));
    assert!(!device.contains_key("adminAccess"));
    assert!(!device.contains_key("consumedCapacity"));
    let back: AllocationResult = serde_json::from_value(json).unwrap();
    assert_eq!(back, result);
}
