//! Typical workload shapes: the requests a cluster expects next, with their relative
//! frequencies, against which the Stranding and FGD measures score a node (see
//! `cluster/scores.rs`).
//!
//! A [`TypicalShape`] is one kind of pod as the scheduler sees it: its CPU and memory
//! requests and its first device request (class, count, per-device capacity, selectors),
//! plus, for a gang shape, how many such pods come together and the topology key they
//! share. A [`ShapeMix`] is a list of them, given explicitly (an API call, a
//! `--workload-mix` file) or observed from the pods and claims the engine holds
//! ([`ShapeMix::observe`]). [`StrandingWeights`] are the Stranding policy's four term
//! weights, as integers so that policies stay `Eq`.
//!
//! Plain data only: resolving a mix against a cluster (which devices each shape may use,
//! how much of a device its capacity takes) happens in the cluster layer.
//!
//! ```
//! use gangpack::{Quantity, ShapeMix, TypicalShape};
//!
//! let mut half = TypicalShape::new("gpu.example.com");
//! half.weight = 3;
//! half.cpu = Quantity::parse("4")?;
//! half.memory = Quantity::parse("16Gi")?;
//! half.capacity.insert("milli".into(), Quantity::parse("500")?);
//! let mix = ShapeMix { shapes: vec![half, TypicalShape::new("gpu.example.com")] };
//! assert!(mix.validate().is_ok());
//! assert_eq!(mix.weight_sum(), 4);
//! # Ok::<(), gangpack::QuantityError>(())
//! ```

use crate::alloc_prelude::*;
use crate::model::class::{DeviceSelector, validate_selectors};
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError, check_name, finish};
use crate::model::names;
use crate::model::template::{generated_claim_name, generated_group_claim_name};
use crate::{AllocationMode, ClaimSource, Pod, Quantity, ResourceClaim};

/// One typical request shape and its relative frequency: `pods` pods (one, or a gang's
/// worth in one `topology_key` domain), each requesting `cpu`, `memory` and `count`
/// devices of class `device_class_name` that satisfy `selectors` and provide
/// `capacity` (which, on a shareable device, the pod consumes).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct TypicalShape {
    /// Relative frequency (any positive scale: pods counted, or per mille).
    pub weight: u32,
    /// CPU each pod requests (`requests["cpu"]`).
    pub cpu: Quantity,
    /// Memory each pod requests (`requests["memory"]`).
    pub memory: Quantity,
    /// The class of the devices each pod requests.
    pub device_class_name: String,
    /// Devices each pod requests (`allocationMode: ExactCount`, `count`).
    pub count: u32,
    /// Per device, capacity name → amount requested (`capacity.requests`); on a
    /// shareable device, what the pod consumes of it. Empty asks for the devices'
    /// default requests (a whole GPU on a device shared by capacity).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "BTreeMap::is_empty"))]
    pub capacity: BTreeMap<String, Quantity>,
    /// CEL selectors every device must satisfy besides the class's (e.g. a GPU model).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Vec::is_empty"))]
    pub selectors: Vec<DeviceSelector>,
    /// Pods that come together (1 for a single pod; a gang's size otherwise).
    pub pods: u32,
    /// The node label whose domain a gang shape's pods share (only with `pods > 1`).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub topology_key: Option<String>,
}

impl TypicalShape {
    /// One pod asking for one device of class `device_class_name`, weight 1, no CPU,
    /// memory, capacity or selectors.
    pub fn new(device_class_name: impl Into<String>) -> TypicalShape {
        TypicalShape {
            weight: 1,
            cpu: Quantity::ZERO,
            memory: Quantity::ZERO,
            device_class_name: device_class_name.into(),
            count: 1,
            capacity: BTreeMap::new(),
            selectors: Vec::new(),
            pods: 1,
            topology_key: None,
        }
    }

    fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        for (name, value) in [
            ("weight", self.weight),
            ("count", self.count),
            ("pods", self.pods),
        ] {
            if value == 0 {
                errs.push(ValidationError::new(
                    obj.clone(),
                    format!("{path}.{name}"),
                    Problem::Invalid {
                        value: "0".into(),
                        reason: "must be at least 1",
                    },
                ));
            }
        }
        for (name, q) in [("cpu", self.cpu), ("memory", self.memory)] {
            check_not_negative(obj, &format!("{path}.{name}"), q, errs);
        }
        check_name(
            obj,
            &format!("{path}.deviceClassName"),
            &self.device_class_name,
            names::validate_dns_subdomain,
            errs,
        );
        for (name, amount) in &self.capacity {
            let field = format!("{path}.capacity[\"{name}\"]");
            check_name(obj, &field, name, names::validate_qualified_name, errs);
            check_not_negative(obj, &field, *amount, errs);
        }
        validate_selectors(obj, &format!("{path}.selectors"), &self.selectors, errs);
        if let Some(key) = &self.topology_key {
            let field = format!("{path}.topologyKey");
            if self.pods <= 1 {
                errs.push(ValidationError::new(
                    obj.clone(),
                    field,
                    Problem::Forbidden {
                        reason: "only a shape of more than one pod shares a topology domain",
                    },
                ));
            } else {
                check_name(obj, &field, key, names::validate_label_name, errs);
            }
        }
    }
}

/// [`TypicalShape::new`] with an empty class (which [`ShapeMix::validate`] refuses);
/// serde fills missing fields from it, so `pods` and `count` default to 1.
impl Default for TypicalShape {
    fn default() -> TypicalShape {
        TypicalShape::new("")
    }
}

fn check_not_negative(obj: &ObjectRef, field: &str, q: Quantity, errs: &mut Vec<ValidationError>) {
    if q.is_negative() {
        errs.push(ValidationError::new(
            obj.clone(),
            field,
            Problem::Invalid {
                value: q.to_string(),
                reason: "must not be negative",
            },
        ));
    }
}

/// The typical shapes a measure sums over, in this order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ShapeMix {
    /// The shapes.
    pub shapes: Vec<TypicalShape>,
}

/// The object [`ShapeMix::validate`] reports against: no Kubernetes kind holds a
/// workload mix; it parameterises the placement of PodGroups, hence the kind (as for
/// `WorkloadMix`).
const MIX_OBJECT: &str = "workload mix";

impl ShapeMix {
    /// The most shapes a mix may have. The openb trace variants have 111 to 366
    /// distinct GPU task shapes.
    pub const MAX_SHAPES: usize = 1024;

    /// The sum of the shapes' weights (exact: at most [`ShapeMix::MAX_SHAPES`] × `u32`
    /// in a valid mix; saturating beyond).
    pub fn weight_sum(&self) -> u64 {
        self.shapes
            .iter()
            .fold(0u64, |s, t| s.saturating_add(u64::from(t.weight)))
    }

    /// Checks the mix: at least one and at most [`ShapeMix::MAX_SHAPES`] shapes; per
    /// shape a `weight`, `count` and `pods` of at least 1, a non-negative `cpu`, `memory`
    /// and capacity amounts, a valid `deviceClassName` and capacity names, selectors
    /// within upstream's limits, and a `topologyKey` (a label name) only on a shape of
    /// more than one pod.
    ///
    /// Errors name the pseudo-object `PodGroup "workload mix"` and field paths from the
    /// mix's root (`shapes[2].count`). Use [`ShapeMix::validate_at`] to report against
    /// another object or path (a policy's, a file's).
    ///
    /// ```
    /// use gangpack::{ShapeMix, TypicalShape};
    ///
    /// let mut shape = TypicalShape::new("gpu.example.com");
    /// shape.count = 0;
    /// let errs = ShapeMix { shapes: vec![shape] }.validate().unwrap_err();
    /// assert_eq!(errs[0].field, "shapes[0].count");
    /// assert_eq!(
    ///     errs[0].to_string(),
    ///     "PodGroup \"workload mix\": shapes[0].count: invalid value \"0\": must be at least 1"
    /// );
    /// ```
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        self.validate_at(&ObjectRef::cluster(ObjectKind::PodGroup, MIX_OBJECT), "")
    }

    /// [`ShapeMix::validate`], reporting against `object` with field paths under `path`
    /// (the mix's own path, e.g. `policy.stranding.mix.given`; the shapes are at
    /// `<path>.shapes`, or at `shapes` when `path` is empty).
    pub fn validate_at(&self, object: &ObjectRef, path: &str) -> Result<(), Vec<ValidationError>> {
        let mut errs = Vec::new();
        let shapes = if path.is_empty() {
            "shapes".to_owned()
        } else {
            format!("{path}.shapes")
        };
        if self.shapes.is_empty() {
            errs.push(ValidationError::new(
                object.clone(),
                shapes.as_str(),
                Problem::Required,
            ));
        } else if self.shapes.len() > Self::MAX_SHAPES {
            errs.push(ValidationError::new(
                object.clone(),
                shapes.as_str(),
                Problem::TooMany {
                    max: Self::MAX_SHAPES,
                    actual: self.shapes.len(),
                },
            ));
            return finish(errs);
        }
        for (i, s) in self.shapes.iter().enumerate() {
            s.validate(object, &format!("{shapes}[{i}]"), &mut errs);
        }
        finish(errs)
    }

    /// The mix of `pods`: each pod that requests devices counts once for its shape,
    /// read from its first claim that has a request (looked up in `claims`, the claims
    /// of any namespace) and that claim's first request, first alternative. Pods without
    /// such a claim (CPU-only pods, or whose claims are not in `claims`) are left out,
    /// as are requests with `allocationMode: All`, which have no typical size.
    ///
    /// A pod's claim is found by `resourceClaimName`, or, for a template, under the name
    /// the control plane generates for the pod ([`generated_claim_name`]) and then for
    /// its PodGroup ([`generated_group_claim_name`]). Every shape has `pods: 1`: gang
    /// shapes need the PodGroups, which this does not read.
    ///
    /// The shapes come out in a fixed order (class, count, selectors, capacity, CPU,
    /// memory), so the result does not depend on the order of `pods`. When there are
    /// more than [`ShapeMix::MAX_SHAPES`] distinct shapes, the most frequent are kept
    /// (ties to the earlier in that order).
    ///
    /// ```
    /// use gangpack::{
    ///     ClaimSource, DeviceRequest, ExactDeviceRequest, Pod, PodResourceClaim, Quantity,
    ///     ResourceClaim, ShapeMix,
    /// };
    ///
    /// let mut claim = ResourceClaim::new("team-a", "gpu-0");
    /// claim.spec.requests.push(DeviceRequest::exactly("gpu", ExactDeviceRequest::new("gpu.example.com")));
    /// let mut pod = Pod::new("team-a", "trainer-0");
    /// pod.requests.insert("cpu".into(), Quantity::parse("4")?);
    /// pod.resource_claims.push(PodResourceClaim {
    ///     name: "gpu".into(),
    ///     source: ClaimSource::ClaimName("gpu-0".into()),
    /// });
    /// let cpu_only = Pod::new("team-a", "web");
    ///
    /// let mix = ShapeMix::observe([&pod, &pod, &cpu_only], &[claim]);
    /// assert_eq!(mix.shapes.len(), 1);
    /// assert_eq!(mix.shapes[0].weight, 2);
    /// assert_eq!(mix.shapes[0].cpu, Quantity::parse("4")?);
    /// assert_eq!(mix.shapes[0].device_class_name, "gpu.example.com");
    /// # Ok::<(), gangpack::QuantityError>(())
    /// ```
    pub fn observe<'a, 'c>(
        pods: impl IntoIterator<Item = &'a Pod>,
        claims: impl IntoIterator<Item = &'c ResourceClaim>,
    ) -> ShapeMix {
        let by_name: BTreeMap<(&str, &str), &ResourceClaim> = claims
            .into_iter()
            .map(|c| ((c.namespace.as_str(), c.name.as_str()), c))
            .collect();
        let mut counts: BTreeMap<ShapeKey, u32> = BTreeMap::new();
        for pod in pods {
            if let Some(key) = shape_of(pod, &by_name) {
                let n = counts.entry(key).or_default();
                *n = n.saturating_add(1);
            }
        }
        let mut shapes: Vec<(ShapeKey, u32)> = counts.into_iter().collect();
        if shapes.len() > Self::MAX_SHAPES {
            // The heaviest, ties to the earlier key; then back to key order.
            let mut order: Vec<usize> = (0..shapes.len()).collect();
            order.sort_by_key(|&i| core::cmp::Reverse(shapes[i].1));
            order.truncate(Self::MAX_SHAPES);
            order.sort_unstable();
            let mut keep = vec![false; shapes.len()];
            for i in order {
                keep[i] = true;
            }
            let mut i = 0;
            shapes.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
        ShapeMix {
            shapes: shapes
                .into_iter()
                .map(|(k, weight)| TypicalShape {
                    weight,
                    cpu: k.cpu,
                    memory: k.memory,
                    device_class_name: k.class,
                    count: k.count,
                    capacity: k.capacity,
                    selectors: k
                        .selectors
                        .into_iter()
                        .map(|cel| DeviceSelector { cel })
                        .collect(),
                    pods: 1,
                    topology_key: None,
                })
                .collect(),
        }
    }
}

/// What [`ShapeMix::observe`] groups pods by, in output order.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct ShapeKey {
    class: String,
    count: u32,
    /// The selectors' CEL text.
    selectors: Vec<String>,
    capacity: BTreeMap<String, Quantity>,
    cpu: Quantity,
    memory: Quantity,
}

/// `pod`'s shape: its first claim (found in `claims`) that has a request, that claim's
/// first request, first alternative; `None` without one, or for `allocationMode: All`.
fn shape_of(pod: &Pod, claims: &BTreeMap<(&str, &str), &ResourceClaim>) -> Option<ShapeKey> {
    let ns = pod.namespace.as_str();
    let find = |name: &str| claims.get(&(ns, name)).copied();
    let claim = pod.resource_claims.iter().find_map(|entry| {
        let claim = match &entry.source {
            ClaimSource::ClaimName(name) => find(name),
            ClaimSource::Template(_) => find(&generated_claim_name(ns, &pod.name, &entry.name))
                .or_else(|| {
                    let group = pod.scheduling_group.as_deref()?;
                    find(&generated_group_claim_name(ns, group, &entry.name))
                }),
        }?;
        (!claim.spec.requests.is_empty()).then_some(claim)
    })?;
    let alternatives = claim.spec.requests[0].alternatives();
    let request = alternatives.first()?;
    let AllocationMode::ExactCount(count) = request.allocation_mode else {
        return None;
    };
    let quantity = |name: &str| pod.requests.get(name).copied().unwrap_or(Quantity::ZERO);
    Some(ShapeKey {
        class: request.device_class_name.to_owned(),
        count,
        selectors: request.selectors.iter().map(|s| s.cel.clone()).collect(),
        capacity: request.capacity.clone(),
        cpu: quantity("cpu"),
        memory: quantity("memory"),
    })
}

/// The Stranding policy's term weights, in fixed point so that policies compare and
/// hash exactly. The defaults are the values tuned on the openb traces (see
/// `docs/QUALITY.md`): a fill weight of 2, a packing tie-break of 0.001 per milli-GPU,
/// a balance weight of 20 and a scarcity weight of 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct StrandingWeights {
    /// The filling term (GPU left over after as many copies of a shape as the node's
    /// GPUs, CPU and memory allow) against FGD's term, in thousandths. 0.5 loses to FGD
    /// on `default`, 1 on `gpushare60` and `gpuspec20`; 2 was the best of 0.5, 1, 1.5
    /// and 2 on the GPU-sharing-heavy traces.
    pub fill_milli: u32,
    /// The packing tie-break, stranding units per milli-GPU left free, in millionths.
    /// 0.01 already trades stranding for packing and loses on `gpuspec20`.
    pub pack_micro: u32,
    /// The CPU and memory balance term (stranding units per milli-GPU of deficit), in
    /// thousandths. Results are flat from 10 to 200; 1 is too little.
    pub balance_milli: u32,
    /// The model scarcity term, in thousandths. 0.3 and 0.5 leave `gpuspec20` at 5.0 %
    /// and 4.8 % unallocated, 1 at 4.1 %, 2 at 4.2 %.
    pub scarcity_milli: u32,
}

impl Default for StrandingWeights {
    fn default() -> StrandingWeights {
        StrandingWeights {
            fill_milli: 2000,
            pack_micro: 1000,
            balance_milli: 20_000,
            scarcity_milli: 1000,
        }
    }
}

impl StrandingWeights {
    /// The weights as the measure uses them: `(fill, pack, balance, scarcity)`. Each is
    /// one correctly rounded division, so the defaults are exactly `2.0`, `0.001`,
    /// `20.0` and `1.0`.
    ///
    /// ```
    /// use gangpack::StrandingWeights;
    ///
    /// assert_eq!(StrandingWeights::default().as_f64(), (2.0, 0.001, 20.0, 1.0));
    /// ```
    pub fn as_f64(self) -> (f64, f64, f64, f64) {
        (
            f64::from(self.fill_milli) / 1e3,
            f64::from(self.pack_micro) / 1e6,
            f64::from(self.balance_milli) / 1e3,
            f64::from(self.scarcity_milli) / 1e3,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DeviceRequest, DeviceSubRequest, ExactDeviceRequest, PodResourceClaim};

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    fn shape(class: &str) -> TypicalShape {
        TypicalShape::new(class)
    }

    fn fields(mix: &ShapeMix) -> Vec<String> {
        mix.validate()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.field)
            .collect()
    }

    #[test]
    fn a_valid_mix_passes() {
        let mut gang = shape("gpu.example.com");
        gang.pods = 8;
        gang.count = 8;
        gang.topology_key = Some("topology.gangpack.io/rack".into());
        gang.selectors.push(DeviceSelector {
            cel: "device.attributes[\"gpu.openb.sim\"].model == \"V100M32\"".into(),
        });
        let mut share = shape("gpu.example.com");
        share.capacity.insert("milli".into(), q("500"));
        share.cpu = q("4");
        share.memory = q("16Gi");
        let mix = ShapeMix {
            shapes: vec![gang, share],
        };
        assert_eq!(mix.validate(), Ok(()));
    }

    #[test]
    fn every_bad_field_is_named() {
        let mut bad = shape("Not_A_Class");
        bad.weight = 0;
        bad.count = 0;
        bad.pods = 0;
        bad.cpu = q("-1");
        bad.memory = q("-1Mi");
        bad.capacity.insert("bad key!".into(), q("-5"));
        bad.selectors.push(DeviceSelector { cel: " ".into() });
        bad.topology_key = Some("rack".into());
        let mut gang = shape("gpu");
        gang.pods = 2;
        gang.topology_key = Some("-bad-".into());
        let mix = ShapeMix {
            shapes: vec![shape("gpu"), bad, gang],
        };
        assert_eq!(
            fields(&mix),
            [
                "shapes[1].weight",
                "shapes[1].count",
                "shapes[1].pods",
                "shapes[1].cpu",
                "shapes[1].memory",
                "shapes[1].deviceClassName",
                "shapes[1].capacity[\"bad key!\"]",
                "shapes[1].capacity[\"bad key!\"]",
                "shapes[1].selectors[0].cel.expression",
                "shapes[1].topologyKey",
                "shapes[2].topologyKey",
            ]
        );
        let errs = mix.validate().unwrap_err();
        assert_eq!(
            errs[9].to_string(),
            "PodGroup \"workload mix\": shapes[1].topologyKey: forbidden: only a shape of \
             more than one pod shares a topology domain"
        );
        assert!(matches!(errs[10].problem, Problem::InvalidName { .. }));
        assert_eq!(
            errs[3].to_string(),
            "PodGroup \"workload mix\": shapes[1].cpu: invalid value \"-1\": must not be negative"
        );
    }

    #[test]
    fn the_list_is_required_and_bounded() {
        assert_eq!(fields(&ShapeMix::default()), ["shapes"]);
        let many = ShapeMix {
            shapes: vec![shape("gpu"); ShapeMix::MAX_SHAPES + 1],
        };
        let errs = many.validate().unwrap_err();
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].problem,
            Problem::TooMany {
                max: ShapeMix::MAX_SHAPES,
                actual: ShapeMix::MAX_SHAPES + 1
            }
        );
        let at_max = ShapeMix {
            shapes: vec![shape("gpu"); ShapeMix::MAX_SHAPES],
        };
        assert_eq!(at_max.validate(), Ok(()));
    }

    #[test]
    fn validate_at_reports_under_the_given_object_and_path() {
        let mut bad = shape("gpu");
        bad.weight = 0;
        let object = ObjectRef::cluster(ObjectKind::PodGroup, "scoring policy");
        let errs = ShapeMix { shapes: vec![bad] }
            .validate_at(&object, "policy.stranding.mix.given")
            .unwrap_err();
        assert_eq!(errs[0].object, object);
        assert_eq!(errs[0].field, "policy.stranding.mix.given.shapes[0].weight");
        let errs = ShapeMix::default()
            .validate_at(&object, "policy.fgd.mix.given")
            .unwrap_err();
        assert_eq!(errs[0].field, "policy.fgd.mix.given.shapes");
    }

    #[test]
    fn default_weights_are_the_tuned_constants() {
        let w = StrandingWeights::default();
        assert_eq!(
            (
                w.fill_milli,
                w.pack_micro,
                w.balance_milli,
                w.scarcity_milli
            ),
            (2000, 1000, 20_000, 1000)
        );
        // Bit-identical to the simulator's f64 constants.
        let (fill, pack, balance, scarcity) = w.as_f64();
        assert_eq!(fill.to_bits(), 2.0f64.to_bits());
        assert_eq!(pack.to_bits(), 0.001f64.to_bits());
        assert_eq!(balance.to_bits(), 20.0f64.to_bits());
        assert_eq!(scarcity.to_bits(), 1.0f64.to_bits());
    }

    fn pod(name: &str, cpu: &str, claims: &[(&str, ClaimSource)]) -> Pod {
        let mut p = Pod::new("ns", name);
        p.requests.insert("cpu".into(), q(cpu));
        p.requests.insert("memory".into(), q("1Gi"));
        for (entry, source) in claims {
            p.resource_claims.push(PodResourceClaim {
                name: (*entry).to_owned(),
                source: source.clone(),
            });
        }
        p
    }

    fn claim(name: &str, class: &str, count: u32) -> ResourceClaim {
        let mut c = ResourceClaim::new("ns", name);
        c.spec.requests.push(DeviceRequest::exactly(
            "gpu",
            ExactDeviceRequest::new(class).with_mode(AllocationMode::ExactCount(count)),
        ));
        c
    }

    #[test]
    fn observe_counts_pods_by_shape_in_a_fixed_order() {
        let by_name = |n: &str| ClaimSource::ClaimName(n.into());
        let mut share = claim("share", "gpu", 1);
        if let crate::DeviceRequestKind::Exactly(e) = &mut share.spec.requests[0].kind {
            e.capacity.insert("milli".into(), q("250"));
        }
        let empty = ResourceClaim::new("ns", "empty");
        let claims = [
            claim("one", "gpu", 1),
            claim("eight", "gpu", 8),
            share,
            empty,
            claim("elsewhere", "other", 1),
        ];
        let pods = [
            pod("a", "4", &[("g", by_name("eight"))]),
            pod("b", "4", &[("g", by_name("one"))]),
            pod("c", "4000m", &[("g", by_name("one"))]),
            pod("d", "2", &[("g", by_name("one"))]),
            // The first claim with a request counts; a missing claim is skipped.
            pod(
                "e",
                "2",
                &[
                    ("x", by_name("missing")),
                    ("y", by_name("empty")),
                    ("g", by_name("share")),
                    ("h", by_name("eight")),
                ],
            ),
            pod("cpu-only", "4", &[]),
            pod("lost", "4", &[("g", by_name("missing"))]),
        ];
        let mix = ShapeMix::observe(&pods, &claims);
        let got: Vec<(u32, &str, u32, bool, i64)> = mix
            .shapes
            .iter()
            .map(|s| {
                (
                    s.weight,
                    s.device_class_name.as_str(),
                    s.count,
                    s.capacity.is_empty(),
                    s.cpu.milli_value(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (1, "gpu", 1, true, 2000),
                (2, "gpu", 1, true, 4000),
                (1, "gpu", 1, false, 2000),
                (1, "gpu", 8, true, 4000),
            ]
        );
        assert!(
            mix.shapes
                .iter()
                .all(|s| s.pods == 1 && s.topology_key.is_none() && s.memory == q("1Gi"))
        );
        assert_eq!(mix.validate(), Ok(()));
        // Pod order does not matter.
        let mut reversed = pods.clone();
        reversed.reverse();
        assert_eq!(ShapeMix::observe(&reversed, &claims), mix);
        // Another namespace's claim of the same name is not the pod's.
        let mut other_ns = claim("one", "gpu", 1);
        other_ns.namespace = "other".into();
        assert_eq!(ShapeMix::observe(&pods[1..2], &[other_ns]).shapes, []);
    }

    #[test]
    fn observe_finds_generated_claims_and_skips_all_mode() {
        let template = |t: &str| ClaimSource::Template(t.into());
        let mut own = claim(&generated_claim_name("ns", "p", "gpu"), "gpu", 2);
        own.spec.requests[0] = DeviceRequest::first_available(
            "gpu",
            vec![
                DeviceSubRequest::new("big", "big-gpu"),
                DeviceSubRequest::new("small", "small-gpu"),
            ],
        );
        let group = claim(&generated_group_claim_name("ns", "g", "fabric"), "nic", 1);
        let mut all = claim("all", "gpu", 1);
        all.spec.requests[0] = DeviceRequest::exactly(
            "gpu",
            ExactDeviceRequest::new("gpu").with_mode(AllocationMode::All),
        );
        let mut member = pod("m", "1", &[("fabric", template("t"))]);
        member.scheduling_group = Some("g".into());
        let pods = [
            pod("p", "1", &[("gpu", template("t"))]),
            member,
            pod("q", "1", &[("g", ClaimSource::ClaimName("all".into()))]),
        ];
        let mix = ShapeMix::observe(&pods, &[own, group, all]);
        let classes: Vec<&str> = mix
            .shapes
            .iter()
            .map(|s| s.device_class_name.as_str())
            .collect();
        // The first alternative of a firstAvailable request; the group's claim.
        assert_eq!(classes, ["big-gpu", "nic"]);
    }

    #[test]
    fn observe_keeps_the_most_frequent_shapes() {
        let n = ShapeMix::MAX_SHAPES + 2;
        let claims = [claim("c", "gpu", 1)];
        let mut pods: Vec<Pod> = (0..n)
            .map(|i| {
                pod(
                    &format!("p{i}"),
                    &format!("{}", i + 1),
                    &[("g", ClaimSource::ClaimName("c".into()))],
                )
            })
            .collect();
        // Shapes with CPU 5 and 7 are seen twice.
        pods.push(pod("x", "5", &[("g", ClaimSource::ClaimName("c".into()))]));
        pods.push(pod("y", "7", &[("g", ClaimSource::ClaimName("c".into()))]));
        let mix = ShapeMix::observe(&pods, &claims);
        assert_eq!(mix.shapes.len(), ShapeMix::MAX_SHAPES);
        assert_eq!(mix.weight_sum(), ShapeMix::MAX_SHAPES as u64 + 2);
        let cpus: Vec<i64> = mix.shapes.iter().map(|s| s.cpu.value()).collect();
        // Key order kept; the two heaviest kept; of the rest the last two dropped.
        assert!(cpus.windows(2).all(|w| w[0] < w[1]));
        assert!(cpus.contains(&5) && cpus.contains(&7));
        assert_eq!(*cpus.last().unwrap(), i64::try_from(n - 2).unwrap());
    }

    #[cfg(all(feature = "serde", not(target_arch = "wasm32")))]
    #[test]
    fn serde_is_camel_case_with_defaults() {
        let json = r#"{"shapes":[{"weight":3,"cpu":"4","memory":"16Gi","deviceClassName":"gpu","count":1,"capacity":{"milli":"500"}},{"deviceClassName":"gpu","count":8,"pods":4,"topologyKey":"topology.gangpack.io/rack","selectors":[{"cel":"true"}]}]}"#;
        let mix: ShapeMix = serde_json::from_str(json).unwrap();
        assert_eq!(mix.shapes[0].weight, 3);
        assert_eq!(mix.shapes[0].pods, 1);
        assert_eq!(mix.shapes[0].capacity["milli"], q("500"));
        assert_eq!(mix.shapes[1].weight, 1);
        assert_eq!(mix.shapes[1].pods, 4);
        assert_eq!(mix.shapes[1].cpu, Quantity::ZERO);
        assert_eq!(
            mix.shapes[1].topology_key.as_deref(),
            Some("topology.gangpack.io/rack")
        );
        assert_eq!(mix.validate(), Ok(()));
        let back: ShapeMix = serde_json::from_str(&serde_json::to_string(&mix).unwrap()).unwrap();
        assert_eq!(back, mix);
        assert_eq!(
            serde_json::to_string(&ShapeMix {
                shapes: vec![TypicalShape::new("gpu")]
            })
            .unwrap(),
            r#"{"shapes":[{"weight":1,"cpu":"0","memory":"0","deviceClassName":"gpu","count":1,"pods":1}]}"#
        );
        let w: StrandingWeights = serde_json::from_str(r#"{"fillMilli":1500}"#).unwrap();
        assert_eq!(
            w,
            StrandingWeights {
                fill_milli: 1500,
                ..StrandingWeights::default()
            }
        );
    }
}
