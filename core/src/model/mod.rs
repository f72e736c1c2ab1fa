//! The model: Kubernetes objects as plain data, in upstream's vocabulary
//! (resource.k8s.io/v1, scheduling.k8s.io/v1beta1 and the parts of core/v1 a scheduler
//! reads), each with the validation the API server applies to it.
//!
//! This is the bottom layer: nothing here imports any other layer of the crate. The
//! objects know their own rules — a taint's matching, a toleration's eviction time, a
//! quantity's arithmetic, the consumption rule of a shareable device's capacity — but
//! nothing about an index, an allocator or a scheduler.

pub(crate) mod capacity;
pub(crate) mod claim;
pub(crate) mod class;
pub(crate) mod decision;
pub(crate) mod device;
pub(crate) mod error;
pub(crate) mod mix;
pub mod names;
pub(crate) mod node;
pub(crate) mod node_selector;
pub(crate) mod quantity;
pub(crate) mod semver;
pub(crate) mod slice;
pub(crate) mod taint;
pub(crate) mod taint_rule;
pub(crate) mod template;
pub(crate) mod time;
pub(crate) mod toleration;
pub(crate) mod workload;
