//! `gangpack check`'s decision reader: arbitrary decision objects applied over a fixed
//! dump (the check corpus's cluster and a case with a gang, claims and shares) never
//! panic; the outcome is valid, violations or invalid input, with stdout to match.
#![no_main]

use gangpack_cli::{Format, Input, InputFile, Options, Style};
use libfuzzer_sys::fuzz_target;

const CLUSTER: &str = include_str!("../../cli/tests/fixtures/check/cluster.yaml");
const CASE: &str = include_str!("../../cli/tests/fixtures/check/capacity-exceeded.yaml");
const GANG: &str = include_str!("../../cli/tests/fixtures/check/topology-split.yaml");

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let dump = Input::Files(vec![
        InputFile {
            name: "cluster.yaml".into(),
            text: CLUSTER.into(),
        },
        InputFile {
            name: "case.yaml".into(),
            text: CASE.into(),
        },
        InputFile {
            name: "gang.yaml".into(),
            text: GANG.into(),
        },
    ]);
    let decisions = Input::Files(vec![InputFile {
        name: "decisions.yaml".into(),
        text: text.into(),
    }]);
    let run = gangpack_cli::check(
        &dump,
        Some(&decisions),
        &Options::default(),
        false,
        Format::Json,
        Style::PLAIN,
    );
    assert!([0, 2, 4].contains(&run.code), "exit {}", run.code);
    if run.code == 2 {
        assert!(run.stdout.is_empty() && run.failure.is_some());
    } else {
        let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON findings");
        assert_eq!(v.as_array().expect("a list").is_empty(), run.code == 0);
    }
});
