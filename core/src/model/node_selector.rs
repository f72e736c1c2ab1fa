//! core/v1 `NodeSelector`: the node constraint of a ResourceSlice (`spec.nodeSelector`), of
//! an allocation result (`status.allocation.nodeSelector`) and of a pod's required node
//! affinity. Matching follows `k8s.io/component-helpers/scheduling/corev1/nodeaffinity`,
//! validation follows `ValidateNodeSelector` in `pkg/apis/core/validation`.

use core::fmt;

use crate::alloc_prelude::*;
use crate::model::error::check_name;
use crate::model::names::{validate_dns_subdomain, validate_label_name, validate_label_value};
use crate::{ObjectRef, Problem, ValidationError};

/// A node selector: its terms are ORed.
///
/// A selector without terms, or whose terms are all empty, matches no node.
///
/// ```
/// use std::collections::BTreeMap;
/// use gangpack::{NodeSelector, NodeSelectorOperator, NodeSelectorRequirement, NodeSelectorTerm};
///
/// let selector = NodeSelector {
///     terms: vec![NodeSelectorTerm {
///         match_expressions: vec![NodeSelectorRequirement::new(
///             "topology.kubernetes.io/zone",
///             NodeSelectorOperator::In,
///             ["zone-a", "zone-b"],
///         )],
///         match_fields: vec![],
///     }],
/// };
/// let labels = BTreeMap::from([("topology.kubernetes.io/zone".to_string(), "zone-a".to_string())]);
/// assert!(selector.matches("node-1", &labels));
/// assert!(!selector.matches("node-1", &BTreeMap::new()));
/// assert!(NodeSelector::single_node("node-1").matches("node-1", &BTreeMap::new()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NodeSelector {
    /// `nodeSelectorTerms`: a node matches the selector if it matches any term.
    #[cfg_attr(feature = "serde", serde(rename = "nodeSelectorTerms", default))]
    pub terms: Vec<NodeSelectorTerm>,
}

/// One term of a [`NodeSelector`]: its requirements, label and field ones alike, are ANDed.
///
/// A term with no requirement at all matches no node (it does not match every node).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct NodeSelectorTerm {
    /// Requirements on the node's labels.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub match_expressions: Vec<NodeSelectorRequirement>,
    /// Requirements on the node's fields; only `metadata.name` is supported.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub match_fields: Vec<NodeSelectorRequirement>,
}

/// One requirement: a key (label name, or field path in `matchFields`), an operator and values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NodeSelectorRequirement {
    /// The label name (in `matchExpressions`) or the field path (in `matchFields`).
    pub key: String,
    /// How the key's value is compared with `values`.
    pub operator: NodeSelectorOperator,
    /// The values; how many are allowed depends on the operator.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub values: Vec<String>,
}

/// The operator of a [`NodeSelectorRequirement`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum NodeSelectorOperator {
    /// The label is present and its value is one of `values` (one or more).
    In,
    /// The label is absent, or its value is none of `values` (one or more).
    NotIn,
    /// The label is present (no values).
    Exists,
    /// The label is absent (no values).
    DoesNotExist,
    /// The label is present and, read as an `i64`, greater than the single value.
    Gt,
    /// The label is present and, read as an `i64`, less than the single value.
    Lt,
}

impl NodeSelectorOperator {
    /// Every operator, in the API's order.
    pub const ALL: [NodeSelectorOperator; 6] = [
        NodeSelectorOperator::In,
        NodeSelectorOperator::NotIn,
        NodeSelectorOperator::Exists,
        NodeSelectorOperator::DoesNotExist,
        NodeSelectorOperator::Gt,
        NodeSelectorOperator::Lt,
    ];

    /// Parses the API spelling (`"In"`, `"NotIn"`, `"Exists"`, `"DoesNotExist"`, `"Gt"`,
    /// `"Lt"`; case-sensitive).
    pub fn parse(s: &str) -> Option<NodeSelectorOperator> {
        NodeSelectorOperator::ALL
            .into_iter()
            .find(|op| op.as_str() == s)
    }

    /// The API spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            NodeSelectorOperator::In => "In",
            NodeSelectorOperator::NotIn => "NotIn",
            NodeSelectorOperator::Exists => "Exists",
            NodeSelectorOperator::DoesNotExist => "DoesNotExist",
            NodeSelectorOperator::Gt => "Gt",
            NodeSelectorOperator::Lt => "Lt",
        }
    }
}

impl fmt::Display for NodeSelectorOperator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Operators allowed in `matchFields`.
const FIELD_OPERATORS: &[&str] = &["In", "NotIn"];
/// Field keys allowed in `matchFields`.
const FIELD_KEYS: &[&str] = &[NodeSelectorRequirement::NODE_NAME_FIELD];

impl NodeSelectorRequirement {
    /// The only key `matchFields` supports: the node's name.
    pub const NODE_NAME_FIELD: &'static str = "metadata.name";

    /// A requirement.
    pub fn new<V: Into<String>>(
        key: impl Into<String>,
        operator: NodeSelectorOperator,
        values: impl IntoIterator<Item = V>,
    ) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.into(),
            operator,
            values: values.into_iter().map(Into::into).collect(),
        }
    }

    /// Whether upstream could turn this into a label selector requirement
    /// (`labels.NewRequirement`): the key is a label name, every value is a label value,
    /// and the number of values fits the operator (Gt/Lt: exactly one, an `i64`).
    fn is_well_formed_label_requirement(&self) -> bool {
        let values_fit = match self.operator {
            NodeSelectorOperator::In | NodeSelectorOperator::NotIn => !self.values.is_empty(),
            NodeSelectorOperator::Exists | NodeSelectorOperator::DoesNotExist => {
                self.values.is_empty()
            }
            NodeSelectorOperator::Gt | NodeSelectorOperator::Lt => {
                matches!(self.values.as_slice(), [v] if v.parse::<i64>().is_ok())
            }
        };
        values_fit
            && validate_label_name(&self.key).is_ok()
            && self.values.iter().all(|v| validate_label_value(v).is_ok())
    }

    /// Whether node labels satisfy this requirement, read as a `matchExpressions` entry.
    ///
    /// `In`: the label is present with one of the values. `NotIn`: the label is absent or
    /// has none of the values. `Exists` / `DoesNotExist`: the label is present / absent.
    /// `Gt` / `Lt`: the label is present, parses as an `i64` (decimal, optional sign), and
    /// is greater / less than the single value; an unparsable label never matches.
    ///
    /// As upstream, a malformed requirement (see [`NodeSelector`]'s validation: bad key,
    /// bad value, wrong number of values, non-integer Gt/Lt value) matches nothing, even
    /// with `NotIn` or `DoesNotExist`. Note that a Gt/Lt value must also be a label value,
    /// so negative or `+`-signed thresholds make the requirement malformed.
    pub fn matches_labels(&self, labels: &BTreeMap<String, String>) -> bool {
        if !self.is_well_formed_label_requirement() {
            return false;
        }
        let label = labels.get(self.key.as_str());
        match self.operator {
            NodeSelectorOperator::In => label.is_some_and(|l| self.values.contains(l)),
            NodeSelectorOperator::NotIn => label.is_none_or(|l| !self.values.contains(l)),
            NodeSelectorOperator::Exists => label.is_some(),
            NodeSelectorOperator::DoesNotExist => label.is_none(),
            NodeSelectorOperator::Gt | NodeSelectorOperator::Lt => {
                let (Some(have), Some(Ok(bound))) = (
                    label.and_then(|l| l.parse::<i64>().ok()),
                    self.values.first().map(|v| v.parse::<i64>()),
                ) else {
                    return false;
                };
                if self.operator == NodeSelectorOperator::Gt {
                    have > bound
                } else {
                    have < bound
                }
            }
        }
    }

    /// Whether a node with this name satisfies this requirement, read as a `matchFields`
    /// entry: the key must be `metadata.name` and the operator `In` (the name equals the
    /// single value) or `NotIn` (it differs). Any other key, operator or number of values
    /// matches nothing.
    pub fn matches_field(&self, node_name: &str) -> bool {
        if self.key != Self::NODE_NAME_FIELD {
            return false;
        }
        match (self.operator, self.values.as_slice()) {
            (NodeSelectorOperator::In, [v]) => node_name == v,
            (NodeSelectorOperator::NotIn, [v]) => node_name != v,
            _ => false,
        }
    }

    /// Validates a `matchExpressions` entry at `path`.
    fn validate_expression(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        let values_path = format!("{path}.values");
        match self.operator {
            NodeSelectorOperator::In | NodeSelectorOperator::NotIn => {
                if self.values.is_empty() {
                    push(errs, obj, &values_path, Problem::Required);
                }
            }
            NodeSelectorOperator::Exists | NodeSelectorOperator::DoesNotExist => {
                if !self.values.is_empty() {
                    let reason =
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'";
                    push(errs, obj, &values_path, Problem::Forbidden { reason });
                }
            }
            NodeSelectorOperator::Gt | NodeSelectorOperator::Lt => match self.values.as_slice() {
                [] => push(errs, obj, &values_path, Problem::Required),
                [v] => {
                    if v.parse::<i64>().is_err() {
                        let problem = Problem::Invalid {
                            value: v.clone(),
                            reason: "must be an integer when `operator` is 'Gt' or 'Lt'",
                        };
                        push(errs, obj, &format!("{values_path}[0]"), problem);
                    }
                }
                many => {
                    let problem = Problem::TooMany {
                        max: 1,
                        actual: many.len(),
                    };
                    push(errs, obj, &values_path, problem);
                }
            },
        }
        check_name(
            obj,
            &format!("{path}.key"),
            &self.key,
            validate_label_name,
            errs,
        );
        for (k, value) in self.values.iter().enumerate() {
            // An empty label value is valid.
            if let Err(error) = validate_label_value(value) {
                let problem = Problem::InvalidName {
                    value: value.clone(),
                    error,
                };
                push(errs, obj, &format!("{values_path}[{k}]"), problem);
            }
        }
    }

    /// Validates a `matchFields` entry at `path`.
    fn validate_field(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        let values_path = format!("{path}.values");
        match self.operator {
            NodeSelectorOperator::In | NodeSelectorOperator::NotIn => match self.values.len() {
                0 => push(errs, obj, &values_path, Problem::Required),
                1 => {}
                actual => push(errs, obj, &values_path, Problem::TooMany { max: 1, actual }),
            },
            op => {
                let problem = Problem::NotSupported {
                    value: op.as_str().to_owned(),
                    supported: FIELD_OPERATORS,
                };
                push(errs, obj, &format!("{path}.operator"), problem);
            }
        }
        if self.key == Self::NODE_NAME_FIELD {
            // Node names are DNS subdomains.
            for (k, value) in self.values.iter().enumerate() {
                let value_path = format!("{values_path}[{k}]");
                check_name(obj, &value_path, value, validate_dns_subdomain, errs);
            }
        } else {
            let problem = Problem::NotSupported {
                value: self.key.clone(),
                supported: FIELD_KEYS,
            };
            push(errs, obj, &format!("{path}.key"), problem);
        }
    }
}

impl NodeSelectorTerm {
    /// Whether the term has no requirement (and so matches no node).
    pub fn is_empty(&self) -> bool {
        self.match_expressions.is_empty() && self.match_fields.is_empty()
    }

    /// Whether the node matches every requirement of this term. An empty term matches
    /// nothing.
    pub fn matches(&self, node_name: &str, labels: &BTreeMap<String, String>) -> bool {
        !self.is_empty()
            && self
                .match_expressions
                .iter()
                .all(|r| r.matches_labels(labels))
            && self.match_fields.iter().all(|r| r.matches_field(node_name))
    }

    /// Validates the term at `path` (e.g. `spec.nodeSelector.nodeSelectorTerms[0]`), as
    /// upstream's `ValidateNodeSelectorTerm`: an empty term is valid.
    pub(crate) fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        for (j, req) in self.match_expressions.iter().enumerate() {
            req.validate_expression(obj, &format!("{path}.matchExpressions[{j}]"), errs);
        }
        for (j, req) in self.match_fields.iter().enumerate() {
            req.validate_field(obj, &format!("{path}.matchFields[{j}]"), errs);
        }
    }
}

impl NodeSelector {
    /// The selector of exactly one node: one term, `metadata.name In [node_name]`
    /// (what an allocation from a node-local ResourceSlice records).
    pub fn single_node(node_name: impl Into<String>) -> NodeSelector {
        NodeSelector {
            terms: vec![NodeSelectorTerm {
                match_expressions: Vec::new(),
                match_fields: vec![NodeSelectorRequirement {
                    key: NodeSelectorRequirement::NODE_NAME_FIELD.to_owned(),
                    operator: NodeSelectorOperator::In,
                    values: vec![node_name.into()],
                }],
            }],
        }
    }

    /// Whether a node with this name and these labels matches any term.
    pub fn matches(&self, node_name: &str, labels: &BTreeMap<String, String>) -> bool {
        self.terms
            .iter()
            .any(|term| term.matches(node_name, labels))
    }

    /// Validates the selector at `path` (e.g. `spec.nodeSelector`), as upstream's
    /// `ValidateNodeSelector`: at least one term; in `matchExpressions`, keys are label
    /// names, values label values, `In`/`NotIn` need values, `Exists`/`DoesNotExist` take
    /// none, `Gt`/`Lt` take exactly one `i64`; in `matchFields`, the key is
    /// `metadata.name`, the operator `In` or `NotIn`, with exactly one node name.
    ///
    /// Callers add their own limits (a ResourceSlice allows exactly one term).
    #[allow(
        dead_code,
        reason = "called by the ResourceSlice / ResourceClaim / Pod validation"
    )]
    pub(crate) fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        let terms_path = if path.is_empty() {
            String::from("nodeSelectorTerms")
        } else {
            format!("{path}.nodeSelectorTerms")
        };
        if self.terms.is_empty() {
            push(errs, obj, &terms_path, Problem::Required);
            return;
        }
        for (i, term) in self.terms.iter().enumerate() {
            term.validate(obj, &format!("{terms_path}[{i}]"), errs);
        }
    }
}

fn push(errs: &mut Vec<ValidationError>, obj: &ObjectRef, path: &str, problem: Problem) {
    errs.push(ValidationError::new(obj.clone(), path, problem));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ObjectKind;
    use NodeSelectorOperator::{DoesNotExist, Exists, Gt, In, Lt, NotIn};

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|&(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    fn req(key: &str, op: NodeSelectorOperator, values: &[&str]) -> NodeSelectorRequirement {
        NodeSelectorRequirement::new(key, op, values.iter().copied())
    }

    fn term(
        exprs: Vec<NodeSelectorRequirement>,
        fields: Vec<NodeSelectorRequirement>,
    ) -> NodeSelectorTerm {
        NodeSelectorTerm {
            match_expressions: exprs,
            match_fields: fields,
        }
    }

    #[test]
    fn operator_parse_and_print() {
        for op in NodeSelectorOperator::ALL {
            assert_eq!(NodeSelectorOperator::parse(op.as_str()), Some(op));
            assert_eq!(op.to_string(), op.as_str());
        }
        for bad in ["", "in", "IN", "Equal", "Exist", "Gte", " In"] {
            assert_eq!(NodeSelectorOperator::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn label_truth_table() {
        let none = labels(&[]);
        let zone_a = labels(&[("zone", "a")]);
        let zone_c = labels(&[("zone", "c")]);
        let zone_empty = labels(&[("zone", "")]);
        let other = labels(&[("other", "a")]);
        let gpus = |v: &str| labels(&[("gpus", v)]);

        // (requirement, labels, expected)
        let cases: Vec<(NodeSelectorRequirement, BTreeMap<String, String>, bool)> = vec![
            (req("zone", In, &["a"]), zone_a.clone(), true),
            (req("zone", In, &["a", "b"]), zone_a.clone(), true),
            (req("zone", In, &["b", "a"]), zone_a.clone(), true),
            (req("zone", In, &["a", "b"]), zone_c.clone(), false),
            (req("zone", In, &["a"]), none.clone(), false),
            (req("zone", In, &["a"]), other.clone(), false),
            (req("zone", In, &[""]), zone_empty.clone(), true),
            (req("zone", In, &[""]), none.clone(), false),
            (req("zone", NotIn, &["a"]), zone_a.clone(), false),
            (req("zone", NotIn, &["b", "a"]), zone_a.clone(), false),
            (req("zone", NotIn, &["a", "b"]), zone_c.clone(), true),
            (req("zone", NotIn, &["a"]), none.clone(), true),
            (req("zone", NotIn, &["a"]), other.clone(), true),
            (req("zone", Exists, &[]), zone_a.clone(), true),
            (req("zone", Exists, &[]), zone_empty.clone(), true),
            (req("zone", Exists, &[]), none.clone(), false),
            (req("zone", DoesNotExist, &[]), zone_a.clone(), false),
            (req("zone", DoesNotExist, &[]), none.clone(), true),
            (req("zone", DoesNotExist, &[]), other.clone(), true),
            (req("gpus", Gt, &["4"]), gpus("8"), true),
            (req("gpus", Gt, &["4"]), gpus("4"), false),
            (req("gpus", Gt, &["4"]), gpus("3"), false),
            (req("gpus", Gt, &["4"]), gpus("+8"), true),
            (req("gpus", Gt, &["4"]), gpus("008"), true),
            (req("gpus", Gt, &["0"]), gpus("-1"), false),
            (req("gpus", Gt, &["4"]), gpus("eight"), false),
            (req("gpus", Gt, &["4"]), gpus(""), false),
            (req("gpus", Gt, &["4"]), gpus("8.0"), false),
            (req("gpus", Gt, &["4"]), gpus("99999999999999999999"), false),
            (req("gpus", Gt, &["4"]), none.clone(), false),
            (req("gpus", Lt, &["4"]), gpus("3"), true),
            (req("gpus", Lt, &["4"]), gpus("-3"), true),
            (req("gpus", Lt, &["4"]), gpus("4"), false),
            (req("gpus", Lt, &["4"]), gpus("5"), false),
            (req("gpus", Lt, &["4"]), gpus("three"), false),
            (req("gpus", Lt, &["4"]), none.clone(), false),
            (
                req("gpus", Lt, &["9223372036854775807"]),
                gpus("-9223372036854775808"),
                true,
            ),
            // Malformed requirements match nothing, even the negative operators.
            (req("zone", In, &[]), zone_a.clone(), false),
            (req("zone", NotIn, &[]), none.clone(), false),
            (req("zone", Exists, &["a"]), zone_a.clone(), false),
            (req("zone", DoesNotExist, &["a"]), none.clone(), false),
            (req("gpus", Gt, &[]), gpus("8"), false),
            (req("gpus", Gt, &["4", "5"]), gpus("8"), false),
            (req("gpus", Gt, &["four"]), gpus("8"), false),
            (req("gpus", Gt, &["-1"]), gpus("8"), false),
            (req("gpus", Lt, &["+9"]), gpus("8"), false),
            (req("", DoesNotExist, &[]), none.clone(), false),
            (req("bad key", NotIn, &["a"]), none.clone(), false),
            (req("zone", NotIn, &["not a value"]), zone_a.clone(), false),
            (req("zone", In, &["a", "-bad"]), zone_a.clone(), false),
        ];
        for (i, (r, l, want)) in cases.iter().enumerate() {
            assert_eq!(r.matches_labels(l), *want, "case {i}: {r:?} on {l:?}");
        }
    }

    #[test]
    fn match_fields() {
        let n = NodeSelectorRequirement::NODE_NAME_FIELD;
        assert!(req(n, In, &["node-1"]).matches_field("node-1"));
        assert!(!req(n, In, &["node-1"]).matches_field("node-2"));
        assert!(!req(n, NotIn, &["node-1"]).matches_field("node-1"));
        assert!(req(n, NotIn, &["node-1"]).matches_field("node-2"));
        // Upstream accepts only exactly one value, In/NotIn, and the node name field.
        assert!(!req(n, In, &["node-1", "node-2"]).matches_field("node-1"));
        assert!(!req(n, In, &[]).matches_field("node-1"));
        assert!(!req(n, NotIn, &[]).matches_field("node-1"));
        assert!(!req(n, Exists, &[]).matches_field("node-1"));
        assert!(!req(n, DoesNotExist, &[]).matches_field("node-1"));
        assert!(!req("metadata.uid", In, &["node-1"]).matches_field("node-1"));
        assert!(!req("metadata.uid", NotIn, &["x"]).matches_field("node-1"));
        assert!(!req("spec.nodeName", NotIn, &["x"]).matches_field("node-1"));
    }

    #[test]
    fn terms_and_selectors() {
        let l = labels(&[("zone", "a"), ("gpu", "h100")]);

        // An empty term matches nothing; a selector without terms matches nothing.
        assert!(!NodeSelectorTerm::default().matches("n1", &l));
        assert!(NodeSelectorTerm::default().is_empty());
        assert!(!NodeSelector { terms: vec![] }.matches("n1", &l));
        assert!(
            !NodeSelector {
                terms: vec![NodeSelectorTerm::default()]
            }
            .matches("n1", &l)
        );

        // Expressions are ANDed.
        let both = term(
            vec![req("zone", In, &["a"]), req("gpu", In, &["h100"])],
            vec![],
        );
        let one_fails = term(
            vec![req("zone", In, &["a"]), req("gpu", In, &["a100"])],
            vec![],
        );
        assert!(both.matches("n1", &l));
        assert!(!one_fails.matches("n1", &l));

        // Expressions and fields are ANDed.
        let name = NodeSelectorRequirement::NODE_NAME_FIELD;
        let mixed = term(vec![req("zone", In, &["a"])], vec![req(name, In, &["n1"])]);
        assert!(mixed.matches("n1", &l));
        assert!(!mixed.matches("n2", &l));
        assert!(!mixed.matches("n1", &labels(&[("zone", "b")])));

        // Terms are ORed; an empty term does not make the selector match everything.
        let sel = NodeSelector {
            terms: vec![
                NodeSelectorTerm::default(),
                one_fails.clone(),
                term(vec![], vec![req(name, In, &["n7"])]),
            ],
        };
        assert!(sel.matches("n7", &l));
        assert!(!sel.matches("n1", &l));
        let sel = NodeSelector {
            terms: vec![one_fails, both],
        };
        assert!(sel.matches("n1", &l));

        // A malformed term does not stop another term from matching.
        let sel = NodeSelector {
            terms: vec![
                term(vec![req("zone", In, &[])], vec![]),
                term(vec![req("zone", Exists, &[])], vec![]),
            ],
        };
        assert!(sel.matches("n1", &l));
    }

    #[test]
    fn single_node() {
        let sel = NodeSelector::single_node("worker-3");
        assert_eq!(sel.terms.len(), 1);
        assert!(sel.matches("worker-3", &BTreeMap::new()));
        assert!(!sel.matches("worker-4", &BTreeMap::new()));
        let obj = ObjectRef::cluster(ObjectKind::ResourceSlice, "s");
        let mut errs = Vec::new();
        sel.validate(&obj, "spec.nodeSelector", &mut errs);
        assert_eq!(errs, vec![]);
    }

    fn validate(sel: &NodeSelector) -> Vec<(String, Problem)> {
        let obj = ObjectRef::cluster(ObjectKind::ResourceSlice, "slice-1");
        let mut errs = Vec::new();
        sel.validate(&obj, "spec.nodeSelector", &mut errs);
        errs.into_iter()
            .map(|e| {
                assert_eq!(e.object, obj);
                (e.field, e.problem)
            })
            .collect()
    }

    fn at(path: &str, problem: Problem) -> (String, Problem) {
        (path.to_owned(), problem)
    }

    #[test]
    fn validate_requires_a_term() {
        assert_eq!(
            validate(&NodeSelector { terms: vec![] }),
            vec![at("spec.nodeSelector.nodeSelectorTerms", Problem::Required)]
        );
        // An empty term is valid (it just matches nothing), as upstream.
        assert_eq!(
            validate(&NodeSelector {
                terms: vec![NodeSelectorTerm::default()]
            }),
            vec![]
        );
        // Without a path prefix.
        let obj = ObjectRef::cluster(ObjectKind::ResourceSlice, "s");
        let mut errs = Vec::new();
        NodeSelector { terms: vec![] }.validate(&obj, "", &mut errs);
        assert_eq!(errs[0].field, "nodeSelectorTerms");
    }

    #[test]
    fn validate_valid_selector() {
        let name = NodeSelectorRequirement::NODE_NAME_FIELD;
        let sel = NodeSelector {
            terms: vec![
                term(
                    vec![
                        req("topology.kubernetes.io/zone", In, &["a", "b"]),
                        req("zone", NotIn, &["c"]),
                        req("gpu", Exists, &[]),
                        req("tainted", DoesNotExist, &[]),
                        req("gpus", Gt, &["3"]),
                        req("gpus", Lt, &["9"]),
                        req("empty", In, &[""]),
                    ],
                    vec![
                        req(name, In, &["node-1"]),
                        req(name, NotIn, &["node-2.example.com"]),
                    ],
                ),
                term(vec![], vec![req(name, In, &["n"])]),
            ],
        };
        assert_eq!(validate(&sel), vec![]);
    }

    #[test]
    fn validate_match_expressions() {
        let sel = NodeSelector {
            terms: vec![
                term(vec![req("zone", In, &["a"])], vec![]),
                term(
                    vec![
                        req("zone", In, &[]),                   // 0
                        req("zone", NotIn, &[]),                // 1
                        req("zone", Exists, &["a"]),            // 2
                        req("zone", DoesNotExist, &["a", "b"]), // 3
                        req("gpus", Gt, &[]),                   // 4
                        req("gpus", Lt, &["1", "2"]),           // 5
                        req("gpus", Gt, &["many"]),             // 6
                        req("gpus", Lt, &["-1"]),               // 7
                        req("", Exists, &[]),                   // 8
                        req("-zone", Exists, &[]),              // 9
                        req("zone", In, &["ok", "not ok"]),     // 10
                    ],
                    vec![],
                ),
            ],
        };
        let p = "spec.nodeSelector.nodeSelectorTerms[1].matchExpressions";
        let invalid_name = |value: &str, error| Problem::InvalidName {
            value: value.to_owned(),
            error,
        };
        let got = validate(&sel);
        let want = vec![
            at(&format!("{p}[0].values"), Problem::Required),
            at(&format!("{p}[1].values"), Problem::Required),
            at(
                &format!("{p}[2].values"),
                Problem::Forbidden {
                    reason: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                },
            ),
            at(
                &format!("{p}[3].values"),
                Problem::Forbidden {
                    reason: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                },
            ),
            at(&format!("{p}[4].values"), Problem::Required),
            at(
                &format!("{p}[5].values"),
                Problem::TooMany { max: 1, actual: 2 },
            ),
            at(
                &format!("{p}[6].values[0]"),
                Problem::Invalid {
                    value: "many".into(),
                    reason: "must be an integer when `operator` is 'Gt' or 'Lt'",
                },
            ),
            at(
                &format!("{p}[7].values[0]"),
                invalid_name("-1", validate_label_value("-1").unwrap_err()),
            ),
            at(&format!("{p}[8].key"), Problem::Required),
            at(
                &format!("{p}[9].key"),
                invalid_name("-zone", validate_label_name("-zone").unwrap_err()),
            ),
            at(
                &format!("{p}[10].values[1]"),
                invalid_name("not ok", validate_label_value("not ok").unwrap_err()),
            ),
        ];
        assert_eq!(got, want);
        // The printed error names the object and the exact field.
        let obj = ObjectRef::cluster(ObjectKind::ResourceSlice, "slice-1");
        let mut errs = Vec::new();
        sel.validate(&obj, "spec.nodeSelector", &mut errs);
        assert_eq!(
            errs[0].to_string(),
            "ResourceSlice \"slice-1\": spec.nodeSelector.nodeSelectorTerms[1].matchExpressions[0].values: required value"
        );
    }

    #[test]
    fn validate_match_fields() {
        let name = NodeSelectorRequirement::NODE_NAME_FIELD;
        let sel = NodeSelector {
            terms: vec![term(
                vec![],
                vec![
                    req(name, In, &[]),              // 0
                    req(name, NotIn, &["a", "b"]),   // 1
                    req(name, Exists, &[]),          // 2
                    req(name, Gt, &["1"]),           // 3
                    req("metadata.uid", In, &["x"]), // 4
                    req(name, In, &["Node_1"]),      // 5
                    req("", DoesNotExist, &[]),      // 6
                ],
            )],
        };
        let p = "spec.nodeSelector.nodeSelectorTerms[0].matchFields";
        let not_supported_op = |op: &str| Problem::NotSupported {
            value: op.to_owned(),
            supported: &["In", "NotIn"],
        };
        let not_supported_key = |key: &str| Problem::NotSupported {
            value: key.to_owned(),
            supported: &["metadata.name"],
        };
        let want = vec![
            at(&format!("{p}[0].values"), Problem::Required),
            at(
                &format!("{p}[1].values"),
                Problem::TooMany { max: 1, actual: 2 },
            ),
            at(&format!("{p}[2].operator"), not_supported_op("Exists")),
            at(&format!("{p}[3].operator"), not_supported_op("Gt")),
            at(&format!("{p}[4].key"), not_supported_key("metadata.uid")),
            at(
                &format!("{p}[5].values[0]"),
                Problem::InvalidName {
                    value: "Node_1".into(),
                    error: validate_dns_subdomain("Node_1").unwrap_err(),
                },
            ),
            at(
                &format!("{p}[6].operator"),
                not_supported_op("DoesNotExist"),
            ),
            at(&format!("{p}[6].key"), not_supported_key("")),
        ];
        assert_eq!(validate(&sel), want);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_uses_the_kubernetes_json_shape() {
        let json = r#"{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]},{"key":"gpu","operator":"Exists"}]},{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}"#;
        let sel: NodeSelector = serde_json::from_str(json).unwrap();
        assert_eq!(sel.terms.len(), 2);
        assert_eq!(sel.terms[0].match_expressions[1], req("gpu", Exists, &[]));
        assert_eq!(
            sel.terms[1].match_fields[0],
            req("metadata.name", In, &["n1"])
        );
        assert_eq!(serde_json::to_string(&sel).unwrap(), json);
        assert!(
            serde_json::from_str::<NodeSelector>(
                r#"{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Equal"}]}]}"#
            )
            .is_err()
        );
    }
}
