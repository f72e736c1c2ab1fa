//! A readable rendering of a [`Scenario`]: a compact YAML-like summary, one line per
//! object, for failing tests and shrunk counterexamples.

use core::fmt::{self, Display, Formatter, Write};

use super::Scenario;
use crate::alloc_prelude::*;
use crate::{
    AllocationMode, ClaimSource, ConstraintKind, Device, DeviceAttribute, DeviceRequestKind,
    DeviceToleration, NodeAccess, ResourceClaim, SchedulingPolicy, SliceNodeSelection,
};

/// Writes `key=value` pairs separated by spaces.
fn pairs<'a, V: Display + 'a>(
    f: &mut Formatter<'_>,
    items: impl IntoIterator<Item = (&'a String, V)>,
) -> fmt::Result {
    for (i, (k, v)) in items.into_iter().enumerate() {
        if i > 0 {
            f.write_char(' ')?;
        }
        write!(f, "{k}={v}")?;
    }
    Ok(())
}

struct Attr<'a>(&'a DeviceAttribute);

impl Display for Attr<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        fn list<T: Display>(f: &mut Formatter<'_>, v: &[T]) -> fmt::Result {
            f.write_char('[')?;
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    f.write_char(',')?;
                }
                write!(f, "{x}")?;
            }
            f.write_char(']')
        }
        match self.0 {
            DeviceAttribute::Int(v) => write!(f, "{v}"),
            DeviceAttribute::Bool(v) => write!(f, "{v}"),
            DeviceAttribute::String(v) => write!(f, "{v:?}"),
            DeviceAttribute::Version(v) => write!(f, "v{v}"),
            DeviceAttribute::Ints(v) => list(f, v),
            DeviceAttribute::Bools(v) => list(f, v),
            DeviceAttribute::Strings(v) | DeviceAttribute::Versions(v) => list(f, v),
        }
    }
}

fn device(f: &mut Formatter<'_>, d: &Device) -> fmt::Result {
    write!(f, "      - {}: ", d.name)?;
    pairs(f, d.attributes.iter().map(|(k, v)| (k, Attr(v))))?;
    for (k, c) in &d.capacity {
        write!(f, " {k}={}", c.value)?;
        if c.request_policy.is_some() {
            f.write_str("(policy)")?;
        }
    }
    if d.allow_multiple_allocations {
        f.write_str(" shareable")?;
    }
    for c in &d.consumes_counters {
        write!(f, " consumes {}{{", c.counter_set)?;
        pairs(f, c.counters.iter())?;
        f.write_char('}')?;
    }
    for t in &d.taints {
        write!(f, " taint {t}")?;
    }
    f.write_char('\n')
}

fn tolerations(f: &mut Formatter<'_>, t: &[DeviceToleration]) -> fmt::Result {
    for t in t {
        let key = if t.key.is_empty() { "*" } else { &t.key };
        match &t.effect {
            Some(e) => write!(f, " tolerates {key}:{e}")?,
            None => write!(f, " tolerates {key}")?,
        }
    }
    Ok(())
}

fn mode(m: AllocationMode) -> String {
    match m {
        AllocationMode::ExactCount(n) => format!("{n} x"),
        AllocationMode::All => "all".into(),
    }
}

fn claim(f: &mut Formatter<'_>, c: &ResourceClaim) -> fmt::Result {
    write!(f, "  - {}/{}:", c.namespace, c.name)?;
    for r in &c.spec.requests {
        write!(f, " {}:", r.name)?;
        match &r.kind {
            DeviceRequestKind::Exactly(x) => {
                write!(f, " {} {}", mode(x.allocation_mode), x.device_class_name)?;
                for s in &x.selectors {
                    write!(f, " where {}", s.cel)?;
                }
                for (k, q) in &x.capacity {
                    write!(f, " capacity {k}={q}")?;
                }
                if x.admin_access {
                    f.write_str(" admin")?;
                }
                tolerations(f, &x.tolerations)?;
            }
            DeviceRequestKind::FirstAvailable(subs) => {
                f.write_str(" first of [")?;
                for (i, s) in subs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(
                        f,
                        "{}: {} {}",
                        s.name,
                        mode(s.allocation_mode),
                        s.device_class_name
                    )?;
                    for x in &s.selectors {
                        write!(f, " where {}", x.cel)?;
                    }
                    for (k, q) in &s.capacity {
                        write!(f, " capacity {k}={q}")?;
                    }
                    tolerations(f, &s.tolerations)?;
                }
                f.write_char(']')?;
            }
        }
    }
    for c in &c.spec.constraints {
        let (what, attr) = match &c.kind {
            ConstraintKind::MatchAttribute(a) => ("matchAttribute", a),
            ConstraintKind::DistinctAttribute(a) => ("distinctAttribute", a),
        };
        write!(f, "; {what} {attr}")?;
        if !c.requests.is_empty() {
            write!(f, " on {}", c.requests.join(","))?;
        }
    }
    match &c.allocation {
        None => f.write_str("; pending")?,
        Some(a) => {
            f.write_str("; allocated")?;
            for (i, d) in a.devices.iter().enumerate() {
                let sep = if i == 0 { ' ' } else { ',' };
                write!(f, "{sep}{}/{}", d.pool, d.device)?;
                if let Some(s) = &d.share_id {
                    write!(f, "(share {})", &s[..s.len().min(8)])?;
                }
                if d.admin_access {
                    f.write_str("(admin)")?;
                }
            }
        }
    }
    f.write_char('\n')
}

impl Display for Scenario {
    /// A compact, YAML-like summary: one line per namespace, node, class, taint rule,
    /// priority class, claim, group and pod, and per slice one line per device.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let bound = self.bound_pods().count();
        writeln!(
            f,
            "scenario: {} nodes, {} devices, {} claims, {} groups, {} pods ({bound} running)",
            self.nodes.len(),
            self.slices.iter().map(|s| s.devices.len()).sum::<usize>(),
            self.claims.len(),
            self.groups.len(),
            self.pods.len(),
        )?;
        if !self.namespaces.is_empty() {
            f.write_str("namespaces:\n")?;
            for n in &self.namespaces {
                write!(f, "  - {}", n.name)?;
                if !n.labels.is_empty() {
                    f.write_str(" {")?;
                    pairs(f, n.labels.iter())?;
                    f.write_char('}')?;
                }
                f.write_char('\n')?;
            }
        }
        if !self.nodes.is_empty() {
            f.write_str("nodes:\n")?;
            for n in &self.nodes {
                write!(f, "  - {}: ", n.name)?;
                pairs(
                    f,
                    n.labels
                        .iter()
                        .filter(|(k, _)| k.as_str() != "kubernetes.io/hostname"),
                )?;
                f.write_str("; ")?;
                pairs(f, n.allocatable.iter())?;
                for t in &n.taints {
                    write!(f, "; taint {t}")?;
                }
                if n.unschedulable {
                    f.write_str("; cordoned")?;
                }
                f.write_char('\n')?;
            }
        }
        if !self.slices.is_empty() {
            f.write_str("slices:\n")?;
            for s in &self.slices {
                write!(f, "  - {} ({}, pool {}", s.name, s.driver, s.pool.name)?;
                match &s.node_selection {
                    SliceNodeSelection::Slice(NodeAccess::NodeName(n)) => {
                        write!(f, ", node {n}")?;
                    }
                    SliceNodeSelection::Slice(NodeAccess::AllNodes) => {
                        f.write_str(", all nodes")?;
                    }
                    SliceNodeSelection::Slice(NodeAccess::NodeSelector(_)) => {
                        f.write_str(", node selector")?;
                    }
                    SliceNodeSelection::PerDevice => f.write_str(", per device")?,
                }
                f.write_str("):\n")?;
                for c in &s.shared_counters {
                    write!(f, "      counters {}: ", c.name)?;
                    pairs(f, c.counters.iter())?;
                    f.write_char('\n')?;
                }
                for d in &s.devices {
                    device(f, d)?;
                }
            }
        }
        if !self.device_classes.is_empty() {
            f.write_str("classes:\n")?;
            for c in &self.device_classes {
                write!(f, "  - {}:", c.name)?;
                for (i, s) in c.selectors.iter().enumerate() {
                    let sep = if i == 0 { " " } else { " && " };
                    write!(f, "{sep}{}", s.cel)?;
                }
                f.write_char('\n')?;
            }
        }
        if !self.taint_rules.is_empty() {
            f.write_str("taint rules:\n")?;
            for r in &self.taint_rules {
                write!(f, "  - {}: {}", r.name, r.taint)?;
                if let Some(s) = &r.selector {
                    for (what, v) in [
                        ("driver", &s.driver),
                        ("pool", &s.pool),
                        ("device", &s.device),
                    ] {
                        if let Some(v) = v {
                            write!(f, " {what}={v}")?;
                        }
                    }
                }
                f.write_char('\n')?;
            }
        }
        if !self.priority_classes.is_empty() {
            f.write_str("priority classes:\n")?;
            for c in &self.priority_classes {
                write!(f, "  - {}: {} {}", c.name, c.value, c.preemption_policy)?;
                if c.global_default {
                    f.write_str(" (default)")?;
                }
                f.write_char('\n')?;
            }
        }
        if !self.claims.is_empty() {
            f.write_str("claims:\n")?;
            for c in &self.claims {
                claim(f, c)?;
            }
        }
        if !self.workloads.is_empty() {
            f.write_str("workloads:\n")?;
            for w in &self.workloads {
                write!(f, "  - {}/{}: templates", w.namespace, w.name)?;
                for t in &w.pod_group_templates {
                    write!(f, " {}", t.name)?;
                }
                f.write_char('\n')?;
            }
        }
        if !self.groups.is_empty() {
            f.write_str("groups:\n")?;
            for g in &self.groups {
                write!(f, "  - {}/{}: ", g.namespace, g.name)?;
                match g.policy {
                    SchedulingPolicy::Basic => f.write_str("basic")?,
                    SchedulingPolicy::Gang { min_count } => write!(f, "gang minCount={min_count}")?,
                }
                for t in &g.topology {
                    write!(f, " topology={}", t.key)?;
                }
                match &g.priority_class_name {
                    Some(c) => write!(f, " priority={c}({})", g.effective_priority())?,
                    None => write!(f, " priority={}", g.effective_priority())?,
                }
                write!(f, " disruption={:?}", g.disruption_mode)?;
                for c in &g.resource_claims {
                    write!(f, " claim {}", c.name)?;
                }
                f.write_char('\n')?;
            }
        }
        if !self.pods.is_empty() {
            f.write_str("pods:\n")?;
            for p in &self.pods {
                write!(f, "  - {}/{}:", p.namespace, p.name)?;
                if let Some(g) = &p.scheduling_group {
                    write!(f, " group={g}")?;
                }
                f.write_char(' ')?;
                pairs(f, p.requests.iter())?;
                for c in &p.resource_claims {
                    match &c.source {
                        ClaimSource::ClaimName(n) => write!(f, " claim {}={n}", c.name)?,
                        ClaimSource::Template(t) => write!(f, " claim {}=template {t}", c.name)?,
                    }
                }
                for t in &p.tolerations {
                    let key = if t.key.is_empty() { "*" } else { &t.key };
                    write!(f, " tolerates {key}")?;
                }
                if !p.node_selector.is_empty() {
                    f.write_str(" nodeSelector{")?;
                    pairs(f, p.node_selector.iter())?;
                    f.write_char('}')?;
                }
                match &p.node_name {
                    Some(n) => write!(f, " -> {n}")?,
                    None => f.write_str(" pending")?,
                }
                f.write_char('\n')?;
            }
        }
        Ok(())
    }
}
