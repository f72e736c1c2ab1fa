//! Logical time.

/// A point in time, in whole seconds since the Unix epoch.
///
/// gangpack never reads a clock: every time is an input, so runs are reproducible.
/// Kubernetes truncates `timeAdded` to seconds, so seconds are exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct Time(pub i64);

impl Time {
    /// `self` plus `seconds` (saturating).
    #[must_use]
    pub const fn plus_seconds(self, seconds: i64) -> Time {
        Time(self.0.saturating_add(seconds))
    }
}
