//! The stateful `Scheduler` class: a cluster held in the module for interactive use
//! (the playground draws it, breaks GPUs, steps the clock, undoes).
//!
//! It holds no scheduling logic: every decision is `gangpack::Scheduler`'s, and a
//! session loaded from manifests (feature `k8s`) runs its cycles through
//! `gangpack_k8s::output::plan`, so that the objects a cycle changes are kept and
//! written back by `toManifests`. Every input and output shape is declared in
//! `session.d.ts`.
//!
//! A failed call leaves the state as it was: the core refuses a change before making
//! it, and the adapter only records what the core accepted.
//!
//! | File | What it holds |
//! |---|---|
//! | `session.rs` | The class and its state. |
//! | `session/errors.rs` | Core errors as thrown `Error`s of each kind. |
//! | `session/kube.rs` | Sessions loaded from manifests: the objects, plan, `toManifests` (feature `k8s`). |
//! | `session/time.rs` | The clock's RFC 3339 text and seconds. |
//! | `session/view.rs` | The plain objects returned: cycles, evictions, the drawable state. |

mod errors;
#[cfg(feature = "k8s")]
mod kube;
mod time;
mod view;

use std::collections::BTreeSet;

use gangpack::{
    Cluster, DeviceClass, DeviceRef, DeviceTaint, DeviceTaintEffect, DeviceTaintRule, GangOptions,
    Node, Pod, PodGroup, PriorityClass, RequestShape, ResourceClaim, ResourceSlice, ShapeMix,
    Taint, TaintEffect, Unit,
};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::js::{self, INVALID_ARGUMENT, Problem, from_js, from_js_or_default, to_js};
use time::TimeArg;

/// A scheduler whose state lives in the module, for interactive use.
#[wasm_bindgen]
pub struct Scheduler {
    state: State,
}

/// Everything a session holds; cloning it is cheap (the core's state is
/// copy-on-write), which is what `fork` and `restore` do.
#[derive(Clone)]
struct State {
    sched: gangpack::Scheduler,
    /// The loaded objects, for a session loaded from manifests.
    #[cfg(feature = "k8s")]
    kube: Option<kube::Kube>,
    /// Warnings from loading, one line per cause.
    warnings: Vec<String>,
    /// PriorityClasses put, to carry over when nodes or classes change.
    priority_classes: Vec<PriorityClass>,
    /// PodGroups known (`namespace/name`), with or without pods.
    groups: BTreeSet<String>,
    /// Changes made through the model or taint methods, which no loaded object
    /// carries (listed by `toManifests`).
    journal: Vec<String>,
}

impl State {
    fn new(sched: gangpack::Scheduler) -> State {
        State {
            sched,
            #[cfg(feature = "k8s")]
            kube: None,
            warnings: Vec::new(),
            priority_classes: Vec::new(),
            groups: BTreeSet::new(),
            journal: Vec::new(),
        }
    }
}

/// The options of `fromModel`.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ModelOptions {
    now: Option<TimeArg>,
    policy: Option<String>,
    /// The typical shapes Stranding and FGD score against (default: the shapes of the
    /// session's own pods, followed as they change).
    workload_mix: Option<ShapeMix>,
    /// The most steps one gang search takes (`GangOptions::step_budget`).
    step_budget: Option<u64>,
    /// The most steps one claim allocator call takes
    /// (`GangOptions::allocator_step_budget`).
    allocator_step_budget: Option<u64>,
    /// The `PodGroupPreemptionPolicy` feature gate
    /// (`GangOptions::pod_group_preemption_policy`).
    #[serde(default)]
    pod_group_preemption_policy: bool,
}

/// gangpack's own JSON model: arrays of the core's types.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct Model {
    nodes: Vec<Node>,
    slices: Vec<ResourceSlice>,
    classes: Vec<DeviceClass>,
    rules: Vec<DeviceTaintRule>,
    priority_classes: Vec<PriorityClass>,
    claims: Vec<ResourceClaim>,
    groups: Vec<PodGroup>,
    pods: Vec<Pod>,
    now: Option<TimeArg>,
}

/// `capacityReport`'s options.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct CapacityOptions {
    shapes: Option<Vec<RequestShape>>,
    #[serde(deserialize_with = "key_choice")]
    key: KeyChoice,
    gang_pods: Option<u32>,
}

/// `capacityReport`'s `key`: left out (the default key), `null` (the whole cluster)
/// or a label key.
#[derive(Default)]
enum KeyChoice {
    #[default]
    Default,
    Whole,
    Key(String),
}

fn key_choice<'de, D: serde::Deserializer<'de>>(d: D) -> Result<KeyChoice, D::Error> {
    Option::<String>::deserialize(d).map(|k| k.map_or(KeyChoice::Whole, KeyChoice::Key))
}

/// `snapshot`'s options.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct SnapshotOptions {
    topology_key: Option<String>,
    /// `false`: nodes list no devices (draw them from `cells()`).
    devices: Option<bool>,
}

/// `cells`' options.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct CellsOptions {
    topology_key: Option<String>,
}

/// A rule, or the name of one in the cluster.
#[derive(Deserialize)]
#[serde(untagged)]
enum RuleArg {
    Name(String),
    Rule(DeviceTaintRule),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExplainView {
    unit: Unit,
    text: String,
    summary: String,
    explanation: gangpack::Explanation,
    what_it_takes: WhatItTakesView,
    verdict: VerdictView,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NodeTableView {
    unit: Unit,
    /// The table as `gangpack explain --nodes` prints it.
    text: String,
    #[serde(flatten)]
    table: gangpack::NodeTable,
}

/// A `UnitName` argument (a PodGroup name, `{ podGroup }` or `{ pod }`) as a unit.
fn unit_arg(unit: JsValue) -> Result<Unit, JsValue> {
    let (name, plain) = js::unit_name(unit)?;
    let field = name.field(plain);
    Ok(match name {
        js::UnitName::PodGroup(g) => Unit::Group(namespaced(&g, field)?),
        js::UnitName::Pod(p) => Unit::Pod(namespaced(&p, field)?),
    })
}

#[derive(Serialize)]
struct VerdictView {
    #[serde(flatten)]
    value: gangpack::Verdict,
    text: String,
    /// Each help's words, as in `text`.
    lines: Vec<String>,
}

#[derive(Serialize)]
struct WhatItTakesView {
    #[serde(flatten)]
    value: gangpack::WhatItTakes,
    text: String,
}

#[derive(Serialize)]
struct CapacityView {
    #[serde(flatten)]
    report: gangpack::CapacityReport,
    labels: Vec<String>,
}

#[derive(Serialize)]
struct AdvanceView {
    now: time::Clock,
    evictions: Vec<view::EvictionView>,
}

/// A step budget option (`gangpack_abi::options::step_budget`).
pub(crate) fn step_budget(value: Option<u64>, default: u64, field: &str) -> Result<u64, JsValue> {
    gangpack_abi::options::step_budget(value, default, field).map_err(js::from)
}

fn invalid_argument(field: &str, message: impl Into<String>) -> JsValue {
    js::error(INVALID_ARGUMENT, &[Problem::field(field, message)])
}

/// `namespace/name`, `default` for a bare name.
fn namespaced(name: &str, what: &str) -> Result<String, JsValue> {
    let (ns, n) = name.split_once('/').unwrap_or(("default", name));
    if ns.is_empty() || n.is_empty() || n.contains('/') {
        return Err(invalid_argument(
            what,
            format!("{name:?} is not NAMESPACE/NAME or NAME"),
        ));
    }
    Ok(format!("{ns}/{n}"))
}

fn device_ref(device: &str) -> Result<DeviceRef, JsValue> {
    DeviceRef::parse(device)
        .ok_or_else(|| invalid_argument("device", format!("{device:?} is not DRIVER/POOL/DEVICE")))
}

pub(crate) use gangpack_abi::options::Scoring;

/// The policy `name` with `mix` as its typical shapes (`gangpack_abi::options::scoring`).
pub(crate) fn scoring(
    name: Option<&str>,
    what: &str,
    mix: Option<ShapeMix>,
    mix_what: &str,
) -> Result<Scoring, JsValue> {
    gangpack_abi::options::scoring(name, what, mix, mix_what).map_err(js::from)
}

/// Checks a workload mix, every problem named under `what` (`what.shapes[0].count`).
pub(crate) fn validate_mix(mix: &ShapeMix, what: &str) -> Result<(), JsValue> {
    gangpack_abi::options::validate_mix(mix, what).map_err(js::from)
}

fn time_arg(t: &TimeArg, what: &str) -> Result<gangpack::Time, JsValue> {
    t.time().map_err(|m| invalid_argument(what, m))
}

#[wasm_bindgen]
impl Scheduler {
    /// An empty cluster (no nodes, clock at the epoch).
    #[wasm_bindgen(constructor)]
    #[must_use]
    pub fn new() -> Scheduler {
        Scheduler {
            state: State::new(gangpack::Scheduler::new(
                Cluster::new(),
                GangOptions::default(),
            )),
        }
    }

    /// A session over Kubernetes manifests, read exactly as `plan` reads them (the
    /// same `Manifests` and `Options`): bound pods and allocated claims are the running
    /// state, the rest is pending. Throws `InvalidInput` with every problem found.
    #[cfg(feature = "k8s")]
    #[wasm_bindgen(js_name = fromManifests)]
    pub fn from_manifests(
        #[wasm_bindgen(unchecked_param_type = "Manifests")] manifests: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Options")] options: Option<JsValue>,
    ) -> Result<Scheduler, JsValue> {
        let loaded = kube::load(manifests, options.unwrap_or(JsValue::UNDEFINED))?;
        let mut state = State::new(loaded.sched);
        state.warnings = loaded.warnings;
        state.groups = loaded.groups;
        state.priority_classes = loaded.priority_classes;
        state.kube = Some(loaded.kube);
        Ok(Scheduler { state })
    }

    /// A session over gangpack's own JSON model (`Model`): the cluster objects first
    /// (nodes, classes, slices, rules), then PriorityClasses, claims, PodGroups and
    /// pods. Throws on the first object the core refuses, naming it.
    #[wasm_bindgen(js_name = fromModel)]
    pub fn from_model(
        #[wasm_bindgen(unchecked_param_type = "Model")] model: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ModelOptions")] options: Option<JsValue>,
    ) -> Result<Scheduler, JsValue> {
        let model: Model = from_js(model, "model")?;
        let options: ModelOptions =
            from_js_or_default(options.unwrap_or(JsValue::UNDEFINED), "options")?;
        let mut cluster = Cluster::new();
        let now = match (&options.now, &model.now) {
            (Some(t), _) => Some(time_arg(t, "options.now")?),
            (None, Some(t)) => Some(time_arg(t, "model.now")?),
            (None, None) => None,
        };
        if let Some(now) = now {
            cluster.set_clock(now);
        }
        for n in model.nodes {
            cluster.add_node(n).map_err(|e| errors::cluster(&e))?;
        }
        for c in model.classes {
            cluster.put_class(c).map_err(|e| errors::cluster(&e))?;
        }
        for s in model.slices {
            cluster.add_slice(s).map_err(|e| errors::cluster(&e))?;
        }
        for r in model.rules {
            cluster.add_taint_rule(r).map_err(|e| errors::cluster(&e))?;
        }
        let scoring = scoring(
            options.policy.as_deref(),
            "options.policy",
            options.workload_mix,
            "options.workloadMix",
        )?;
        let gang = GangOptions {
            policy: scoring.policy,
            step_budget: step_budget(
                options.step_budget,
                gangpack::DEFAULT_STEP_BUDGET,
                "options.stepBudget",
            )?,
            allocator_step_budget: step_budget(
                options.allocator_step_budget,
                gangpack::DEFAULT_ALLOCATOR_STEP_BUDGET,
                "options.allocatorStepBudget",
            )?,
            pod_group_preemption_policy: options.pod_group_preemption_policy,
            ..GangOptions::default()
        };
        let mut state = State::new(gangpack::Scheduler::new(cluster, gang));
        state.warnings.extend(scoring.warning);
        let sched = &mut state.sched;
        for c in model.priority_classes {
            sched
                .put_priority_class(c.clone())
                .map_err(|e| errors::scheduler(&e))?;
            state.priority_classes.push(c);
        }
        for c in model.claims {
            sched.add_claim(c).map_err(|e| errors::scheduler(&e))?;
        }
        for g in model.groups {
            let key = format!("{}/{}", g.namespace, g.name);
            sched.add_group(g).map_err(|e| errors::scheduler(&e))?;
            state.groups.insert(key);
        }
        for p in model.pods {
            sched.add_pod(p).map_err(|e| errors::scheduler(&e))?;
        }
        sched.refresh_evictions();
        Ok(Scheduler { state })
    }

    /// The warnings of loading (unknown fields, skipped objects), one line per cause.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        self.state.warnings.clone()
    }

    // ------------------------------------------------------------- cluster objects

    /// Adds a node (`Node`: a machine joining); returns how the eviction schedule
    /// moved (its `NoExecute` taints apply to pods bound to it later).
    #[wasm_bindgen(js_name = addNode, unchecked_return_type = "EvictionReport")]
    pub fn add_node(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Node")] node: JsValue,
    ) -> Result<JsValue, JsValue> {
        let node: Node = from_js(node, "node")?;
        let what = format!("addNode {}", node.name);
        let report = self
            .state
            .sched
            .add_node(node)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        to_js(&view::EvictionReportView::from(&report))
    }

    /// Replaces a node: labels, taints, allocatable, `unschedulable`. Pods bound to it
    /// stay; a new `NoExecute` taint schedules the eviction of those not tolerating it
    /// (the report says when).
    #[wasm_bindgen(js_name = updateNode, unchecked_return_type = "EvictionReport")]
    pub fn update_node(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Node")] node: JsValue,
    ) -> Result<JsValue, JsValue> {
        let node: Node = from_js(node, "node")?;
        let what = format!("updateNode {}", node.name);
        let report = self
            .state
            .sched
            .update_node(node)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        to_js(&view::EvictionReportView::from(&report))
    }

    /// The node object `name` as the scheduler holds it (labels, allocatable, taints,
    /// `unschedulable`), or `null`: what `updateNode` takes back, changed.
    #[wasm_bindgen(unchecked_return_type = "Node | null")]
    pub fn node(&self, name: &str) -> Result<JsValue, JsValue> {
        to_js(&self.state.sched.cluster().node(name))
    }

    /// The ResourceSlices published for node `name` alone (`nodeName`), as the
    /// scheduler holds them: what a copy of the node would publish.
    #[wasm_bindgen(js_name = nodeSlices, unchecked_return_type = "ResourceSlice[]")]
    pub fn node_slices(&self, name: &str) -> Result<JsValue, JsValue> {
        let slices: Vec<&gangpack::ResourceSlice> = self
            .state
            .sched
            .cluster()
            .slices()
            .filter(|s| s.node_name() == Some(name))
            .collect();
        to_js(&slices)
    }

    /// Cordons (`true`) or uncordons a node, as `kubectl cordon` / `uncordon`.
    #[wasm_bindgen(js_name = cordonNode)]
    pub fn cordon_node(&mut self, name: &str, cordoned: bool) -> Result<(), JsValue> {
        self.state
            .sched
            .cordon_node(name, cordoned)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(format!(
            "{} {name}",
            if cordoned {
                "cordonNode"
            } else {
                "uncordonNode"
            }
        ));
        Ok(())
    }

    /// Removes a node. The pods bound to it are deleted with it (pod garbage
    /// collection), their claims released when no user is left; returns the node, the
    /// pods deleted and how the eviction schedule moved.
    #[wasm_bindgen(js_name = removeNode, unchecked_return_type = "NodeRemoval")]
    pub fn remove_node(&mut self, name: &str) -> Result<JsValue, JsValue> {
        let removal = self
            .state
            .sched
            .remove_node(name)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(format!("removeNode {name}"));
        to_js(&view::NodeRemovalView::from(&removal))
    }

    /// Adds or replaces a DeviceClass (selectors compiled; claims allocated already
    /// keep their devices).
    #[wasm_bindgen(js_name = putDeviceClass)]
    pub fn put_device_class(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "DeviceClass")] class: JsValue,
    ) -> Result<(), JsValue> {
        let class: DeviceClass = from_js(class, "class")?;
        let what = format!("putDeviceClass {}", class.name);
        self.state
            .sched
            .put_device_class(class)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        Ok(())
    }

    /// Removes a DeviceClass (claims allocated already keep their devices; pending
    /// ones naming it wait for it).
    #[wasm_bindgen(js_name = removeDeviceClass)]
    pub fn remove_device_class(&mut self, name: &str) -> Result<(), JsValue> {
        self.state
            .sched
            .remove_device_class(name)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(format!("removeDeviceClass {name}"));
        Ok(())
    }

    /// Adds a ResourceSlice; returns how the eviction schedule moved (its taints apply
    /// to devices already allocated).
    #[wasm_bindgen(js_name = addSlice, unchecked_return_type = "EvictionReport")]
    pub fn add_slice(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "ResourceSlice")] slice: JsValue,
    ) -> Result<JsValue, JsValue> {
        let slice: ResourceSlice = from_js(slice, "slice")?;
        let what = format!("addSlice {}", slice.name);
        let r = self
            .state
            .sched
            .add_slice(slice)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        to_js(&view::EvictionReportView::from(&r))
    }

    /// Replaces a ResourceSlice of the same name (a driver republishing it).
    #[wasm_bindgen(js_name = replaceSlice, unchecked_return_type = "EvictionReport")]
    pub fn replace_slice(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "ResourceSlice")] slice: JsValue,
    ) -> Result<JsValue, JsValue> {
        let slice: ResourceSlice = from_js(slice, "slice")?;
        let what = format!("replaceSlice {}", slice.name);
        let r = self
            .state
            .sched
            .replace_slice(slice)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        to_js(&view::EvictionReportView::from(&r))
    }

    /// Removes a ResourceSlice.
    #[wasm_bindgen(js_name = removeSlice, unchecked_return_type = "EvictionReport")]
    pub fn remove_slice(&mut self, name: &str) -> Result<JsValue, JsValue> {
        let (_, r) = self
            .state
            .sched
            .remove_slice(name)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(format!("removeSlice {name}"));
        to_js(&view::EvictionReportView::from(&r))
    }

    // ---------------------------------------------------------------------- taints

    /// Taints a device, `"driver/pool/device"`, with `{ key, value?, effect }`
    /// (`timeAdded` defaults to the clock); returns how the eviction schedule moved.
    #[wasm_bindgen(js_name = taintDevice, unchecked_return_type = "EvictionReport")]
    pub fn taint_device(
        &mut self,
        device: &str,
        #[wasm_bindgen(unchecked_param_type = "DeviceTaint")] taint: JsValue,
    ) -> Result<JsValue, JsValue> {
        let r = device_ref(device)?;
        let taint: DeviceTaint = from_js(taint, "taint")?;
        let what = format!("taintDevice {device} {taint}");
        let report = self
            .state
            .sched
            .taint_device(&r, taint)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        to_js(&view::EvictionReportView::from(&report))
    }

    /// Removes a device's taints with `key` (and `effect`, if given).
    #[wasm_bindgen(js_name = untaintDevice, unchecked_return_type = "EvictionReport")]
    pub fn untaint_device(
        &mut self,
        device: &str,
        key: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "DeviceTaintEffectName")] effect: Option<
            JsValue,
        >,
    ) -> Result<JsValue, JsValue> {
        let r = device_ref(device)?;
        let effect: Option<DeviceTaintEffect> =
            from_js_or_default(effect.unwrap_or(JsValue::UNDEFINED), "effect")?;
        let report = self
            .state
            .sched
            .untaint_device(&r, key, effect.as_ref())
            .map_err(|e| errors::scheduler(&e))?;
        self.state
            .journal
            .push(format!("untaintDevice {device} {key}"));
        to_js(&view::EvictionReportView::from(&report))
    }

    /// Taints a node with `{ key, value?, effect }` (a taint of the same key and
    /// effect is replaced).
    #[wasm_bindgen(js_name = taintNode, unchecked_return_type = "EvictionReport")]
    pub fn taint_node(
        &mut self,
        node: &str,
        #[wasm_bindgen(unchecked_param_type = "Taint")] taint: JsValue,
    ) -> Result<JsValue, JsValue> {
        let taint: Taint = from_js(taint, "taint")?;
        let what = format!("taintNode {node} {taint}");
        let report = self
            .state
            .sched
            .taint_node(node, taint)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        to_js(&view::EvictionReportView::from(&report))
    }

    /// Removes a node's taints with `key` (and `effect`, if given).
    #[wasm_bindgen(js_name = untaintNode, unchecked_return_type = "EvictionReport")]
    pub fn untaint_node(
        &mut self,
        node: &str,
        key: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "NodeTaintEffectName")] effect: Option<
            JsValue,
        >,
    ) -> Result<JsValue, JsValue> {
        let effect: Option<TaintEffect> =
            from_js_or_default(effect.unwrap_or(JsValue::UNDEFINED), "effect")?;
        let report = self
            .state
            .sched
            .untaint_node(node, key, effect)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(format!("untaintNode {node} {key}"));
        to_js(&view::EvictionReportView::from(&report))
    }

    /// Adds a DeviceTaintRule.
    #[wasm_bindgen(js_name = addTaintRule, unchecked_return_type = "EvictionReport")]
    pub fn add_taint_rule(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "DeviceTaintRule")] rule: JsValue,
    ) -> Result<JsValue, JsValue> {
        let rule: DeviceTaintRule = from_js(rule, "rule")?;
        let what = format!("addTaintRule {}", rule.name);
        let report = self
            .state
            .sched
            .add_taint_rule(rule)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        to_js(&view::EvictionReportView::from(&report))
    }

    /// Replaces the DeviceTaintRule of the same name (switching a dry run from `None`
    /// to `NoExecute` starts its eviction clock now).
    #[wasm_bindgen(js_name = replaceTaintRule, unchecked_return_type = "EvictionReport")]
    pub fn replace_taint_rule(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "DeviceTaintRule")] rule: JsValue,
    ) -> Result<JsValue, JsValue> {
        let rule: DeviceTaintRule = from_js(rule, "rule")?;
        let what = format!("replaceTaintRule {}", rule.name);
        let report = self
            .state
            .sched
            .replace_taint_rule(rule)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        to_js(&view::EvictionReportView::from(&report))
    }

    /// Removes a DeviceTaintRule (the evictions it caused are cancelled).
    #[wasm_bindgen(js_name = removeTaintRule, unchecked_return_type = "EvictionReport")]
    pub fn remove_taint_rule(&mut self, name: &str) -> Result<JsValue, JsValue> {
        let (_, report) = self
            .state
            .sched
            .remove_taint_rule(name)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(format!("removeTaintRule {name}"));
        to_js(&view::EvictionReportView::from(&report))
    }

    /// What a DeviceTaintRule (given, or the name of one in the cluster) would do with
    /// effect `NoExecute`, changing nothing: upstream's dry-run numbers and message and
    /// the PodGroups that would break (the blast radius).
    #[wasm_bindgen(js_name = dryRunRule, unchecked_return_type = "DryRunResult")]
    pub fn dry_run_rule(
        &self,
        #[wasm_bindgen(unchecked_param_type = "DeviceTaintRule | string")] rule: JsValue,
    ) -> Result<JsValue, JsValue> {
        let sched = &self.state.sched;
        let rule = match from_js::<RuleArg>(rule, "rule")? {
            RuleArg::Rule(r) => r,
            RuleArg::Name(n) => sched.cluster().taint_rule(&n).cloned().ok_or_else(|| {
                js::error_message(js::NOT_FOUND, format!("DeviceTaintRule {n:?} not found"))
            })?,
        };
        to_js(&view::DryRunView::from(sched.dry_run_rule(&rule)))
    }

    // ------------------------------------------------------------------- workloads

    /// Adds or replaces a PriorityClass.
    #[wasm_bindgen(js_name = putPriorityClass)]
    pub fn put_priority_class(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "PriorityClass")] class: JsValue,
    ) -> Result<(), JsValue> {
        let class: PriorityClass = from_js(class, "class")?;
        self.state
            .sched
            .put_priority_class(class.clone())
            .map_err(|e| errors::scheduler(&e))?;
        let s = &mut self.state;
        s.journal.push(format!("putPriorityClass {}", class.name));
        s.priority_classes.retain(|c| c.name != class.name);
        s.priority_classes.push(class);
        Ok(())
    }

    /// Removes a PriorityClass; the priorities already resolved stay (returns it).
    #[wasm_bindgen(js_name = removePriorityClass, unchecked_return_type = "PriorityClass")]
    pub fn remove_priority_class(&mut self, name: &str) -> Result<JsValue, JsValue> {
        let removed = self
            .state
            .sched
            .remove_priority_class(name)
            .map_err(|e| errors::scheduler(&e))?;
        let s = &mut self.state;
        s.journal.push(format!("removePriorityClass {name}"));
        s.priority_classes.retain(|c| c.name != name);
        to_js(&removed)
    }

    /// Replaces a ResourceClaim with a newer version: its spec is immutable; its
    /// `allocation` may be set (allocated by someone else: the devices are held from
    /// now on) or cleared (only when no bound pod or PodGroup uses it).
    #[wasm_bindgen(js_name = updateClaim)]
    pub fn update_claim(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "ResourceClaim")] claim: JsValue,
    ) -> Result<(), JsValue> {
        let claim: ResourceClaim = from_js(claim, "claim")?;
        let what = format!("updateClaim {}/{}", claim.namespace, claim.name);
        self.state
            .sched
            .update_claim(claim)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        Ok(())
    }

    /// Replaces a PodGroup with a newer version (`minCount` is mutable; it applies
    /// from the next cycle; its members and what they hold stay).
    #[wasm_bindgen(js_name = updatePodGroup)]
    pub fn update_pod_group(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "PodGroup")] group: JsValue,
    ) -> Result<(), JsValue> {
        let group: PodGroup = from_js(group, "group")?;
        let what = format!("updatePodGroup {}/{}", group.namespace, group.name);
        self.state
            .sched
            .update_group(group)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        Ok(())
    }

    /// Replaces a pod with a newer version: a pending pod bound by another scheduler
    /// (`nodeName` set: its requests reserved, its allocated claims adopted), or other
    /// fields changed; `nodeName` and `schedulingGroup` are immutable once set. Returns
    /// how the eviction schedule moved.
    #[wasm_bindgen(js_name = updatePod, unchecked_return_type = "EvictionReport")]
    pub fn update_pod(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Pod")] pod: JsValue,
    ) -> Result<JsValue, JsValue> {
        let pod: Pod = from_js(pod, "pod")?;
        let what = format!("updatePod {}/{}", pod.namespace, pod.name);
        let report = self
            .state
            .sched
            .update_pod(pod)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        to_js(&view::EvictionReportView::from(&report))
    }

    /// Adds a ResourceClaim (pending until a pod using it is placed).
    #[wasm_bindgen(js_name = addClaim)]
    pub fn add_claim(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "ResourceClaim")] claim: JsValue,
    ) -> Result<(), JsValue> {
        let claim: ResourceClaim = from_js(claim, "claim")?;
        let what = format!("addClaim {}/{}", claim.namespace, claim.name);
        claim.validate().map_err(|e| errors::invalid(&e))?;
        if claim.allocation.is_none() {
            compile_selectors(&claim)?;
        }
        self.state
            .sched
            .add_claim(claim)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        Ok(())
    }

    /// Adds a PodGroup (its priority from its PriorityClass when unset).
    #[wasm_bindgen(js_name = addPodGroup)]
    pub fn add_pod_group(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "PodGroup")] group: JsValue,
    ) -> Result<(), JsValue> {
        let group: PodGroup = from_js(group, "group")?;
        let key = format!("{}/{}", group.namespace, group.name);
        self.state
            .sched
            .add_group(group)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(format!("addPodGroup {key}"));
        self.state.groups.insert(key);
        Ok(())
    }

    /// Removes a PodGroup (`namespace/name` or `name`) and every member; returns it.
    #[wasm_bindgen(js_name = removePodGroup, unchecked_return_type = "PodGroup")]
    pub fn remove_pod_group(&mut self, name: &str) -> Result<JsValue, JsValue> {
        let key = namespaced(name, "name")?;
        let removed = self
            .state
            .sched
            .remove_group(&key)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(format!("removePodGroup {key}"));
        self.state.groups.remove(&key);
        to_js(&removed)
    }

    /// Adds a pod (`nodeName` set: running there, holding its node resources).
    #[wasm_bindgen(js_name = addPod)]
    pub fn add_pod(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Pod")] pod: JsValue,
    ) -> Result<(), JsValue> {
        let pod: Pod = from_js(pod, "pod")?;
        let what = format!("addPod {}/{}", pod.namespace, pod.name);
        self.state
            .sched
            .add_pod(pod)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(what);
        Ok(())
    }

    /// Removes a pod (completed or deleted; `namespace/name` or `name`), releasing
    /// what only it held; returns it.
    #[wasm_bindgen(js_name = removePod, unchecked_return_type = "Pod")]
    pub fn remove_pod(&mut self, name: &str) -> Result<JsValue, JsValue> {
        let key = namespaced(name, "name")?;
        let removed = self
            .state
            .sched
            .remove_pod(&key)
            .map_err(|e| errors::scheduler(&e))?;
        self.state.journal.push(format!("removePod {key}"));
        to_js(&removed)
    }

    // ------------------------------------------------------------------- scoring

    /// Scores Stranding and FGD placements against `mix` from now on;
    /// `null` goes back to the policy's own mix (`options.workloadMix`, else the
    /// shapes of the session's pods, followed as they change). BestFit and Spread
    /// ignore it. Throws `InvalidArgument`, nothing changed, for an invalid mix (every
    /// problem named under `mix`, e.g. `mix.shapes[0].count`).
    #[wasm_bindgen(js_name = setWorkloadMix)]
    pub fn set_workload_mix(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "ShapeMix | null")] mix: JsValue,
    ) -> Result<(), JsValue> {
        let mix = if mix.is_null() || mix.is_undefined() {
            None
        } else {
            let mix: ShapeMix = from_js(mix, "mix")?;
            validate_mix(&mix, "mix")?;
            Some(mix)
        };
        self.state
            .sched
            .set_workload_mix(mix)
            .map_err(|e| errors::scheduler(&e))
    }

    /// The typical shapes Stranding and FGD score against now (given, or as last
    /// observed, at the latest cycle); `null` under BestFit and Spread.
    #[wasm_bindgen(js_name = workloadMix, unchecked_return_type = "ShapeMix | null")]
    pub fn workload_mix(&self) -> Result<JsValue, JsValue> {
        to_js(&self.state.sched.workload_mix())
    }

    // ------------------------------------------------------------------- lifecycle

    /// One scheduling cycle, after carrying out the evictions already due at the
    /// clock (as `gangpack plan` does): each unit's outcome. A session loaded from
    /// manifests runs it through `gangpack_k8s::output::plan`, keeps the objects it
    /// changes and returns `table`, what `gangpack plan` prints. Pending is an
    /// outcome, never an error.
    #[wasm_bindgen(unchecked_return_type = "CycleResult")]
    pub fn cycle(&mut self) -> Result<JsValue, JsValue> {
        #[cfg(feature = "k8s")]
        if let Some(v) = kube::cycle(&mut self.state) {
            return to_js(&v);
        }
        let sched = &mut self.state.sched;
        let now = sched.now();
        let carried_out = view::evictions(&sched.advance(now));
        let report = sched.cycle();
        let sched = &self.state.sched;
        let units: Vec<view::UnitView> = report
            .units
            .iter()
            .map(|(u, r)| view::unit(sched, u, r, None))
            .collect();
        to_js(&view::CycleView {
            carried_out,
            all_placed: units
                .iter()
                .all(|u| matches!(u.outcome, "placed" | "preempted")),
            units,
            evictions: (&report.evictions).into(),
            pods_bound: report.pods_bound(),
            table: None,
        })
    }

    /// Moves the logical clock to `now` (RFC 3339 text or seconds; it never goes
    /// back) and carries out every `NoExecute` eviction due by then; returns the clock
    /// and the evictions, by time then pod.
    #[wasm_bindgen(unchecked_return_type = "AdvanceResult")]
    pub fn advance(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string | number")] now: JsValue,
    ) -> Result<JsValue, JsValue> {
        let t: TimeArg = from_js(now, "now")?;
        let t = time_arg(&t, "now")?;
        let done = self.state.sched.advance(t);
        to_js(&AdvanceView {
            now: self.state.sched.now().into(),
            evictions: view::evictions(&done),
        })
    }

    /// The logical clock.
    #[wasm_bindgen(unchecked_return_type = "Clock")]
    pub fn now(&self) -> Result<JsValue, JsValue> {
        to_js(&view::clock(self.state.sched.now()))
    }

    /// Why a unit is (not) placed against the current state, and what it would take:
    /// `unit` is a PodGroup name, `{ podGroup }` or `{ pod }` (`namespace/name` or
    /// `name`). Throws `NotFound` for a unit that does not exist.
    #[wasm_bindgen(unchecked_return_type = "SessionExplainResult")]
    pub fn explain(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UnitName")] unit: JsValue,
    ) -> Result<JsValue, JsValue> {
        let unit = unit_arg(unit)?;
        let sched = &self.state.sched;
        let explanation = sched.explain(&unit).map_err(|e| errors::scheduler(&e))?;
        let what = sched
            .what_it_takes(&unit)
            .map_err(|e| errors::scheduler(&e))?;
        let verdict = sched
            .verdict_with(&unit, &explanation, &what)
            .map_err(|e| errors::scheduler(&e))?;
        // The verdict first, as `gangpack explain` prints it: what would get it placed.
        let text = if verdict.pending {
            format!("{verdict}\n{explanation}")
        } else {
            explanation.to_string()
        };
        to_js(&ExplainView {
            text,
            verdict: VerdictView {
                text: verdict.to_string(),
                lines: verdict.helps.iter().map(ToString::to_string).collect(),
                value: verdict,
            },
            summary: explanation.summary(),
            what_it_takes: WhatItTakesView {
                text: what.to_string(),
                value: what,
            },
            explanation,
            unit,
        })
    }

    /// Every node of the cluster for one pod of a unit, against the current state:
    /// the filter that rejects it and why (in the words of `explain`'s facts), or how
    /// many pods of its shape it takes, its score under the policy and whether the
    /// placement puts them there (`gangpack::Scheduler::node_table`). `unit` as for
    /// `explain`: a PodGroup shows its first pending member; a bound pod the table of
    /// a pending copy (`bound` names its node). Rows in natural node-name order.
    /// Throws `NotFound` for a unit that does not exist.
    #[wasm_bindgen(js_name = nodeTable, unchecked_return_type = "NodeTableResult")]
    pub fn node_table(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UnitName")] unit: JsValue,
    ) -> Result<JsValue, JsValue> {
        let unit = unit_arg(unit)?;
        let table = self
            .state
            .sched
            .node_table(&unit)
            .map_err(|e| errors::scheduler(&e))?;
        to_js(&NodeTableView {
            text: table.to_string(),
            unit,
            table,
        })
    }

    /// What the free capacity can host, per topology domain: `shapes` (default: 1, 2,
    /// 4 and 8 devices, and `gangPods` × 8 with `gangPods` default 8), `key` (default:
    /// the first PodGroup topology key; `null` for the whole cluster).
    #[wasm_bindgen(js_name = capacityReport, unchecked_return_type = "CapacityReport")]
    pub fn capacity_report(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "CapacityReportOptions")] options: Option<
            JsValue,
        >,
    ) -> Result<JsValue, JsValue> {
        let o: CapacityOptions =
            from_js_or_default(options.unwrap_or(JsValue::UNDEFINED), "options")?;
        let sched = &self.state.sched;
        let shapes = o
            .shapes
            .unwrap_or_else(|| RequestShape::standard(o.gang_pods.unwrap_or(8)));
        let key = match o.key {
            KeyChoice::Default => view::default_topology_key(sched, &self.state.groups),
            KeyChoice::Whole => None,
            KeyChoice::Key(k) => Some(k),
        };
        let report = sched
            .cluster()
            .capacity_report(&shapes, key.as_deref())
            .map_err(|e| errors::invalid(&e))?;
        to_js(&CapacityView {
            labels: report.labels(),
            report,
        })
    }

    /// Everything needed to draw the cluster (`ClusterSnapshot`): topology domains →
    /// nodes → devices with their state, holders, taints and evictions; pods, groups,
    /// claims, rules and the eviction schedule. `topologyKey` groups the nodes (default:
    /// the first PodGroup topology key).
    #[wasm_bindgen(unchecked_return_type = "ClusterSnapshot")]
    pub fn snapshot(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "SnapshotOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        let o: SnapshotOptions =
            from_js_or_default(options.unwrap_or(JsValue::UNDEFINED), "options")?;
        #[allow(unused_mut)]
        let mut v = view::cluster(
            &self.state.sched,
            &self.state.groups,
            o.topology_key,
            o.devices.unwrap_or(true),
        );
        #[cfg(feature = "k8s")]
        if let Some(k) = &self.state.kube {
            v.waiting = k.waiting_views();
        }
        to_js(&v)
    }

    /// The cluster as drawn (`ClusterCells`): the domains and nodes of `snapshot()`, in
    /// the same order, each device a small record (state, owner, taint effects as bits,
    /// the earliest eviction, the shares of a shared device). A fraction of a full
    /// snapshot's cost and size, for redrawing after every change; `device(id)` has
    /// the rest of one device.
    #[wasm_bindgen(unchecked_return_type = "ClusterCells")]
    pub fn cells(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "SnapshotOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        let o: CellsOptions = from_js_or_default(options.unwrap_or(JsValue::UNDEFINED), "options")?;
        to_js(&view::cells(
            &self.state.sched,
            &self.state.groups,
            o.topology_key,
        ))
    }

    /// One device (`driver/pool/device`) as `snapshot()` describes it. Throws
    /// `NotFound` for a device the cluster does not have.
    #[wasm_bindgen(unchecked_return_type = "DeviceInfo")]
    pub fn device(&self, id: &str) -> Result<JsValue, JsValue> {
        let d = view::device(&self.state.sched, &self.state.groups, id)
            .ok_or_else(|| js::error_message(js::NOT_FOUND, format!("device {id:?} not found")))?;
        to_js(&d)
    }

    /// A deep copy (cheap: the state is copy-on-write), for undo and what-if.
    #[must_use]
    pub fn fork(&self) -> Scheduler {
        Scheduler {
            state: self.state.clone(),
        }
    }

    /// Replaces this session's state by a copy of `other`'s (a fork taken earlier).
    pub fn restore(&mut self, other: &Scheduler) {
        self.state = other.state.clone();
    }

    /// The state as multi-document YAML (sessions loaded from manifests): the loaded
    /// objects with what cycles wrote folded back, pods no longer in the state left
    /// out (their claims released), preemption victims written pending (the scheduler
    /// queues them again), and generated claims. A leading comment lists what
    /// is not written: changes made through the model and taint methods, which no
    /// loaded object carries. Throws `InvalidArgument` for other sessions.
    #[cfg(feature = "k8s")]
    #[wasm_bindgen(js_name = toManifests)]
    pub fn to_manifests(&self) -> Result<String, JsValue> {
        kube::to_manifests(&self.state)
    }
}

/// A pending claim's selectors must compile, as the API server checks them when the
/// claim is created (and as the manifest loader does): refused here, not when a cycle
/// first evaluates them. Every problem names the claim and the selector's field.
fn compile_selectors(claim: &ResourceClaim) -> Result<(), JsValue> {
    let mut errs = Vec::new();
    let mut compile = |path: String, selectors: &[gangpack::DeviceSelector]| {
        for (i, s) in selectors.iter().enumerate() {
            if let Err(e) = gangpack::Selector::compile(&s.cel) {
                errs.push(gangpack::ValidationError::new(
                    claim.object_ref(),
                    format!("{path}.selectors[{i}].cel.expression"),
                    gangpack::Problem::InvalidExpression {
                        message: e.to_string(),
                    },
                ));
            }
        }
    };
    for (i, r) in claim.spec.requests.iter().enumerate() {
        let rp = format!("spec.devices.requests[{i}]");
        match &r.kind {
            gangpack::DeviceRequestKind::Exactly(e) => {
                compile(format!("{rp}.exactly"), &e.selectors);
            }
            gangpack::DeviceRequestKind::FirstAvailable(subs) => {
                for (j, sub) in subs.iter().enumerate() {
                    compile(format!("{rp}.firstAvailable[{j}]"), &sub.selectors);
                }
            }
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errors::invalid(&errs))
    }
}

impl Default for Scheduler {
    fn default() -> Scheduler {
        Scheduler::new()
    }
}
