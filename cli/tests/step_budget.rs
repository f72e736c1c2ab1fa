//! `--step-budget` and `--allocator-step-budget` (issue 18, adversarial search): the
//! budgets reach the placer, a search that runs out is reported as undecided with the
//! budget named, its value and where to raise it (never as "does not fit"), and a
//! budget of 0 is a usage error.
//!
//! `near-miss.yaml`: three nodes of four GPUs with one matched NUMA pair each, and a
//! gang of four pods of two GPUs on one NUMA node: three fit, and the search needs 6
//! steps to know that (the allocation of two pods together on a node, which fails,
//! takes 6 allocator steps).
//!
//! Runs from the workspace root, so paths are `cli/tests/fixtures/...`.

mod common;

use common::{Run, run};

const NEAR_MISS: &str = "cli/tests/fixtures/step-budget/near-miss.yaml";

fn plan(rest: &[&str]) -> Run {
    let mut args = vec!["plan", "-f", NEAR_MISS];
    args.extend_from_slice(rest);
    run(&args)
}

fn explain(rest: &[&str]) -> Run {
    let mut args = vec!["explain", "-f", NEAR_MISS, "ring"];
    args.extend_from_slice(rest);
    run(&args)
}

/// The pending reason `plan` prints for the gang.
fn reason(r: &Run) -> &str {
    r.out
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("PodGroup default/ring: "))
        .unwrap_or_else(|| panic!("no reason line:\n{}", r.out))
}

#[test]
fn the_default_budgets_decide_the_near_miss() {
    let r = plan(&[]);
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    assert_eq!(
        reason(&r),
        "3 of 4 pods fit: 3 nodes (gpu-0, gpu-1, gpu-2) can each host a pod but together hold \
         only 3 of the 4 pods"
    );
    // The budget the search needs exactly is enough.
    assert_eq!(reason(&plan(&["--step-budget", "6"])), reason(&r));
}

#[test]
fn a_step_budget_too_small_is_reported_as_undecided() {
    let r = plan(&["--step-budget", "3"]);
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    assert_eq!(
        reason(&r),
        "undecided: the gang search's step budget (3 steps) ran out before an answer was known: \
         raise it to search further (GangOptions::step_budget, --step-budget, stepBudget)"
    );
    assert!(r.err.is_empty(), "{}", r.err);
    // A global flag: before the command too.
    let before = run(&["--step-budget", "3", "plan", "-f", NEAR_MISS]);
    assert_eq!(before.out, r.out);

    let r = explain(&["--step-budget", "3"]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    let head: Vec<&str> = r.out.lines().take(4).collect();
    assert_eq!(
        head,
        [
            "PodGroup default/ring: pending; undecided: the gang search's step budget (3 steps) \
             ran out before an answer was known: raise it to search further \
             (GangOptions::step_budget, --step-budget, stepBudget)",
            "PodGroup default/ring: Undecided (a step budget ran out)",
            "├─ needs 4 pending pods placed together (0 running); 2 placed together before the \
             budget ran out",
            "├─ undecided: the gang search's step budget (3 steps) ran out before an answer was \
             known: raise it to search further (GangOptions::step_budget, --step-budget, \
             stepBudget); a placement may still exist",
        ]
    );
    assert!(
        r.out
            .contains("└─ no blocking set sought: the search is undecided\n"),
        "{}",
        r.out
    );
    assert!(
        r.out
            .contains("  the cluster: all 4 pods fit by count; whether together is undecided"),
        "{}",
        r.out
    );
}

#[test]
fn an_allocator_step_budget_too_small_is_reported_as_undecided() {
    let r = plan(&["--allocator-step-budget", "1"]);
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    assert_eq!(
        reason(&r),
        "undecided: a claim allocation's step budget (1 step per call) ran out before an answer \
         was known: raise it to search further (GangOptions::allocator_step_budget, \
         --allocator-step-budget, allocatorStepBudget)"
    );
    // The joint allocation of two pods on one node (which fails) takes 6 steps: 5 are
    // not enough to decide, 6 are.
    let r = plan(&["--allocator-step-budget", "5"]);
    assert!(reason(&r).starts_with("undecided: "), "{}", r.out);
    let r = plan(&["--allocator-step-budget", "6"]);
    assert!(reason(&r).starts_with("3 of 4 pods fit"), "{}", r.out);
}

#[test]
fn a_budget_of_zero_is_a_usage_error() {
    for flag in ["--step-budget", "--allocator-step-budget"] {
        let r = plan(&[flag, "0"]);
        assert_eq!(r.code, 2, "{flag}: {}{}", r.out, r.err);
        assert!(r.out.is_empty(), "{flag}: nothing planned: {}", r.out);
        assert!(
            r.err
                .contains(&format!("invalid value '0' for '{flag} <N>'")),
            "{flag}: {}",
            r.err
        );
    }
    let r = plan(&["--step-budget", "many"]);
    assert_eq!(r.code, 2);
    assert!(
        r.err
            .contains("invalid value 'many' for '--step-budget <N>'"),
        "{}",
        r.err
    );
}
