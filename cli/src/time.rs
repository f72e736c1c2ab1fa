//! `--now`: RFC 3339 timestamps to the core's logical time (whole seconds since the
//! Unix epoch; fractions are dropped, as Kubernetes truncates `metav1.Time`).

use gangpack::Time;

/// Parses `2026-11-05T08:00:00Z`, `2026-11-05T10:00:00+02:00`, `2026-11-05t08:00:00.5z`
/// or `2026-11-05 08:00:00Z` ([`Time::parse_rfc3339`]).
pub fn parse_rfc3339(s: &str) -> Option<Time> {
    Time::parse_rfc3339(s)
}

/// clap value parser for `--now`.
pub fn parse_rfc3339_arg(s: &str) -> Result<Time, String> {
    parse_rfc3339(s)
        .ok_or_else(|| format!("not an RFC 3339 time: {s:?} (expected e.g. 2026-11-05T08:00:00Z)"))
}
