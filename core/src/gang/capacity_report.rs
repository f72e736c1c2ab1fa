//! The fragmentation report: for a set of request shapes, how many copies of each the
//! free capacity can host right now, per topology domain, and how a decision changed
//! that.
//!
//! [`Cluster::capacity_report`] answers "how many 1-, 2-, 4- and 8-GPU pods, and how
//! many 4 × 8-GPU gangs in one rack, fit right now?"; [`CapacityReport::diff`] compares
//! two reports, typically taken before and after
//! [`Cluster::apply_decision`](crate::Cluster::apply_decision). What counts is
//! documented on [`CapacityReport`].

use core::fmt;

use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::gang::scoring::{MixEntry, WorkloadMix};
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError};
use crate::{DeviceSet, DeviceToleration};

/// The pseudo-object a report's validation errors name: no Kubernetes kind holds a
/// list of request shapes; each shape describes a PodGroup that might come, hence the
/// kind.
const REPORT_OBJECT: &str = "capacity report";

/// One kind of request the free capacity is measured against: `pods` pods of
/// `devices_per_pod` devices each, all in one topology domain (when the report has a
/// key and `pods > 1`).
///
/// ```
/// use gangpack::RequestShape;
///
/// let gang = RequestShape::new(4, 8).with_class("gpu");
/// assert_eq!(gang.label(Some("rack")), "4x8@rack:gpu");
/// assert_eq!(RequestShape::new(1, 8).label(Some("rack")), "1x8");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct RequestShape {
    /// Pods per copy (1 for a single pod).
    pub pods: u32,
    /// Devices each pod needs, all on its node.
    pub devices_per_pod: u32,
    /// Only devices this DeviceClass selects; `None` for any device.
    #[cfg_attr(feature = "serde", serde(default))]
    pub class: Option<String>,
    /// Device taints these tolerate do not make a device unusable.
    #[cfg_attr(feature = "serde", serde(default))]
    pub tolerations: Vec<DeviceToleration>,
}

impl RequestShape {
    /// `pods` pods of `devices_per_pod` devices, any device, no tolerations.
    pub fn new(pods: u32, devices_per_pod: u32) -> RequestShape {
        RequestShape {
            pods,
            devices_per_pod,
            class: None,
            tolerations: Vec::new(),
        }
    }

    /// Only devices of DeviceClass `class` (builder style).
    #[must_use]
    pub fn with_class(mut self, class: impl Into<String>) -> RequestShape {
        self.class = Some(class.into());
        self
    }

    /// Adds a device toleration (builder style).
    #[must_use]
    pub fn with_toleration(mut self, toleration: DeviceToleration) -> RequestShape {
        self.tolerations.push(toleration);
        self
    }

    /// The shapes of the issue: single pods of 1, 2, 4 and 8 devices, then, when
    /// `gang_pods > 1`, a gang of `gang_pods` × 8 devices.
    ///
    /// ```
    /// use gangpack::RequestShape;
    ///
    /// let labels: Vec<String> =
    ///     RequestShape::standard(4).iter().map(|s| s.label(Some("rack"))).collect();
    /// assert_eq!(labels, ["1x1", "1x2", "1x4", "1x8", "4x8@rack"]);
    /// ```
    pub fn standard(gang_pods: u32) -> Vec<RequestShape> {
        let mut out: Vec<RequestShape> = [1, 2, 4, 8]
            .into_iter()
            .map(|k| RequestShape::new(1, k))
            .collect();
        if gang_pods > 1 {
            out.push(RequestShape::new(gang_pods, 8));
        }
        out
    }

    /// The column header of the shape in a report with topology key `key`:
    /// `<pods>x<devicesPerPod>`, then `@<key>` for a multi-pod shape under a key, then
    /// `:<class>` with a class. Tolerations are not shown, so two shapes may share a
    /// label.
    pub fn label(&self, key: Option<&str>) -> String {
        let mut s = format!("{}x{}", self.pods, self.devices_per_pod);
        if let Some(key) = key.filter(|_| self.pods > 1) {
            s.push('@');
            s.push_str(key);
        }
        if let Some(class) = &self.class {
            s.push(':');
            s.push_str(class);
        }
        s
    }

    /// The devices the shape may be given anywhere now (before restricting to nodes).
    fn usable_devices(&self, cluster: &Cluster) -> DeviceSet {
        let mut set = match &self.class {
            Some(class) => cluster.class_devices(class).cloned().unwrap_or_default(),
            None => cluster.usable_devices().clone(),
        };
        cluster.restrict_usable(&mut set, &self.tolerations);
        set
    }
}

/// A row of a [`CapacityReport`]: one topology domain, or the nodes in none.
///
/// Ordered as the report lists them: label values by name, then the unlabelled nodes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum CapacityDomain {
    /// The nodes whose label (the report's key) has this value.
    Value(String),
    /// The nodes without the label: they host single pods but no multi-pod copy.
    Unlabelled,
}

impl fmt::Display for CapacityDomain {
    /// The label value, or `(unlabelled)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapacityDomain::Value(v) => f.write_str(v),
            CapacityDomain::Unlabelled => f.write_str("(unlabelled)"),
        }
    }
}

/// What one domain (or the cluster) offers one shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ShapeCapacity {
    /// Whole copies of the shape that fit now.
    pub copies: u64,
    /// Pods of the shape that fit now, counted per node (`Σ ⌊free / devicesPerPod⌋`).
    pub pods: u64,
    /// Free devices the shape could use, on schedulable nodes.
    pub free: u64,
    /// Of `free`, the devices no whole copy could use
    /// (`free − copies · pods · devicesPerPod`, by [`WorkloadMix::fragmentation`]).
    pub fragmentation: u64,
}

impl ShapeCapacity {
    fn add(&mut self, o: ShapeCapacity) {
        self.copies = self.copies.saturating_add(o.copies);
        self.pods = self.pods.saturating_add(o.pods);
        self.free = self.free.saturating_add(o.free);
        self.fragmentation = self.fragmentation.saturating_add(o.fragmentation);
    }
}

/// One row of a [`CapacityReport`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct DomainCapacity {
    /// The domain.
    pub domain: CapacityDomain,
    /// Its schedulable nodes.
    pub nodes: u32,
    /// Its cordoned nodes (which host nothing).
    pub cordoned: u32,
    /// Per shape, in the report's shape order.
    pub shapes: Vec<ShapeCapacity>,
}

/// How many copies of each request shape the free capacity can host, per topology
/// domain. Made by [`Cluster::capacity_report`].
///
/// # What counts
///
/// For one [`RequestShape`] (`pods` pods of `devices_per_pod` devices each, optionally
/// of one DeviceClass and with device tolerations):
///
/// - A node's **free devices** for the shape are its node-local devices that the shape
///   could be given now: in a usable pool, not allocated exclusively, not carrying a
///   `NoSchedule` / `NoExecute` taint the shape's tolerations do not tolerate
///   ([`Cluster::usable`]), and, with a class, selected by the class. Devices of shared
///   slices (network-attached: `allNodes`, `nodeSelector`) are not counted: they belong
///   to no single node.
/// - A cordoned node (`spec.unschedulable`) hosts nothing: its devices count neither as
///   free nor as fragmentation. The node's own taints and its scalar resources (CPU,
///   memory, pods) are not considered: a shape describes device requests only, like
///   the fragmentation measure of [`WorkloadMix`].
/// - A node hosts `⌊free / devices_per_pod⌋` pods of the shape; a domain hosts
///   `⌊Σ hosts / pods⌋` copies: the pods of one copy may share nodes but not leave the
///   domain. Pods of one shape are interchangeable and each node's room for them is
///   independent of the others', so this count is the true maximum (the integration
///   tests check it against an exhaustive search).
/// - The **fragmentation** for the shape is the free devices no whole copy could use,
///   exactly as [`WorkloadMix::fragmentation`] defines it (which computes it here).
///
/// # Domains
///
/// Without a topology key the whole cluster is one domain: a copy may use any nodes,
/// and the report has only its totals. With a key (a node label such as `rack`) every
/// label value is a row, and nodes without the label are reported in one extra row,
/// [`CapacityDomain::Unlabelled`]: they host single pods (`pods == 1`, which need no
/// domain) but no copy of a multi-pod shape, which must lie within one domain of the
/// key. A domain whose nodes are all cordoned is still listed (with nothing free). The
/// totals are the sums over the rows.
///
/// # Display
///
/// An aligned table: one row per domain, then `total`, and the totals' `free` devices
/// and `fragmented` devices; one column per shape ([`RequestShape::label`]). The first
/// header cell is the key, or `cluster` without one.
///
/// ```
/// use gangpack::prelude::*;
/// use gangpack::RequestShape;
///
/// let mut cluster = Cluster::new();
/// for (node, rack, gpus) in [("a", "r1", 8), ("b", "r1", 3), ("c", "r2", 8)] {
///     cluster.add_node(Node::new(node).with_label("rack", rack))?;
///     let name = format!("{node}-gpus");
///     let mut slice = ResourceSlice::node_local(name, "gpu.example.com", node, node);
///     for i in 0..gpus {
///         slice.devices.push(Device::new(format!("gpu-{i}")));
///     }
///     cluster.add_slice(slice)?;
/// }
/// let shapes = [RequestShape::new(1, 8), RequestShape::new(2, 4)];
/// let report = cluster.capacity_report(&shapes, Some("rack")).unwrap();
/// assert_eq!(
///     report.to_string(),
///     "\
/// rack        nodes  1x8  2x4@rack
/// r1              2    1         1
/// r2              1    1         1
/// total           3    2         2
/// free                19        19
/// fragmented           3         3
/// ",
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct CapacityReport {
    /// The topology key (node label), or `None` for the whole cluster as one domain.
    pub key: Option<String>,
    /// The shapes, in the order asked for.
    pub shapes: Vec<RequestShape>,
    /// With a key: one row per label value (by name), then the unlabelled nodes if there
    /// are any. Empty without a key (the totals are the one domain).
    pub domains: Vec<DomainCapacity>,
    /// Schedulable nodes in the cluster.
    pub nodes: u32,
    /// Cordoned nodes in the cluster.
    pub cordoned: u32,
    /// Per shape: the sums over the rows (without a key, the cluster as one domain).
    pub totals: Vec<ShapeCapacity>,
}

impl CapacityReport {
    /// The row of label value `value`.
    pub fn domain(&self, value: &str) -> Option<&DomainCapacity> {
        self.domains
            .iter()
            .find(|d| matches!(&d.domain, CapacityDomain::Value(v) if v == value))
    }

    /// The row of the nodes without the key's label, if there are any.
    pub fn unlabelled(&self) -> Option<&DomainCapacity> {
        self.domains
            .iter()
            .find(|d| d.domain == CapacityDomain::Unlabelled)
    }

    /// The shapes' column headers ([`RequestShape::label`]).
    pub fn labels(&self) -> Vec<String> {
        self.shapes
            .iter()
            .map(|s| s.label(self.key.as_deref()))
            .collect()
    }

    /// How the capacity changed from `self` to `after`: every (shape, row) whose
    /// [`ShapeCapacity`] differs, and every shape whose totals differ. A row present in
    /// only one report is compared with an empty one.
    ///
    /// `None` when the two reports were not made for the same shapes and key (they
    /// cannot be compared column by column).
    pub fn diff(&self, after: &CapacityReport) -> Option<CapacityDiff> {
        if self.shapes != after.shapes || self.key != after.key {
            return None;
        }
        let mut rows: Vec<&CapacityDomain> = self
            .domains
            .iter()
            .chain(&after.domains)
            .map(|d| &d.domain)
            .collect();
        rows.sort();
        rows.dedup();
        let find = |r: &CapacityReport, domain: &CapacityDomain, i: usize| {
            r.domains
                .iter()
                .find(|d| d.domain == *domain)
                .and_then(|d| d.shapes.get(i).copied())
                .unwrap_or_default()
        };
        let mut changes = Vec::new();
        for i in 0..self.shapes.len() {
            for &domain in &rows {
                let (b, a) = (find(self, domain, i), find(after, domain, i));
                if b != a {
                    changes.push(CapacityChange {
                        shape: i,
                        domain: Some(domain.clone()),
                        before: b,
                        after: a,
                    });
                }
            }
            let total = |r: &CapacityReport| r.totals.get(i).copied().unwrap_or_default();
            let (b, a) = (total(self), total(after));
            if b != a {
                changes.push(CapacityChange {
                    shape: i,
                    domain: None,
                    before: b,
                    after: a,
                });
            }
        }
        Some(CapacityDiff {
            key: self.key.clone(),
            shapes: self.shapes.clone(),
            changes,
        })
    }
}

/// One (shape, row) whose capacity changed between two reports.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct CapacityChange {
    /// The shape's index in the reports' shapes.
    pub shape: usize,
    /// The row, or `None` for the totals.
    pub domain: Option<CapacityDomain>,
    /// Before.
    pub before: ShapeCapacity,
    /// After.
    pub after: ShapeCapacity,
}

impl CapacityChange {
    /// `after.copies − before.copies` (saturating).
    pub fn copies_delta(&self) -> i64 {
        signed_delta(self.before.copies, self.after.copies)
    }
}

fn signed_delta(before: u64, after: u64) -> i64 {
    let d = i128::from(after) - i128::from(before);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// How a decision (or any change) changed a [`CapacityReport`]: made by
/// [`CapacityReport::diff`].
///
/// `Display` prints one line per change, by shape then row (the totals last), e.g.
/// `4x8@rack r1: copies 1 -> 0 (-1), free 32 -> 24, fragmented 0 -> 24`, or
/// `no change`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct CapacityDiff {
    /// The reports' topology key.
    pub key: Option<String>,
    /// The reports' shapes.
    pub shapes: Vec<RequestShape>,
    /// What changed, by shape then row (label values by name, the unlabelled nodes,
    /// then the totals).
    pub changes: Vec<CapacityChange>,
}

impl CapacityDiff {
    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The change of `shape`'s total copies (0 when unchanged or out of range).
    pub fn total_copies_delta(&self, shape: usize) -> i64 {
        self.changes
            .iter()
            .find(|c| c.shape == shape && c.domain.is_none())
            .map_or(0, CapacityChange::copies_delta)
    }
}

impl fmt::Display for CapacityDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.changes.is_empty() {
            return f.write_str("no change\n");
        }
        for c in &self.changes {
            let label = self
                .shapes
                .get(c.shape)
                .map(|s| s.label(self.key.as_deref()))
                .unwrap_or_default();
            let (b, a) = (c.before, c.after);
            match &c.domain {
                Some(d) => write!(f, "{label} {d}")?,
                None => write!(f, "{label} total")?,
            }
            writeln!(
                f,
                ": copies {} -> {} ({:+}), free {} -> {}, fragmented {} -> {}",
                b.copies,
                a.copies,
                c.copies_delta(),
                b.free,
                a.free,
                b.fragmentation,
                a.fragmentation
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for CapacityReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Cells as text first, then widths: column 0 left-aligned, the rest right.
        let mut rows: Vec<Vec<String>> = Vec::new();
        let first = self.key.clone().unwrap_or_else(|| "cluster".into());
        let mut header = vec![first, "nodes".into()];
        header.extend(self.labels());
        rows.push(header);
        let row = |name: String, nodes: String, cells: &mut dyn Iterator<Item = u64>| {
            let mut r = vec![name, nodes];
            r.extend(cells.map(|v| v.to_string()));
            r
        };
        for d in &self.domains {
            rows.push(row(
                d.domain.to_string(),
                d.nodes.to_string(),
                &mut d.shapes.iter().map(|s| s.copies),
            ));
        }
        rows.push(row(
            "total".into(),
            self.nodes.to_string(),
            &mut self.totals.iter().map(|s| s.copies),
        ));
        rows.push(row(
            "free".into(),
            String::new(),
            &mut self.totals.iter().map(|s| s.free),
        ));
        rows.push(row(
            "fragmented".into(),
            String::new(),
            &mut self.totals.iter().map(|s| s.fragmentation),
        ));
        // Rows of a hand-made report may be short: pad them to the header.
        let columns = rows[0].len();
        for r in &mut rows {
            r.resize(columns, String::new());
        }
        let widths: Vec<usize> = (0..columns)
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let mut line = String::new();
            for (c, cell) in r.iter().enumerate() {
                let pad = widths[c] - cell.chars().count();
                if c == 0 {
                    line.push_str(cell);
                    line.extend(core::iter::repeat_n(' ', pad));
                } else {
                    line.push_str("  ");
                    line.extend(core::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                }
            }
            // A table of no shapes ends in the left-aligned column's padding.
            writeln!(f, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

/// One schedulable node's free devices for every shape.
struct NodeFree<'a> {
    domain: Option<&'a str>,
    free: Vec<u32>,
}

impl Cluster {
    /// How many copies of each shape the free capacity can host right now, per domain
    /// of the node label `key` (or in the whole cluster as one domain, with `None`).
    /// See [`CapacityReport`] for what counts.
    ///
    /// Costs one pass over the device bitsets per shape plus one popcount per node and
    /// shape; nothing is changed.
    ///
    /// Errors (all of them, naming the pseudo-object `PodGroup "capacity report"`): a
    /// shape with `pods` or `devicesPerPod` 0 (`shapes[i].pods`,
    /// `shapes[i].devicesPerPod`), a class that does not exist (`shapes[i].class`), an
    /// invalid toleration or more than 16 (`shapes[i].tolerations[j]...`, as in a
    /// claim), and a key that is not a label name (`key`).
    pub fn capacity_report(
        &self,
        shapes: &[RequestShape],
        key: Option<&str>,
    ) -> Result<CapacityReport, Vec<ValidationError>> {
        self.validate_shapes(shapes, key)?;
        let usable: Vec<DeviceSet> = shapes.iter().map(|s| s.usable_devices(self)).collect();

        // Per-node free counts; cordoned nodes only counted.
        let mut cordoned_in: BTreeMap<Option<&str>, u32> = BTreeMap::new();
        let mut nodes: Vec<NodeFree<'_>> = Vec::new();
        for (id, node) in self.nodes_with_ids() {
            let domain = key.and_then(|k| node.labels.get(k)).map(String::as_str);
            if node.unschedulable {
                *cordoned_in.entry(domain).or_default() += 1;
                continue;
            }
            let free = usable
                .iter()
                .map(|set| {
                    self.node_devices(id)
                        .map_or(0, |d| u32::try_from(d.count_in(set)).unwrap_or(u32::MAX))
                })
                .collect();
            nodes.push(NodeFree { domain, free });
        }
        let cordoned: u32 = cordoned_in.values().sum();
        let schedulable = u32::try_from(nodes.len()).unwrap_or(u32::MAX);

        let Some(key) = key else {
            let all: Vec<&NodeFree<'_>> = nodes.iter().collect();
            return Ok(CapacityReport {
                key: None,
                shapes: shapes.to_vec(),
                domains: Vec::new(),
                nodes: schedulable,
                cordoned,
                totals: capacities(shapes, &all, true),
            });
        };

        // Group by label value (`None` = unlabelled, sorted last below).
        let mut groups: BTreeMap<Option<&str>, Vec<&NodeFree<'_>>> = BTreeMap::new();
        for n in &nodes {
            groups.entry(n.domain).or_default().push(n);
        }
        for &d in cordoned_in.keys() {
            groups.entry(d).or_default();
        }
        let mut domains: Vec<DomainCapacity> = groups
            .iter()
            .map(|(&name, members)| DomainCapacity {
                domain: name.map_or(CapacityDomain::Unlabelled, |v| {
                    CapacityDomain::Value(v.to_owned())
                }),
                nodes: u32::try_from(members.len()).unwrap_or(u32::MAX),
                cordoned: cordoned_in.get(&name).copied().unwrap_or(0),
                shapes: capacities(shapes, members, name.is_some()),
            })
            .collect();
        domains.sort_by(|a, b| a.domain.cmp(&b.domain));
        let mut totals = vec![ShapeCapacity::default(); shapes.len()];
        for d in &domains {
            for (t, s) in totals.iter_mut().zip(&d.shapes) {
                t.add(*s);
            }
        }
        Ok(CapacityReport {
            key: Some(key.to_owned()),
            shapes: shapes.to_vec(),
            domains,
            nodes: schedulable,
            cordoned,
            totals,
        })
    }

    fn validate_shapes(
        &self,
        shapes: &[RequestShape],
        key: Option<&str>,
    ) -> Result<(), Vec<ValidationError>> {
        let obj = ObjectRef::cluster(ObjectKind::PodGroup, REPORT_OBJECT);
        let mut errs = Vec::new();
        if let Some(key) = key {
            crate::model::taint::check_label_name(key, &obj, "key".into(), &mut errs);
        }
        for (i, s) in shapes.iter().enumerate() {
            let at = format!("shapes[{i}]");
            for (name, value) in [("pods", s.pods), ("devicesPerPod", s.devices_per_pod)] {
                if value == 0 {
                    errs.push(ValidationError::new(
                        obj.clone(),
                        format!("{at}.{name}"),
                        Problem::Invalid {
                            value: value.to_string(),
                            reason: "must be at least 1",
                        },
                    ));
                }
            }
            if let Some(class) = &s.class
                && self.class_devices(class).is_none()
            {
                errs.push(ValidationError::new(
                    obj.clone(),
                    format!("{at}.class"),
                    Problem::NotFound {
                        value: class.clone(),
                    },
                ));
            }
            let field = format!("{at}.tolerations");
            crate::model::error::check_max(
                &obj,
                &field,
                s.tolerations.len(),
                crate::model::claim::MAX_TOLERATIONS,
                &mut errs,
            );
            for (j, t) in s.tolerations.iter().enumerate() {
                t.validate(&obj, &format!("{field}[{j}]"), &mut errs);
            }
        }
        crate::model::error::finish(errs)
    }
}

/// Every shape's capacity in one row of nodes. `in_domain`: the nodes form one domain
/// (multi-pod copies may use them); otherwise they host single pods only.
fn capacities(
    shapes: &[RequestShape],
    nodes: &[&NodeFree<'_>],
    in_domain: bool,
) -> Vec<ShapeCapacity> {
    shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let free: Vec<u32> = nodes.iter().map(|n| n.free[i]).collect();
            let k = s.devices_per_pod.max(1);
            let n = s.pods.max(1);
            let pods: u64 = free.iter().map(|&f| u64::from(f / k)).sum();
            let total: u64 = free.iter().map(|&f| u64::from(f)).sum();
            if !in_domain && n > 1 {
                // No domain of the key holds these nodes: no copy fits, nothing is used.
                return ShapeCapacity {
                    copies: 0,
                    pods,
                    free: total,
                    fragmentation: total,
                };
            }
            let mix = WorkloadMix {
                entries: vec![MixEntry {
                    weight: 1,
                    pods: n,
                    devices_per_pod: k,
                }],
            };
            ShapeCapacity {
                copies: pods / u64::from(n),
                pods,
                free: total,
                fragmentation: mix.fragmentation(&free),
            }
        })
        .collect()
}
