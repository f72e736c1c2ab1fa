//! WebAssembly bindings for gangpack (a thin adapter; the playground issue fills it in).

use wasm_bindgen::prelude::wasm_bindgen;

/// The version of the gangpack core this module was built from.
#[wasm_bindgen]
#[must_use]
pub fn version() -> String {
    gangpack::VERSION.to_owned()
}
