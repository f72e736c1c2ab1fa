//! gangpack core.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

mod alloc_prelude;
pub mod names;
mod quantity;
mod semver;
mod taint;
mod time;
mod toleration;
mod node_selector;
mod error;

pub use error::{ObjectKind, ObjectRef, Problem, ValidationError};

pub use quantity::{Quantity, QuantityError};
pub use semver::{Version, VersionError};

pub use time::Time;


/// The version of this crate.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
