//! Helpers the abi test binaries share: example files as the module takes them.

use serde_json::{Value, json};

/// The file at `path` (from the repository root) as `{name, text}`.
pub(crate) fn file(path: &str) -> Value {
    let text = std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR")))
        .expect("example");
    json!({"name": path, "text": text})
}

/// `examples/cluster`'s files, one by one.
pub(crate) fn cluster() -> Vec<Value> {
    [
        "deviceclasses",
        "namespace",
        "nodes",
        "priorityclasses",
        "resourceslices",
    ]
    .iter()
    .map(|f| file(&format!("examples/cluster/{f}.yaml")))
    .collect()
}
