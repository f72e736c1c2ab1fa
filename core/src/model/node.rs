//! Nodes (core/v1 `Node`): the part of a node that scheduling reads.

use crate::alloc_prelude::*;
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError, check_name};
use crate::model::names;
use crate::{Quantity, Taint};

/// A node: name, labels, allocatable scalar resources and taints.
///
/// `allocatable` holds every named resource of `status.allocatable`: `cpu`, `memory`,
/// `pods`, `ephemeral-storage`, hugepages and extended resources such as
/// `nvidia.com/gpu` on device-plugin clusters.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct Node {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels` (topology keys such as a rack label live here).
    pub labels: BTreeMap<String, String>,
    /// `status.allocatable`.
    pub allocatable: BTreeMap<String, Quantity>,
    /// `spec.taints`.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
}

impl Node {
    /// A node with a name and nothing else.
    pub fn new(name: impl Into<String>) -> Node {
        Node {
            name: name.into(),
            ..Node::default()
        }
    }

    /// Adds a label (builder style).
    #[must_use]
    pub fn with_label(mut self, key: impl Into<String>, value: impl Into<String>) -> Node {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// Sets an allocatable resource (builder style).
    #[must_use]
    pub fn with_allocatable(mut self, resource: impl Into<String>, amount: Quantity) -> Node {
        self.allocatable.insert(resource.into(), amount);
        self
    }

    /// Adds a taint (builder style).
    #[must_use]
    pub fn with_taint(mut self, taint: Taint) -> Node {
        self.taints.push(taint);
        self
    }

    /// The object reference used in errors.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::cluster(ObjectKind::Node, self.name.clone())
    }

    /// Checks the node as the API server would; returns every problem found.
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        let obj = self.object_ref();
        let mut errs = Vec::new();
        check_name(
            &obj,
            "metadata.name",
            &self.name,
            names::validate_dns_subdomain,
            &mut errs,
        );
        for (k, v) in &self.labels {
            let field = format!("metadata.labels[\"{k}\"]");
            check_name(&obj, &field, k, names::validate_label_name, &mut errs);
            crate::model::taint::check_label_value(v, &obj, field, &mut errs);
        }
        validate_resource_list(&obj, "status.allocatable", &self.allocatable, &mut errs);
        let mut seen = BTreeSet::new();
        for (i, t) in self.taints.iter().enumerate() {
            let path = format!("spec.taints[{i}]");
            t.validate(&obj, &path, &mut errs);
            // Upstream: taints must be unique by key and effect.
            if !seen.insert((t.key.as_str(), t.effect)) {
                errs.push(ValidationError::new(
                    obj.clone(),
                    path,
                    Problem::Duplicate {
                        value: format!("{}:{}", t.key, t.effect.as_str()),
                    },
                ));
            }
        }
        crate::model::error::finish(errs)
    }
}

/// Checks a scalar resource list (`status.allocatable`, `resources.requests`) under
/// `path`: resource names are label names and amounts are not negative.
pub(crate) fn validate_resource_list(
    obj: &ObjectRef,
    path: &str,
    resources: &BTreeMap<String, Quantity>,
    errs: &mut Vec<ValidationError>,
) {
    for (name, amount) in resources {
        let field = format!("{path}[\"{name}\"]");
        check_name(obj, &field, name, names::validate_label_name, errs);
        if amount.is_negative() {
            errs.push(ValidationError::new(
                obj.clone(),
                field,
                Problem::Invalid {
                    value: amount.to_string(),
                    reason: "must be greater than or equal to 0",
                },
            ));
        }
    }
}
