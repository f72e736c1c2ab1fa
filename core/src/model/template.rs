//! ResourceClaimTemplates (resource.k8s.io/v1) and the claims the resourceclaim
//! controller generates from them: one per pod claim entry that names a template, and
//! (KEP-5729) one per PodGroup claim entry that names a template, shared by the group's
//! pods.
//!
//! Upstream the controller asks the API server for a name (`generateName`), which appends
//! five random characters, and records the result in the pod's
//! `status.resourceClaimStatuses`. gangpack never reads randomness or clocks and does
//! not model pod status, so it derives the five characters from the owner and the claim
//! entry ([`generated_claim_name`]) and writes the generated name into a copy of the
//! owner, as a `resourceClaimName` source. The result can go straight to
//! [`Cluster::place_gang`](crate::Cluster::place_gang), which only reads claims by name.
//!
//! ```
//! use gangpack::{
//!     ClaimSource, DeviceRequest, ExactDeviceRequest, Pod, PodResourceClaim,
//!     ResourceClaimTemplate, instantiate_pod_claims,
//! };
//!
//! let mut template = ResourceClaimTemplate::new("team-a", "one-gpu");
//! template
//!     .spec
//!     .requests
//!     .push(DeviceRequest::exactly("gpu", ExactDeviceRequest::new("gpu.example.com")));
//!
//! let mut pod = Pod::new("team-a", "trainer-0");
//! pod.resource_claims.push(PodResourceClaim {
//!     name: "gpu".into(),
//!     source: ClaimSource::Template("one-gpu".into()),
//! });
//!
//! let (pod, claims) = instantiate_pod_claims(&pod, &[template]).unwrap();
//! assert_eq!(claims.len(), 1);
//! assert!(claims[0].name.starts_with("trainer-0-gpu-"));
//! assert_eq!(pod.resource_claims[0].source, ClaimSource::ClaimName(claims[0].name.clone()));
//! assert!(claims[0].validate().is_ok());
//! ```

use crate::alloc_prelude::*;
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError, check_name};
use crate::model::names;
use crate::{ClaimSource, Pod, PodGroup, ResourceClaim, ResourceClaimSpec};

// ---------------------------------------------------------------------------------------------
// The template
// ---------------------------------------------------------------------------------------------

/// A ResourceClaimTemplate: the spec of the claims the control plane generates for the
/// pods (or PodGroups) that name it.
///
/// `spec.metadata` (labels and annotations copied onto generated claims upstream) is not
/// modelled, because [`ResourceClaim`] does not model them either.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct ResourceClaimTemplate {
    /// `metadata.namespace`: templates are only used by pods and PodGroups of this
    /// namespace.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.spec.devices`: copied verbatim into every generated claim.
    pub spec: ResourceClaimSpec,
}

impl ResourceClaimTemplate {
    /// A template whose claims request nothing.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> ResourceClaimTemplate {
        ResourceClaimTemplate {
            namespace: namespace.into(),
            name: name.into(),
            spec: ResourceClaimSpec::default(),
        }
    }

    /// The object reference used in errors.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::namespaced(
            ObjectKind::ResourceClaimTemplate,
            self.namespace.clone(),
            self.name.clone(),
        )
    }

    /// Checks the template as the API server does (`ValidateResourceClaimTemplate`),
    /// returning every problem: `metadata.name` a DNS subdomain, `metadata.namespace` a
    /// DNS label, and the claim spec by the rules of [`ResourceClaim::validate`], reported
    /// under `spec.spec.devices` (`spec.spec.devices.requests[0].name`).
    ///
    /// ```
    /// use gangpack::{DeviceRequest, ExactDeviceRequest, ResourceClaimTemplate};
    ///
    /// let mut t = ResourceClaimTemplate::new("team-a", "one-gpu");
    /// t.spec.requests.push(DeviceRequest::exactly("GPU", ExactDeviceRequest::new("gpu.example.com")));
    /// let errs = t.validate().unwrap_err();
    /// assert_eq!(errs[0].field, "spec.spec.devices.requests[0].name");
    /// assert!(errs[0].to_string().starts_with("ResourceClaimTemplate \"team-a/one-gpu\": "));
    /// ```
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
        check_name(
            &obj,
            "metadata.namespace",
            &self.namespace,
            names::validate_dns_label,
            &mut errs,
        );
        self.spec
            .validate_into(&obj, "spec.spec.devices", &mut errs);
        crate::model::error::finish(errs)
    }
}

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

/// Upstream controller: the longest `generateName` it passes before truncating ("leave
/// space for hyphen and 5 random characters in a name with 63 characters").
const MAX_BASE_LEN: usize = 57;
/// The API server's `generateName` suffix length.
const SUFFIX_LEN: usize = 5;
/// The API server's random alphabet (`k8s.io/apimachinery/pkg/util/rand`): no vowels and
/// no `0`, `1`, `3` (read as `o`, `l`, `e`), so that no words are spelled.
const ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

/// The name of the claim generated for the pod claim entry `claim` of pod
/// `namespace/pod`: `<pod>-<claim>-` followed by five characters of the API server's
/// `generateName` alphabet, at most 62 bytes.
///
/// The prefix is the resourceclaim controller's: when `<pod>-<claim>-` is longer than
/// 57 bytes, both names are cut, each in proportion to its length, and joined by one
/// `-` (upstream drops the trailing `-` then). Upstream the API server appends five
/// *random* characters; here they are a hash (64-bit FNV-1a of `namespace/pod/claim`,
/// then a mixing step) written in the same alphabet, so the same inputs always give the
/// same name, natively and in wasm.
///
/// Two deliberate differences keep every name valid where upstream's would be refused by
/// the API server: a cut pod name that ends in `.` loses the dot (`a.b` cut to `a.`
/// would give `a.-claim`), and a pod name cut to nothing loses its `-` (a one-character
/// pod with a claim name of 55 characters or more).
///
/// For a valid pod name (a DNS subdomain) and a valid claim entry name (a DNS label) the
/// result is a valid claim name (a DNS subdomain). Distinct (pod, claim) pairs of one
/// namespace get distinct names unless they share the prefix *and* the five characters;
/// with a cut prefix the pairs that share it are told apart by the five characters alone
/// (27^5 ≈ 1.4e7 values; about one chance in 30 of a clash among 1,000 such pods), a
/// clash the API server avoids by drawing again.
///
/// ```
/// use gangpack::generated_claim_name;
///
/// let name = generated_claim_name("team-a", "trainer-0", "gpu");
/// assert_eq!(name.len(), "trainer-0-gpu-".len() + 5);
/// assert!(name.starts_with("trainer-0-gpu-"));
/// assert_eq!(name, generated_claim_name("team-a", "trainer-0", "gpu"));
/// assert_ne!(name, generated_claim_name("team-a", "trainer-1", "gpu"));
///
/// let long = generated_claim_name("team-a", &"p".repeat(253), "gpu");
/// assert!(long.len() <= 62);
/// ```
pub fn generated_claim_name(namespace: &str, pod: &str, claim: &str) -> String {
    generate(namespace, pod, claim, false)
}

/// The name of the claim generated for the PodGroup claim entry `claim` of PodGroup
/// `namespace/group` (KEP-5729): the scheme of [`generated_claim_name`] with the
/// PodGroup's name in place of the pod's.
///
/// The five characters hash the owner's kind as well, so a pod and a PodGroup that share
/// a name and a claim entry name still get different claims.
///
/// ```
/// use gangpack::{generated_claim_name, generated_group_claim_name};
///
/// let name = generated_group_claim_name("team-a", "trainer", "fabric");
/// assert!(name.starts_with("trainer-fabric-"));
/// assert_ne!(name, generated_claim_name("team-a", "trainer", "fabric"));
/// ```
pub fn generated_group_claim_name(namespace: &str, group: &str, claim: &str) -> String {
    generate(namespace, group, claim, true)
}

fn generate(namespace: &str, owner: &str, claim: &str, group: bool) -> String {
    // Upstream: generateName := pod.Name + "-" + podClaim.Name + "-", cut proportionally
    // (both parts use the uncut length) when longer than maxBaseLen.
    let full = owner.len() + claim.len() + 2;
    let mut name = String::with_capacity(MAX_BASE_LEN + SUFFIX_LEN + 1);
    if full <= MAX_BASE_LEN {
        name.push_str(owner);
        name.push('-');
        name.push_str(claim);
        name.push('-');
    } else {
        // DIVERGENCE: upstream keeps a trailing `.` and a leading `-`, which the API
        // server then refuses; see `generated_claim_name`.
        let owner_part = prefix(owner, owner.len() * MAX_BASE_LEN / full).trim_end_matches('.');
        let claim_part = prefix(claim, claim.len() * MAX_BASE_LEN / full);
        name.push_str(owner_part);
        if !owner_part.is_empty() {
            name.push('-');
        }
        name.push_str(claim_part);
    }
    let mut h = Fnv1a::new();
    if group {
        // A fourth component: names never contain `/`, so this input differs from every
        // pod's `namespace/pod/claim`.
        h.write(b"podgroup/");
    }
    h.write(namespace.as_bytes());
    h.write(b"/");
    h.write(owner.as_bytes());
    h.write(b"/");
    h.write(claim.as_bytes());
    let mut v = mix64(h.0);
    for _ in 0..SUFFIX_LEN {
        name.push(char::from(ALPHABET[(v % 27) as usize]));
        v /= 27;
    }
    name
}

/// The longest prefix of `s` of at most `len` bytes that ends on a character boundary
/// (valid names are ASCII, so this is `&s[..len]` for them).
fn prefix(s: &str, len: usize) -> &str {
    let mut end = len.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// 64-bit FNV-1a.
struct Fnv1a(u64);

impl Fnv1a {
    fn new() -> Fnv1a {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The SplitMix64 finalizer: FNV's last bytes barely reach the high bits, and the suffix
/// reads all of them.
fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

// ---------------------------------------------------------------------------------------------
// Instantiation
// ---------------------------------------------------------------------------------------------

/// What the resourceclaim controller does for a pod, deterministically: for every entry of
/// `spec.resourceClaims` that names a template, a claim called
/// [`generated_claim_name`]`(namespace, pod, entry)` in the pod's namespace with the
/// template's spec, and a copy of the pod in which that entry names the claim
/// (`resourceClaimName`). Other entries, and the order of all entries, are kept.
///
/// Templates are looked up by name in the pod's namespace only (the first match wins).
/// Nothing is half-applied: on any problem only the errors are returned, all of them:
///
/// * the pod's own problems ([`Pod::validate`]), since names are built from its fields;
/// * `spec.resourceClaims[i].resourceClaimTemplateName`: [`Problem::NotFound`] when no
///   template of that name exists in the pod's namespace;
/// * a used template's problems ([`ResourceClaimTemplate::validate`]), once per template.
///
/// Every returned claim passes [`ResourceClaim::validate`].
///
/// A pod that shares its PodGroup's claims (an entry with the same name and source as
/// one of the group's, see [`PodGroup::group_claim_for`]) needs
/// [`instantiate_member_claims`] instead: this function gives every template entry a
/// claim of the pod's own.
pub fn instantiate_pod_claims(
    pod: &Pod,
    templates: &[ResourceClaimTemplate],
) -> Result<(Pod, Vec<ResourceClaim>), Vec<ValidationError>> {
    instantiate_pod(pod, None, templates)
}

/// [`instantiate_pod_claims`] for a member of `group` (the group as written, before
/// [`instantiate_group_claims`]): an entry that names a template and resolves to one of
/// the group's claims ([`PodGroup::group_claim_for`]: same name, same template) names
/// the group's generated claim, [`generated_group_claim_name`]`(namespace, group,
/// entry)`, and gets no claim of its own; the group's claim comes from
/// [`instantiate_group_claims`]. The pod and the group must both be valid; the
/// group's errors are returned too.
///
/// The group's claims apply only to a member: a pod in the group's namespace whose
/// `spec.schedulingGroup.podGroupName` names it. For any other pod this is
/// [`instantiate_pod_claims`] (plus the group's validation).
///
/// ```
/// use gangpack::{
///     ClaimSource, Pod, PodGroup, PodGroupResourceClaim, PodResourceClaim, ResourceClaimTemplate,
///     SchedulingPolicy, instantiate_group_claims, instantiate_member_claims,
/// };
///
/// let templates = [ResourceClaimTemplate::new("team-a", "fabric")];
/// let mut group = PodGroup::new("team-a", "trainer", SchedulingPolicy::Gang { min_count: 2 });
/// group.resource_claims.push(PodGroupResourceClaim {
///     name: "fabric".into(),
///     source: ClaimSource::Template("fabric".into()),
/// });
/// let mut pod = Pod::new("team-a", "trainer-0");
/// pod.scheduling_group = Some("trainer".into());
/// pod.resource_claims.push(PodResourceClaim {
///     name: "fabric".into(),
///     source: ClaimSource::Template("fabric".into()),
/// });
///
/// let (new_group, group_claims) = instantiate_group_claims(&group, &templates).unwrap();
/// let (new_pod, pod_claims) = instantiate_member_claims(&pod, &group, &templates).unwrap();
/// assert!(pod_claims.is_empty());
/// assert_eq!(
///     new_pod.resource_claims[0].source,
///     ClaimSource::ClaimName(group_claims[0].name.clone())
/// );
/// assert!(new_group.group_claim_for(&new_pod.resource_claims[0]).is_some());
/// ```
pub fn instantiate_member_claims(
    pod: &Pod,
    group: &PodGroup,
    templates: &[ResourceClaimTemplate],
) -> Result<(Pod, Vec<ResourceClaim>), Vec<ValidationError>> {
    instantiate_pod(pod, Some(group), templates)
}

/// What the resourceclaim controller does for a PodGroup (KEP-5729), deterministically:
/// for every entry of `spec.resourceClaims` that names a template, one claim for the
/// whole group called [`generated_group_claim_name`]`(namespace, group, entry)`, and a
/// copy of the group in which that entry names the claim. Other entries, and the order
/// of all entries, are kept.
///
/// Lookup and errors are as for [`instantiate_pod_claims`], with the group's own problems
/// from [`PodGroup::validate`] and [`Problem::NotFound`] reported at
/// `spec.resourceClaims[i].resourceClaimTemplateName` of the PodGroup. Every returned
/// claim passes [`ResourceClaim::validate`].
///
/// Pods keep naming the template: instantiate them with [`instantiate_member_claims`]
/// and the original group, so that they name the group's claim.
pub fn instantiate_group_claims(
    group: &PodGroup,
    templates: &[ResourceClaimTemplate],
) -> Result<(PodGroup, Vec<ResourceClaim>), Vec<ValidationError>> {
    let obj = group.object_ref();
    let mut errs = group.validate().err().unwrap_or_default();
    let mut generator = Generator::new(&group.namespace, templates);
    let mut out = group.clone();
    for (i, entry) in out.resource_claims.iter_mut().enumerate() {
        let ClaimSource::Template(t) = &entry.source else {
            continue;
        };
        let name = generated_group_claim_name(&group.namespace, &group.name, &entry.name);
        generator.claim(&obj, i, t, name.clone(), &mut errs);
        entry.source = ClaimSource::ClaimName(name);
    }
    if errs.is_empty() {
        Ok((out, generator.claims))
    } else {
        Err(errs)
    }
}

fn instantiate_pod(
    pod: &Pod,
    group: Option<&PodGroup>,
    templates: &[ResourceClaimTemplate],
) -> Result<(Pod, Vec<ResourceClaim>), Vec<ValidationError>> {
    let obj = pod.object_ref();
    let mut errs = pod.validate().err().unwrap_or_default();
    if let Some(g) = group
        && let Err(e) = g.validate()
    {
        errs.extend(e);
    }
    let shared_with = group.filter(|g| {
        pod.namespace == g.namespace && pod.scheduling_group.as_deref() == Some(g.name.as_str())
    });
    let mut generator = Generator::new(&pod.namespace, templates);
    let mut out = pod.clone();
    for (i, entry) in out.resource_claims.iter_mut().enumerate() {
        let ClaimSource::Template(t) = &entry.source else {
            continue;
        };
        let name = if let Some(g) = shared_with.filter(|g| g.group_claim_for(entry).is_some()) {
            generated_group_claim_name(&g.namespace, &g.name, &entry.name)
        } else {
            let name = generated_claim_name(&pod.namespace, &pod.name, &entry.name);
            generator.claim(&obj, i, t, name.clone(), &mut errs);
            name
        };
        entry.source = ClaimSource::ClaimName(name);
    }
    if errs.is_empty() {
        Ok((out, generator.claims))
    } else {
        Err(errs)
    }
}

/// Generates claims from the templates of one namespace, reporting each bad template
/// once.
struct Generator<'a> {
    namespace: &'a str,
    templates: &'a [ResourceClaimTemplate],
    /// Templates already validated (and reported, if invalid).
    checked: BTreeSet<&'a str>,
    claims: Vec<ResourceClaim>,
}

impl<'a> Generator<'a> {
    fn new(namespace: &'a str, templates: &'a [ResourceClaimTemplate]) -> Generator<'a> {
        Generator {
            namespace,
            templates,
            checked: BTreeSet::new(),
            claims: Vec::new(),
        }
    }

    /// Adds the claim `name` from template `template`, named by entry `i` of `owner`.
    fn claim(
        &mut self,
        owner: &ObjectRef,
        i: usize,
        template: &str,
        name: String,
        errs: &mut Vec<ValidationError>,
    ) {
        let Some(t) = self
            .templates
            .iter()
            .find(|t| t.namespace == self.namespace && t.name == template)
        else {
            errs.push(ValidationError::new(
                owner.clone(),
                format!("spec.resourceClaims[{i}].resourceClaimTemplateName"),
                Problem::NotFound {
                    value: template.to_owned(),
                },
            ));
            return;
        };
        if self.checked.insert(t.name.as_str())
            && let Err(e) = t.validate()
        {
            errs.extend(e);
        }
        let mut claim = ResourceClaim::new(self.namespace, name);
        claim.spec = t.spec.clone();
        self.claims.push(claim);
    }
}

#[cfg(test)]
mod tests {
    use super::{ALPHABET, MAX_BASE_LEN, generated_claim_name, prefix};
    use crate::alloc_prelude::*;

    #[test]
    fn upstream_prefix() {
        // Short: `<pod>-<claim>-` as is.
        assert!(generated_claim_name("ns", "pod", "gpu").starts_with("pod-gpu-"));
        // 60 + 10 + 2 = 72 > 57: the pod keeps 60 * 57 / 72 = 47 bytes, the claim
        // 10 * 57 / 72 = 7, joined by one `-`, no trailing `-`.
        let pod = "p".repeat(60);
        let name = generated_claim_name("ns", &pod, "claimnamex");
        assert_eq!(&name[..55], format!("{}-claimna", "p".repeat(47)));
        assert_eq!(name.len(), 55 + 5);
        assert!(name[55..].bytes().all(|b| ALPHABET.contains(&b)));
        // Exactly 57 is not cut.
        let pod = "q".repeat(MAX_BASE_LEN - 5);
        assert!(generated_claim_name("ns", &pod, "abc").starts_with(&format!("{pod}-abc-")));
    }

    #[test]
    fn prefix_respects_char_boundaries() {
        assert_eq!(prefix("aé", 2), "a");
        assert_eq!(prefix("abc", 9), "abc");
        // Not valid names, but no panic.
        let _ = generated_claim_name("ns", &"é".repeat(100), "ü");
    }
}
