//! The TypeScript declarations of every shape crossing the boundary, emitted into the
//! generated `.d.ts` (functions and methods name them with `unchecked_*_type`).

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("types.d.ts");

#[wasm_bindgen(typescript_custom_section)]
const SESSION_TYPES: &str = include_str!("session.d.ts");
