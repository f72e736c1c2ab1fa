//! Taints: device taints (resource.k8s.io/v1 `DeviceTaint`) and node taints (core/v1 `Taint`).
//!
//! A taint marks a device or a node so that consumers which do not tolerate it stay away
//! (see [`crate::DeviceToleration`] and [`crate::Toleration`] for the matching rules).
//!
//! Both taint types print in kubectl's string form and parse it back:
//!
//! ```
//! use gangpack::{DeviceTaint, DeviceTaintEffect, Taint, TaintEffect};
//!
//! let node: Taint = "gpu=broken:NoExecute".parse().unwrap();
//! assert_eq!(node.effect, TaintEffect::NoExecute);
//! assert_eq!(node.to_string(), "gpu=broken:NoExecute");
//!
//! // Device taints keep effects this crate does not know yet (they behave like `None`).
//! let dev = DeviceTaint::parse_spec("health:Degraded").unwrap();
//! assert_eq!(dev.effect, DeviceTaintEffect::Unknown("Degraded".into()));
//! assert!(!dev.effect.blocks_allocation());
//! ```

use core::fmt;
use core::str::FromStr;

use crate::alloc_prelude::*;
use crate::model::names::{validate_label_name, validate_label_value};
use crate::{ObjectRef, Problem, Time, ValidationError};

/// Joins a field path and a child name the way Kubernetes prints field paths.
pub(crate) fn child_path(path: &str, child: &str) -> String {
    if path.is_empty() {
        child.to_owned()
    } else {
        format!("{path}.{child}")
    }
}

/// Checks a taint or toleration key against the label-name syntax, reporting at `field`.
pub(crate) fn check_label_name(
    key: &str,
    obj: &ObjectRef,
    field: String,
    errs: &mut Vec<ValidationError>,
) {
    if let Err(error) = validate_label_name(key) {
        errs.push(ValidationError::new(
            obj.clone(),
            field,
            Problem::InvalidName {
                value: key.to_owned(),
                error,
            },
        ));
    }
}

/// Checks a taint or toleration value against the label-value syntax, reporting at `field`.
pub(crate) fn check_label_value(
    value: &str,
    obj: &ObjectRef,
    field: String,
    errs: &mut Vec<ValidationError>,
) {
    if let Err(error) = validate_label_value(value) {
        errs.push(ValidationError::new(
            obj.clone(),
            field,
            Problem::InvalidName {
                value: value.to_owned(),
                error,
            },
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// Device taints
// ---------------------------------------------------------------------------------------------

/// The effect of a device taint (resource.k8s.io/v1 `DeviceTaintEffect`).
///
/// Kubernetes may add effects in the future and tells consumers to treat unknown ones like
/// `None`; such values are kept verbatim in [`DeviceTaintEffect::Unknown`] so that stored
/// objects load and print back unchanged. `Unknown("")` stands for an empty (missing)
/// effect, which validation reports as required.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(from = "String", into = "String"))]
pub enum DeviceTaintEffect {
    /// `None`: informational only; ignored by the scheduler and the eviction controller.
    None,
    /// `NoSchedule`: the device is not allocated to claims that do not tolerate the taint.
    NoSchedule,
    /// `NoExecute`: like `NoSchedule`, and pods using claims that do not tolerate it are evicted.
    NoExecute,
    /// An effect this crate does not know (kept verbatim); it behaves like `None`.
    Unknown(String),
}

impl DeviceTaintEffect {
    /// The effects that validation of new input accepts, as upstream lists them (sorted).
    pub const SUPPORTED: &'static [&'static str] = &["NoExecute", "NoSchedule", "None"];

    /// Parses the Kubernetes spelling; anything else (including `""`) is kept as
    /// [`DeviceTaintEffect::Unknown`].
    pub fn parse(s: &str) -> Self {
        match s {
            "None" => DeviceTaintEffect::None,
            "NoSchedule" => DeviceTaintEffect::NoSchedule,
            "NoExecute" => DeviceTaintEffect::NoExecute,
            other => DeviceTaintEffect::Unknown(other.to_owned()),
        }
    }

    /// The Kubernetes spelling (an unknown effect prints as it was given).
    pub fn as_str(&self) -> &str {
        match self {
            DeviceTaintEffect::None => "None",
            DeviceTaintEffect::NoSchedule => "NoSchedule",
            DeviceTaintEffect::NoExecute => "NoExecute",
            DeviceTaintEffect::Unknown(s) => s,
        }
    }

    /// Whether a taint with this effect keeps the device from being allocated to a claim that
    /// does not tolerate it: `NoSchedule` and `NoExecute`. `None` and unknown effects never block.
    pub fn blocks_allocation(&self) -> bool {
        matches!(
            self,
            DeviceTaintEffect::NoSchedule | DeviceTaintEffect::NoExecute
        )
    }

    /// Whether this is `NoExecute`, the only effect the eviction controller acts on.
    pub fn is_no_execute(&self) -> bool {
        matches!(self, DeviceTaintEffect::NoExecute)
    }

    /// Whether this is one of the effects this crate knows (`None`, `NoSchedule`, `NoExecute`).
    pub fn is_known(&self) -> bool {
        !matches!(self, DeviceTaintEffect::Unknown(_))
    }
}

impl fmt::Display for DeviceTaintEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for DeviceTaintEffect {
    fn from(s: &str) -> Self {
        DeviceTaintEffect::parse(s)
    }
}

impl From<String> for DeviceTaintEffect {
    fn from(s: String) -> Self {
        match s.as_str() {
            "None" | "NoSchedule" | "NoExecute" => DeviceTaintEffect::parse(&s),
            _ => DeviceTaintEffect::Unknown(s),
        }
    }
}

impl From<DeviceTaintEffect> for String {
    fn from(e: DeviceTaintEffect) -> String {
        match e {
            DeviceTaintEffect::Unknown(s) => s,
            known => known.as_str().to_owned(),
        }
    }
}

/// A taint on a device (resource.k8s.io/v1 `DeviceTaint`).
///
/// Taints are cumulative (driver taints plus one per matching `DeviceTaintRule`); the same key
/// may appear with several effects and every taint is checked on its own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct DeviceTaint {
    /// `key`: required, a label name.
    pub key: String,
    /// `value`: optional (empty), a label value.
    #[cfg_attr(feature = "serde", serde(default))]
    pub value: String,
    /// `effect`: required.
    pub effect: DeviceTaintEffect,
    /// `timeAdded`: when the taint was added (or, in a rule, its effect changed). Eviction
    /// delays count from here. The API server always sets it.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub time_added: Option<Time>,
}

impl DeviceTaint {
    /// A taint without `timeAdded`.
    pub fn new(
        key: impl Into<String>,
        value: impl Into<String>,
        effect: DeviceTaintEffect,
    ) -> DeviceTaint {
        DeviceTaint {
            key: key.into(),
            value: value.into(),
            effect,
            time_added: None,
        }
    }

    /// Sets `timeAdded` (builder style).
    #[must_use]
    pub fn added_at(mut self, time: Time) -> DeviceTaint {
        self.time_added = Some(time);
        self
    }

    /// Parses the string form `key=value:effect`, `key=value:`, `key:effect` or `key`.
    ///
    /// The effect is kept as given ([`DeviceTaintEffect::parse`]), so unknown effects survive;
    /// a missing effect (`key=value:`, `key`) becomes `Unknown("")`. Only the shape is checked
    /// here: the key and value syntaxes and the effect are checked by validation.
    pub fn parse_spec(spec: &str) -> Result<DeviceTaint, TaintSpecError> {
        let (key, value, effect) = split_spec(spec)?;
        Ok(DeviceTaint {
            key: key.to_owned(),
            value: value.to_owned(),
            effect: DeviceTaintEffect::parse(effect.unwrap_or("")),
            time_added: None,
        })
    }

    /// Validates a new taint (upstream `validateDeviceTaint` without an old taint) and returns
    /// the problems, empty when valid: key required + label name, value a label value, effect
    /// `None`, `NoSchedule` or `NoExecute` (empty → required, unknown → not supported).
    /// `path` is the taint's own field path (`spec.devices[0].taints[1]`).
    pub fn validation_errors(&self, obj: &ObjectRef, path: &str) -> Vec<ValidationError> {
        let mut errs = Vec::new();
        self.validate(obj, path, &mut errs);
        errs
    }

    /// Validates a new taint: key required + label name, value a label value, effect one of
    /// `None`, `NoSchedule`, `NoExecute` (an empty effect is reported as required, an unknown
    /// one as not supported). `path` is the taint's own field path (`spec.devices[0].taints[1]`).
    ///
    /// Stored objects may carry future effects: use [`DeviceTaint::validate_update`] with the
    /// old taint there; the caller decides which one applies.
    pub(crate) fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        self.validate_update(None, obj, path, errs);
    }

    /// Validates a taint read from a stored object (a ResourceSlice or DeviceTaintRule
    /// as the API server holds it): a non-empty unknown effect is accepted, because
    /// upstream only checks the effect when it is new or changed and consumers must
    /// treat unknown effects like `None`. An empty effect is still an error.
    pub(crate) fn validate_stored(
        &self,
        obj: &ObjectRef,
        path: &str,
        errs: &mut Vec<ValidationError>,
    ) {
        let stored = matches!(&self.effect, DeviceTaintEffect::Unknown(e) if !e.is_empty());
        self.validate_update(stored.then_some(self), obj, path, errs);
    }

    /// Like [`DeviceTaint::validate`], but the effect is only checked when there is no old
    /// taint or the effect changed (upstream `validateDeviceTaint`), so that objects stored
    /// with effects added by a newer Kubernetes stay valid.
    pub(crate) fn validate_update(
        &self,
        old: Option<&DeviceTaint>,
        obj: &ObjectRef,
        path: &str,
        errs: &mut Vec<ValidationError>,
    ) {
        validate_taint_key_value(&self.key, &self.value, obj, path, errs);
        if old.is_none_or(|o| o.effect != self.effect) {
            match &self.effect {
                DeviceTaintEffect::Unknown(e) if e.is_empty() => errs.push(ValidationError::new(
                    obj.clone(),
                    child_path(path, "effect"),
                    Problem::Required,
                )),
                DeviceTaintEffect::Unknown(e) => errs.push(ValidationError::new(
                    obj.clone(),
                    child_path(path, "effect"),
                    Problem::NotSupported {
                        value: e.clone(),
                        supported: DeviceTaintEffect::SUPPORTED,
                    },
                )),
                _ => {}
            }
        }
    }
}

impl fmt::Display for DeviceTaint {
    /// `key=value:effect`, `key:effect`, and with an empty effect `key=value:` or `key`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let effect = self.effect.as_str();
        match (self.value.is_empty(), effect.is_empty()) {
            (true, true) => f.write_str(&self.key),
            (true, false) => write!(f, "{}:{}", self.key, effect),
            (false, _) => write!(f, "{}={}:{}", self.key, self.value, effect),
        }
    }
}

impl FromStr for DeviceTaint {
    type Err = TaintSpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DeviceTaint::parse_spec(s)
    }
}

// ---------------------------------------------------------------------------------------------
// Node taints
// ---------------------------------------------------------------------------------------------

/// The effect of a node taint (core/v1 `TaintEffect`). Closed: validation rejects others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TaintEffect {
    /// `NoSchedule`: no new pods that do not tolerate the taint.
    NoSchedule,
    /// `PreferNoSchedule`: the scheduler avoids the node for pods that do not tolerate it (scoring).
    PreferNoSchedule,
    /// `NoExecute`: no new pods, and running pods that do not tolerate it are evicted.
    NoExecute,
}

impl TaintEffect {
    /// The effects Kubernetes accepts, in upstream's order.
    pub const SUPPORTED: &'static [&'static str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

    /// Parses the Kubernetes spelling; anything else is `None`.
    pub fn parse(s: &str) -> Option<TaintEffect> {
        match s {
            "NoSchedule" => Some(TaintEffect::NoSchedule),
            "PreferNoSchedule" => Some(TaintEffect::PreferNoSchedule),
            "NoExecute" => Some(TaintEffect::NoExecute),
            _ => None,
        }
    }

    /// The Kubernetes spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }
}

impl fmt::Display for TaintEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A taint on a node (core/v1 `Taint`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Taint {
    /// `key`: required, a label name.
    pub key: String,
    /// `value`: optional (empty), a label value.
    #[cfg_attr(feature = "serde", serde(default))]
    pub value: String,
    /// `effect`: required.
    pub effect: TaintEffect,
    /// `timeAdded`: informational for nodes (only set for NoExecute taints). The node eviction
    /// timer starts when the taint manager observes the taint, not here.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub time_added: Option<Time>,
}

impl Taint {
    /// A taint without `timeAdded`.
    pub fn new(key: impl Into<String>, value: impl Into<String>, effect: TaintEffect) -> Taint {
        Taint {
            key: key.into(),
            value: value.into(),
            effect,
            time_added: None,
        }
    }

    /// Parses kubectl's form `key=value:effect` or `key:effect`.
    ///
    /// A node taint always has an effect, so the removal-only forms `key` and `key=value:`
    /// are rejected ([`TaintSpecError::MissingEffect`]), as is an effect other than
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`. The key and value syntaxes are checked
    /// by validation, not here.
    pub fn parse_spec(spec: &str) -> Result<Taint, TaintSpecError> {
        let (key, value, effect) = split_spec(spec)?;
        let effect = match effect {
            None | Some("") => return Err(TaintSpecError::MissingEffect),
            Some(e) => {
                TaintEffect::parse(e).ok_or_else(|| TaintSpecError::UnknownEffect(e.to_owned()))?
            }
        };
        Ok(Taint::new(key, value, effect))
    }

    /// Validates the taint (one entry of upstream `validateNodeTaints`) and returns the
    /// problems, empty when valid: key required + label name, value a label value.
    /// `path` is the taint's own field path (`spec.taints[2]`).
    pub fn validation_errors(&self, obj: &ObjectRef, path: &str) -> Vec<ValidationError> {
        let mut errs = Vec::new();
        self.validate(obj, path, &mut errs);
        errs
    }

    /// Validates the taint (upstream `validateNodeTaints`, one entry): key required + label
    /// name, value a label value. The effect is valid by construction. Uniqueness by
    /// key and effect is checked by the caller over the whole list. `path` is the taint's own
    /// field path (`spec.taints[2]`).
    pub(crate) fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        validate_taint_key_value(&self.key, &self.value, obj, path, errs);
    }
}

impl fmt::Display for Taint {
    /// kubectl's `key=value:Effect`, or `key:Effect` when the value is empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}:{}", self.key, self.effect)
        } else {
            write!(f, "{}={}:{}", self.key, self.value, self.effect)
        }
    }
}

impl FromStr for Taint {
    type Err = TaintSpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Taint::parse_spec(s)
    }
}

// ---------------------------------------------------------------------------------------------
// Shared parts
// ---------------------------------------------------------------------------------------------

/// Why a taint's string form could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaintSpecError {
    /// Nothing before the `=` or `:` (or the whole spec is empty).
    EmptyKey,
    /// More than one `:`.
    TooManyColons,
    /// More than one `=` before the `:`.
    TooManyEquals,
    /// `key=value` without the `:` that has to follow a value.
    MissingColon,
    /// A node taint needs an effect (`key` and `key=value:` only name taints to remove).
    MissingEffect,
    /// A node taint's effect is not `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    UnknownEffect(String),
}

impl fmt::Display for TaintSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaintSpecError::EmptyKey => f.write_str("invalid taint spec: the key is empty"),
            TaintSpecError::TooManyColons => f.write_str("invalid taint spec: more than one ':'"),
            TaintSpecError::TooManyEquals => f.write_str("invalid taint spec: more than one '='"),
            TaintSpecError::MissingColon => {
                f.write_str("invalid taint spec: a value must be followed by ':'")
            }
            TaintSpecError::MissingEffect => {
                f.write_str("invalid taint spec: the effect is missing")
            }
            TaintSpecError::UnknownEffect(e) => write!(
                f,
                "invalid taint effect: \"{e}\", supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
            ),
        }
    }
}

impl core::error::Error for TaintSpecError {}

/// Splits `key[=value][:effect]` into its parts; `None` effect when there is no `:`.
fn split_spec(spec: &str) -> Result<(&str, &str, Option<&str>), TaintSpecError> {
    let (kv, effect) = match spec.split_once(':') {
        Some((_, rest)) if rest.contains(':') => return Err(TaintSpecError::TooManyColons),
        Some((kv, effect)) => (kv, Some(effect)),
        None => (spec, None),
    };
    let (key, value) = match kv.split_once('=') {
        Some((_, rest)) if rest.contains('=') => return Err(TaintSpecError::TooManyEquals),
        Some(_) if effect.is_none() => return Err(TaintSpecError::MissingColon),
        Some((key, value)) => (key, value),
        None => (kv, ""),
    };
    if key.is_empty() {
        return Err(TaintSpecError::EmptyKey);
    }
    Ok((key, value, effect))
}

/// Key required + label name; value (if any) a label value.
fn validate_taint_key_value(
    key: &str,
    value: &str,
    obj: &ObjectRef,
    path: &str,
    errs: &mut Vec<ValidationError>,
) {
    if key.is_empty() {
        errs.push(ValidationError::new(
            obj.clone(),
            child_path(path, "key"),
            Problem::Required,
        ));
    } else {
        check_label_name(key, obj, child_path(path, "key"), errs);
    }
    if !value.is_empty() {
        check_label_value(value, obj, child_path(path, "value"), errs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ObjectKind;

    fn obj() -> ObjectRef {
        ObjectRef::cluster(ObjectKind::ResourceSlice, "s")
    }

    #[test]
    fn device_effect_parse_round_trip() {
        for s in ["None", "NoSchedule", "NoExecute", "Future", ""] {
            let e = DeviceTaintEffect::parse(s);
            assert_eq!(e.as_str(), s);
            assert_eq!(e.to_string(), s);
            assert_eq!(DeviceTaintEffect::from(String::from(s)), e);
            assert_eq!(String::from(e), s);
        }
        assert_eq!(
            DeviceTaintEffect::parse("PreferNoSchedule"),
            DeviceTaintEffect::Unknown("PreferNoSchedule".into())
        );
        assert!(DeviceTaintEffect::NoSchedule.blocks_allocation());
        assert!(DeviceTaintEffect::NoExecute.blocks_allocation());
        assert!(!DeviceTaintEffect::None.blocks_allocation());
        assert!(!DeviceTaintEffect::Unknown("X".into()).blocks_allocation());
        assert!(DeviceTaintEffect::NoExecute.is_no_execute());
        assert!(!DeviceTaintEffect::NoSchedule.is_no_execute());
    }

    #[test]
    fn node_effect_parse_round_trip() {
        for e in [
            TaintEffect::NoSchedule,
            TaintEffect::PreferNoSchedule,
            TaintEffect::NoExecute,
        ] {
            assert_eq!(TaintEffect::parse(e.as_str()), Some(e));
            assert_eq!(e.to_string(), e.as_str());
        }
        assert_eq!(TaintEffect::parse("None"), None);
        assert_eq!(TaintEffect::parse(""), None);
        assert_eq!(TaintEffect::parse("noschedule"), None);
    }

    #[test]
    fn device_taint_display_forms() {
        let t = |k: &str, v: &str, e: &str| DeviceTaint::new(k, v, DeviceTaintEffect::parse(e));
        assert_eq!(t("k", "v", "NoExecute").to_string(), "k=v:NoExecute");
        assert_eq!(t("k", "", "NoSchedule").to_string(), "k:NoSchedule");
        assert_eq!(t("k", "v", "").to_string(), "k=v:");
        assert_eq!(t("k", "", "").to_string(), "k");
        assert_eq!(t("a/b", "1", "Future").to_string(), "a/b=1:Future");
    }

    #[test]
    fn device_taint_round_trip() {
        for spec in [
            "k=v:NoExecute",
            "k:NoSchedule",
            "k=v:",
            "k",
            "k:None",
            "example.com/gpu=bad:Future",
        ] {
            let t = DeviceTaint::parse_spec(spec).unwrap();
            assert_eq!(t.to_string(), spec);
            assert_eq!(t.to_string().parse::<DeviceTaint>().unwrap(), t);
        }
        let t = DeviceTaint::parse_spec("k=v:NoExecute").unwrap();
        assert_eq!(t, DeviceTaint::new("k", "v", DeviceTaintEffect::NoExecute));
        // `key=:effect` parses with an empty value and prints in the short form.
        let t = DeviceTaint::parse_spec("k=:NoSchedule").unwrap();
        assert_eq!(t.to_string(), "k:NoSchedule");
    }

    #[test]
    fn device_taint_parse_errors() {
        assert_eq!(DeviceTaint::parse_spec(""), Err(TaintSpecError::EmptyKey));
        assert_eq!(
            DeviceTaint::parse_spec(":NoSchedule"),
            Err(TaintSpecError::EmptyKey)
        );
        assert_eq!(
            DeviceTaint::parse_spec("=v:"),
            Err(TaintSpecError::EmptyKey)
        );
        assert_eq!(
            DeviceTaint::parse_spec("k:a:b"),
            Err(TaintSpecError::TooManyColons)
        );
        assert_eq!(
            DeviceTaint::parse_spec("k=v=w:"),
            Err(TaintSpecError::TooManyEquals)
        );
        assert_eq!(
            DeviceTaint::parse_spec("k=v"),
            Err(TaintSpecError::MissingColon)
        );
    }

    #[test]
    fn node_taint_display_and_round_trip() {
        let t = Taint::new("k", "v", TaintEffect::NoSchedule);
        assert_eq!(t.to_string(), "k=v:NoSchedule");
        let t = Taint::new("k", "", TaintEffect::PreferNoSchedule);
        assert_eq!(t.to_string(), "k:PreferNoSchedule");
        for spec in ["k=v:NoExecute", "k:NoSchedule", "a.b/c=1:PreferNoSchedule"] {
            let t: Taint = spec.parse().unwrap();
            assert_eq!(t.to_string(), spec);
            assert_eq!(Taint::parse_spec(&t.to_string()).unwrap(), t);
        }
    }

    #[test]
    fn node_taint_parse_errors() {
        assert_eq!(Taint::parse_spec("k"), Err(TaintSpecError::MissingEffect));
        assert_eq!(
            Taint::parse_spec("k=v:"),
            Err(TaintSpecError::MissingEffect)
        );
        assert_eq!(Taint::parse_spec("k=v"), Err(TaintSpecError::MissingColon));
        assert_eq!(
            Taint::parse_spec("k:None"),
            Err(TaintSpecError::UnknownEffect("None".into()))
        );
        assert_eq!(
            Taint::parse_spec(":NoSchedule"),
            Err(TaintSpecError::EmptyKey)
        );
        assert_eq!(
            Taint::parse_spec("k:a:b"),
            Err(TaintSpecError::TooManyColons)
        );
        assert!(
            TaintSpecError::UnknownEffect("X".into())
                .to_string()
                .contains("\"X\"")
        );
    }

    #[test]
    fn device_taint_validation() {
        let mut errs = Vec::new();
        DeviceTaint::new("", "", DeviceTaintEffect::Unknown(String::new())).validate(
            &obj(),
            "spec.devices[0].taints[1]",
            &mut errs,
        );
        let fields: Vec<_> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.devices[0].taints[1].key",
                "spec.devices[0].taints[1].effect"
            ]
        );
        assert!(errs.iter().all(|e| e.problem == Problem::Required));

        let mut errs = Vec::new();
        let future = DeviceTaint::new("k", "", DeviceTaintEffect::parse("Future"));
        future.validate(&obj(), "t", &mut errs);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "t.effect");
        assert!(matches!(errs[0].problem, Problem::NotSupported { .. }));

        // Stored with the same (future) effect: accepted.
        let mut errs = Vec::new();
        future.validate_update(Some(&future), &obj(), "t", &mut errs);
        assert!(errs.is_empty());

        for e in ["None", "NoSchedule", "NoExecute"] {
            let mut errs = Vec::new();
            DeviceTaint::new("k", "v", DeviceTaintEffect::parse(e)).validate(
                &obj(),
                "t",
                &mut errs,
            );
            assert!(errs.is_empty(), "{e}: {errs:?}");
        }
    }

    #[test]
    fn node_taint_validation_paths() {
        let mut errs = Vec::new();
        Taint::new("", "", TaintEffect::NoSchedule).validate(&obj(), "spec.taints[3]", &mut errs);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec.taints[3].key");
        assert_eq!(errs[0].problem, Problem::Required);
        assert_eq!(child_path("", "key"), "key");
    }
}
