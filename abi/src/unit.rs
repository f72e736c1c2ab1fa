//! Units (PodGroups and pods) as requests name them.

use serde::Deserialize;
use serde_json::Value;

use crate::error::Error;

/// A unit as requests name it: a PodGroup (`"ns/name"` or `"name"`), `{ podGroup }` or
/// `{ pod }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitName {
    /// A PodGroup: a string, or `{ podGroup }`.
    PodGroup(String),
    /// `{ pod }`.
    Pod(String),
}

impl UnitName {
    /// The field of the argument that named it, for errors about the name.
    pub fn field(&self, plain: bool) -> &'static str {
        match (self, plain) {
            (_, true) => "unit",
            (UnitName::PodGroup(_), false) => "unit.podGroup",
            (UnitName::Pod(_), false) => "unit.pod",
        }
    }
}

/// `unit` read as a [`UnitName`]; the flag says whether it was a plain string.
pub fn unit_name(value: &Value) -> Result<(UnitName, bool), Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Arg {
        Group(String),
        Named(Named),
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Named {
        pod_group: Option<String>,
        pod: Option<String>,
    }
    match crate::value::from_value::<Arg>(value, "unit")? {
        Arg::Group(g) => Ok((UnitName::PodGroup(g), true)),
        Arg::Named(Named {
            pod_group: Some(g),
            pod: None,
        }) => Ok((UnitName::PodGroup(g), false)),
        Arg::Named(Named {
            pod_group: None,
            pod: Some(p),
        }) => Ok((UnitName::Pod(p), false)),
        Arg::Named(_) => Err(Error::argument(
            "unit",
            "give exactly one of podGroup and pod",
        )),
    }
}
