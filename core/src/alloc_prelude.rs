//! The `alloc` types every module uses, in one place (the crate is `no_std`).
#![allow(unused_imports)]

pub(crate) use alloc::borrow::ToOwned;
pub(crate) use alloc::boxed::Box;
pub(crate) use alloc::collections::{BTreeMap, BTreeSet};
pub(crate) use alloc::format;
pub(crate) use alloc::string::{String, ToString};
pub(crate) use alloc::vec;
pub(crate) use alloc::vec::Vec;
