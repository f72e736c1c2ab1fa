//! The CEL front end (lexer, parser, checker) and the evaluator on a fixed device: never
//! a panic, and evaluation is deterministic.
#![no_main]

use gangpack::{Device, DeviceAttribute, Quantity, Selector};
use libfuzzer_sys::fuzz_target;

fn device() -> Device {
    Device::new("gpu-0")
        .with_attribute("model", DeviceAttribute::String("H100".into()))
        .with_attribute("numaNode", DeviceAttribute::Int(1))
        .with_attribute("gpu.example.com/healthy", DeviceAttribute::Bool(true))
        .with_capacity("memory", Quantity::parse("80Gi").expect("constant"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(selector) = Selector::compile(text) {
        let d = device();
        let first = selector.eval("gpu.example.com", &d);
        let second = selector.eval("gpu.example.com", &d);
        assert_eq!(format!("{first:?}"), format!("{second:?}"), "{text:?}");
    }
});
