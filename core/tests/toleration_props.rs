#![cfg(not(target_arch = "wasm32"))]
//! Property tests: the crate's matchers and eviction rules against a small string-based
//! reference written here from the spec text (dra.md 2.3, 2.4, 2.6 and the node rules),
//! over taints and tolerations drawn from small alphabets.

use gangpack::{
    DeviceTaint, DeviceTaintEffect, DeviceToleration, DeviceTolerationOperator, EvictionVerdict,
    Taint, TaintEffect, Toleration, TolerationOperator, count_untolerated_prefer_no_schedule,
    device_eviction, device_taint_blocks, first_blocking_device_taint, first_untolerated_taint,
    node_eviction,
};
use proptest::prelude::*;
use proptest::sample::select;

// ------------------------------------------------------------------------------------------
// Reference model: plain strings, written from the spec, independent of the crate.
// ------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct RTaint {
    key: &'static str,
    value: &'static str,
    effect: &'static str,
}

#[derive(Clone, Debug)]
struct RTol {
    key: &'static str,
    op: &'static str,
    value: &'static str,
    effect: &'static str, // "" = all effects
    secs: Option<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RVerdict {
    NotEvicting,
    Forever,
    After(i64),
}

/// "0", or "-"? then [1-9][0-9]*, fitting in 64 signed bits.
fn ref_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if digits.starts_with('0') && (neg || digits != "0") {
        return None;
    }
    if digits.len() > 19 {
        return None;
    }
    let mut n: i128 = 0;
    for c in digits.chars() {
        n = n * 10 + i128::from(c as u8 - b'0');
    }
    if neg {
        n = -n;
    }
    i64::try_from(n).ok()
}

/// Rule 2.3 (+ Lt/Gt for nodes): effect empty or equal; key empty or equal; operator.
fn ref_tolerates(t: &RTol, x: &RTaint) -> bool {
    if !t.effect.is_empty() && t.effect != x.effect {
        return false;
    }
    if !t.key.is_empty() && t.key != x.key {
        return false;
    }
    match t.op {
        "" | "Equal" => t.value == x.value,
        "Exists" => true,
        "Lt" | "Gt" => match (ref_int(t.value), ref_int(x.value)) {
            (Some(tv), Some(xv)) => {
                if t.op == "Lt" {
                    xv < tv
                } else {
                    xv > tv
                }
            }
            _ => false,
        },
        _ => false,
    }
}

/// Allocation: a taint blocks if its effect is NoSchedule or NoExecute and nothing tolerates it.
fn ref_blocks(x: &RTaint, ts: &[RTol]) -> bool {
    (x.effect == "NoSchedule" || x.effect == "NoExecute") && !ts.iter().any(|t| ref_tolerates(t, x))
}

/// Device eviction controller, spec 2.4 step 2.
fn ref_device_eviction(x: &RTaint, ts: &[RTol]) -> RVerdict {
    if x.effect != "NoExecute" {
        return RVerdict::NotEvicting;
    }
    let matching: Vec<&RTol> = ts
        .iter()
        .filter(|t| t.effect == "NoExecute" && ref_tolerates(t, x))
        .collect();
    if matching.iter().any(|t| t.secs.is_none()) {
        return RVerdict::Forever;
    }
    let min = matching.iter().filter_map(|t| t.secs).min();
    RVerdict::After(min.map_or(0, |m| m.max(0)))
}

/// Node taint manager: NoExecute taints only; for each, the first tolerating toleration is
/// "used"; none → evict now; then getMinTolerationTime over the used ones.
fn ref_node_eviction(xs: &[RTaint], ts: &[RTol]) -> RVerdict {
    let no_execute: Vec<&RTaint> = xs.iter().filter(|x| x.effect == "NoExecute").collect();
    if no_execute.is_empty() {
        return RVerdict::NotEvicting;
    }
    let mut used = Vec::new();
    for x in no_execute {
        match ts.iter().find(|t| ref_tolerates(t, x)) {
            Some(t) => used.push(t),
            None => return RVerdict::After(0),
        }
    }
    let mut min = i64::MAX;
    for t in used {
        if let Some(s) = t.secs {
            if s <= 0 {
                return RVerdict::After(0);
            }
            min = min.min(s);
        }
    }
    if min == i64::MAX {
        RVerdict::Forever
    } else {
        RVerdict::After(min)
    }
}

// ------------------------------------------------------------------------------------------
// Conversions to the crate's types
// ------------------------------------------------------------------------------------------

fn to_device_taint(x: &RTaint) -> DeviceTaint {
    DeviceTaint::new(x.key, x.value, DeviceTaintEffect::parse(x.effect))
}

fn to_device_tol(t: &RTol) -> DeviceToleration {
    DeviceToleration {
        key: t.key.into(),
        operator: DeviceTolerationOperator::parse(t.op).unwrap(),
        value: t.value.into(),
        effect: (!t.effect.is_empty()).then(|| DeviceTaintEffect::parse(t.effect)),
        toleration_seconds: t.secs,
    }
}

fn to_node_taint(x: &RTaint) -> Taint {
    Taint::new(x.key, x.value, TaintEffect::parse(x.effect).unwrap())
}

fn to_node_tol(t: &RTol) -> Toleration {
    Toleration {
        key: t.key.into(),
        operator: TolerationOperator::parse(t.op).unwrap(),
        value: t.value.into(),
        effect: (!t.effect.is_empty()).then(|| TaintEffect::parse(t.effect).unwrap()),
        toleration_seconds: t.secs,
    }
}

fn from_verdict(v: EvictionVerdict) -> RVerdict {
    match v {
        EvictionVerdict::NotEvicting => RVerdict::NotEvicting,
        EvictionVerdict::ToleratedForever => RVerdict::Forever,
        EvictionVerdict::Evict { delay_seconds } => RVerdict::After(delay_seconds),
    }
}

// ------------------------------------------------------------------------------------------
// Generators
// ------------------------------------------------------------------------------------------

const KEYS: &[&str] = &["", "a", "b", "x/y"];
const VALUES: &[&str] = &["", "1", "2", "950", "0950", "-3", "v"];
const SECS: &[Option<i64>] = &[None, Some(-5), Some(0), Some(30), Some(60)];

fn device_taint() -> impl Strategy<Value = RTaint> {
    (
        select(KEYS),
        select(VALUES),
        select(&["None", "NoSchedule", "NoExecute", "Future", ""][..]),
    )
        .prop_map(|(key, value, effect)| RTaint { key, value, effect })
}

fn device_tol() -> impl Strategy<Value = RTol> {
    (
        select(KEYS),
        select(&["Exists", "Equal"][..]),
        select(VALUES),
        select(&["", "None", "NoSchedule", "NoExecute", "Future"][..]),
        select(SECS),
    )
        .prop_map(|(key, op, value, effect, secs)| RTol {
            key,
            op,
            value,
            effect,
            secs,
        })
}

fn node_taint() -> impl Strategy<Value = RTaint> {
    (
        select(KEYS),
        select(VALUES),
        select(&["NoSchedule", "PreferNoSchedule", "NoExecute"][..]),
    )
        .prop_map(|(key, value, effect)| RTaint { key, value, effect })
}

fn node_tol() -> impl Strategy<Value = RTol> {
    (
        select(KEYS),
        select(&["Exists", "Equal", "Lt", "Gt"][..]),
        select(VALUES),
        select(&["", "NoSchedule", "PreferNoSchedule", "NoExecute"][..]),
        select(SECS),
    )
        .prop_map(|(key, op, value, effect, secs)| RTol {
            key,
            op,
            value,
            effect,
            secs,
        })
}

// ------------------------------------------------------------------------------------------
// Properties
// ------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn device_tolerates_matches_reference(t in device_tol(), x in device_taint()) {
        prop_assert_eq!(to_device_tol(&t).tolerates(&to_device_taint(&x)), ref_tolerates(&t, &x));
    }

    #[test]
    fn device_blocks_matches_reference(
        xs in prop::collection::vec(device_taint(), 0..5),
        ts in prop::collection::vec(device_tol(), 0..5),
    ) {
        let taints: Vec<DeviceTaint> = xs.iter().map(to_device_taint).collect();
        let tols: Vec<DeviceToleration> = ts.iter().map(to_device_tol).collect();
        for (x, taint) in xs.iter().zip(&taints) {
            prop_assert_eq!(device_taint_blocks(taint, &tols), ref_blocks(x, &ts));
        }
        let want = xs.iter().position(|x| ref_blocks(x, &ts));
        let got = first_blocking_device_taint(&taints, &tols)
            .map(|b| taints.iter().position(|t| std::ptr::eq(t, b)).unwrap());
        prop_assert_eq!(got, want);
    }

    #[test]
    fn device_eviction_matches_reference(
        x in device_taint(),
        ts in prop::collection::vec(device_tol(), 0..5),
    ) {
        let tols: Vec<DeviceToleration> = ts.iter().map(to_device_tol).collect();
        prop_assert_eq!(
            from_verdict(device_eviction(&to_device_taint(&x), &tols)),
            ref_device_eviction(&x, &ts)
        );
    }

    #[test]
    fn node_tolerates_matches_reference(t in node_tol(), x in node_taint()) {
        prop_assert_eq!(to_node_tol(&t).tolerates(&to_node_taint(&x)), ref_tolerates(&t, &x));
    }

    #[test]
    fn node_filter_and_score_match_reference(
        xs in prop::collection::vec(node_taint(), 0..5),
        ts in prop::collection::vec(node_tol(), 0..5),
    ) {
        let taints: Vec<Taint> = xs.iter().map(to_node_taint).collect();
        let tols: Vec<Toleration> = ts.iter().map(to_node_tol).collect();
        let hard = |e: &str| e == "NoSchedule" || e == "NoExecute";
        let want = xs
            .iter()
            .position(|x| hard(x.effect) && !ts.iter().any(|t| ref_tolerates(t, x)));
        let got = first_untolerated_taint(&taints, &tols, |e| hard(e.as_str()))
            .map(|b| taints.iter().position(|t| std::ptr::eq(t, b)).unwrap());
        prop_assert_eq!(got, want);
        let want_count = xs
            .iter()
            .filter(|x| x.effect == "PreferNoSchedule" && !ts.iter().any(|t| ref_tolerates(t, x)))
            .count();
        prop_assert_eq!(count_untolerated_prefer_no_schedule(&taints, &tols), want_count);
    }

    #[test]
    fn node_eviction_matches_reference(
        xs in prop::collection::vec(node_taint(), 0..5),
        ts in prop::collection::vec(node_tol(), 0..5),
    ) {
        let taints: Vec<Taint> = xs.iter().map(to_node_taint).collect();
        let tols: Vec<Toleration> = ts.iter().map(to_node_tol).collect();
        prop_assert_eq!(from_verdict(node_eviction(&taints, &tols)), ref_node_eviction(&xs, &ts));
    }

    #[test]
    fn verdict_delay_is_never_negative(
        x in device_taint(),
        xs in prop::collection::vec(node_taint(), 0..5),
        dts in prop::collection::vec(device_tol(), 0..5),
        nts in prop::collection::vec(node_tol(), 0..5),
    ) {
        let dtols: Vec<DeviceToleration> = dts.iter().map(to_device_tol).collect();
        let ntols: Vec<Toleration> = nts.iter().map(to_node_tol).collect();
        let taints: Vec<Taint> = xs.iter().map(to_node_taint).collect();
        for v in [device_eviction(&to_device_taint(&x), &dtols), node_eviction(&taints, &ntols)] {
            if let EvictionVerdict::Evict { delay_seconds } = v {
                prop_assert!(delay_seconds >= 0);
            }
        }
    }

    #[test]
    fn device_taint_string_form_round_trips(x in device_taint()) {
        prop_assume!(!x.key.is_empty());
        let taint = to_device_taint(&x);
        prop_assert_eq!(DeviceTaint::parse_spec(&taint.to_string()), Ok(taint));
    }

    #[test]
    fn node_taint_string_form_round_trips(x in node_taint()) {
        prop_assume!(!x.key.is_empty());
        let taint = to_node_taint(&x);
        prop_assert_eq!(Taint::parse_spec(&taint.to_string()), Ok(taint));
    }

    #[test]
    fn lt_gt_agree_with_reference_on_arbitrary_numbers(
        s in prop_oneof![
            "-?[0-9+]{0,21}",
            any::<i64>().prop_map(|n| n.to_string()),
            any::<i128>().prop_map(|n| n.to_string()),
            (any::<i64>(), "0{1,2}").prop_map(|(n, z)| format!("{z}{n}")),
        ],
        n in any::<i64>(),
    ) {
        // The taint's value is arbitrary, the toleration's is `n` printed canonically.
        prop_assert_eq!(ref_int(&n.to_string()), Some(n));
        // Equal numbers never match Lt or Gt.
        let same = Taint::new("k", n.to_string(), TaintEffect::NoSchedule);
        for op in [TolerationOperator::Lt, TolerationOperator::Gt] {
            let tol = Toleration {
                key: "k".into(),
                operator: op,
                value: n.to_string(),
                ..Toleration::default()
            };
            prop_assert!(!tol.tolerates(&same));
        }
        let taint = Taint::new("k", s.as_str(), TaintEffect::NoSchedule);
        for (op, want) in [
            (TolerationOperator::Gt, ref_int(&s).is_some_and(|v| v > n)),
            (TolerationOperator::Lt, ref_int(&s).is_some_and(|v| v < n)),
        ] {
            let tol = Toleration {
                key: "k".into(),
                operator: op,
                value: n.to_string(),
                ..Toleration::default()
            };
            prop_assert_eq!(tol.tolerates(&taint), want);
            // And with the roles swapped: arbitrary toleration value, canonical taint value.
            let tol = Toleration { value: s.clone(), ..tol };
            let taint = Taint::new("k", n.to_string(), TaintEffect::NoSchedule);
            let want = match op {
                TolerationOperator::Gt => ref_int(&s).is_some_and(|v| n > v),
                _ => ref_int(&s).is_some_and(|v| n < v),
            };
            prop_assert_eq!(tol.tolerates(&taint), want);
        }
    }
}
