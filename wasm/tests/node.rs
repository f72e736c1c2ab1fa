//! The bindings called as JavaScript calls them, in Node (`wasm-bindgen-test`): values
//! in and out through `JsValue`, thrown errors with their kind and problems.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn get(v: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(v, &JsValue::from_str(key)).expect("an object")
}

fn options(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = js_sys::Object::new();
    for (k, v) in pairs {
        js_sys::Reflect::set(&o, &JsValue::from_str(k), v).expect("settable");
    }
    o.into()
}

#[wasm_bindgen_test]
fn plan_returns_the_table_and_the_list() {
    let demo = gangpack_wasm::demo_manifests(Some(0)).expect("the demo builds");
    let r = gangpack_wasm::plan(JsValue::from_str(&demo), None).expect("the demo plans");
    assert_eq!(get(&r, "exitCode").as_f64(), Some(3.0));
    assert_eq!(get(&r, "pending").as_bool(), Some(true));
    let table = get(&r, "table").as_string().expect("text");
    assert!(
        table.contains("10 units: 8 placed, 1 preempted, 1 pending, 0 invalid, 0 failed"),
        "{table}"
    );
    let list = get(&r, "list");
    assert_eq!(get(&list, "kind").as_string().as_deref(), Some("List"));
    let items: js_sys::Array = get(&list, "items").dyn_into().expect("an array");
    assert!(items.length() > 10);
}

#[wasm_bindgen_test]
fn invalid_input_throws_an_error_with_kind_and_problems() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {}\n";
    let err =
        gangpack_wasm::plan(JsValue::from_str(text), None).expect_err("a Node without a name");
    let e: js_sys::Error = err.dyn_into().expect("a real Error");
    assert_eq!(String::from(e.name()), "InvalidInput");
    assert_eq!(
        String::from(e.message()),
        "manifests doc 1: Node: metadata.name: required value"
    );
    let problems: js_sys::Array = get(&e, "problems").dyn_into().expect("an array");
    assert_eq!(problems.length(), 1);
    let p = problems.get(0);
    assert_eq!(
        get(&p, "field").as_string().as_deref(),
        Some("metadata.name")
    );
    assert_eq!(get(&p, "doc").as_f64(), Some(1.0));
}

#[wasm_bindgen_test]
fn a_bad_option_is_an_invalid_argument() {
    let opts = options(&[("policy", JsValue::from_str("tightest"))]);
    let err = gangpack_wasm::plan(JsValue::from_str(""), Some(opts)).expect_err("no such policy");
    let e: js_sys::Error = err.dyn_into().expect("a real Error");
    assert_eq!(String::from(e.name()), "InvalidArgument");
    assert!(String::from(e.message()).starts_with("options.policy: unknown policy"));
}

#[wasm_bindgen_test]
fn run_cli_reports_exit_statuses() {
    let demo = gangpack_wasm::demo_manifests(Some(0)).expect("the demo builds");
    let file = options(&[
        ("name", JsValue::from_str("demo.yaml")),
        ("text", JsValue::from_str(&demo)),
    ]);
    let files = js_sys::Array::of1(&file);
    let request = options(&[
        ("command", JsValue::from_str("explain")),
        ("files", files.into()),
        ("group", JsValue::from_str("nope")),
    ]);
    let r = gangpack_wasm::run_cli(request).expect("never throws for bad input");
    assert_eq!(get(&r, "code").as_f64(), Some(2.0));
    let errors: js_sys::Array = get(&r, "errors").dyn_into().expect("an array");
    assert_eq!(
        errors.get(0).as_string().as_deref(),
        Some("PodGroup default/nope not found in the input")
    );
}
