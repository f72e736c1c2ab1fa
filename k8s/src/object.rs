//! Loaded objects, where they came from, and input errors that say so.

use std::fmt;
use std::sync::Arc;

/// The object kinds gangpack reads. Anything else in the input is skipped with a
/// [`Warning`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `v1` Namespace (its labels gate admin access).
    Namespace,
    /// `v1` Node.
    Node,
    /// `scheduling.k8s.io/v1` PriorityClass.
    PriorityClass,
    /// `resource.k8s.io/v1` DeviceClass.
    DeviceClass,
    /// `resource.k8s.io/v1` ResourceSlice.
    ResourceSlice,
    /// `resource.k8s.io/v1` DeviceTaintRule.
    DeviceTaintRule,
    /// `resource.k8s.io/v1` ResourceClaimTemplate.
    ResourceClaimTemplate,
    /// `resource.k8s.io/v1` ResourceClaim.
    ResourceClaim,
    /// `scheduling.k8s.io/v1beta1` Workload.
    Workload,
    /// `scheduling.k8s.io/v1beta1` PodGroup.
    PodGroup,
    /// `v1` Pod.
    Pod,
}

impl Kind {
    /// Every kind, in the order objects are applied when a snapshot is built
    /// (dependencies first).
    pub const ALL: [Kind; 11] = [
        Kind::Namespace,
        Kind::Node,
        Kind::PriorityClass,
        Kind::DeviceClass,
        Kind::ResourceSlice,
        Kind::DeviceTaintRule,
        Kind::ResourceClaimTemplate,
        Kind::ResourceClaim,
        Kind::Workload,
        Kind::PodGroup,
        Kind::Pod,
    ];

    /// The kind's name as in `kind:`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Namespace => "Namespace",
            Kind::Node => "Node",
            Kind::PriorityClass => "PriorityClass",
            Kind::DeviceClass => "DeviceClass",
            Kind::ResourceSlice => "ResourceSlice",
            Kind::DeviceTaintRule => "DeviceTaintRule",
            Kind::ResourceClaimTemplate => "ResourceClaimTemplate",
            Kind::ResourceClaim => "ResourceClaim",
            Kind::Workload => "Workload",
            Kind::PodGroup => "PodGroup",
            Kind::Pod => "Pod",
        }
    }

    /// The `apiVersion` gangpack writes for this kind, and converts every other served
    /// version into (see [`Kind::served_versions`]).
    pub fn api_version(self) -> &'static str {
        match self {
            Kind::Namespace | Kind::Node | Kind::Pod => "v1",
            Kind::PriorityClass => "scheduling.k8s.io/v1",
            Kind::DeviceClass
            | Kind::ResourceSlice
            | Kind::DeviceTaintRule
            | Kind::ResourceClaimTemplate
            | Kind::ResourceClaim => "resource.k8s.io/v1",
            Kind::Workload | Kind::PodGroup => "scheduling.k8s.io/v1beta1",
        }
    }

    /// Whether objects of this kind live in a namespace.
    pub fn is_namespaced(self) -> bool {
        matches!(
            self,
            Kind::ResourceClaimTemplate
                | Kind::ResourceClaim
                | Kind::Workload
                | Kind::PodGroup
                | Kind::Pod
        )
    }

    /// Every `apiVersion` a Kubernetes 1.37 API server serves for this kind (some only
    /// once enabled with `--runtime-config`), [`Kind::api_version`] first. gangpack
    /// reads them all, converting each into [`Kind::api_version`] as the API server
    /// converts it: `resource.k8s.io/v1beta2` and `v1alpha3` (DeviceTaintRule), and
    /// `scheduling.k8s.io/v1alpha3`, have the same shape; `resource.k8s.io/v1beta1`
    /// nests a device's fields in `basic` and keeps a request's device fields on the
    /// request rather than in `exactly`.
    pub fn served_versions(self) -> &'static [&'static str] {
        crate::convert::versions::served(self)
    }

    /// The kind an `apiVersion` / `kind` pair names, if gangpack reads it (at any of
    /// [`Kind::served_versions`]).
    pub fn from_type(api_version: &str, kind: &str) -> Option<Kind> {
        let k = Kind::ALL.into_iter().find(|k| k.as_str() == kind)?;
        k.served_versions().contains(&api_version).then_some(k)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an object came from: a file (or `<stdin>`), the 1-based YAML document
/// within it, and the 0-based item when the document is a `kind: List`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Source {
    /// The path as the user gave it (or as found in a directory), `<stdin>` for `-`.
    pub file: String,
    /// 1-based document index within the file (JSON files have one document).
    pub doc: usize,
    /// 0-based index in a `kind: List`'s `items`.
    pub item: Option<usize>,
}

impl fmt::Display for Source {
    /// `cluster.yaml doc 3`, or `cluster.yaml doc 1 item 7` inside a List.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} doc {}", self.file, self.doc)?;
        if let Some(i) = self.item {
            write!(f, " item {i}")?;
        }
        Ok(())
    }
}

/// One Kubernetes object as read, untouched: `raw` is the whole document, so writing
/// it back keeps every field gangpack does not own. (A document of another served API
/// version is held converted into [`Kind::api_version`], as the API server would return
/// it.)
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// Where it came from.
    pub source: Source,
    /// Its kind.
    pub kind: Kind,
    /// `metadata.namespace` (namespaced kinds; `default` when the document has none).
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
    /// The document as JSON (in [`Kind::api_version`]), shared: a clone of the
    /// object (or of a whole snapshot's objects, for undo) copies a pointer, and a
    /// write copies only the document it changes ([`Arc::make_mut`]).
    pub raw: Arc<serde_json::Value>,
}

impl Object {
    /// `ResourceSlice "node-7-gpu"`, or `Pod "team-a/worker-0"` for namespaced kinds.
    pub fn describe(&self) -> String {
        describe(self.kind, self.namespace.as_deref(), &self.name)
    }
}

/// A `v1` Binding among decisions (`pods/binding`, what kube-scheduler writes to bind
/// a pod): pod `namespace/name` goes to node `node`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// Where it came from.
    pub source: Source,
    /// `metadata.namespace` (`default` when the document has none): the pod's.
    pub namespace: String,
    /// `metadata.name`: the pod's.
    pub name: String,
    /// `target.name`: the node.
    pub node: String,
}

impl Binding {
    /// `Binding "namespace/name"`.
    pub fn describe(&self) -> String {
        format!("Binding \"{}/{}\"", self.namespace, self.name)
    }
}

/// `Kind "name"` or `Kind "namespace/name"`.
pub fn describe(kind: Kind, namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{kind} \"{ns}/{name}\""),
        None => format!("{kind} \"{name}\""),
    }
}

/// One problem with the input, located as precisely as known:
/// `cluster.yaml doc 3: ResourceSlice "node-7-gpu": spec.devices[2].capacity["memory"]: invalid quantity "80 GiB"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file and document, when the problem is in one.
    pub source: Option<Source>,
    /// The object, `Kind "namespace/name"`, when known.
    pub object: Option<String>,
    /// The JSON field path within the object (`spec.devices[2].capacity["memory"]`);
    /// empty when the problem is the whole document or file.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.source {
            write!(f, "{s}: ")?;
        }
        if let Some(o) = &self.object {
            write!(f, "{o}: ")?;
        }
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for InputError {}

/// Every problem found in an input (a load fails as a whole, listing them all up to
/// [`InputErrors::MAX`]).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct InputErrors {
    /// The problems, in input order (at most [`InputErrors::MAX`]).
    pub errors: Vec<InputError>,
    /// How many more problems were found and not listed.
    pub more: usize,
}

impl InputErrors {
    /// The most problems listed; the rest are counted in [`InputErrors::more`].
    pub const MAX: usize = 50;

    /// Records a problem (counted, not listed, past [`InputErrors::MAX`]).
    pub fn push(&mut self, e: InputError) {
        if self.errors.len() < Self::MAX {
            self.errors.push(e);
        } else {
            self.more += 1;
        }
    }

    /// Whether no problem was recorded.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty() && self.more == 0
    }

    /// How many problems in all.
    pub fn len(&self) -> usize {
        self.errors.len() + self.more
    }

    /// Appends another list.
    pub fn extend(&mut self, other: InputErrors) {
        for e in other.errors {
            self.push(e);
        }
        self.more += other.more;
    }
}

impl From<InputError> for InputErrors {
    fn from(e: InputError) -> InputErrors {
        InputErrors {
            errors: vec![e],
            more: 0,
        }
    }
}

impl fmt::Display for InputErrors {
    /// One problem per line, then `... and N more` when some were not listed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        if self.more > 0 {
            write!(f, "\n... and {} more", self.more)?;
        }
        Ok(())
    }
}

impl std::error::Error for InputErrors {}

/// Something in the input gangpack ignored or reinterpreted (an unknown kind, a field it
/// does not model): the load goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Where.
    pub source: Option<Source>,
    /// The object, when known.
    pub object: Option<String>,
    /// What.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.source {
            write!(f, "{s}: ")?;
        }
        if let Some(o) = &self.object {
            write!(f, "{o}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Warnings with one cause folded into one line: the same message about objects of one
/// kind, once list indexes are set aside (`spec.devices[*].nodeAllocatableResources
/// (alpha) is not modelled: ignored` for 16 devices), with a count and the first few
/// places.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarningGroup {
    /// The first warning of the group.
    pub first: Warning,
    /// The message with each list index written `[*]`.
    pub cause: String,
    /// How many warnings the group folds.
    pub count: usize,
    /// The objects it is about, distinct, in input order, each with its source
    /// (`ResourceSlice "node-1" (slices.yaml doc 1)`).
    pub objects: Vec<String>,
    /// Where in the object each warning is (the word of the message that names the list
    /// item: `spec.devices[3].nodeAllocatableResources`), when the group is about one
    /// object.
    pub places: Vec<String>,
}

impl WarningGroup {
    /// How many objects or places a folded line names before `and N more`.
    pub const SHOWN: usize = 3;
}

/// Folds warnings of one cause into [`WarningGroup`]s, in the order each cause first
/// appears.
pub fn group_warnings(warnings: &[Warning]) -> Vec<WarningGroup> {
    let mut groups: Vec<WarningGroup> = Vec::new();
    let mut index: std::collections::BTreeMap<(String, String), usize> =
        std::collections::BTreeMap::new();
    for w in warnings {
        let cause = without_indexes(&w.message);
        let kind = w
            .object
            .as_deref()
            .and_then(|o| o.split(' ').next())
            .unwrap_or_default()
            .to_owned();
        let object = match (&w.object, &w.source) {
            (Some(o), Some(s)) => format!("{o} ({s})"),
            (Some(o), None) => o.clone(),
            (None, Some(s)) => s.to_string(),
            (None, None) => String::new(),
        };
        let place = differing_word(&w.message, &cause);
        if let Some(&i) = index.get(&(kind.clone(), cause.clone())) {
            let g = &mut groups[i];
            g.count += 1;
            if !g.objects.contains(&object) {
                g.objects.push(object);
            }
            g.places.extend(place);
        } else {
            index.insert((kind, cause.clone()), groups.len());
            groups.push(WarningGroup {
                first: w.clone(),
                cause,
                count: 1,
                objects: vec![object],
                places: place.into_iter().collect(),
            });
        }
    }
    groups
}

/// `spec.devices[3].x` → `spec.devices[*].x`.
fn without_indexes(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(']') {
            out.push('*');
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// The first whitespace-separated word of `message` that differs from `cause`'s.
fn differing_word(message: &str, cause: &str) -> Option<String> {
    message
        .split_whitespace()
        .zip(cause.split_whitespace())
        .find(|(m, c)| m != c)
        .map(|(m, _)| m.trim_matches('"').to_owned())
}

impl fmt::Display for WarningGroup {
    /// One warning as [`Warning`] prints it; several about one object as the cause
    /// followed by `(16 times: spec.devices[0]..., ... and 13 more)`; several about
    /// several objects as the cause followed by `(16 times in 16 objects: ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.count == 1 {
            return self.first.fmt(f);
        }
        let list = |items: &[String]| {
            let mut s = items
                .iter()
                .take(Self::SHOWN)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if items.len() > Self::SHOWN {
                use fmt::Write as _;
                let _ = write!(s, " and {} more", items.len() - Self::SHOWN);
            }
            s
        };
        if self.objects.len() == 1 {
            let one = Warning {
                message: self.cause.clone(),
                ..self.first.clone()
            };
            write!(f, "{one} ({} times", self.count)?;
            if !self.places.is_empty() {
                write!(f, ": {}", list(&self.places))?;
            }
            f.write_str(")")
        } else {
            write!(
                f,
                "{} ({} times in {} objects: {})",
                self.cause,
                self.count,
                self.objects.len(),
                list(&self.objects)
            )
        }
    }
}
