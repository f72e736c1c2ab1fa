#![cfg(not(target_arch = "wasm32"))]
//! Consumable capacity (spec dra.md 1.7, 3.9): the consumed amount per request policy,
//! the full `consumedCapacity` map of one allocation, and the fit check. The proptest at
//! the end compares `consumed_amount` with a brute-force enumeration of the valid amounts.

use std::collections::BTreeMap;

use gangpack::{
    CapacityRejection, CapacityRequestPolicy, CapacityRequestPolicyRange, Device, DeviceCapacity,
    Quantity, consumed_amount, consumed_capacity, fits,
};
use proptest::prelude::*;

const DRIVER: &str = "gpu.example.com";

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn plain(value: &str) -> DeviceCapacity {
    DeviceCapacity {
        value: q(value),
        request_policy: None,
    }
}

fn values(value: &str, default: Option<&str>, valid: &[&str]) -> DeviceCapacity {
    DeviceCapacity {
        value: q(value),
        request_policy: Some(CapacityRequestPolicy {
            default: default.map(q),
            valid_values: valid.iter().copied().map(q).collect(),
            valid_range: None,
        }),
    }
}

fn range(
    value: &str,
    default: Option<&str>,
    min: &str,
    step: Option<&str>,
    max: Option<&str>,
) -> DeviceCapacity {
    DeviceCapacity {
        value: q(value),
        request_policy: Some(CapacityRequestPolicy {
            default: default.map(q),
            valid_values: vec![],
            valid_range: Some(CapacityRequestPolicyRange {
                min: q(min),
                max: max.map(q),
                step: step.map(q),
            }),
        }),
    }
}

fn exceeds(amount: &str, value: &str) -> CapacityRejection {
    CapacityRejection::ExceedsValue {
        capacity: String::new(),
        amount: q(amount),
        value: q(value),
    }
}

/// Runs a table of `(request, expected)` against one capacity.
fn table(cap: &DeviceCapacity, rows: &[(Option<&str>, Result<&str, CapacityRejection>)]) {
    for (requested, want) in rows {
        let got = consumed_amount(cap, requested.map(q));
        let want = want.clone().map(q);
        assert_eq!(got, want, "request {requested:?} on {cap:?}");
    }
}

// ------------------------------------------------------------------------------------------
// consumed_amount
// ------------------------------------------------------------------------------------------

#[test]
fn no_policy_uses_the_request_as_is() {
    table(
        &plain("10"),
        &[
            // Not requested: the whole value.
            (None, Ok("10")),
            (Some("0"), Ok("0")),
            (Some("4"), Ok("4")),
            (Some("1.5"), Ok("1.5")),
            (Some("10"), Ok("10")),
            (Some("10.000000001"), Err(exceeds("10.000000001", "10"))),
            (Some("11"), Err(exceeds("11", "10"))),
            (
                Some("-1"),
                Err(CapacityRejection::Negative {
                    capacity: String::new(),
                    requested: q("-1"),
                }),
            ),
        ],
    );
}

#[test]
fn valid_values_round_up() {
    let above = |requested: &str| CapacityRejection::AboveValidValues {
        capacity: String::new(),
        requested: q(requested),
        largest: q("8"),
    };
    table(
        &values("8", Some("2"), &["2", "4", "8"]),
        &[
            (None, Ok("2")),
            (Some("0"), Ok("2")),
            (Some("1"), Ok("2")),
            (Some("2"), Ok("2")),
            (Some("2.5"), Ok("4")),
            (Some("3"), Ok("4")),
            (Some("4"), Ok("4")),
            (Some("4001m"), Ok("8")),
            (Some("8"), Ok("8")),
            (Some("8.001"), Err(above("8.001"))),
            (Some("9"), Err(above("9"))),
        ],
    );
    // A valid value above the capacity (which validation refuses) still cannot be consumed.
    table(
        &values("6", Some("2"), &["2", "4", "8"]),
        &[(Some("5"), Err(exceeds("8", "6"))), (Some("4"), Ok("4"))],
    );
    // Without a default, an unmentioned capacity consumes the whole value.
    table(&values("8", None, &["2", "4", "8"]), &[(None, Ok("8"))]);
    // Binary-SI values compare by value.
    table(
        &values("80Gi", Some("10Gi"), &["10Gi", "20Gi", "40Gi", "80Gi"]),
        &[(Some("15Gi"), Ok("20Gi")), (Some("20G"), Ok("20Gi"))],
    );
}

#[test]
fn range_min_step_max() {
    let over_max = |requested: &str, rounded: &str| CapacityRejection::AboveRangeMax {
        capacity: String::new(),
        requested: q(requested),
        rounded: q(rounded),
        max: q("50"),
    };
    table(
        &range("80", Some("10"), "10", Some("10"), Some("50")),
        &[
            (None, Ok("10")),
            // Below min: min.
            (Some("0"), Ok("10")),
            (Some("9.999"), Ok("10")),
            (Some("10"), Ok("10")),
            // Up to the next min + n·step.
            (Some("10.000000001"), Ok("20")),
            (Some("11"), Ok("20")),
            (Some("20"), Ok("20")),
            (Some("49"), Ok("50")),
            (Some("50"), Ok("50")),
            // Rounded above max.
            (Some("50.5"), Err(over_max("50.5", "60"))),
            (Some("51"), Err(over_max("51", "60"))),
            (Some("80"), Err(over_max("80", "80"))),
        ],
    );
    // The grid starts at min, not at zero.
    table(
        &range("20", Some("4"), "4", Some("3"), None),
        &[
            (Some("3"), Ok("4")),
            (Some("4"), Ok("4")),
            (Some("5"), Ok("7")),
            (Some("7.5"), Ok("10")),
            (Some("19"), Ok("19")),
            // Without max, only the capacity value bounds the rounded amount.
            (Some("20"), Err(exceeds("22", "20"))),
        ],
    );
    // Without a step, anything from min on.
    table(
        &range("8", Some("2"), "2", None, None),
        &[
            (Some("1"), Ok("2")),
            (Some("5"), Ok("5")),
            (Some("5.5"), Ok("5.5")),
            (Some("8"), Ok("8")),
            (Some("9"), Err(exceeds("9", "8"))),
        ],
    );
    // Without a default: the whole value.
    table(&range("8", None, "2", Some("2"), None), &[(None, Ok("8"))]);
    // min above the value (refused by validation) cannot be consumed.
    table(
        &range("8", None, "10", None, None),
        &[(Some("1"), Err(exceeds("10", "8")))],
    );
}

#[test]
fn fractional_ranges_are_exact() {
    // With the alpha DRAFractionalCapacityRange gate upstream rounds in milli units;
    // gangpack is exact at nano precision with or without it.
    let over = |requested: &str, rounded: &str| CapacityRejection::AboveRangeMax {
        capacity: String::new(),
        requested: q(requested),
        rounded: q(rounded),
        max: q("2"),
    };
    table(
        &range("2", Some("500m"), "500m", Some("250m"), Some("2")),
        &[
            (Some("100m"), Ok("500m")),
            (Some("0.6"), Ok("750m")),
            (Some("750m"), Ok("750m")),
            (Some("750000001n"), Ok("1")),
            (Some("1.9"), Ok("2")),
            (Some("2.1"), Err(over("2.1", "2.25"))),
        ],
    );
    table(
        &range("1", None, "0", Some("1n"), None),
        &[(Some("123456789n"), Ok("123456789n"))],
    );
}

#[test]
fn rounded_amounts_print_in_the_step_format() {
    let cap = range("80Gi", Some("1Gi"), "1Gi", Some("1Gi"), None);
    let amount = consumed_amount(&cap, Some(q("1.5Gi"))).unwrap();
    assert_eq!(amount, q("2Gi"));
    assert_eq!(amount.to_string(), "2Gi");
    let amount = consumed_amount(&cap, Some(q("1500M"))).unwrap();
    assert_eq!(amount.to_string(), "2Gi");
}

#[test]
fn both_policies_use_the_range_and_bad_steps_are_ignored() {
    // Refused by validation, but the result is still defined: the range wins, as upstream.
    let mut cap = range("10", Some("2"), "2", Some("2"), None);
    cap.request_policy.as_mut().unwrap().valid_values = vec![q("5")];
    table(&cap, &[(Some("3"), Ok("4"))]);
    table(
        &range("10", Some("2"), "2", Some("0"), None),
        &[(Some("3"), Ok("3"))],
    );
    table(
        &range("10", Some("2"), "2", Some("-1"), None),
        &[(Some("3"), Ok("3"))],
    );
}

#[test]
fn overflowing_rounding_is_rejected() {
    let cap = DeviceCapacity {
        value: Quantity::from_nano(i128::MAX),
        request_policy: Some(CapacityRequestPolicy {
            default: None,
            valid_values: vec![],
            valid_range: Some(CapacityRequestPolicyRange {
                min: Quantity::ZERO,
                max: None,
                step: Some(Quantity::from_nano(i128::MAX / 2 + 1)),
            }),
        }),
    };
    assert_eq!(
        consumed_amount(&cap, Some(Quantity::from_nano(i128::MAX - 1))),
        Err(CapacityRejection::ExceedsValue {
            capacity: String::new(),
            amount: Quantity::from_nano(i128::MAX),
            value: Quantity::from_nano(i128::MAX),
        })
    );
}

// ------------------------------------------------------------------------------------------
// consumed_capacity
// ------------------------------------------------------------------------------------------

/// A shareable GPU of driver `gpu.example.com` with four capacities.
fn gpu() -> Device {
    let mut d = Device::new("gpu-0");
    d.allow_multiple_allocations = true;
    d.capacity.insert(
        "memory".into(),
        range("80Gi", Some("10Gi"), "10Gi", Some("10Gi"), Some("40Gi")),
    );
    d.capacity.insert("cores".into(), plain("100"));
    d.capacity.insert(
        "example.com/bw".into(),
        values("100", Some("10"), &["10", "50", "100"]),
    );
    d.capacity
        .insert("gpu.example.com/slots".into(), plain("4"));
    d
}

/// `(capacity name, amount)` rows of a request or consumption map.
type Rows = &'static [(&'static str, &'static str)];

fn requests(rows: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    rows.iter().map(|(k, v)| ((*k).to_string(), q(v))).collect()
}

fn consumed(rows: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    requests(rows)
}

#[test]
fn every_capacity_is_listed_as_the_device_declares_it() {
    let table: &[(Rows, Rows)] = &[
        // Nothing requested: defaults, else the whole value.
        (
            &[],
            &[
                ("cores", "100"),
                ("example.com/bw", "10"),
                ("gpu.example.com/slots", "4"),
                ("memory", "10Gi"),
            ],
        ),
        // A bare name, rounded by its policy.
        (
            &[("memory", "15Gi")],
            &[
                ("cores", "100"),
                ("example.com/bw", "10"),
                ("gpu.example.com/slots", "4"),
                ("memory", "20Gi"),
            ],
        ),
        // The qualified spelling of a bare device key (driver domain).
        (
            &[("gpu.example.com/memory", "15Gi"), ("cores", "0")],
            &[
                ("cores", "0"),
                ("example.com/bw", "10"),
                ("gpu.example.com/slots", "4"),
                ("memory", "20Gi"),
            ],
        ),
        // The bare spelling of a qualified device key in the driver domain.
        (
            &[("slots", "1"), ("example.com/bw", "20")],
            &[
                ("cores", "100"),
                ("example.com/bw", "50"),
                ("gpu.example.com/slots", "1"),
                ("memory", "10Gi"),
            ],
        ),
        // Two spellings of one capacity: the larger amount.
        (
            &[("memory", "15Gi"), ("gpu.example.com/memory", "25Gi")],
            &[
                ("cores", "100"),
                ("example.com/bw", "10"),
                ("gpu.example.com/slots", "4"),
                ("memory", "30Gi"),
            ],
        ),
    ];
    let device = gpu();
    for (req, want) in table {
        assert_eq!(
            consumed_capacity(&device, &requests(req), DRIVER),
            Ok(consumed(want)),
            "{req:?}"
        );
    }
}

#[test]
fn missing_and_rejected_capacities() {
    let device = gpu();
    let table: &[(&[(&str, &str)], CapacityRejection)] = &[
        // `bw` is in the driver's domain, the device's is `example.com/bw`.
        (
            &[("bw", "10")],
            CapacityRejection::Missing {
                capacity: "bw".into(),
            },
        ),
        (
            &[("other.com/memory", "1Gi")],
            CapacityRejection::Missing {
                capacity: "other.com/memory".into(),
            },
        ),
        // A missing name is reported before any amount is looked at.
        (
            &[("memory", "1Ti"), ("zzz", "1")],
            CapacityRejection::Missing {
                capacity: "zzz".into(),
            },
        ),
        // The rejection names the device's key.
        (
            &[("gpu.example.com/memory", "45Gi")],
            CapacityRejection::AboveRangeMax {
                capacity: "memory".into(),
                requested: q("45Gi"),
                rounded: q("50Gi"),
                max: q("40Gi"),
            },
        ),
        (
            &[("cores", "101")],
            CapacityRejection::ExceedsValue {
                capacity: "cores".into(),
                amount: q("101"),
                value: q("100"),
            },
        ),
        (
            &[("example.com/bw", "101")],
            CapacityRejection::AboveValidValues {
                capacity: "example.com/bw".into(),
                requested: q("101"),
                largest: q("100"),
            },
        ),
    ];
    for (req, want) in table {
        let got = consumed_capacity(&device, &requests(req), DRIVER);
        assert_eq!(got.as_ref(), Err(want), "{req:?}");
        assert_eq!(got.unwrap_err().capacity(), want.capacity());
    }
    // A device without capacities serves an empty request with an empty map.
    assert_eq!(
        consumed_capacity(&Device::new("nic"), &BTreeMap::new(), DRIVER),
        Ok(BTreeMap::new())
    );
    assert_eq!(
        consumed_capacity(&Device::new("nic"), &requests(&[("bw", "1")]), DRIVER),
        Err(CapacityRejection::Missing {
            capacity: "bw".into()
        })
    );
}

#[test]
fn rejections_print() {
    let table = [
        (
            CapacityRejection::Missing {
                capacity: "bw".into(),
            },
            "the device has no capacity \"bw\"",
        ),
        (
            CapacityRejection::Negative {
                capacity: "cores".into(),
                requested: q("-1"),
            },
            "capacity \"cores\": negative request -1",
        ),
        (
            CapacityRejection::AboveValidValues {
                capacity: "bw".into(),
                requested: q("101"),
                largest: q("100"),
            },
            "capacity \"bw\": request 101 is above the largest valid value 100",
        ),
        (
            CapacityRejection::AboveRangeMax {
                capacity: "memory".into(),
                requested: q("45Gi"),
                rounded: q("50Gi"),
                max: q("40Gi"),
            },
            "capacity \"memory\": request 45Gi (rounded up to 50Gi) is above the maximum 40Gi",
        ),
        (
            CapacityRejection::ExceedsValue {
                capacity: "cores".into(),
                amount: q("101"),
                value: q("100"),
            },
            "capacity \"cores\": 101 is more than the device's 100",
        ),
    ];
    for (rejection, want) in table {
        assert_eq!(rejection.to_string(), want);
        let renamed = rejection.clone().for_capacity("x");
        assert_eq!(renamed.capacity(), "x");
    }
}

// ------------------------------------------------------------------------------------------
// fits
// ------------------------------------------------------------------------------------------

#[test]
fn fits_truth_table() {
    let device = gpu();
    // (already consumed, amount, fits)
    let table: &[(Rows, Rows, bool)] = &[
        (&[], &[], true),
        (&[], &[("cores", "100")], true),
        (&[], &[("cores", "101")], false),
        (&[("cores", "60")], &[("cores", "40")], true),
        (&[("cores", "60")], &[("cores", "40.000000001")], false),
        (&[("cores", "60")], &[("cores", "41")], false),
        // Every capacity in the amount must fit.
        (
            &[("cores", "10"), ("memory", "70Gi")],
            &[("cores", "10"), ("memory", "10Gi")],
            true,
        ),
        (
            &[("cores", "10"), ("memory", "70Gi")],
            &[("cores", "10"), ("memory", "20Gi")],
            false,
        ),
        // Consumption of capacities not in the amount is not looked at.
        (&[("memory", "999Gi")], &[("cores", "1")], true),
        // A capacity the device lacks never fits; keys are the device's, not resolved.
        (&[], &[("bw", "1")], false),
        (&[], &[("gpu.example.com/memory", "1")], false),
    ];
    for (already, amount, want) in table {
        assert_eq!(
            fits(&device, &consumed(already), &consumed(amount)),
            *want,
            "{already:?} + {amount:?}"
        );
    }
}

#[test]
fn shares_add_up_to_the_value() {
    let device = gpu();
    // Unrequested capacities are consumed too: `bw` at its default (10 of 100), `slots`
    // entirely, so each share asks for one slot.
    let share = consumed_capacity(
        &device,
        &requests(&[("memory", "20Gi"), ("cores", "25"), ("slots", "1")]),
        DRIVER,
    )
    .unwrap();
    let mut total: BTreeMap<String, Quantity> = BTreeMap::new();
    let mut placed = 0;
    while fits(&device, &total, &share) {
        for (k, v) in &share {
            let t = total.entry(k.clone()).or_insert(Quantity::ZERO);
            *t = t.checked_add(*v).unwrap();
        }
        placed += 1;
    }
    // 80Gi / 20Gi = 4, 100 / 25 = 4, 4 slots, 100 / 10 = 10: four shares.
    assert_eq!(placed, 4);
    assert_eq!(total["memory"], q("80Gi"));
}

// ------------------------------------------------------------------------------------------
// Property: consumed_amount against brute force
// ------------------------------------------------------------------------------------------

/// A small integer policy, in whole units.
#[derive(Clone, Debug)]
enum Policy {
    None,
    Values(Vec<i64>),
    Range {
        min: i64,
        step: Option<i64>,
        max: Option<i64>,
    },
}

fn policy_strategy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::None),
        prop::collection::btree_set(0i64..=60, 1..=10)
            .prop_map(|s| Policy::Values(s.into_iter().collect())),
        (
            0i64..=50,
            prop::option::of(1i64..=10),
            prop::option::of(0i64..=60)
        )
            .prop_map(|(min, step, max)| Policy::Range {
                min,
                step,
                max: max.map(|m| m.max(min)),
            }),
    ]
}

const MILLI: i128 = 1_000_000;
const UNIT: i128 = 1_000_000_000;

/// The amount a brute-force search picks, in milli-units: the smallest valid amount at
/// or above the request, where valid amounts are enumerated one by one; `None` when
/// there is none or it is above the value.
fn oracle(
    value: i64,
    policy: &Policy,
    default: Option<i64>,
    request_milli: Option<i64>,
) -> Option<i64> {
    let value_milli = value * 1000;
    let amount = match request_milli {
        None => match policy {
            Policy::None => value_milli,
            _ => default.map_or(value_milli, |d| d * 1000),
        },
        Some(r) => {
            // Every amount the policy allows, up to a bound past every input.
            let bound = 200_000;
            let allowed: Box<dyn Fn(i64) -> bool> = match policy {
                Policy::None => Box::new(move |x| x == r),
                Policy::Values(vs) => {
                    let vs = vs.clone();
                    Box::new(move |x| vs.iter().any(|v| v * 1000 == x))
                }
                Policy::Range { min, step, max } => {
                    let (min, step, max) =
                        (*min * 1000, step.map(|s| s * 1000), max.map(|m| m * 1000));
                    Box::new(move |x| {
                        x >= min
                            && max.is_none_or(|m| x <= m)
                            && step.is_none_or(|s| (x - min) % s == 0)
                    })
                }
            };
            (r..=bound).find(|&x| allowed(x))?
        }
    };
    (amount <= value_milli).then_some(amount)
}

fn capacity_of(value: i64, policy: &Policy, default: Option<i64>) -> DeviceCapacity {
    let int = Quantity::from_int;
    let request_policy = match policy {
        Policy::None => None,
        Policy::Values(vs) => Some(CapacityRequestPolicy {
            default: default.map(int),
            valid_values: vs.iter().copied().map(int).collect(),
            valid_range: None,
        }),
        Policy::Range { min, step, max } => Some(CapacityRequestPolicy {
            default: default.map(int),
            valid_values: vec![],
            valid_range: Some(CapacityRequestPolicyRange {
                min: int(*min),
                max: max.map(int),
                step: step.map(int),
            }),
        }),
    };
    DeviceCapacity {
        value: int(value),
        request_policy,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn consumed_amount_matches_brute_force(
        value in 1i64..=50,
        policy in policy_strategy(),
        default in prop::option::of(0i64..=60),
        request_milli in prop::option::of(prop_oneof![
            (0i64..=70).prop_map(|u| u * 1000),
            0i64..=70_000,
        ]),
    ) {
        let cap = capacity_of(value, &policy, default);
        let got = consumed_amount(&cap, request_milli.map(Quantity::from_milli));
        let want = oracle(value, &policy, default, request_milli);
        match (got, want) {
            (Ok(amount), Some(w)) => {
                prop_assert_eq!(amount.as_nano(), i128::from(w) * MILLI);
            }
            (Err(_), None) => {}
            (got, want) => prop_assert!(false, "got {:?}, brute force {:?}", got, want),
        }
        // The consumed amount is never below the request and never above the value.
        if let (Ok(amount), Some(r)) = (consumed_amount(&cap, request_milli.map(Quantity::from_milli)), request_milli) {
            prop_assert!(amount.as_nano() >= i128::from(r) * MILLI);
            prop_assert!(amount.as_nano() <= i128::from(value) * UNIT);
        }
    }
}
