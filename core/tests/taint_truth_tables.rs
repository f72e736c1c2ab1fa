#![cfg(not(target_arch = "wasm32"))]
//! Truth tables for taint / toleration matching, allocation blocking, eviction and
//! validation (spec dra.md 2.1–2.6). Every upstream quirk has its own test, named `quirk_*`,
//! with a comment saying which quirk it pins.

use gangpack::{
    DeviceTaint, DeviceTaintEffect, DeviceToleration, DeviceTolerationOperator, EvictionVerdict,
    ObjectKind, ObjectRef, Problem, Taint, TaintEffect, Time, Toleration, TolerationOperator,
    ValidationError, count_untolerated_prefer_no_schedule, device_eviction, device_eviction_time,
    device_taint_blocks, first_blocking_device_taint, first_untolerated_taint, names,
    node_eviction,
};

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

fn dt(key: &str, value: &str, effect: &str) -> DeviceTaint {
    DeviceTaint::new(key, value, DeviceTaintEffect::parse(effect))
}

fn dtol(key: &str, op: &str, value: &str, effect: &str, secs: Option<i64>) -> DeviceToleration {
    DeviceToleration {
        key: key.into(),
        operator: DeviceTolerationOperator::parse(op).unwrap(),
        value: value.into(),
        effect: (!effect.is_empty()).then(|| DeviceTaintEffect::parse(effect)),
        toleration_seconds: secs,
    }
}

fn nt(key: &str, value: &str, effect: &str) -> Taint {
    Taint::new(key, value, TaintEffect::parse(effect).unwrap())
}

fn ntol(key: &str, op: &str, value: &str, effect: &str, secs: Option<i64>) -> Toleration {
    Toleration {
        key: key.into(),
        operator: TolerationOperator::parse(op).unwrap(),
        value: value.into(),
        effect: (!effect.is_empty()).then(|| TaintEffect::parse(effect).unwrap()),
        toleration_seconds: secs,
    }
}

const NE: DeviceTaintEffect = DeviceTaintEffect::NoExecute;

fn evict(delay_seconds: i64) -> EvictionVerdict {
    EvictionVerdict::Evict { delay_seconds }
}

// ------------------------------------------------------------------------------------------
// Matching rule (2.3), devices
// ------------------------------------------------------------------------------------------

#[test]
fn device_effect_rule() {
    // (toleration effect, taint effect, tolerated); key matches, operator Exists.
    let table = [
        ("", "NoSchedule", true),
        ("", "NoExecute", true),
        ("", "None", true),
        ("", "Future", true),
        ("NoSchedule", "NoSchedule", true),
        ("NoSchedule", "NoExecute", false),
        ("NoSchedule", "None", false),
        ("NoSchedule", "Future", false),
        ("NoExecute", "NoExecute", true),
        ("NoExecute", "NoSchedule", false),
        ("NoExecute", "None", false),
        ("None", "None", true),
        ("None", "NoSchedule", false),
        // Effects are compared as strings: an unknown effect matches the same unknown effect.
        ("Future", "Future", true),
        ("Future", "NoExecute", false),
    ];
    for (tol_effect, taint_effect, want) in table {
        let tol = dtol("k", "Exists", "", tol_effect, None);
        let taint = dt("k", "v", taint_effect);
        assert_eq!(
            tol.tolerates(&taint),
            want,
            "{tol_effect:?} vs {taint_effect:?}"
        );
    }
    // `Some(Unknown(""))` is the empty effect spelled differently: matches all effects.
    let tol = DeviceToleration {
        effect: Some(DeviceTaintEffect::Unknown(String::new())),
        ..dtol("k", "Exists", "", "", None)
    };
    assert!(tol.tolerates(&dt("k", "", "NoExecute")));
}

#[test]
fn device_key_rule() {
    // (toleration key, taint key, tolerated); operator Exists, any effect.
    let table = [
        ("", "k", true),
        ("", "example.com/x", true),
        ("k", "k", true),
        ("k", "other", false),
        ("example.com/x", "example.com/x", true),
        ("example.com/x", "x", false),
    ];
    for (tol_key, taint_key, want) in table {
        let tol = dtol(tol_key, "Exists", "", "", None);
        assert_eq!(
            tol.tolerates(&dt(taint_key, "v", "NoSchedule")),
            want,
            "{tol_key:?} vs {taint_key:?}"
        );
    }
}

#[test]
fn device_operator_rule() {
    // (operator, toleration value, taint value, tolerated); same key, any effect.
    let table = [
        ("Exists", "", "", true),
        ("Exists", "", "v", true),
        ("Equal", "v", "v", true),
        ("Equal", "v", "w", false),
        ("Equal", "", "", true),
        ("Equal", "", "v", false),
        ("Equal", "v", "", false),
        // Exact string equality, no normalisation.
        ("Equal", "V", "v", false),
        ("Equal", "01", "1", false),
    ];
    for (op, tol_value, taint_value, want) in table {
        let tol = dtol("k", op, tol_value, "", None);
        assert_eq!(
            tol.tolerates(&dt("k", taint_value, "NoExecute")),
            want,
            "{op} {tol_value:?} vs {taint_value:?}"
        );
    }
}

#[test]
fn device_rule_examples_from_spec() {
    // `{operator: Exists}` with empty key and effect tolerates every taint.
    let all = dtol("", "Exists", "", "", None);
    for taint in [
        dt("a", "", "NoSchedule"),
        dt("b/c", "x", "NoExecute"),
        dt("d", "1", "Future"),
    ] {
        assert!(all.tolerates(&taint));
    }
    // `{key: k, operator: Exists}` tolerates every taint with key k.
    let k = dtol("k", "Exists", "", "", None);
    assert!(k.tolerates(&dt("k", "x", "NoSchedule")));
    assert!(k.tolerates(&dt("k", "", "NoExecute")));
    assert!(!k.tolerates(&dt("j", "", "NoExecute")));
    // `{key: k, operator: Equal, value: v, effect: NoSchedule}` does not tolerate k=v:NoExecute.
    let ns = dtol("k", "Equal", "v", "NoSchedule", None);
    assert!(ns.tolerates(&dt("k", "v", "NoSchedule")));
    assert!(!ns.tolerates(&dt("k", "v", "NoExecute")));
}

#[test]
fn quirk_device_empty_key_equal_matches_any_key_with_that_value() {
    // QUIRK (upstream resourceclaim.ToleratesTaint, spec 2.3): an empty key with `Equal` is not
    // special-cased; it matches every taint whose value equals the toleration's, whatever the key.
    let tol = dtol("", "Equal", "v", "", None);
    assert!(tol.tolerates(&dt("anything", "v", "NoSchedule")));
    assert!(tol.tolerates(&dt("example.com/other", "v", "NoExecute")));
    assert!(!tol.tolerates(&dt("anything", "w", "NoSchedule")));
    // With an empty value it matches every taint without a value.
    let tol = dtol("", "Equal", "", "", None);
    assert!(tol.tolerates(&dt("a", "", "NoExecute")));
    assert!(!tol.tolerates(&dt("a", "x", "NoExecute")));
    // ... and so it lets the device be allocated.
    assert!(!device_taint_blocks(
        &dt("gpu", "v", "NoSchedule"),
        &[dtol("", "Equal", "v", "", None)]
    ));
}

// ------------------------------------------------------------------------------------------
// Allocation (2.4)
// ------------------------------------------------------------------------------------------

#[test]
fn device_blocks_allocation_table() {
    let none: &[DeviceToleration] = &[];
    // (taint effect, blocks without tolerations)
    for (effect, want) in [
        ("NoSchedule", true),
        ("NoExecute", true),
        ("None", false),
        ("Future", false),
        ("", false),
        ("PreferNoSchedule", false),
    ] {
        assert_eq!(
            device_taint_blocks(&dt("k", "", effect), none),
            want,
            "{effect:?}"
        );
    }

    // (taint, tolerations, blocks)
    let table: Vec<(DeviceTaint, Vec<DeviceToleration>, bool)> = vec![
        // Tolerated taints do not block.
        (
            dt("k", "v", "NoSchedule"),
            vec![dtol("k", "Equal", "v", "", None)],
            false,
        ),
        (
            dt("k", "v", "NoExecute"),
            vec![dtol("k", "Exists", "", "NoExecute", None)],
            false,
        ),
        // A NoExecute toleration does not cover a NoSchedule taint with the same key.
        (
            dt("k", "", "NoSchedule"),
            vec![dtol("k", "Exists", "", "NoExecute", None)],
            true,
        ),
        // ... nor the other way round.
        (
            dt("k", "", "NoExecute"),
            vec![dtol("k", "Exists", "", "NoSchedule", None)],
            true,
        ),
        // Wrong value, wrong key.
        (
            dt("k", "v", "NoSchedule"),
            vec![dtol("k", "Equal", "w", "", None)],
            true,
        ),
        (
            dt("k", "v", "NoSchedule"),
            vec![dtol("j", "Exists", "", "", None)],
            true,
        ),
        // Any one matching toleration is enough.
        (
            dt("k", "v", "NoSchedule"),
            vec![
                dtol("j", "Exists", "", "", None),
                dtol("k", "Exists", "", "", None),
            ],
            false,
        ),
        // None / unknown effects never block, tolerated or not.
        (
            dt("k", "", "None"),
            vec![dtol("j", "Exists", "", "", None)],
            false,
        ),
        (dt("k", "", "Future"), vec![], false),
        // tolerationSeconds plays no part in allocation (even 0).
        (
            dt("k", "", "NoExecute"),
            vec![dtol("k", "Exists", "", "NoExecute", Some(0))],
            false,
        ),
    ];
    for (i, (taint, tols, want)) in table.iter().enumerate() {
        assert_eq!(device_taint_blocks(taint, tols), *want, "case {i}: {taint}");
    }
}

#[test]
fn device_same_key_several_effects_each_checked() {
    // Taints are cumulative: slice taint + rule taint with the same key, different effects.
    let taints = [
        dt("k", "", "None"),
        dt("k", "", "NoExecute"),
        dt("k", "", "NoSchedule"),
    ];
    let only_no_execute = [dtol("k", "Exists", "", "NoExecute", None)];
    assert_eq!(
        first_blocking_device_taint(&taints, &only_no_execute),
        Some(&taints[2])
    );
    let both = [
        dtol("k", "Exists", "", "NoExecute", None),
        dtol("k", "Exists", "", "NoSchedule", None),
    ];
    assert_eq!(first_blocking_device_taint(&taints, &both), None);
    let empty_effect = [dtol("k", "Exists", "", "", None)];
    assert_eq!(first_blocking_device_taint(&taints, &empty_effect), None);
    assert_eq!(first_blocking_device_taint(&taints, &[]), Some(&taints[1]));
    assert_eq!(first_blocking_device_taint(&[], &[]), None);
}

// ------------------------------------------------------------------------------------------
// Device eviction (2.4 step 2)
// ------------------------------------------------------------------------------------------

#[test]
fn device_eviction_table() {
    let taint = dt("k", "v", "NoExecute");
    let table: Vec<(&str, Vec<DeviceToleration>, EvictionVerdict)> = vec![
        ("no tolerations", vec![], evict(0)),
        (
            "30 and 60",
            vec![
                dtol("k", "Exists", "", "NoExecute", Some(30)),
                dtol("k", "Exists", "", "NoExecute", Some(60)),
            ],
            evict(30),
        ),
        (
            "60 and 30",
            vec![
                dtol("k", "Exists", "", "NoExecute", Some(60)),
                dtol("k", "Equal", "v", "NoExecute", Some(30)),
            ],
            evict(30),
        ),
        (
            "negative",
            vec![dtol("k", "Exists", "", "NoExecute", Some(-5))],
            evict(0),
        ),
        (
            "zero",
            vec![dtol("k", "Exists", "", "NoExecute", Some(0))],
            evict(0),
        ),
        (
            "forever",
            vec![dtol("k", "Exists", "", "NoExecute", None)],
            EvictionVerdict::ToleratedForever,
        ),
        (
            "non-matching NoExecute toleration",
            vec![dtol("k", "Equal", "w", "NoExecute", Some(30))],
            evict(0),
        ),
        (
            "NoSchedule toleration does not count",
            vec![dtol("k", "Exists", "", "NoSchedule", None)],
            evict(0),
        ),
        (
            "non-matching forever toleration does not count",
            vec![
                dtol("j", "Exists", "", "NoExecute", None),
                dtol("k", "Exists", "", "NoExecute", Some(45)),
            ],
            evict(45),
        ),
    ];
    for (name, tols, want) in table {
        assert_eq!(device_eviction(&taint, &tols), want, "{name}");
    }
}

#[test]
fn device_eviction_ignores_non_no_execute_taints() {
    for effect in ["NoSchedule", "None", "Future", ""] {
        assert_eq!(
            device_eviction(&dt("k", "", effect), &[]),
            EvictionVerdict::NotEvicting,
            "{effect:?}"
        );
    }
}

#[test]
fn quirk_device_eviction_any_unset_seconds_wins() {
    // QUIRK (upstream device_taint_eviction.go, spec 2.6): among matching NoExecute tolerations,
    // one without tolerationSeconds makes the taint ignored (infinite wins), in any position.
    // For node taints the finite minimum wins instead.
    let taint = dt("k", "v", "NoExecute");
    for tols in [
        vec![
            dtol("k", "Exists", "", "NoExecute", Some(30)),
            dtol("k", "Exists", "", "NoExecute", None),
        ],
        vec![
            dtol("k", "Exists", "", "NoExecute", None),
            dtol("k", "Exists", "", "NoExecute", Some(30)),
        ],
    ] {
        assert_eq!(
            device_eviction(&taint, &tols),
            EvictionVerdict::ToleratedForever
        );
    }
}

#[test]
fn quirk_device_eviction_ignores_empty_effect_tolerations() {
    // QUIRK (upstream device_taint_eviction.go, spec 2.4): a toleration with an empty effect
    // allows allocation of a NoExecute-tainted device but is not consulted for eviction, so
    // the pod is evicted at timeAdded.
    let taint = dt("k", "", "NoExecute");
    let tols = [dtol("k", "Exists", "", "", None)];
    assert!(!device_taint_blocks(&taint, &tols));
    assert_eq!(device_eviction(&taint, &tols), evict(0));
    let tols = [dtol("", "Exists", "", "", Some(600))];
    assert_eq!(device_eviction(&taint, &tols), evict(0));
}

#[test]
fn device_eviction_time_over_taints() {
    let tols = [dtol("slow", "Exists", "", "NoExecute", Some(100))];
    let taints = [
        dt("info", "", "None").added_at(Time(0)),
        dt("slow", "", "NoExecute").added_at(Time(10)), // 110
        dt("fast", "", "NoExecute").added_at(Time(50)), // 50: untolerated
        dt("late", "", "NoExecute").added_at(Time(50)), // tie: first one wins
        dt("no-time", "", "NoExecute"),                 // skipped
    ];
    let (when, taint) = device_eviction_time(&taints, &tols).unwrap();
    assert_eq!(when, Time(50));
    assert_eq!(taint.key, "fast");
    assert_eq!(
        device_eviction_time(&taints[..2], &tols),
        Some((Time(110), &taints[1]))
    );
    assert_eq!(device_eviction_time(&taints[..1], &tols), None);
    assert_eq!(device_eviction_time(&taints[4..], &[]), None);
    let forever = [dtol("", "Exists", "", "NoExecute", None)];
    assert_eq!(device_eviction_time(&taints, &forever), None);
    assert_eq!(
        EvictionVerdict::Evict { delay_seconds: 7 }.eviction_time(Time(3)),
        Some(Time(10))
    );
    assert_eq!(
        EvictionVerdict::ToleratedForever.eviction_time(Time(3)),
        None
    );
    assert_eq!(EvictionVerdict::NotEvicting.eviction_time(Time(3)), None);
}

// ------------------------------------------------------------------------------------------
// Node taints: matching, Lt/Gt, scheduling, eviction
// ------------------------------------------------------------------------------------------

#[test]
fn node_effect_key_operator_rules() {
    // (toleration, taint, tolerated)
    let table = [
        (
            ntol("k", "Exists", "", "", None),
            nt("k", "v", "NoSchedule"),
            true,
        ),
        (
            ntol("k", "Exists", "", "PreferNoSchedule", None),
            nt("k", "v", "PreferNoSchedule"),
            true,
        ),
        (
            ntol("k", "Exists", "", "NoSchedule", None),
            nt("k", "v", "PreferNoSchedule"),
            false,
        ),
        (
            ntol("k", "Exists", "", "NoExecute", None),
            nt("k", "v", "NoSchedule"),
            false,
        ),
        (
            ntol("", "Exists", "", "", None),
            nt("any/key", "x", "NoExecute"),
            true,
        ),
        (
            ntol("k", "Exists", "", "", None),
            nt("j", "", "NoExecute"),
            false,
        ),
        (
            ntol("k", "Equal", "v", "", None),
            nt("k", "v", "NoExecute"),
            true,
        ),
        (
            ntol("k", "Equal", "v", "", None),
            nt("k", "w", "NoExecute"),
            false,
        ),
        (
            ntol("k", "Equal", "", "", None),
            nt("k", "", "NoExecute"),
            true,
        ),
        (
            ntol("k", "Equal", "", "", None),
            nt("k", "v", "NoExecute"),
            false,
        ),
    ];
    for (i, (tol, taint, want)) in table.iter().enumerate() {
        assert_eq!(tol.tolerates(taint), *want, "case {i}: {taint}");
    }
}

#[test]
fn quirk_node_empty_key_equal_matches_any_key_with_that_value() {
    // QUIRK (upstream core/v1 Toleration.ToleratesTaint): the matcher does not special-case an
    // empty key with `Equal` (validation rejects it for pods, the matcher does not care).
    let tol = ntol("", "Equal", "v", "", None);
    assert!(tol.tolerates(&nt("whatever", "v", "NoSchedule")));
    assert!(!tol.tolerates(&nt("whatever", "w", "NoSchedule")));
}

#[test]
fn node_lt_gt_table() {
    // (operator, toleration value, taint value, tolerated). Gt: taint > toleration.
    let table = [
        ("Gt", "900", "950", true),
        ("Gt", "950", "950", false),
        ("Gt", "950", "900", false),
        ("Lt", "950", "900", true),
        ("Lt", "950", "950", false),
        ("Lt", "900", "950", false),
        // Leading zeros are not canonical, on either side.
        ("Gt", "900", "0950", false),
        ("Gt", "0900", "950", false),
        ("Lt", "0950", "900", false),
        // "-0" and "+5" are not canonical.
        ("Gt", "-0", "5", false),
        ("Lt", "5", "-0", false),
        ("Gt", "1", "+5", false),
        ("Lt", "+5", "1", false),
        // Overflow.
        ("Gt", "1", "9223372036854775808", false),
        ("Lt", "9223372036854775808", "1", false),
        ("Gt", "9223372036854775806", "9223372036854775807", true),
        ("Lt", "-9223372036854775807", "-9223372036854775808", true),
        // Non-numeric and empty.
        ("Gt", "1", "v", false),
        ("Gt", "v", "2", false),
        ("Gt", "", "2", false),
        ("Lt", "2", "", false),
        ("Gt", "1", "1.5", false),
        // Negative numbers work.
        ("Gt", "-3", "-2", true),
        ("Gt", "-3", "0", true),
        ("Lt", "-2", "-3", true),
        ("Lt", "0", "-3", true),
        ("Gt", "0", "-3", false),
        ("Lt", "1", "0", true),
    ];
    for (op, tol_value, taint_value, want) in table {
        let tol = ntol("sla", op, tol_value, "", None);
        let taint = Taint::new("sla", taint_value, TaintEffect::NoSchedule);
        assert_eq!(
            tol.tolerates(&taint),
            want,
            "{op} toleration {tol_value:?} taint {taint_value:?}"
        );
    }
    // Key and effect rules still apply to Lt/Gt.
    assert!(!ntol("other", "Gt", "1", "", None).tolerates(&nt("sla", "5", "NoSchedule")));
    assert!(!ntol("sla", "Gt", "1", "NoExecute", None).tolerates(&nt("sla", "5", "NoSchedule")));
    assert!(ntol("", "Gt", "1", "", None).tolerates(&nt("sla", "5", "NoSchedule")));
}

#[test]
fn node_scheduling_filter_and_score() {
    let taints = [
        nt("soft", "", "PreferNoSchedule"),
        nt("a", "", "NoSchedule"),
        nt("b", "", "NoExecute"),
        nt("soft2", "x", "PreferNoSchedule"),
    ];
    let hard = |e: TaintEffect| matches!(e, TaintEffect::NoSchedule | TaintEffect::NoExecute);
    assert_eq!(
        first_untolerated_taint(&taints, &[], hard),
        Some(&taints[1])
    );
    let tols = [ntol("a", "Exists", "", "", None)];
    assert_eq!(
        first_untolerated_taint(&taints, &tols, hard),
        Some(&taints[2])
    );
    let tols = [
        ntol("a", "Exists", "", "", None),
        ntol("b", "Exists", "", "NoExecute", Some(5)),
    ];
    assert_eq!(first_untolerated_taint(&taints, &tols, hard), None);
    assert_eq!(
        first_untolerated_taint(&taints, &tols, |_| true),
        Some(&taints[0])
    );

    assert_eq!(count_untolerated_prefer_no_schedule(&taints, &[]), 2);
    let tols = [ntol("soft", "Exists", "", "PreferNoSchedule", None)];
    assert_eq!(count_untolerated_prefer_no_schedule(&taints, &tols), 1);
    // A NoSchedule toleration does not tolerate a PreferNoSchedule taint.
    let tols = [ntol("soft", "Exists", "", "NoSchedule", None)];
    assert_eq!(count_untolerated_prefer_no_schedule(&taints, &tols), 2);
    let tols = [ntol("", "Exists", "", "", None)];
    assert_eq!(count_untolerated_prefer_no_schedule(&taints, &tols), 0);
}

#[test]
fn node_eviction_table() {
    let a = nt("a", "", "NoExecute");
    let b = nt("b", "", "NoExecute");
    let s = nt("s", "", "NoSchedule");
    let table: Vec<(&str, Vec<Taint>, Vec<Toleration>, EvictionVerdict)> = vec![
        ("no taints", vec![], vec![], EvictionVerdict::NotEvicting),
        (
            "only NoSchedule",
            vec![s.clone()],
            vec![],
            EvictionVerdict::NotEvicting,
        ),
        (
            "PreferNoSchedule only",
            vec![nt("p", "", "PreferNoSchedule")],
            vec![],
            EvictionVerdict::NotEvicting,
        ),
        ("untolerated NoExecute", vec![a.clone()], vec![], evict(0)),
        (
            "one of two untolerated",
            vec![a.clone(), b.clone()],
            vec![ntol("a", "Exists", "", "NoExecute", None)],
            evict(0),
        ),
        (
            "tolerated forever",
            vec![a.clone(), s.clone()],
            vec![ntol("a", "Exists", "", "NoExecute", None)],
            EvictionVerdict::ToleratedForever,
        ),
        (
            "finite beats infinite across taints",
            vec![a.clone(), b.clone()],
            vec![
                ntol("a", "Exists", "", "NoExecute", None),
                ntol("b", "Exists", "", "NoExecute", Some(30)),
            ],
            evict(30),
        ),
        (
            "finite beats infinite on one taint (finite used first)",
            vec![a.clone()],
            vec![
                ntol("a", "Exists", "", "NoExecute", Some(30)),
                ntol("a", "Exists", "", "NoExecute", None),
            ],
            evict(30),
        ),
        (
            "minimum over taints",
            vec![a.clone(), b.clone()],
            vec![
                ntol("a", "Exists", "", "NoExecute", Some(60)),
                ntol("b", "Exists", "", "NoExecute", Some(30)),
            ],
            evict(30),
        ),
        (
            "negative counts as 0",
            vec![a.clone()],
            vec![ntol("a", "Exists", "", "NoExecute", Some(-10))],
            evict(0),
        ),
        (
            "empty-effect toleration counts for nodes",
            vec![a.clone()],
            vec![ntol("a", "Exists", "", "", None)],
            EvictionVerdict::ToleratedForever,
        ),
        (
            "empty-key Exists toleration counts for nodes",
            vec![a.clone(), b.clone()],
            vec![ntol("", "Exists", "", "", None)],
            EvictionVerdict::ToleratedForever,
        ),
        (
            "NoSchedule toleration does not count",
            vec![a.clone()],
            vec![ntol("a", "Exists", "", "NoSchedule", None)],
            evict(0),
        ),
    ];
    for (name, taints, tols, want) in table {
        assert_eq!(node_eviction(&taints, &tols), want, "{name}");
    }
}

#[test]
fn quirk_node_eviction_uses_first_matching_toleration_per_taint() {
    // QUIRK (upstream component-helpers GetMatchingTolerations + taint_eviction.go
    // getMinTolerationTime): for each NoExecute taint only the first toleration (in list order)
    // that tolerates it is used; later matching tolerations are not looked at. So with the
    // unset one first the pod is tolerated forever, with the finite one first it is evicted.
    let taints = [nt("a", "", "NoExecute")];
    let forever_first = [
        ntol("a", "Exists", "", "NoExecute", None),
        ntol("a", "Exists", "", "NoExecute", Some(30)),
    ];
    assert_eq!(
        node_eviction(&taints, &forever_first),
        EvictionVerdict::ToleratedForever
    );
    let long_first = [
        ntol("a", "Exists", "", "NoExecute", Some(300)),
        ntol("a", "Exists", "", "NoExecute", Some(30)),
    ];
    assert_eq!(node_eviction(&taints, &long_first), evict(300));
}

// ------------------------------------------------------------------------------------------
// Validation (field paths)
// ------------------------------------------------------------------------------------------

fn obj() -> ObjectRef {
    ObjectRef::namespaced(ObjectKind::ResourceClaim, "ns", "claim")
}

/// The (field, problem kind) pairs, for compact assertions.
fn summary(errs: &[ValidationError]) -> Vec<(String, &'static str)> {
    errs.iter()
        .map(|e| {
            let kind = match &e.problem {
                Problem::Required => "required",
                Problem::InvalidName { .. } => "name",
                Problem::NotSupported { .. } => "not-supported",
                Problem::Invalid { .. } => "invalid",
                _ => "other",
            };
            (e.field.clone(), kind)
        })
        .collect()
}

fn s(pairs: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
    pairs.iter().map(|(f, k)| ((*f).to_owned(), *k)).collect()
}

#[test]
fn device_toleration_validation_table() {
    let p = "spec.devices.requests[0].exactly.tolerations[2]";
    let table: Vec<(DeviceToleration, Vec<(String, &'static str)>)> = vec![
        (dtol("k", "Exists", "", "", None), vec![]),
        (dtol("k", "Equal", "v", "NoSchedule", Some(5)), vec![]),
        (dtol("k", "Equal", "", "NoExecute", Some(-1)), vec![]),
        // `None` is accepted as a toleration effect (spec 2.2).
        (dtol("k", "Exists", "", "None", None), vec![]),
        (
            dtol("k", "Exists", "v", "", None),
            s(&[(
                "spec.devices.requests[0].exactly.tolerations[2].value",
                "invalid",
            )]),
        ),
        (
            dtol("k", "Exists", "", "PreferNoSchedule", None),
            s(&[(
                "spec.devices.requests[0].exactly.tolerations[2].effect",
                "not-supported",
            )]),
        ),
        (
            dtol("", "Exists", "v", "Future", None),
            s(&[
                (
                    "spec.devices.requests[0].exactly.tolerations[2].value",
                    "invalid",
                ),
                (
                    "spec.devices.requests[0].exactly.tolerations[2].effect",
                    "not-supported",
                ),
            ]),
        ),
    ];
    for (i, (tol, want)) in table.iter().enumerate() {
        assert_eq!(
            summary(&tol.validation_errors(&obj(), p)),
            *want,
            "case {i}"
        );
    }
    let errs = dtol("k", "Exists", "", "Future", None).validation_errors(&obj(), p);
    assert_eq!(
        errs[0].problem,
        Problem::NotSupported {
            value: "Future".into(),
            supported: &["NoExecute", "NoSchedule", "None"],
        }
    );
    assert_eq!(errs[0].object, obj());
}

#[test]
fn quirk_device_toleration_empty_key_equal_is_valid() {
    // QUIRK (upstream validateDeviceToleration, spec 2.2): the field docs say an empty key
    // requires `Exists`, but the hand-written validation accepts empty key + `Equal`.
    let tol = dtol("", "Equal", "v", "", None);
    assert!(tol.validation_errors(&obj(), "t[0]").is_empty());
    let tol = dtol("", "Equal", "", "NoExecute", Some(10));
    assert!(tol.validation_errors(&obj(), "t[0]").is_empty());
}

#[test]
fn device_toleration_validation_uses_name_rules() {
    // These depend on crate::names (label name / label value syntaxes).
    let p = "tolerations[1]";
    if names::validate_label_name("bad key!").is_err() {
        let errs = dtol("bad key!", "Exists", "", "", None).validation_errors(&obj(), p);
        assert_eq!(summary(&errs), s(&[("tolerations[1].key", "name")]));
    }
    if names::validate_label_value("bad value!").is_err() {
        let errs = dtol("k", "Equal", "bad value!", "", None).validation_errors(&obj(), p);
        assert_eq!(summary(&errs), s(&[("tolerations[1].value", "name")]));
    }
}

#[test]
fn node_toleration_validation_table() {
    let p = "spec.tolerations[2]";
    let table: Vec<(Toleration, Vec<(String, &'static str)>)> = vec![
        (ntol("k", "Exists", "", "", None), vec![]),
        (ntol("", "Exists", "", "", None), vec![]),
        (ntol("k", "Equal", "v", "NoSchedule", None), vec![]),
        (ntol("k", "Exists", "", "NoExecute", Some(300)), vec![]),
        (ntol("k", "Exists", "", "NoExecute", Some(-1)), vec![]),
        (ntol("k", "Gt", "950", "", None), vec![]),
        (ntol("k", "Lt", "-5", "PreferNoSchedule", None), vec![]),
        (ntol("k", "Lt", "0", "", None), vec![]),
        // Empty key needs Exists (upstream, unlike devices).
        (
            ntol("", "Equal", "v", "", None),
            s(&[("spec.tolerations[2].operator", "invalid")]),
        ),
        (
            ntol("", "Gt", "5", "", None),
            s(&[("spec.tolerations[2].operator", "invalid")]),
        ),
        // tolerationSeconds needs effect NoExecute.
        (
            ntol("k", "Exists", "", "NoSchedule", Some(5)),
            s(&[("spec.tolerations[2].effect", "invalid")]),
        ),
        (
            ntol("k", "Exists", "", "", Some(5)),
            s(&[("spec.tolerations[2].effect", "invalid")]),
        ),
        // Lt / Gt values must be canonical 64-bit decimal integers.
        (
            ntol("k", "Gt", "0950", "", None),
            s(&[("spec.tolerations[2].value", "invalid")]),
        ),
        (
            ntol("k", "Gt", "-0", "", None),
            s(&[("spec.tolerations[2].value", "invalid")]),
        ),
        (
            ntol("k", "Lt", "+5", "", None),
            s(&[("spec.tolerations[2].value", "invalid")]),
        ),
        (
            ntol("k", "Lt", "", "", None),
            s(&[("spec.tolerations[2].value", "invalid")]),
        ),
        (
            ntol("k", "Gt", "high", "", None),
            s(&[("spec.tolerations[2].value", "invalid")]),
        ),
        (
            ntol("k", "Gt", "9223372036854775808", "", None),
            s(&[("spec.tolerations[2].value", "invalid")]),
        ),
        // All at once, in upstream's order.
        (
            ntol("", "Lt", "x", "NoSchedule", Some(1)),
            s(&[
                ("spec.tolerations[2].operator", "invalid"),
                ("spec.tolerations[2].effect", "invalid"),
                ("spec.tolerations[2].value", "invalid"),
            ]),
        ),
    ];
    for (i, (tol, want)) in table.iter().enumerate() {
        assert_eq!(
            summary(&tol.validation_errors(&obj(), p)),
            *want,
            "case {i}"
        );
    }
    let errs = ntol("k", "Exists", "", "", Some(5)).validation_errors(&obj(), p);
    assert_eq!(
        errs[0].problem,
        Problem::Invalid {
            value: String::new(),
            reason: "effect must be 'NoExecute' when `tolerationSeconds` is set",
        }
    );
}

#[test]
fn quirk_node_toleration_value_errors_reported_at_operator() {
    // QUIRK (upstream ValidateTolerations): a non-empty value with `Exists`, and a value that is
    // not a label value with `Equal`, are reported at `operator`, not at `value`.
    let errs = ntol("k", "Exists", "v", "", None).validation_errors(&obj(), "spec.tolerations[0]");
    assert_eq!(
        summary(&errs),
        s(&[("spec.tolerations[0].operator", "invalid")])
    );
    if names::validate_label_value("bad value!").is_err() {
        let errs = ntol("k", "Equal", "bad value!", "", None)
            .validation_errors(&obj(), "spec.tolerations[0]");
        assert_eq!(
            summary(&errs),
            s(&[("spec.tolerations[0].operator", "name")])
        );
    }
    if names::validate_label_name("bad key!").is_err() {
        let errs = ntol("bad key!", "Exists", "", "", None).validation_errors(&obj(), "t[0]");
        assert_eq!(summary(&errs), s(&[("t[0].key", "name")]));
    }
}

#[test]
fn device_taint_validation_table() {
    let p = "spec.devices[3].taints[1]";
    let table: Vec<(DeviceTaint, Vec<(String, &'static str)>)> = vec![
        (dt("k", "v", "NoSchedule"), vec![]),
        (dt("k", "", "NoExecute"), vec![]),
        (dt("example.com/k", "", "None"), vec![]),
        (
            dt("", "", "None"),
            s(&[("spec.devices[3].taints[1].key", "required")]),
        ),
        (
            dt("k", "", ""),
            s(&[("spec.devices[3].taints[1].effect", "required")]),
        ),
        (
            dt("k", "", "PreferNoSchedule"),
            s(&[("spec.devices[3].taints[1].effect", "not-supported")]),
        ),
        (
            dt("", "", "Future"),
            s(&[
                ("spec.devices[3].taints[1].key", "required"),
                ("spec.devices[3].taints[1].effect", "not-supported"),
            ]),
        ),
    ];
    for (i, (taint, want)) in table.iter().enumerate() {
        assert_eq!(
            summary(&taint.validation_errors(&obj(), p)),
            *want,
            "case {i}"
        );
    }
    if names::validate_label_value("bad value!").is_err() {
        let errs = dt("k", "bad value!", "NoSchedule").validation_errors(&obj(), p);
        assert_eq!(
            summary(&errs),
            s(&[("spec.devices[3].taints[1].value", "name")])
        );
    }
}

#[test]
fn node_taint_validation_table() {
    let p = "spec.taints[0]";
    assert!(
        nt("k", "v", "NoExecute")
            .validation_errors(&obj(), p)
            .is_empty()
    );
    assert!(
        nt("k", "", "PreferNoSchedule")
            .validation_errors(&obj(), p)
            .is_empty()
    );
    assert_eq!(
        summary(&nt("", "v", "NoSchedule").validation_errors(&obj(), p)),
        s(&[("spec.taints[0].key", "required")])
    );
    if names::validate_label_name("bad key!").is_err() {
        let errs = nt("bad key!", "", "NoSchedule").validation_errors(&obj(), p);
        assert_eq!(summary(&errs), s(&[("spec.taints[0].key", "name")]));
    }
}

#[test]
fn string_forms() {
    assert_eq!(nt("k", "v", "NoSchedule").to_string(), "k=v:NoSchedule");
    assert_eq!(nt("k", "", "NoExecute").to_string(), "k:NoExecute");
    assert_eq!(dt("k", "v", "").to_string(), "k=v:");
    assert_eq!(dt("k", "", "").to_string(), "k");
    assert_eq!(dt("k", "v", "Future").to_string(), "k=v:Future");
    assert_eq!(
        "k=v:NoExecute".parse::<DeviceTaint>().unwrap(),
        dt("k", "v", "NoExecute")
    );
    assert_eq!(DeviceTaint::parse_spec("k").unwrap(), dt("k", "", ""));
    assert!(Taint::parse_spec("k").is_err());
    assert_eq!(DeviceTaintEffect::parse("NoExecute"), NE);
}

#[cfg(feature = "serde")]
#[test]
fn serde_uses_kubernetes_spellings() {
    use serde_json::json;

    let tol = dtol("k", "Exists", "", "NoExecute", Some(30));
    let v = serde_json::to_value(&tol).unwrap();
    assert_eq!(
        v,
        json!({"key": "k", "operator": "Exists", "value": "", "effect": "NoExecute", "tolerationSeconds": 30})
    );
    assert_eq!(serde_json::from_value::<DeviceToleration>(v).unwrap(), tol);
    // Missing fields take the Kubernetes defaults (operator Equal, empty key/value/effect).
    let tol: DeviceToleration = serde_json::from_value(json!({"value": "v"})).unwrap();
    assert_eq!(tol, dtol("", "Equal", "v", "", None));

    // Unknown device effects load and serialize back unchanged.
    let taint: DeviceTaint =
        serde_json::from_value(json!({"key": "k", "effect": "Future", "timeAdded": 12})).unwrap();
    assert_eq!(taint, dt("k", "", "Future").added_at(Time(12)));
    assert_eq!(
        serde_json::to_value(&taint).unwrap(),
        json!({"key": "k", "value": "", "effect": "Future", "timeAdded": 12})
    );

    let node_tol = ntol("sla", "Gt", "950", "PreferNoSchedule", None);
    let v = serde_json::to_value(&node_tol).unwrap();
    assert_eq!(
        v,
        json!({"key": "sla", "operator": "Gt", "value": "950", "effect": "PreferNoSchedule"})
    );
    assert_eq!(serde_json::from_value::<Toleration>(v).unwrap(), node_tol);
    assert!(serde_json::from_value::<Taint>(json!({"key": "k", "effect": "None"})).is_err());

    assert_eq!(
        serde_json::to_value(evict(5)).unwrap(),
        json!({"Evict": {"delaySeconds": 5}})
    );
    assert_eq!(
        serde_json::to_value(EvictionVerdict::ToleratedForever).unwrap(),
        json!("ToleratedForever")
    );
}
