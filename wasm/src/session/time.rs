//! The logical clock as JavaScript gives and reads it: RFC 3339 text or seconds since
//! the Unix epoch, parsed and printed by the core's `Time` (whole seconds, as
//! Kubernetes stores `metav1.Time`) in every build, with or without the `k8s` feature.

use gangpack::Time;
use serde::{Deserialize, Serialize};

/// A time argument: `"2026-11-05T08:00:00Z"` (fractions dropped, offsets applied) or
/// seconds.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum TimeArg {
    /// RFC 3339 text.
    Text(String),
    /// Seconds since the epoch.
    Seconds(i64),
}

impl TimeArg {
    /// The time, or a message saying what is wrong.
    pub(crate) fn time(&self) -> Result<Time, String> {
        match self {
            TimeArg::Seconds(s) => Ok(Time(*s)),
            TimeArg::Text(t) => parse(t).ok_or_else(|| {
                format!("{t:?} is not an RFC 3339 time (e.g. 2026-11-05T08:00:00Z)")
            }),
        }
    }
}

/// A time as JavaScript reads it: `{ rfc3339, seconds }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Clock {
    /// `2026-11-05T08:00:00Z`.
    pub(crate) rfc3339: String,
    /// Seconds since the epoch.
    pub(crate) seconds: i64,
}

impl From<Time> for Clock {
    fn from(t: Time) -> Clock {
        Clock {
            rfc3339: format(t),
            seconds: t.0,
        }
    }
}

/// `YYYY-MM-DD(T|t| )hh:mm:ss[.frac](Z|z|±hh:mm)` ([`Time::parse_rfc3339`]).
pub(crate) fn parse(text: &str) -> Option<Time> {
    Time::parse_rfc3339(text)
}

/// `2026-11-05T08:00:00Z` ([`Time::to_rfc3339`]).
pub(crate) fn format(t: Time) -> String {
    t.to_rfc3339()
}
