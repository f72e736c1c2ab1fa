//! Logical time as Kubernetes prints it.

use gangpack::Time;

/// The RFC 3339 form Kubernetes uses for `metav1.Time` (UTC, whole seconds):
/// `2026-08-26T00:00:00Z`.
///
/// [`Time::to_rfc3339`]: years outside 0..=9999 print with more (or signed) digits,
/// which RFC 3339 does not allow and the API server would refuse.
///
/// ```
/// use gangpack::Time;
/// use gangpack_k8s::output::time_to_rfc3339;
///
/// assert_eq!(time_to_rfc3339(Time(0)), "1970-01-01T00:00:00Z");
/// assert_eq!(time_to_rfc3339(Time(1_787_702_400)), "2026-08-26T00:00:00Z");
/// ```
pub fn time_to_rfc3339(t: Time) -> String {
    t.to_rfc3339()
}
