//! Tolerations: device tolerations (resource.k8s.io/v1 `DeviceToleration`) and node
//! tolerations (core/v1 `Toleration`), the matching rule, the allocation / scheduling filters
//! and the two eviction rules.
//!
//! Matching follows upstream `ToleratesTaint` (spec 2.3): a toleration tolerates a taint iff
//! 1. its effect is empty or equals the taint's effect,
//! 2. its key is empty or equals the taint's key, and
//! 3. the operator holds: `Exists` always; `Equal` when the values are equal strings; for
//!    node tolerations `Lt` / `Gt` compare the values as canonical 64-bit decimal integers.
//!
//! Upstream quirks are implemented as upstream has them and marked `QUIRK (upstream ...)`.
//!
//! ```
//! use gangpack::{
//!     device_eviction, DeviceTaint, DeviceTaintEffect, DeviceToleration, DeviceTolerationOperator,
//!     EvictionVerdict, Time,
//! };
//!
//! let taint = DeviceTaint::new("gpu.example.com/ecc", "", DeviceTaintEffect::NoExecute)
//!     .added_at(Time(1_000));
//! let tol = DeviceToleration {
//!     key: "gpu.example.com/ecc".into(),
//!     operator: DeviceTolerationOperator::Exists,
//!     value: String::new(),
//!     effect: Some(DeviceTaintEffect::NoExecute),
//!     toleration_seconds: Some(60),
//! };
//! assert!(tol.tolerates(&taint));
//! let verdict = device_eviction(&taint, &[tol]);
//! assert_eq!(verdict, EvictionVerdict::Evict { delay_seconds: 60 });
//! assert_eq!(verdict.eviction_time(Time(1_000)), Some(Time(1_060)));
//! ```

use core::fmt;

use crate::alloc_prelude::*;
use crate::model::taint::{check_label_name, check_label_value, child_path};
use crate::{
    DeviceTaint, DeviceTaintEffect, ObjectRef, Problem, Taint, TaintEffect, Time, ValidationError,
};

// ---------------------------------------------------------------------------------------------
// Device tolerations
// ---------------------------------------------------------------------------------------------

/// The operator of a device toleration (resource.k8s.io/v1 `DeviceTolerationOperator`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum DeviceTolerationOperator {
    /// `Exists`: any value (the toleration's value must be empty).
    Exists,
    /// `Equal` (the default): the values must be equal.
    #[default]
    Equal,
}

impl DeviceTolerationOperator {
    /// The operators Kubernetes accepts, in upstream's order.
    pub const SUPPORTED: &'static [&'static str] = &["Equal", "Exists"];

    /// Parses the Kubernetes spelling; anything else is `None` (so an adapter can report
    /// "not supported"). The empty string is not an operator: the API server defaults it to
    /// `Equal`, so an adapter maps it to [`DeviceTolerationOperator::default`].
    pub fn parse(s: &str) -> Option<DeviceTolerationOperator> {
        match s {
            "Exists" => Some(DeviceTolerationOperator::Exists),
            "Equal" => Some(DeviceTolerationOperator::Equal),
            _ => None,
        }
    }

    /// The Kubernetes spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            DeviceTolerationOperator::Exists => "Exists",
            DeviceTolerationOperator::Equal => "Equal",
        }
    }
}

impl fmt::Display for DeviceTolerationOperator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A toleration of a device request or subrequest (resource.k8s.io/v1 `DeviceToleration`);
/// copied into each allocation result of that request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct DeviceToleration {
    /// `key`: empty means every key.
    #[cfg_attr(feature = "serde", serde(default))]
    pub key: String,
    /// `operator` (defaults to `Equal`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub operator: DeviceTolerationOperator,
    /// `value`: must be empty for `Exists`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub value: String,
    /// `effect`: `None` (empty) means every effect.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub effect: Option<DeviceTaintEffect>,
    /// `tolerationSeconds`: only used with effect `NoExecute`; unset = tolerate forever,
    /// ≤ 0 = evict immediately.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub toleration_seconds: Option<i64>,
}

impl DeviceToleration {
    /// Whether this toleration tolerates `taint` (upstream `resourceclaim.ToleratesTaint`).
    ///
    /// Has no notion of which effects matter: callers ignore `None` and unknown effects
    /// themselves (see [`device_taint_blocks`]).
    pub fn tolerates(&self, taint: &DeviceTaint) -> bool {
        // Rule 1: compared as strings, like upstream, so `Some(Unknown(""))` behaves as empty
        // and an unknown effect matches the same unknown effect.
        let effect = self.effect.as_ref().map_or("", DeviceTaintEffect::as_str);
        if !effect.is_empty() && effect != taint.effect.as_str() {
            return false;
        }
        // Rule 2.
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        // Rule 3.
        match self.operator {
            DeviceTolerationOperator::Exists => true,
            // QUIRK (upstream resourceclaim.ToleratesTaint, spec 2.3): an empty key with
            // `Equal` is not special-cased, so it tolerates every taint, whatever its key,
            // whose value equals the toleration's value. The field docs forbid the
            // combination but validation does not reject it.
            DeviceTolerationOperator::Equal => self.value == taint.value,
        }
    }

    /// Validates the toleration (upstream `validateDeviceToleration`) and returns the
    /// problems, empty when valid. `path` is the toleration's own field path
    /// (`spec.devices.requests[0].exactly.tolerations[2]`); the rules are listed on the
    /// crate-internal `validate`.
    pub fn validation_errors(&self, obj: &ObjectRef, path: &str) -> Vec<ValidationError> {
        let mut errs = Vec::new();
        self.validate(obj, path, &mut errs);
        errs
    }

    /// Validates the toleration as upstream `validateDeviceToleration` does. `path` is the
    /// toleration's own field path (`spec.devices.requests[0].exactly.tolerations[2]`).
    ///
    /// * key, if set, a label name;
    /// * `Exists`: value must be empty; `Equal`: value a label value;
    /// * effect, if set, one of `None`, `NoSchedule`, `NoExecute`;
    /// * `tolerationSeconds` is not checked (it is ignored unless the effect is `NoExecute`).
    pub(crate) fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        if !self.key.is_empty() {
            check_label_name(&self.key, obj, child_path(path, "key"), errs);
        }
        // QUIRK (upstream validateDeviceToleration, spec 2.2): an empty key with operator
        // `Equal` is accepted, although the documentation says the operator must be `Exists`.
        match self.operator {
            DeviceTolerationOperator::Exists => {
                if !self.value.is_empty() {
                    errs.push(ValidationError::new(
                        obj.clone(),
                        child_path(path, "value"),
                        Problem::Invalid {
                            value: self.value.clone(),
                            reason: "must be empty for operator `Exists`",
                        },
                    ));
                }
            }
            DeviceTolerationOperator::Equal => {
                check_label_value(&self.value, obj, child_path(path, "value"), errs);
            }
        }
        // Empty is fine ("all effects"); `None` is accepted too although the field docs only
        // name NoSchedule and NoExecute (spec 2.2).
        if let Some(DeviceTaintEffect::Unknown(e)) = &self.effect
            && !e.is_empty()
        {
            errs.push(ValidationError::new(
                obj.clone(),
                child_path(path, "effect"),
                Problem::NotSupported {
                    value: e.clone(),
                    supported: DeviceTaintEffect::SUPPORTED,
                },
            ));
        }
    }
}

/// Whether `taint` keeps its device from being allocated to a request with `tolerations`:
/// its effect is `NoSchedule` or `NoExecute` and no toleration tolerates it.
///
/// `None` and unknown effects never block. Every taint stands on its own: a toleration with
/// effect `NoExecute` does not cover a `NoSchedule` taint with the same key.
pub fn device_taint_blocks(taint: &DeviceTaint, tolerations: &[DeviceToleration]) -> bool {
    taint.effect.blocks_allocation() && !tolerations.iter().any(|t| t.tolerates(taint))
}

/// The first taint (in list order) that keeps the device from being allocated to a request
/// with `tolerations`, if any (see [`device_taint_blocks`]).
pub fn first_blocking_device_taint<'a>(
    taints: &'a [DeviceTaint],
    tolerations: &[DeviceToleration],
) -> Option<&'a DeviceTaint> {
    taints.iter().find(|t| device_taint_blocks(t, tolerations))
}

/// What the eviction rule decides for a taint (devices) or a node's taints (nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all_fields = "camelCase"))]
pub enum EvictionVerdict {
    /// No taint with a `NoExecute` effect is involved.
    NotEvicting,
    /// `NoExecute` taints are involved, but tolerated forever.
    ToleratedForever,
    /// Evict `delay_seconds` after the start time.
    Evict {
        /// The delay, ≥ 0, counted from the start time: the taint's `timeAdded` for devices,
        /// the time the taint manager observed the taints for nodes.
        delay_seconds: i64,
    },
}

impl EvictionVerdict {
    /// When eviction happens if the timer started at `start`; `None` when there is none.
    pub fn eviction_time(&self, start: Time) -> Option<Time> {
        match *self {
            EvictionVerdict::Evict { delay_seconds } => Some(start.plus_seconds(delay_seconds)),
            EvictionVerdict::NotEvicting | EvictionVerdict::ToleratedForever => None,
        }
    }

    /// Whether pods are (eventually) evicted.
    pub fn evicts(&self) -> bool {
        matches!(self, EvictionVerdict::Evict { .. })
    }
}

/// The device-taint eviction rule for one taint of an allocated device and the tolerations
/// copied into that device's allocation result (upstream device-taint-eviction controller,
/// spec 2.4 step 2):
///
/// * a taint whose effect is not `NoExecute` → [`EvictionVerdict::NotEvicting`];
/// * only tolerations with effect exactly `NoExecute` that match the taint count;
/// * if any of them has no `tolerationSeconds` → [`EvictionVerdict::ToleratedForever`];
/// * otherwise, if some matched → evict after the smallest `tolerationSeconds` (negative
///   counts as 0); if none matched → evict at once (`delay_seconds: 0`).
///
/// The delay counts from the taint's `timeAdded`.
pub fn device_eviction(taint: &DeviceTaint, tolerations: &[DeviceToleration]) -> EvictionVerdict {
    if !taint.effect.is_no_execute() {
        return EvictionVerdict::NotEvicting;
    }
    let mut min: Option<i64> = None;
    for toleration in tolerations {
        // QUIRK (upstream device_taint_eviction.go, spec 2.4): only tolerations whose effect is
        // explicitly `NoExecute` are consulted. A toleration with an empty effect lets the
        // device be allocated (it matches every effect) but does not protect against
        // eviction: such pods are evicted at `timeAdded`.
        if toleration.effect != Some(DeviceTaintEffect::NoExecute) || !toleration.tolerates(taint) {
            continue;
        }
        match toleration.toleration_seconds {
            // QUIRK (upstream device_taint_eviction.go, spec 2.6): one matching toleration
            // without `tolerationSeconds` makes the taint ignored, even when other matching
            // tolerations have a finite time (for node taints the finite minimum wins).
            None => return EvictionVerdict::ToleratedForever,
            Some(seconds) => {
                let seconds = seconds.max(0);
                min = Some(min.map_or(seconds, |m| m.min(seconds)));
            }
        }
    }
    EvictionVerdict::Evict {
        delay_seconds: min.unwrap_or(0),
    }
}

/// The earliest eviction time caused by the `taints` of one allocated device, given the
/// tolerations copied into its allocation result, and the taint that causes it (the first
/// one in list order on ties). `None` when no taint leads to eviction.
///
/// A taint without `timeAdded` is skipped: the API server always sets it, and upstream never
/// lets a missing time become the eviction time.
pub fn device_eviction_time<'a>(
    taints: &'a [DeviceTaint],
    tolerations: &[DeviceToleration],
) -> Option<(Time, &'a DeviceTaint)> {
    let mut earliest: Option<(Time, &'a DeviceTaint)> = None;
    for taint in taints {
        let Some(added) = taint.time_added else {
            continue;
        };
        let Some(when) = device_eviction(taint, tolerations).eviction_time(added) else {
            continue;
        };
        if earliest.is_none_or(|(t, _)| when < t) {
            earliest = Some((when, taint));
        }
    }
    earliest
}

// ---------------------------------------------------------------------------------------------
// Node tolerations
// ---------------------------------------------------------------------------------------------

/// The operator of a node toleration (core/v1 `TolerationOperator`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TolerationOperator {
    /// `Exists`: any value (the toleration's value must be empty).
    Exists,
    /// `Equal` (the default): the values must be equal.
    #[default]
    Equal,
    /// `Lt`: the taint's value, as an integer, is less than the toleration's.
    Lt,
    /// `Gt`: the taint's value, as an integer, is greater than the toleration's.
    Gt,
}

impl TolerationOperator {
    /// The operators this crate accepts (Kubernetes 1.37 with `TaintTolerationComparisonOperators`).
    pub const SUPPORTED: &'static [&'static str] = &["Equal", "Exists", "Lt", "Gt"];

    /// Parses the Kubernetes spelling; anything else is `None` (so an adapter can report
    /// "not supported"). The empty string is not an operator: Kubernetes treats it as `Equal`,
    /// so an adapter maps it to [`TolerationOperator::default`].
    pub fn parse(s: &str) -> Option<TolerationOperator> {
        match s {
            "Exists" => Some(TolerationOperator::Exists),
            "Equal" => Some(TolerationOperator::Equal),
            "Lt" => Some(TolerationOperator::Lt),
            "Gt" => Some(TolerationOperator::Gt),
            _ => None,
        }
    }

    /// The Kubernetes spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            TolerationOperator::Exists => "Exists",
            TolerationOperator::Equal => "Equal",
            TolerationOperator::Lt => "Lt",
            TolerationOperator::Gt => "Gt",
        }
    }
}

impl fmt::Display for TolerationOperator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pod's toleration of node taints (core/v1 `Toleration`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Toleration {
    /// `key`: empty means every key (then the operator must be `Exists`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub key: String,
    /// `operator` (defaults to `Equal`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub operator: TolerationOperator,
    /// `value`: empty for `Exists`, a decimal integer for `Lt` / `Gt`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub value: String,
    /// `effect`: `None` (empty) means every effect.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub effect: Option<TaintEffect>,
    /// `tolerationSeconds`: only with effect `NoExecute`; unset = tolerate forever,
    /// ≤ 0 = evict immediately.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub toleration_seconds: Option<i64>,
}

/// Parses a decimal integer in strict canonical form that fits in an `i64`: `0`, or an
/// optional `-` followed by `[1-9][0-9]*` (no `+`, no leading zeros, no `-0`); upstream
/// `content.IsDecimalInteger` followed by `strconv.ParseInt`.
pub(crate) fn parse_canonical_i64(s: &str) -> Option<i64> {
    if s == "0" {
        return Some(0);
    }
    let digits = s.strip_prefix('-').unwrap_or(s);
    let first = *digits.as_bytes().first()?;
    if !(b'1'..=b'9').contains(&first) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // The shape is canonical, so the standard parser only adds the range check.
    s.parse().ok()
}

impl Toleration {
    /// Whether this toleration tolerates `taint` (upstream core/v1 `Toleration.ToleratesTaint`,
    /// with the comparison operators enabled).
    ///
    /// For `Lt` / `Gt` both values must be canonical decimal integers that fit in an `i64`
    /// (`0`, or an optional `-` and digits without leading zeros), otherwise there is no
    /// match; `Gt` matches when the taint's value
    /// is greater than the toleration's, `Lt` when it is less.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.is_some_and(|e| e != taint.effect) {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        match self.operator {
            TolerationOperator::Exists => true,
            // QUIRK (upstream core/v1 ToleratesTaint, spec 2.3): as for devices, an empty key
            // with `Equal` matches every taint whose value equals the toleration's value.
            // Validation rejects that combination for pods, but the matcher does not care.
            TolerationOperator::Equal => self.value == taint.value,
            TolerationOperator::Lt | TolerationOperator::Gt => {
                let (Some(toleration), Some(taint)) = (
                    parse_canonical_i64(&self.value),
                    parse_canonical_i64(&taint.value),
                ) else {
                    return false;
                };
                if self.operator == TolerationOperator::Lt {
                    taint < toleration
                } else {
                    taint > toleration
                }
            }
        }
    }

    /// Validates the toleration (one entry of upstream `ValidateTolerations`, comparison
    /// operators allowed) and returns the problems, empty when valid. `path` is the
    /// toleration's own field path (`spec.tolerations[2]`); the rules are listed on the
    /// crate-internal `validate`.
    pub fn validation_errors(&self, obj: &ObjectRef, path: &str) -> Vec<ValidationError> {
        let mut errs = Vec::new();
        self.validate(obj, path, &mut errs);
        errs
    }

    /// Validates the toleration as upstream `ValidateTolerations` does for one entry (with the
    /// comparison operators allowed). `path` is the toleration's own field path
    /// (`spec.tolerations[2]`). In upstream's order:
    ///
    /// * key, if set, a label name;
    /// * empty key requires operator `Exists` (reported at `operator`);
    /// * `tolerationSeconds` set requires effect `NoExecute` (reported at `effect`);
    /// * `Equal`: value a label value; `Exists`: value empty — both reported at `operator`
    ///   (upstream quirk); `Lt` / `Gt`: value a canonical decimal `i64` (reported at `value`).
    pub(crate) fn validate(&self, obj: &ObjectRef, path: &str, errs: &mut Vec<ValidationError>) {
        if !self.key.is_empty() {
            check_label_name(&self.key, obj, child_path(path, "key"), errs);
        }
        if self.key.is_empty() && self.operator != TolerationOperator::Exists {
            errs.push(ValidationError::new(
                obj.clone(),
                child_path(path, "operator"),
                Problem::Invalid {
                    value: self.operator.as_str().to_owned(),
                    reason: "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
                },
            ));
        }
        if self.toleration_seconds.is_some() && self.effect != Some(TaintEffect::NoExecute) {
            errs.push(ValidationError::new(
                obj.clone(),
                child_path(path, "effect"),
                Problem::Invalid {
                    value: self.effect.map_or("", TaintEffect::as_str).to_owned(),
                    reason: "effect must be 'NoExecute' when `tolerationSeconds` is set",
                },
            ));
        }
        match self.operator {
            // QUIRK (upstream ValidateTolerations): a bad value for `Equal` and a non-empty
            // value for `Exists` are reported at `operator`, not at `value`.
            TolerationOperator::Equal => {
                check_label_value(&self.value, obj, child_path(path, "operator"), errs);
            }
            TolerationOperator::Exists => {
                if !self.value.is_empty() {
                    errs.push(ValidationError::new(
                        obj.clone(),
                        child_path(path, "operator"),
                        Problem::Invalid {
                            value: self.value.clone(),
                            reason: "value must be empty when `operator` is 'Exists'",
                        },
                    ));
                }
            }
            TolerationOperator::Lt | TolerationOperator::Gt => {
                if parse_canonical_i64(&self.value).is_none() {
                    errs.push(ValidationError::new(
                        obj.clone(),
                        child_path(path, "value"),
                        Problem::Invalid {
                            value: self.value.clone(),
                            reason: "must be a valid decimal integer in canonical form that fits in 64 bits",
                        },
                    ));
                }
            }
        }
    }
}

/// The first taint (in list order) whose effect passes `effects` and that no toleration
/// tolerates (upstream `FindMatchingUntoleratedTaint`). The scheduler's filter uses
/// `NoSchedule | NoExecute`.
pub fn first_untolerated_taint<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    effects: impl Fn(TaintEffect) -> bool,
) -> Option<&'a Taint> {
    taints
        .iter()
        .find(|t| effects(t.effect) && !tolerations.iter().any(|tol| tol.tolerates(t)))
}

/// How many `PreferNoSchedule` taints no toleration tolerates (the scheduler's taint score:
/// fewer is better).
pub fn count_untolerated_prefer_no_schedule(taints: &[Taint], tolerations: &[Toleration]) -> usize {
    taints
        .iter()
        .filter(|t| {
            t.effect == TaintEffect::PreferNoSchedule
                && !tolerations.iter().any(|tol| tol.tolerates(t))
        })
        .count()
}

/// The node taint-eviction rule (upstream taint_eviction.go with `GetMatchingTolerations` and
/// `getMinTolerationTime`):
///
/// * only `NoExecute` taints count; none → [`EvictionVerdict::NotEvicting`];
/// * one of them tolerated by no toleration → evict at once (`delay_seconds: 0`);
/// * otherwise the smallest `tolerationSeconds` of the tolerations used (negative counts as
///   0), where unset is infinite and the finite minimum wins; all unset →
///   [`EvictionVerdict::ToleratedForever`].
///
/// Tolerations with an empty effect count (they match `NoExecute`). The delay counts from
/// the time the taint manager observed the taints.
pub fn node_eviction(taints: &[Taint], tolerations: &[Toleration]) -> EvictionVerdict {
    let mut any = false;
    let mut min: Option<i64> = None;
    for taint in taints.iter().filter(|t| t.effect == TaintEffect::NoExecute) {
        any = true;
        // QUIRK (upstream GetMatchingTolerations): for each taint only the *first* toleration
        // in list order that tolerates it is used; later matching tolerations of the same
        // taint, with shorter or longer times, are not looked at.
        let Some(used) = tolerations.iter().find(|t| t.tolerates(taint)) else {
            return EvictionVerdict::Evict { delay_seconds: 0 };
        };
        if let Some(seconds) = used.toleration_seconds {
            let seconds = seconds.max(0);
            min = Some(min.map_or(seconds, |m| m.min(seconds)));
        }
    }
    match (any, min) {
        (false, _) => EvictionVerdict::NotEvicting,
        (true, None) => EvictionVerdict::ToleratedForever,
        (true, Some(delay_seconds)) => EvictionVerdict::Evict { delay_seconds },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_parse_round_trip() {
        for op in [
            DeviceTolerationOperator::Exists,
            DeviceTolerationOperator::Equal,
        ] {
            assert_eq!(DeviceTolerationOperator::parse(op.as_str()), Some(op));
            assert_eq!(op.to_string(), op.as_str());
        }
        assert_eq!(DeviceTolerationOperator::parse("Lt"), None);
        assert_eq!(DeviceTolerationOperator::parse(""), None);
        assert_eq!(
            DeviceTolerationOperator::default(),
            DeviceTolerationOperator::Equal
        );
        for op in [
            TolerationOperator::Exists,
            TolerationOperator::Equal,
            TolerationOperator::Lt,
            TolerationOperator::Gt,
        ] {
            assert_eq!(TolerationOperator::parse(op.as_str()), Some(op));
            assert_eq!(op.to_string(), op.as_str());
        }
        assert_eq!(TolerationOperator::parse("equal"), None);
        assert_eq!(TolerationOperator::parse(""), None);
        assert_eq!(TolerationOperator::default(), TolerationOperator::Equal);
    }

    #[test]
    fn canonical_integers() {
        for (s, v) in [
            ("0", Some(0)),
            ("7", Some(7)),
            ("-7", Some(-7)),
            ("950", Some(950)),
            ("9223372036854775807", Some(i64::MAX)),
            ("-9223372036854775808", Some(i64::MIN)),
            ("9223372036854775808", None),
            ("-9223372036854775809", None),
            ("", None),
            ("-", None),
            ("-0", None),
            ("+5", None),
            ("0950", None),
            ("00", None),
            ("1.5", None),
            ("1e3", None),
            (" 5", None),
            ("five", None),
        ] {
            assert_eq!(parse_canonical_i64(s), v, "{s:?}");
        }
    }

    #[test]
    fn eviction_time() {
        assert_eq!(EvictionVerdict::NotEvicting.eviction_time(Time(5)), None);
        assert_eq!(
            EvictionVerdict::ToleratedForever.eviction_time(Time(5)),
            None
        );
        assert_eq!(
            EvictionVerdict::Evict { delay_seconds: 10 }.eviction_time(Time(5)),
            Some(Time(15))
        );
        assert!(EvictionVerdict::Evict { delay_seconds: 0 }.evicts());
        assert!(!EvictionVerdict::ToleratedForever.evicts());
    }
}
