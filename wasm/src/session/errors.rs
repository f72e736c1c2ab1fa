//! The core's errors as thrown JavaScript errors (see [`crate::js`] for the kinds),
//! mapped to kinds by `gangpack_abi::error`.

use gangpack::{ClusterError, SchedulerError, ValidationError};
use gangpack_abi::error;
use wasm_bindgen::JsValue;

use crate::js;

/// A refused scheduler operation (`gangpack_abi::error::scheduler`).
pub(crate) fn scheduler(e: &SchedulerError) -> JsValue {
    js::from(error::scheduler(e))
}

/// A refused cluster change (`gangpack_abi::error::cluster`).
pub(crate) fn cluster(e: &ClusterError) -> JsValue {
    js::from(error::cluster(e))
}

/// Validation errors, one problem each (`gangpack_abi::error::invalid`).
pub(crate) fn invalid(errs: &[ValidationError]) -> JsValue {
    js::from(error::invalid(errs))
}
