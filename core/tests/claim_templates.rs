#![cfg(not(target_arch = "wasm32"))]
//! ResourceClaimTemplates and deterministic claim instantiation (dra.md 1.8, KEP-5729):
//! template validation with `spec.spec.devices` paths, the resourceclaim controller's
//! `<owner>-<claim>-` naming with a hashed suffix in place of the API server's random one,
//! and the substitution of template sources in pods and PodGroups, all or nothing.

use std::collections::BTreeSet;

use gangpack::names::{validate_dns_label, validate_dns_subdomain};
use gangpack::{
    AllocationMode, ClaimSource, ConstraintKind, DeviceConstraint, DeviceRequest,
    ExactDeviceRequest, ObjectKind, ObjectRef, Pod, PodGroup, PodGroupResourceClaim,
    PodResourceClaim, ResourceClaim, ResourceClaimTemplate, SchedulingPolicy, ValidationError,
    generated_claim_name, generated_group_claim_name, instantiate_group_claims,
    instantiate_member_claims, instantiate_pod_claims,
};
use proptest::prelude::*;

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

const NS: &str = "team-a";
/// The API server's `generateName` alphabet.
const ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

/// Every error printed in full, in order.
fn printed(errs: &[ValidationError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

/// A template whose claims ask for `count` devices of class `class`.
fn template(name: &str, class: &str, count: u32) -> ResourceClaimTemplate {
    let mut t = ResourceClaimTemplate::new(NS, name);
    t.spec.requests.push(DeviceRequest::exactly(
        "devices",
        ExactDeviceRequest::new(class).with_mode(AllocationMode::ExactCount(count)),
    ));
    t
}

fn templates() -> Vec<ResourceClaimTemplate> {
    vec![
        template("one-gpu", "gpu.example.com", 1),
        template("two-nics", "nic.example.com", 2),
    ]
}

fn pod_claim(name: &str, source: ClaimSource) -> PodResourceClaim {
    PodResourceClaim {
        name: name.into(),
        source,
    }
}

fn group_claim(name: &str, source: ClaimSource) -> PodGroupResourceClaim {
    PodGroupResourceClaim {
        name: name.into(),
        source,
    }
}

fn by_name(n: &str) -> ClaimSource {
    ClaimSource::ClaimName(n.into())
}

fn from_template(n: &str) -> ClaimSource {
    ClaimSource::Template(n.into())
}

/// A pod with, in order: an existing claim, a template claim, another existing claim and
/// a second template claim.
fn mixed_pod(name: &str) -> Pod {
    let mut pod = Pod::new(NS, name);
    pod.resource_claims = vec![
        pod_claim("shared", by_name("team-fabric")),
        pod_claim("gpu", from_template("one-gpu")),
        pod_claim("scratch", by_name("scratch-disk")),
        pod_claim("nics", from_template("two-nics")),
    ];
    pod
}

/// The five-character suffix: all of the API server's alphabet.
fn assert_suffix(name: &str) {
    assert!(name.len() > 5, "{name}");
    let suffix = &name[name.len() - 5..];
    assert!(suffix.chars().all(|c| ALPHABET.contains(c)), "{name}");
}

fn assert_valid_claim(claim: &ResourceClaim) {
    assert_eq!(claim.validate(), Ok(()), "{claim:?}");
}

// ------------------------------------------------------------------------------------------
// Names
// ------------------------------------------------------------------------------------------

#[test]
fn short_names_keep_the_controllers_prefix() {
    let name = generated_claim_name(NS, "trainer-0", "gpu");
    assert_eq!(&name[..name.len() - 5], "trainer-0-gpu-");
    assert_suffix(&name);
    // Pinned (checked against an independent FNV-1a + SplitMix64 computation): the
    // suffix is a pure function of its inputs, the same on every platform.
    assert_eq!(name, "trainer-0-gpu-2gsnn");
    assert_eq!(
        generated_group_claim_name(NS, "trainer", "fabric"),
        "trainer-fabric-l7658"
    );
}

#[test]
fn long_names_are_cut_in_proportion() {
    // 60 + 63 + 2 = 125 bytes > 57: the pod keeps 60 * 57 / 125 = 27 bytes, the claim
    // 63 * 57 / 125 = 28, joined by one `-` and no trailing `-` (as upstream).
    let pod = format!("p{}", "0".repeat(59));
    let claim = format!("c{}", "1".repeat(62));
    let name = generated_claim_name(NS, &pod, &claim);
    assert_eq!(name.len(), 27 + 1 + 28 + 5);
    assert_eq!(&name[..56], format!("{}-{}", &pod[..27], &claim[..28]));
    assert_suffix(&name);

    // The longest pod name (253 bytes) with a short claim: 253 * 57 / 258 = 55 bytes of
    // the pod, 3 * 57 / 258 = 0 of the claim.
    let pod = "a".repeat(253);
    let name = generated_claim_name(NS, &pod, "gpu");
    assert_eq!(&name[..56], format!("{}-", &pod[..55]));
    assert_eq!(name.len(), 61);

    // 57 bytes exactly is not cut.
    let pod = "q".repeat(52);
    let name = generated_claim_name(NS, &pod, "abc");
    assert_eq!(&name[..57], format!("{pod}-abc-"));
    assert_eq!(name.len(), 62);
}

#[test]
fn cut_names_stay_valid_where_upstream_would_not() {
    // Upstream would keep `...a.` + `-`: the cut pod name loses its trailing dot.
    // 50 + 10 + 2 = 62 > 57: the pod keeps 50 * 57 / 62 = 45 bytes, ending in the dot.
    let pod = format!("{}.{}", "a".repeat(44), "b".repeat(5));
    assert_eq!(validate_dns_subdomain(&pod), Ok(()));
    let name = generated_claim_name(NS, &pod, "claimnamex");
    assert!(
        name.starts_with(&format!("{}-claim", "a".repeat(44))),
        "{name}"
    );
    assert_eq!(validate_dns_subdomain(&name), Ok(()), "{name}");

    // A one-byte pod with a 63-byte claim: upstream keeps 0 bytes of the pod and starts
    // the name with `-`; here the name starts with the claim.
    let claim = "x".repeat(63);
    let name = generated_claim_name(NS, "a", &claim);
    assert!(name.starts_with(&"x".repeat(54)), "{name}");
    assert_eq!(validate_dns_subdomain(&name), Ok(()), "{name}");
}

#[test]
fn names_are_deterministic_and_distinct() {
    let base = generated_claim_name(NS, "trainer-0", "gpu");
    assert_eq!(base, generated_claim_name(NS, "trainer-0", "gpu"));
    let others = [
        generated_claim_name(NS, "trainer-1", "gpu"),
        generated_claim_name(NS, "trainer-0", "nic"),
        generated_claim_name("team-b", "trainer-0", "gpu"),
        // Same `<pod>-<claim>-` prefix, different pair: only the suffix differs.
        generated_claim_name(NS, "trainer", "0-gpu"),
        // A PodGroup with the pod's name.
        generated_group_claim_name(NS, "trainer-0", "gpu"),
    ];
    for o in &others {
        assert_ne!(&base, o);
    }
    assert_eq!(&others[3][..14], "trainer-0-gpu-");

    // 500 pods whose names differ only where the prefix is cut: the suffix alone keeps
    // them apart.
    let stem = "very-long-jobset-name-for-a-distributed-training-run-workers";
    let mut seen = BTreeSet::new();
    for i in 0..500 {
        let pod = format!("{stem}-{i}");
        let name = generated_claim_name(NS, &pod, "gpu");
        assert!(name.starts_with(&stem[..40]), "{name}");
        assert_eq!(validate_dns_subdomain(&name), Ok(()), "{name}");
        assert!(seen.insert(name.clone()), "{name} twice");
    }
}

// ------------------------------------------------------------------------------------------
// Templates
// ------------------------------------------------------------------------------------------

#[test]
fn template_validation_reports_spec_spec_paths() {
    let mut t = ResourceClaimTemplate::new("Team_A", "-tpl");
    t.spec.requests.push(DeviceRequest::exactly(
        "GPU",
        ExactDeviceRequest::new("gpu.example.com").with_mode(AllocationMode::ExactCount(0)),
    ));
    t.spec.constraints.push(DeviceConstraint {
        requests: vec!["nic".into()],
        kind: ConstraintKind::MatchAttribute("numa".into()),
    });
    let errs = t.validate().unwrap_err();
    let obj = ObjectRef::namespaced(ObjectKind::ResourceClaimTemplate, "Team_A", "-tpl");
    assert!(errs.iter().all(|e| e.object == obj));
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "metadata.name",
            "metadata.namespace",
            "spec.spec.devices.requests[0].name",
            "spec.spec.devices.requests[0].exactly.count",
            "spec.spec.devices.constraints[0].requests[0]",
            "spec.spec.devices.constraints[0].matchAttribute",
        ]
    );
    assert!(errs[0].to_string().starts_with(
        "ResourceClaimTemplate \"Team_A/-tpl\": metadata.name: invalid value \"-tpl\""
    ));

    // The same spec in a claim reports the same problems under `spec.devices`.
    let mut claim = ResourceClaim::new(NS, "c");
    claim.spec = t.spec.clone();
    let claim_fields: Vec<String> = claim
        .validate()
        .unwrap_err()
        .iter()
        .map(|e| e.field.replace("spec.devices", "spec.spec.devices"))
        .collect();
    assert_eq!(claim_fields, fields[2..]);

    assert_eq!(template("one-gpu", "gpu.example.com", 1).validate(), Ok(()));
    assert_eq!(
        ObjectKind::ResourceClaimTemplate.to_string(),
        "ResourceClaimTemplate"
    );
}

// ------------------------------------------------------------------------------------------
// Pods
// ------------------------------------------------------------------------------------------

#[test]
fn pod_template_sources_are_replaced_in_place() {
    let pod = mixed_pod("trainer-0");
    let (out, claims) = instantiate_pod_claims(&pod, &templates()).unwrap();

    let gpu = generated_claim_name(NS, "trainer-0", "gpu");
    let nics = generated_claim_name(NS, "trainer-0", "nics");
    assert_eq!(
        out.resource_claims,
        [
            pod_claim("shared", by_name("team-fabric")),
            pod_claim("gpu", by_name(&gpu)),
            pod_claim("scratch", by_name("scratch-disk")),
            pod_claim("nics", by_name(&nics)),
        ]
    );
    // Nothing else about the pod changes.
    let mut back = out.clone();
    back.resource_claims = pod.resource_claims.clone();
    assert_eq!(back, pod);

    // One claim per template entry, in entry order, in the pod's namespace, with the
    // template's spec.
    let names: Vec<&str> = claims.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, [gpu.as_str(), nics.as_str()]);
    assert_eq!(claims[0].namespace, NS);
    assert_eq!(claims[0].spec, templates()[0].spec);
    assert_eq!(claims[1].spec, templates()[1].spec);
    assert_eq!(claims[1].spec.min_device_count(), 2);
    claims.iter().for_each(assert_valid_claim);

    // Deterministic: the same input gives the same output.
    assert_eq!(
        instantiate_pod_claims(&pod, &templates()),
        Ok((out.clone(), claims.clone()))
    );
    // Instantiating again changes nothing: the pod names only claims now.
    assert_eq!(
        instantiate_pod_claims(&out, &templates()),
        Ok((out, vec![]))
    );
}

#[test]
fn pods_without_templates_need_none() {
    let mut pod = Pod::new(NS, "plain");
    pod.resource_claims.push(pod_claim("gpu", by_name("gpu-0")));
    assert_eq!(instantiate_pod_claims(&pod, &[]), Ok((pod, vec![])));
}

#[test]
fn missing_template_names_the_pod_and_field() {
    let mut pod = mixed_pod("trainer-0");
    pod.resource_claims[3].source = from_template("four-nics");
    let errs = instantiate_pod_claims(&pod, &templates()).unwrap_err();
    assert_eq!(
        printed(&errs),
        [
            "Pod \"team-a/trainer-0\": spec.resourceClaims[3].resourceClaimTemplateName: not found: \"four-nics\""
        ]
    );
    assert_eq!(errs[0].object, pod.object_ref());
}

#[test]
fn templates_are_looked_up_in_the_pods_namespace_only() {
    let mut elsewhere = template("one-gpu", "gpu.example.com", 1);
    elsewhere.namespace = "team-b".into();
    let mut pod = Pod::new(NS, "p");
    pod.resource_claims
        .push(pod_claim("gpu", from_template("one-gpu")));
    let errs = instantiate_pod_claims(&pod, &[elsewhere.clone()]).unwrap_err();
    assert_eq!(
        errs[0].field,
        "spec.resourceClaims[0].resourceClaimTemplateName"
    );

    // With both, the pod's namespace wins whatever the order.
    let mine = template("one-gpu", "gpu.example.com", 3);
    let (_, claims) = instantiate_pod_claims(&pod, &[elsewhere, mine.clone()]).unwrap();
    assert_eq!(claims[0].spec, mine.spec);
}

#[test]
fn every_error_is_reported_and_nothing_is_applied() {
    let mut bad = template("bad", "gpu.example.com", 1);
    bad.spec.requests[0].name = "Devices".into();
    let mut ts = templates();
    ts.push(bad);

    let mut pod = mixed_pod("trainer-0");
    pod.resource_claims[0].name = "Shared".into();
    pod.resource_claims[1].source = from_template("missing");
    pod.resource_claims[3].source = from_template("bad");
    pod.resource_claims
        .push(pod_claim("more", from_template("bad")));
    pod.resource_claims
        .push(pod_claim("gpu2", from_template("one-gpu")));

    let errs = instantiate_pod_claims(&pod, &ts).unwrap_err();
    let fields: Vec<(ObjectKind, &str)> = errs
        .iter()
        .map(|e| (e.object.kind, e.field.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            // The pod's own problem first (`Pod::validate`) ...
            (ObjectKind::Pod, "spec.resourceClaims[0].name"),
            // ... then entry by entry; the bad template once, though used twice.
            (
                ObjectKind::Pod,
                "spec.resourceClaims[1].resourceClaimTemplateName"
            ),
            (
                ObjectKind::ResourceClaimTemplate,
                "spec.spec.devices.requests[0].name"
            ),
        ]
    );
    assert_eq!(
        errs[2].to_string(),
        "ResourceClaimTemplate \"team-a/bad\": spec.spec.devices.requests[0].name: invalid value \
         \"Devices\": a lowercase RFC 1123 label must consist of lower case alphanumeric \
         characters or '-', and must start and end with an alphanumeric character"
    );
}

#[test]
fn very_long_pod_names_give_valid_claims() {
    // Longest pod names (253 bytes), with dots where the cut may land, and the longest
    // claim entry names.
    let label = "x".repeat(63);
    let pods = [
        format!("{label}.{label}.{label}.{}", "y".repeat(61)),
        format!("{}.b", "a".repeat(251)),
        "z".repeat(253),
        format!("a.{}", "b".repeat(251)),
    ];
    let entries = ["g", "gpu", &"c".repeat(63)];
    let ts = templates();
    let mut names = BTreeSet::new();
    for p in &pods {
        let mut pod = Pod::new(NS, p.as_str());
        assert_eq!(pod.validate(), Ok(()));
        for e in entries {
            pod.resource_claims
                .push(pod_claim(e, from_template("one-gpu")));
        }
        let (out, claims) = instantiate_pod_claims(&pod, &ts).unwrap();
        assert_eq!(claims.len(), entries.len());
        for (entry, claim) in out.resource_claims.iter().zip(&claims) {
            assert_valid_claim(claim);
            assert!(claim.name.len() <= 62, "{}", claim.name);
            assert_eq!(entry.source, by_name(&claim.name));
            assert!(names.insert(claim.name.clone()), "{} twice", claim.name);
        }
    }
    // The one-byte pod with the longest claim entry name, where upstream's name would
    // start with `-`.
    let mut pod = Pod::new(NS, "a");
    pod.resource_claims
        .push(pod_claim(&"c".repeat(63), from_template("one-gpu")));
    let (_, claims) = instantiate_pod_claims(&pod, &ts).unwrap();
    assert_valid_claim(&claims[0]);
}

// ------------------------------------------------------------------------------------------
// PodGroups (KEP-5729)
// ------------------------------------------------------------------------------------------

fn group() -> PodGroup {
    let mut g = PodGroup::new(NS, "trainer", SchedulingPolicy::Gang { min_count: 2 });
    g.resource_claims = vec![
        group_claim("fabric", from_template("two-nics")),
        group_claim("rack", by_name("rack-7")),
    ];
    g
}

fn member(name: &str) -> Pod {
    let mut pod = Pod::new(NS, name);
    pod.scheduling_group = Some("trainer".into());
    pod.resource_claims = vec![
        pod_claim("fabric", from_template("two-nics")),
        pod_claim("rack", by_name("rack-7")),
        pod_claim("gpu", from_template("one-gpu")),
    ];
    pod
}

#[test]
fn group_template_yields_one_claim_per_group() {
    let g = group();
    let (out, claims) = instantiate_group_claims(&g, &templates()).unwrap();
    let fabric = generated_group_claim_name(NS, "trainer", "fabric");
    assert!(fabric.starts_with("trainer-fabric-"));
    assert_eq!(
        out.resource_claims,
        [
            group_claim("fabric", by_name(&fabric)),
            group_claim("rack", by_name("rack-7")),
        ]
    );
    let mut back = out.clone();
    back.resource_claims = g.resource_claims.clone();
    assert_eq!(back, g);
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0].name, fabric);
    assert_eq!(claims[0].namespace, NS);
    assert_eq!(claims[0].spec, templates()[1].spec);
    assert_valid_claim(&claims[0]);

    // Another group from the same template gets its own claim.
    let mut other = g.clone();
    other.name = "trainer-2".into();
    let (_, other_claims) = instantiate_group_claims(&other, &templates()).unwrap();
    assert_ne!(other_claims[0].name, claims[0].name);
}

#[test]
fn group_errors_name_the_group() {
    let mut g = group();
    g.resource_claims[0].source = from_template("missing");
    g.priority = Some(2_000_000_000);
    let errs = instantiate_group_claims(&g, &templates()).unwrap_err();
    assert_eq!(
        printed(&errs)[1],
        "PodGroup \"team-a/trainer\": spec.resourceClaims[0].resourceClaimTemplateName: not found: \"missing\""
    );
    assert_eq!(errs.len(), 2);
    assert_eq!(errs[0].field, "spec.priority");

    // A long group name still gives a valid claim.
    let mut g = group();
    g.name = format!("{}.{}", "g".repeat(200), "h".repeat(52));
    let (_, claims) = instantiate_group_claims(&g, &templates()).unwrap();
    assert_valid_claim(&claims[0]);
}

#[test]
fn members_name_the_groups_claim() {
    let g = group();
    let ts = templates();
    let (g2, group_claims) = instantiate_group_claims(&g, &ts).unwrap();

    let pod = member("trainer-0");
    let (out, claims) = instantiate_member_claims(&pod, &g, &ts).unwrap();
    let own = generated_claim_name(NS, "trainer-0", "gpu");
    assert_eq!(
        out.resource_claims,
        [
            pod_claim("fabric", by_name(&group_claims[0].name)),
            pod_claim("rack", by_name("rack-7")),
            pod_claim("gpu", by_name(&own)),
        ]
    );
    // Only the pod's own template entry gets a claim.
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0].name, own);
    // The instantiated pod and group still pair up, so the group's claim is shared.
    assert_eq!(
        g2.group_claim_for(&out.resource_claims[0]),
        Some(&g2.resource_claims[0])
    );
    assert_eq!(
        g2.group_claim_for(&out.resource_claims[1]),
        Some(&g2.resource_claims[1])
    );
    assert_eq!(g2.group_claim_for(&out.resource_claims[2]), None);

    // Two members share the group's claim and keep their own.
    let (out1, claims1) = instantiate_member_claims(&member("trainer-1"), &g, &ts).unwrap();
    assert_eq!(out1.resource_claims[0], out.resource_claims[0]);
    assert_ne!(claims1[0].name, claims[0].name);

    // `instantiate_pod_claims` gives the pod a claim of its own for every template entry.
    let (alone, alone_claims) = instantiate_pod_claims(&pod, &ts).unwrap();
    assert_eq!(alone_claims.len(), 2);
    assert_eq!(
        alone.resource_claims[0].source,
        by_name(&generated_claim_name(NS, "trainer-0", "fabric"))
    );
}

#[test]
fn group_claims_apply_to_members_only() {
    let g = group();
    let ts = templates();
    // Not in the group: the pod's entries are its own.
    let mut outsider = member("other-0");
    outsider.scheduling_group = Some("other".into());
    let (out, claims) = instantiate_member_claims(&outsider, &g, &ts).unwrap();
    assert_eq!(claims.len(), 2);
    assert_eq!(
        out.resource_claims[0].source,
        by_name(&generated_claim_name(NS, "other-0", "fabric"))
    );
    // A member whose entry differs in source from the group's has its own claim.
    let mut pod = member("trainer-0");
    pod.resource_claims[0].source = from_template("one-gpu");
    let (_, claims) = instantiate_member_claims(&pod, &g, &ts).unwrap();
    assert_eq!(claims.len(), 2);
    assert_eq!(claims[0].spec, ts[0].spec);
}

#[test]
fn member_errors_include_the_groups() {
    let mut g = group();
    g.name = "Trainer".into();
    let mut pod = member("trainer-0");
    pod.scheduling_group = Some("Trainer".into());
    pod.resource_claims[2].source = from_template("missing");
    let errs = instantiate_member_claims(&pod, &g, &templates()).unwrap_err();
    let fields: Vec<(ObjectKind, &str)> = errs
        .iter()
        .map(|e| (e.object.kind, e.field.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            (ObjectKind::Pod, "spec.schedulingGroup.podGroupName"),
            (ObjectKind::PodGroup, "metadata.name"),
            (
                ObjectKind::Pod,
                "spec.resourceClaims[2].resourceClaimTemplateName"
            ),
        ]
    );
}

// ------------------------------------------------------------------------------------------
// Properties
// ------------------------------------------------------------------------------------------

/// A DNS label: 1 to 63 bytes, alphanumeric at both ends.
fn label() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z0-9]", "[a-z0-9][a-z0-9-]{0,61}[a-z0-9]", "[a-z]{1,3}",]
}

/// A DNS subdomain: labels joined by dots, at most 253 bytes.
fn subdomain() -> impl Strategy<Value = String> {
    proptest::collection::vec(label(), 1..6)
        .prop_map(|labels| labels.join("."))
        .prop_filter("at most 253 bytes", |s| s.len() <= 253)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn generated_names_are_valid_and_injective(
        pairs in proptest::collection::vec((subdomain(), label()), 1..48),
        ns in label(),
    ) {
        let mut by_name = std::collections::BTreeMap::new();
        for (pod, claim) in &pairs {
            prop_assert_eq!(validate_dns_subdomain(pod), Ok(()));
            prop_assert_eq!(validate_dns_label(claim), Ok(()));
            for (kind, name) in [
                ("pod", generated_claim_name(&ns, pod, claim)),
                ("group", generated_group_claim_name(&ns, pod, claim)),
            ] {
                prop_assert!(name.len() <= 62, "{}", name);
                prop_assert_eq!(validate_dns_subdomain(&name), Ok(()), "{}", name);
                let key = (kind, pod.clone(), claim.clone());
                if let Some(prev) = by_name.insert(name.clone(), key.clone()) {
                    prop_assert_eq!(prev, key, "{} for two pairs", name);
                }
            }
        }
    }
}
