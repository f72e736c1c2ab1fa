//! The Kubernetes object loader (YAML, JSON, `kind: List`), the snapshot and one plan
//! over it: never a panic; invalid input is an error naming where it is.
#![no_main]

use gangpack_cli::{Format, Input, InputFile, Options, Style};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        // Non-UTF-8 is the loader's to refuse too.
        let lossy = String::from_utf8_lossy(data);
        let _ = gangpack_k8s::load_str(&lossy, "fuzz.yaml");
        return;
    };
    let input = Input::Files(vec![InputFile {
        name: "fuzz.yaml".into(),
        text: text.to_owned(),
    }]);
    let run = gangpack_cli::plan(&input, &Options::default(), Format::Json, Style::PLAIN);
    assert!([0, 2, 3].contains(&run.code), "exit {}", run.code);
    assert_eq!(run.failure.is_some(), run.stdout.is_empty(), "{text:?}");
});
