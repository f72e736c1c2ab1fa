//! The bindings in a real browser (headless Chromium through `wasm-bindgen-test`):
//! the module instantiates, plans the demo cluster and throws real `Error`s there too.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

fn get(v: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(v, &JsValue::from_str(key)).expect("an object")
}

#[wasm_bindgen_test]
fn plans_explains_and_taints_the_demo_in_the_browser() {
    let demo = gangpack_wasm::demo_manifests(Some(0)).expect("the demo builds");
    let r = gangpack_wasm::plan(JsValue::from_str(&demo), None).expect("the demo plans");
    assert_eq!(get(&r, "exitCode").as_f64(), Some(3.0));
    let unit = JsValue::from_str("ml-training/gpt-moe-pretrain");
    let e = gangpack_wasm::explain(JsValue::from_str(&demo), Some(unit), None).expect("explains");
    let text = get(&e, "text").as_string().expect("text");
    // The verdict first (what helps, agreeing with the next cycle), then the tree.
    assert!(
        text.starts_with("PodGroup ml-training/gpt-moe-pretrain: pending; waiting helps: "),
        "{text}"
    );
    assert!(
        text.contains("\nPodGroup ml-training/gpt-moe-pretrain: Unschedulable (capacity"),
        "{text}"
    );
    let spec = js_sys::Object::new();
    js_sys::Reflect::set(&spec, &"node".into(), &"gpu-r1-n1".into()).expect("settable");
    let t = gangpack_wasm::taint(JsValue::from_str(&demo), spec.into(), None).expect("taints");
    let table = get(&t, "table").as_string().expect("text");
    assert!(table.contains("pods evicted"), "{table}");
}

#[wasm_bindgen_test]
fn errors_are_real_errors_in_the_browser() {
    let err = gangpack_wasm::plan(JsValue::from_str("kind: ["), None).expect_err("not YAML");
    assert!(err.is_instance_of::<js_sys::Error>());
    let e: js_sys::Error = err.unchecked_into();
    assert_eq!(String::from(e.name()), "InvalidInput");
}
