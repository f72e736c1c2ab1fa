//! The platform differences this suite found, each pinned where it lived, natively and
//! under wasm32 (the same assertions on both).

use gangpack::{Device, DomainGap, EvalError, Selector, ShapeGap, Unit, WhatItTakes};

/// `cel.bind(a0, [device.driver], cel.bind(a1, a0 + a0, ...))`: `doublings` times.
fn doubling(doublings: u32) -> String {
    let mut body = format!("a{doublings}.size() > 0");
    for i in (1..=doublings).rev() {
        body = format!("cel.bind(a{i}, a{0} + a{0}, {body})", i - 1);
    }
    format!("cel.bind(a0, [device.driver], {body})")
}

/// A CEL list item costs 10 units of the 1,000,000 budget everywhere. It was a value's
/// size in 8-byte words: 10 natively, 6 on wasm32, where 16 doublings (131,070 items)
/// fit the budget and a selector that fails natively matched.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn cel_list_items_cost_the_same_everywhere() {
    let gpu = Device::new("gpu-0");
    let light = Selector::compile(&doubling(15)).expect("compiles");
    assert_eq!(light.eval("gpu.example.com", &gpu), Ok(true));
    let heavy = Selector::compile(&doubling(16)).expect("compiles");
    assert_eq!(
        heavy.eval("gpu.example.com", &gpu),
        Err(EvalError::CostLimitExceeded { limit: 1_000_000 })
    );
}

/// A regular expression's size limit counts NFA states and transitions. It was
/// `regex-automata`'s limit in bytes, and an NFA holds pointers: `\pL{60}` was too
/// large natively and compiled on wasm32 (the first size over the limit was 57 natively,
/// 77 on wasm32).
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn regex_size_limit_is_the_same_everywhere() {
    let matches = |n: u32| Selector::compile(&format!(r"device.driver.matches('\\pL{{{n}}}')"));
    assert!(matches(56).is_ok());
    for n in [57, 60, 76] {
        let e = matches(n).expect_err("too large");
        assert_eq!(
            e.to_string(),
            "at 22: error parsing regexp: expression too large",
            "\\pL{{{n}}}"
        );
    }
}

/// A `u64` count in a what-it-takes text is pluralised as it is. It was cast to
/// `usize` first, which truncated it on wasm32: 4,294,967,297 devices printed as
/// "device".
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn what_it_takes_counts_past_u32() {
    let w = WhatItTakes {
        unit: Unit::Pod("default/huge".into()),
        fits_now: false,
        waiting_for_pods: false,
        preemption: None,
        may_preempt: true,
        domains: vec![DomainGap {
            domain: None,
            required: 1,
            fit: 0,
            missing: vec![ShapeGap {
                example: "default/huge".into(),
                pods: 1,
                devices_per_pod: (1 << 32) + 1,
            }],
        }],
        unresolvable: Vec::new(),
        undecided: false,
    };
    assert_eq!(
        w.to_string(),
        "What it would take to place Pod default/huge:\n  \
         preemption: evicting lower-priority units would not help\n  \
         the cluster: 0 of 1 pod fits; at least 4294967297 more free devices needed:\n    \
         1 pod like default/huge (4294967297 devices each)"
    );
}
