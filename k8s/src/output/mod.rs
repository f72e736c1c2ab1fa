//! Decisions back into Kubernetes objects, in upstream shape.
//!
//! - [`plan`] carries out the `NoExecute` evictions already due ([`Evictions`]), runs
//!   one scheduling cycle and returns the **whole** objects it changes
//!   (each loaded document with the fields kube-scheduler owns patched, every other
//!   field kept byte for byte): pod bindings and `PodScheduled`, claim allocations
//!   ([`allocation_to_json`]) and `reservedFor`, PodGroup conditions, preemption marks
//!   and nominated nodes; plus a [`PlanRow`] per unit for a table.
//! - [`taint`] applies a device taint, node taint or DeviceTaintRule and reports its
//!   blast radius ([`TaintPlan`]): evictions with their times and reasons, broken
//!   PodGroups, upstream's dry run for `None` rules, where the evicted gangs could go,
//!   and the objects the eviction controllers would write.
//! - [`list`] wraps objects as `kubectl get -o json` prints several.
//! - [`scenario_manifests`] writes a [`gangpack::testing::Scenario`] as the Kubernetes
//!   objects it stands for (what `gangpack gen` prints), which load back into the same
//!   model objects.
//!
//! Times are the scheduler's logical clock, printed with [`time_to_rfc3339`].

mod allocation;
mod evict;
mod manifests;
mod patch;
mod plan;
mod taint;
mod time;

pub use allocation::{allocation_to_json, node_selector_to_json};
pub use evict::Evictions;
pub(crate) use evict::{release_changes, release_claim};
pub use manifests::{PAUSE_IMAGE, scenario_manifests};
pub use plan::{
    DELETE_PROTECTION_FINALIZER, Outcome, Plan, PlanRow, PodPlacement, list, on_templates, plan,
};
pub use taint::{
    DEVICE_TAINT_MESSAGE, DEVICE_TAINT_REASON, DryRun, Eviction, NODE_TAINT_MESSAGE,
    NODE_TAINT_REASON, TaintPlan, TaintTarget, taint,
};
pub use time::time_to_rfc3339;
