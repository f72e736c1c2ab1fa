//! The fragmentation report (issue 5, item 5): copies of each request shape the free
//! capacity can host per topology domain, hand-computed on small clusters, its table,
//! its diff after a placement, and a brute-force oracle on tiny generated clusters.

mod common;

use common::*;
use gangpack::{
    CapacityDomain, CapacityReport, Cluster, Device, DeviceAttribute, DeviceClass,
    DeviceTaintEffect, DeviceToleration, DeviceTolerationOperator, GangOptions, GangOutcome, Node,
    ObjectKind, Pod, PodGroup, Problem, Quantity, RequestShape, ResourceClaim, ResourceSlice,
    SchedulingPolicy, ShapeCapacity, TopologyConstraint,
};

fn tolerate(key: &str) -> DeviceToleration {
    DeviceToleration {
        key: key.into(),
        operator: DeviceTolerationOperator::Exists,
        value: String::new(),
        effect: None,
        toleration_seconds: None,
    }
}

fn report(c: &Cluster, shapes: &[RequestShape], key: Option<&str>) -> CapacityReport {
    c.capacity_report(shapes, key).unwrap()
}

/// `(copies, fragmentation)` of every shape in the row of label value `domain`.
fn row(r: &CapacityReport, domain: &str) -> Vec<(u64, u64)> {
    r.domain(domain)
        .unwrap_or_else(|| panic!("no row {domain}"))
        .shapes
        .iter()
        .map(|s| (s.copies, s.fragmentation))
        .collect()
}

fn totals(r: &CapacityReport) -> Vec<(u64, u64)> {
    r.totals
        .iter()
        .map(|s| (s.copies, s.fragmentation))
        .collect()
}

fn cordon(c: &mut Cluster, name: &str) {
    let mut n = c.node(name).unwrap().clone();
    n.unschedulable = true;
    c.replace_node(n).unwrap();
}

/// Every reported number obeys the definitions: `pods = Σ ⌊free / k⌋` is checked by
/// the oracle; here `fragmentation = free − copies · pods · k` and the totals are the
/// sums of the rows.
fn assert_consistent(r: &CapacityReport) {
    for (i, s) in r.shapes.iter().enumerate() {
        let used = |c: &ShapeCapacity| c.copies * u64::from(s.pods) * u64::from(s.devices_per_pod);
        for d in &r.domains {
            let c = d.shapes[i];
            assert_eq!(
                c.fragmentation,
                c.free - used(&c),
                "{:?} shape {i}",
                d.domain
            );
            assert!(c.copies * u64::from(s.pods) <= c.pods);
        }
        let t = r.totals[i];
        assert_eq!(t.fragmentation, t.free - used(&t), "totals, shape {i}");
        if r.key.is_some() {
            let sum = r.domains.iter().fold(ShapeCapacity::default(), |mut a, d| {
                a.copies += d.shapes[i].copies;
                a.pods += d.shapes[i].pods;
                a.free += d.shapes[i].free;
                a.fragmentation += d.shapes[i].fragmentation;
                a
            });
            assert_eq!(sum, t, "totals are the sums of the rows");
        } else {
            assert!(r.domains.is_empty());
        }
    }
}

/// Two racks: r1 = 8 + 3 free, r2 = 4 + 4 free.
fn two_racks() -> Cluster {
    rack_cluster(
        &[
            ("n1", "r1", 8),
            ("n2", "r1", 3),
            ("n3", "r2", 4),
            ("n4", "r2", 4),
        ],
        64,
    )
}

#[test]
fn single_pods_and_gangs_per_rack() {
    let c = two_racks();
    let shapes = [
        RequestShape::new(1, 1),
        RequestShape::new(1, 2),
        RequestShape::new(1, 4),
        RequestShape::new(1, 8),
        RequestShape::new(2, 4),
        RequestShape::new(3, 4),
        RequestShape::new(2, 8),
    ];
    let r = report(&c, &shapes, Some("rack"));
    assert_consistent(&r);
    // r1: 8 + 3. 2-device pods: 4 + 1 (1 left); 4-device: 2 + 0 (3 left); 8-device: 1
    // (3 left). 2 × 4 in the rack: 2 pods (both on n1) = 1 copy; 3 × 4: none.
    assert_eq!(
        row(&r, "r1"),
        [(11, 0), (5, 1), (2, 3), (1, 3), (1, 3), (0, 11), (0, 11)]
    );
    // r2: 4 + 4. One 4-device pod per node: 2 × 4 spans both nodes.
    assert_eq!(
        row(&r, "r2"),
        [(8, 0), (4, 0), (2, 0), (0, 8), (1, 0), (0, 8), (0, 8)]
    );
    assert_eq!(
        totals(&r),
        [(19, 0), (9, 1), (4, 3), (1, 11), (2, 3), (0, 19), (0, 19)]
    );
    assert_eq!((r.nodes, r.cordoned), (4, 0));
    assert_eq!(r.domain("r1").unwrap().nodes, 2);
    assert!(r.unlabelled().is_none());
    assert_eq!(r.domain("r1").unwrap().shapes[5].pods, 2);

    // One domain: a 3 × 4 copy may span racks (n1 hosts 2 pods, n3 or n4 the third).
    let all = report(&c, &shapes, None);
    assert_consistent(&all);
    assert!(all.domains.is_empty());
    assert_eq!(
        totals(&all),
        [(19, 0), (9, 1), (4, 3), (1, 11), (2, 3), (1, 7), (0, 19)]
    );
}

#[test]
fn tainted_devices_count_only_when_tolerated() {
    let mut c = rack_cluster(&[("n1", "r1", 4)], 8);
    c.taint_device(
        &dref("n1", "gpu-0"),
        taint("ecc", "", DeviceTaintEffect::NoSchedule, 1),
    )
    .unwrap();
    c.taint_device(
        &dref("n1", "gpu-1"),
        taint("maint", "", DeviceTaintEffect::NoExecute, 1),
    )
    .unwrap();
    // Effect `None` is informational: gpu-2 stays usable for everyone.
    c.taint_device(
        &dref("n1", "gpu-2"),
        taint("note", "", DeviceTaintEffect::None, 1),
    )
    .unwrap();
    let shapes = [
        RequestShape::new(1, 1),
        RequestShape::new(1, 1).with_toleration(tolerate("ecc")),
        RequestShape::new(1, 2)
            .with_toleration(tolerate("ecc"))
            .with_toleration(tolerate("maint")),
        // An empty key with `Exists` tolerates every taint.
        RequestShape::new(1, 4).with_toleration(tolerate("")),
        RequestShape::new(1, 4),
    ];
    let r = report(&c, &shapes, Some("rack"));
    assert_consistent(&r);
    let free: Vec<u64> = r.totals.iter().map(|s| s.free).collect();
    assert_eq!(free, [2, 3, 4, 4, 2]);
    assert_eq!(totals(&r), [(2, 0), (3, 0), (2, 0), (1, 0), (0, 2)]);
}

#[test]
fn allocated_devices_are_not_free_but_admin_access_ones_are() {
    let mut c = rack_cluster(&[("n1", "r1", 8)], 8);
    let shapes = RequestShape::standard(1);
    let before = report(&c, &shapes, Some("rack"));
    assert_eq!(totals(&before), [(8, 0), (4, 0), (2, 0), (1, 0)]);
    c.allocate(&dref("n1", "gpu-0"), holder("ns/a", vec![]))
        .unwrap();
    c.allocate(&dref("n1", "gpu-1"), holder("ns/a", vec![]).admin())
        .unwrap();
    let r = report(&c, &shapes, Some("rack"));
    assert_consistent(&r);
    // 7 free: an admin-access holder does not take the device.
    assert_eq!(totals(&r), [(7, 0), (3, 1), (1, 3), (0, 7)]);
}

#[test]
fn cordoned_nodes_host_nothing() {
    let mut c = rack_cluster(&[("n1", "r1", 8), ("n2", "r1", 8), ("n3", "r2", 8)], 8);
    cordon(&mut c, "n2");
    cordon(&mut c, "n3");
    let shapes = [RequestShape::new(1, 8), RequestShape::new(2, 8)];
    let r = report(&c, &shapes, Some("rack"));
    assert_consistent(&r);
    let r1 = r.domain("r1").unwrap();
    assert_eq!((r1.nodes, r1.cordoned), (1, 1));
    assert_eq!(row(&r, "r1"), [(1, 0), (0, 8)]);
    // A rack of cordoned nodes is listed, with nothing free.
    let r2 = r.domain("r2").unwrap();
    assert_eq!((r2.nodes, r2.cordoned), (0, 1));
    assert_eq!(r2.shapes, [ShapeCapacity::default(); 2]);
    assert_eq!((r.nodes, r.cordoned), (1, 2));
    assert_eq!(totals(&r), [(1, 0), (0, 8)]);
}

#[test]
fn a_class_counts_only_the_devices_it_selects() {
    let mut c = rack_cluster(&[("n1", "r1", 4)], 8);
    // n2 has 4 A100s next to n1's H100s.
    c.add_node(node("n2", "r1")).unwrap();
    let mut s = ResourceSlice::node_local("n2-gpus", DRIVER, "n2", "n2");
    for g in 0..4 {
        let mut d = Device::new(format!("gpu-{g}"));
        d.attributes
            .insert("model".into(), DeviceAttribute::String("A100".into()));
        s.devices.push(d);
    }
    c.add_slice(s).unwrap();
    c.put_class(DeviceClass::with_cel(
        "h100",
        format!("device.attributes[\"{DRIVER}\"].model == \"H100\""),
    ))
    .unwrap();
    let shapes = [
        RequestShape::new(2, 4).with_class("gpu"),
        RequestShape::new(2, 4).with_class("h100"),
        RequestShape::new(1, 4).with_class("h100"),
        RequestShape::new(2, 4),
    ];
    let r = report(&c, &shapes, Some("rack"));
    assert_consistent(&r);
    assert_eq!(totals(&r), [(1, 0), (0, 4), (1, 0), (1, 0)]);
    assert_eq!(
        r.labels(),
        ["2x4@rack:gpu", "2x4@rack:h100", "1x4:h100", "2x4@rack"]
    );
}

#[test]
fn nodes_without_the_label_host_single_pods_only() {
    let mut c = rack_cluster(&[("n1", "r1", 4)], 8);
    c.add_node(Node::new("lone")).unwrap();
    c.add_slice(gpus("lone", 8)).unwrap();
    let shapes = [RequestShape::new(1, 8), RequestShape::new(2, 4)];
    let r = report(&c, &shapes, Some("rack"));
    assert_consistent(&r);
    let u = r.unlabelled().unwrap();
    assert_eq!(u.nodes, 1);
    // One 8-device pod; two 4-device pods fit, but no rack holds them together.
    assert_eq!(
        u.shapes,
        [
            ShapeCapacity {
                copies: 1,
                pods: 1,
                free: 8,
                fragmentation: 0
            },
            ShapeCapacity {
                copies: 0,
                pods: 2,
                free: 8,
                fragmentation: 8
            },
        ]
    );
    assert_eq!(
        r.domains.iter().map(|d| &d.domain).collect::<Vec<_>>(),
        [
            &CapacityDomain::Value("r1".into()),
            &CapacityDomain::Unlabelled
        ]
    );
    assert_eq!(totals(&r), [(1, 4), (0, 12)]);
    // Without a key the label does not matter: n1 and lone host 3 pods of 4 devices, one
    // copy of 2 × 4.
    assert_eq!(totals(&report(&c, &shapes, None)), [(1, 4), (1, 4)]);
}

#[test]
fn invalid_shapes_and_missing_classes_are_errors_naming_the_field() {
    let c = two_racks();
    let mut bad_toleration = tolerate("not a key!");
    bad_toleration.value = "x".into();
    let shapes = [
        RequestShape::new(0, 8),
        RequestShape::new(1, 0),
        RequestShape::new(2, 2).with_class("nope"),
        RequestShape::new(1, 1).with_toleration(bad_toleration),
        RequestShape::new(0, 0).with_class("gpu"),
    ];
    let errs = c.capacity_report(&shapes, Some("bad key")).unwrap_err();
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "key",
            "shapes[0].pods",
            "shapes[1].devicesPerPod",
            "shapes[2].class",
            "shapes[3].tolerations[0].key",
            "shapes[3].tolerations[0].value",
            "shapes[4].pods",
            "shapes[4].devicesPerPod",
        ]
    );
    assert!(errs.iter().all(|e| e.object.kind == ObjectKind::PodGroup));
    assert_eq!(
        errs[3].to_string(),
        "PodGroup \"capacity report\": shapes[2].class: not found: \"nope\""
    );
    assert!(matches!(errs[1].problem, Problem::Invalid { .. }));
    // No shapes is a valid, empty report.
    let empty = report(&c, &[], Some("rack"));
    assert!(empty.totals.is_empty());
    assert_eq!(empty.domains.len(), 2);
}

/// A gang of `pods` pods × `gpus` devices, each pod with its own claim.
fn gang(pods: usize, gpus: u32, rack: bool) -> (PodGroup, Vec<Pod>, Vec<ResourceClaim>) {
    let mut g = PodGroup::new(
        "ns",
        "g",
        SchedulingPolicy::Gang {
            min_count: pods as u32,
        },
    );
    if rack {
        g.topology.push(TopologyConstraint::new("rack"));
    }
    let mut out = Vec::new();
    let mut claims = Vec::new();
    for i in 0..pods {
        let (mut pod, claim) = gpu_pod(&format!("p{i}"), gpus);
        pod.scheduling_group = Some("g".into());
        pod.requests.insert("cpu".into(), Quantity::from_int(1));
        claims.push(claim);
        out.push(pod);
    }
    (g, out, claims)
}

#[test]
fn the_diff_shows_what_a_placement_took() {
    // Only r1 (n1, 8 free) holds 2 × 4 in one rack: r2 has 4 + 2.
    let mut c = rack_cluster(&[("n1", "r1", 8), ("n2", "r2", 4), ("n3", "r2", 2)], 8);
    let shapes = [
        RequestShape::new(1, 1),
        RequestShape::new(1, 4),
        RequestShape::new(1, 8),
        RequestShape::new(2, 4),
    ];
    let before = report(&c, &shapes, Some("rack"));
    assert_eq!(row(&before, "r1"), [(8, 0), (2, 0), (1, 0), (1, 0)]);
    assert_eq!(row(&before, "r2"), [(6, 0), (1, 2), (0, 6), (0, 6)]);

    let (g, pods, claims) = gang(2, 4, true);
    let GangOutcome::Placed(d) = c
        .place_gang(Some(&g), &pods, &claims, &GangOptions::default())
        .unwrap()
    else {
        panic!("the gang must fit in r1");
    };
    assert!(d.bindings.iter().all(|b| b.node == "n1"));
    c.apply_decision(&d, &pods).unwrap();
    let after = report(&c, &shapes, Some("rack"));
    assert_consistent(&after);
    assert_eq!(row(&after, "r1"), [(0, 0), (0, 0), (0, 0), (0, 0)]);

    let diff = before.diff(&after).unwrap();
    // r2 did not change: only r1 and the totals, for every shape.
    let changed: Vec<(usize, Option<String>, i64)> = diff
        .changes
        .iter()
        .map(|c| {
            (
                c.shape,
                c.domain.as_ref().map(ToString::to_string),
                c.copies_delta(),
            )
        })
        .collect();
    let r1 = || Some("r1".to_owned());
    assert_eq!(
        changed,
        [
            (0, r1(), -8),
            (0, None, -8),
            (1, r1(), -2),
            (1, None, -2),
            (2, r1(), -1),
            (2, None, -1),
            (3, r1(), -1),
            (3, None, -1),
        ]
    );
    assert_eq!(diff.total_copies_delta(3), -1);
    assert_eq!(
        diff.to_string(),
        "\
1x1 r1: copies 8 -> 0 (-8), free 8 -> 0, fragmented 0 -> 0
1x1 total: copies 14 -> 6 (-8), free 14 -> 6, fragmented 0 -> 0
1x4 r1: copies 2 -> 0 (-2), free 8 -> 0, fragmented 0 -> 0
1x4 total: copies 3 -> 1 (-2), free 14 -> 6, fragmented 2 -> 2
1x8 r1: copies 1 -> 0 (-1), free 8 -> 0, fragmented 0 -> 0
1x8 total: copies 1 -> 0 (-1), free 14 -> 6, fragmented 6 -> 6
2x4@rack r1: copies 1 -> 0 (-1), free 8 -> 0, fragmented 0 -> 0
2x4@rack total: copies 1 -> 0 (-1), free 14 -> 6, fragmented 6 -> 6
"
    );

    // Reverting restores the report; a report compared with itself has no changes.
    c.revert_decision(&d, &pods);
    let reverted = report(&c, &shapes, Some("rack"));
    assert_eq!(reverted, before);
    let none = before.diff(&reverted).unwrap();
    assert!(none.is_empty());
    assert_eq!(none.to_string(), "no change\n");
    // Reports of other shapes or another key cannot be compared.
    assert!(
        before
            .diff(&report(&c, &shapes[..2], Some("rack")))
            .is_none()
    );
    assert!(before.diff(&report(&c, &shapes, None)).is_none());
}

#[test]
fn a_diff_lists_rows_present_on_one_side_only() {
    let mut c = rack_cluster(&[("n1", "r1", 4)], 8);
    let shapes = [RequestShape::new(1, 4)];
    let before = report(&c, &shapes, Some("rack"));
    c.add_node(node("n2", "r2")).unwrap();
    c.add_slice(gpus("n2", 4)).unwrap();
    let after = report(&c, &shapes, Some("rack"));
    let diff = before.diff(&after).unwrap();
    assert_eq!(
        diff.to_string(),
        "\
1x4 r2: copies 0 -> 1 (+1), free 0 -> 4, fragmented 0 -> 0
1x4 total: copies 1 -> 2 (+1), free 4 -> 8, fragmented 0 -> 0
"
    );
}

/// The table for a tiny cluster: two racks, a cordoned node, a node without the label.
#[test]
fn the_table_is_aligned_and_ordered_by_domain() {
    let mut c = rack_cluster(
        &[
            ("b1", "rack-b", 8),
            ("a1", "rack-a", 5),
            ("a2", "rack-a", 3),
            ("b2", "rack-b", 8),
        ],
        8,
    );
    cordon(&mut c, "b2");
    c.add_node(Node::new("spare")).unwrap();
    c.add_slice(gpus("spare", 2)).unwrap();
    c.allocate(&dref("b1", "gpu-7"), holder("ns/x", vec![]))
        .unwrap();
    let shapes = RequestShape::standard(2);
    let r = report(&c, &shapes, Some("rack"));
    assert_consistent(&r);
    // rack-a: 5 + 3 free; rack-b: 7 on b1 (b2 cordoned); spare: 2, in no rack.
    assert_eq!(
        r.to_string(),
        "\
rack          nodes  1x1  1x2  1x4  1x8  2x8@rack
rack-a            2    8    3    1    0         0
rack-b            1    7    3    1    0         0
(unlabelled)      1    2    1    0    0         0
total             4   17    7    2    0         0
free                  17   17   17   17        17
fragmented             0    3    9   17        17
"
    );
    // Without a key: only the totals.
    assert_eq!(
        report(&c, &shapes, None).to_string(),
        "\
cluster     nodes  1x1  1x2  1x4  1x8  2x8
total           4   17    7    2    0    0
free                17   17   17   17   17
fragmented           0    3    9   17   17
"
    );
}

#[cfg(feature = "serde")]
#[test]
fn reports_and_diffs_round_trip_through_json() {
    let c = two_racks();
    let shapes = RequestShape::standard(2);
    let r = report(&c, &shapes, Some("rack"));
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("\"devicesPerPod\":8"), "{json}");
    let back: CapacityReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);
    let d = r.diff(&r).unwrap();
    let back: gangpack::CapacityDiff =
        serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
    assert_eq!(back, d);
    // A shape needs only its sizes.
    let s: RequestShape = serde_json::from_str(r#"{"pods":4,"devicesPerPod":8}"#).unwrap();
    assert_eq!(s, RequestShape::new(4, 8));
}

#[cfg(not(target_arch = "wasm32"))]
mod props {
    //! The report against an exhaustive search on tiny clusters (≤ 4 nodes × 4 devices,
    //! shapes up to 3 pods × 3 devices).

    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, HashMap};

    #[derive(Clone, Debug)]
    struct DevSpec {
        /// Model "A" (the class `a` selects these) or "B".
        model_a: bool,
        /// 0: untainted; 1: `ecc:NoSchedule`; 2: `maint:NoExecute`.
        taint: u8,
        /// Allocated exclusively to another workload.
        allocated: bool,
    }

    #[derive(Clone, Debug)]
    struct NodeSpec {
        rack: Option<u8>,
        cordoned: bool,
        devices: Vec<DevSpec>,
    }

    #[derive(Clone, Debug)]
    struct ShapeSpec {
        pods: u32,
        k: u32,
        class_a: bool,
        tolerate_ecc: bool,
    }

    fn dev_spec() -> impl Strategy<Value = DevSpec> {
        (any::<bool>(), 0..3u8, prop::bool::weighted(0.25)).prop_map(
            |(model_a, taint, allocated)| DevSpec {
                model_a,
                taint,
                allocated,
            },
        )
    }

    fn node_spec() -> impl Strategy<Value = NodeSpec> {
        (
            prop::option::weighted(0.8, 0..2u8),
            prop::bool::weighted(0.15),
            prop::collection::vec(dev_spec(), 0..=4),
        )
            .prop_map(|(rack, cordoned, devices)| NodeSpec {
                rack,
                cordoned,
                devices,
            })
    }

    fn shape_spec() -> impl Strategy<Value = ShapeSpec> {
        (1..=3u32, 1..=3u32, any::<bool>(), any::<bool>()).prop_map(
            |(pods, k, class_a, tolerate_ecc)| ShapeSpec {
                pods,
                k,
                class_a,
                tolerate_ecc,
            },
        )
    }

    fn build(nodes: &[NodeSpec]) -> Cluster {
        let mut c = Cluster::new();
        c.put_class(DeviceClass::with_cel(
            "a",
            format!("device.attributes[\"{DRIVER}\"].model == \"A\""),
        ))
        .unwrap();
        for (i, n) in nodes.iter().enumerate() {
            let name = format!("n{i}");
            let mut obj = Node::new(&name);
            if let Some(r) = n.rack {
                obj = obj.with_label("rack", format!("r{r}"));
            }
            obj.unschedulable = n.cordoned;
            c.add_node(obj).unwrap();
            if n.devices.is_empty() {
                continue;
            }
            let mut s = gpus(&name, n.devices.len());
            for (d, spec) in s.devices.iter_mut().zip(&n.devices) {
                let model = if spec.model_a { "A" } else { "B" };
                d.attributes
                    .insert("model".into(), DeviceAttribute::String(model.into()));
                match spec.taint {
                    1 => d
                        .taints
                        .push(taint("ecc", "", DeviceTaintEffect::NoSchedule, 1)),
                    2 => d
                        .taints
                        .push(taint("maint", "", DeviceTaintEffect::NoExecute, 1)),
                    _ => {}
                }
            }
            c.add_slice(s).unwrap();
            for (g, spec) in n.devices.iter().enumerate() {
                if spec.allocated {
                    c.allocate(
                        &dref(&name, &format!("gpu-{g}")),
                        holder("ns/other", vec![]),
                    )
                    .unwrap();
                }
            }
        }
        c
    }

    fn shape(s: &ShapeSpec) -> RequestShape {
        let mut out = RequestShape::new(s.pods, s.k);
        if s.class_a {
            out = out.with_class("a");
        }
        if s.tolerate_ecc {
            out = out.with_toleration(tolerate("ecc"));
        }
        out
    }

    /// Free devices of node `n` the shape could use, from the spec alone.
    fn free_for(n: &NodeSpec, s: &ShapeSpec) -> u32 {
        if n.cordoned {
            return 0;
        }
        n.devices
            .iter()
            .filter(|d| !d.allocated)
            .filter(|d| !s.class_a || d.model_a)
            .filter(|d| d.taint == 0 || (d.taint == 1 && s.tolerate_ecc))
            .count() as u32
    }

    /// Every multiset of `len` node indices below `n`, as a non-decreasing sequence.
    fn multisets(n: usize, len: u32, from: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if len == 0 {
            out.push(cur.clone());
            return;
        }
        for i in from..n {
            cur.push(i);
            multisets(n, len - 1, i, cur, out);
            cur.pop();
        }
    }

    /// The most copies of `pods` pods × `k` devices that fit on nodes with these free
    /// devices, by trying every way to place one more copy (its pods on any nodes,
    /// several per node allowed) and recursing; memoised on the free vector.
    fn most_copies(free: &[u32], pods: u32, k: u32, memo: &mut HashMap<Vec<u32>, u64>) -> u64 {
        if let Some(&m) = memo.get(free) {
            return m;
        }
        let mut choices = Vec::new();
        multisets(free.len(), pods, 0, &mut Vec::new(), &mut choices);
        let mut best = 0;
        for choice in choices {
            let mut rest = free.to_vec();
            let fits = choice.iter().all(|&i| {
                if rest[i] >= k {
                    rest[i] -= k;
                    true
                } else {
                    false
                }
            });
            if fits {
                best = best.max(1 + most_copies(&rest, pods, k, memo));
            }
        }
        memo.insert(free.to_vec(), best);
        best
    }

    /// `(copies, pods, free)` of one group of nodes.
    fn oracle(free: &[u32], s: &ShapeSpec, in_domain: bool) -> (u64, u64, u64) {
        let pods = most_copies(free, 1, s.k, &mut HashMap::new());
        let copies = if in_domain || s.pods == 1 {
            most_copies(free, s.pods, s.k, &mut HashMap::new())
        } else {
            0
        };
        (copies, pods, free.iter().map(|&f| u64::from(f)).sum())
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 384,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn the_report_agrees_with_an_exhaustive_search(
            nodes in prop::collection::vec(node_spec(), 1..=4),
            specs in prop::collection::vec(shape_spec(), 1..=3),
            keyed in any::<bool>(),
        ) {
            let c = build(&nodes);
            let shapes: Vec<RequestShape> = specs.iter().map(shape).collect();
            let key = keyed.then_some("rack");
            let r = c.capacity_report(&shapes, key).unwrap();
            assert_consistent(&r);

            // Rows expected: with a key, every rack value and `Unlabelled` if any node
            // lacks the label; without, none (the totals are the cluster).
            let mut groups: BTreeMap<CapacityDomain, Vec<&NodeSpec>> = BTreeMap::new();
            for n in &nodes {
                let d = match n.rack {
                    Some(r) => CapacityDomain::Value(format!("r{r}")),
                    None => CapacityDomain::Unlabelled,
                };
                groups.entry(d).or_default().push(n);
            }
            if keyed {
                let rows: Vec<&CapacityDomain> = r.domains.iter().map(|d| &d.domain).collect();
                prop_assert_eq!(rows, groups.keys().collect::<Vec<_>>());
                for d in &r.domains {
                    let members = &groups[&d.domain];
                    let in_domain = d.domain != CapacityDomain::Unlabelled;
                    let cordoned = members.iter().filter(|n| n.cordoned).count();
                    prop_assert_eq!(d.nodes as usize, members.len() - cordoned);
                    prop_assert_eq!(d.cordoned as usize, cordoned);
                    for (i, s) in specs.iter().enumerate() {
                        let free: Vec<u32> = members.iter().map(|n| free_for(n, s)).collect();
                        let (copies, pods, total) = oracle(&free, s, in_domain);
                        let got = d.shapes[i];
                        prop_assert_eq!((got.copies, got.pods, got.free), (copies, pods, total),
                            "{:?} shape {:?} free {:?}", d.domain, s, free);
                    }
                }
            } else {
                prop_assert!(r.domains.is_empty());
                for (i, s) in specs.iter().enumerate() {
                    let free: Vec<u32> = nodes.iter().map(|n| free_for(n, s)).collect();
                    let (copies, pods, total) = oracle(&free, s, true);
                    let got = r.totals[i];
                    prop_assert_eq!((got.copies, got.pods, got.free), (copies, pods, total),
                        "shape {:?} free {:?}", s, free);
                }
            }
            prop_assert_eq!(r.nodes as usize, nodes.iter().filter(|n| !n.cordoned).count());
            prop_assert_eq!(r.cordoned as usize, nodes.iter().filter(|n| n.cordoned).count());
            // Same input, same report; a report compared with itself has no changes.
            prop_assert_eq!(&c.capacity_report(&shapes, key).unwrap(), &r);
            prop_assert!(r.diff(&r).unwrap().is_empty());
        }

        /// Taking one more device never raises any copy count, and lowers `free` by at
        /// most one per (shape, row).
        #[test]
        fn allocating_a_device_never_adds_capacity(
            nodes in prop::collection::vec(node_spec(), 1..=4),
            specs in prop::collection::vec(shape_spec(), 1..=3),
            keyed in any::<bool>(),
            pick in any::<prop::sample::Index>(),
        ) {
            let mut c = build(&nodes);
            let shapes: Vec<RequestShape> = specs.iter().map(shape).collect();
            let key = keyed.then_some("rack");
            let before = c.capacity_report(&shapes, key).unwrap();
            let free: Vec<(String, usize)> = nodes
                .iter()
                .enumerate()
                .flat_map(|(i, n)| {
                    n.devices
                        .iter()
                        .enumerate()
                        .filter(|(_, d)| !d.allocated)
                        .map(move |(g, _)| (format!("n{i}"), g))
                })
                .collect();
            prop_assume!(!free.is_empty());
            let (node, g) = &free[pick.index(free.len())];
            c.allocate(&dref(node, &format!("gpu-{g}")), holder("ns/new", vec![])).unwrap();
            let after = c.capacity_report(&shapes, key).unwrap();
            let diff = before.diff(&after).unwrap();
            for ch in &diff.changes {
                prop_assert!(ch.copies_delta() <= 0, "{:?}", ch);
                prop_assert!(ch.before.free - ch.after.free <= 1, "{:?}", ch);
            }
        }
    }
}
