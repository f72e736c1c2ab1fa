//! Logical time as Kubernetes prints it.

use gangpack::Time;

/// The RFC 3339 form Kubernetes uses for `metav1.Time` (UTC, whole seconds):
/// `2026-08-26T00:00:00Z`.
///
/// Civil-from-days arithmetic on the proleptic Gregorian calendar (no time zone data,
/// no leap seconds, as Unix time). Times before the epoch work too; years outside
/// 0..=9999 print with more (or signed) digits, which RFC 3339 does not allow and the
/// API server would refuse.
///
/// ```
/// use gangpack::Time;
/// use gangpack_k8s::output::time_to_rfc3339;
///
/// assert_eq!(time_to_rfc3339(Time(0)), "1970-01-01T00:00:00Z");
/// assert_eq!(time_to_rfc3339(Time(1_787_702_400)), "2026-08-26T00:00:00Z");
/// ```
pub fn time_to_rfc3339(t: Time) -> String {
    let days = t.0.div_euclid(86_400);
    let secs = t.0.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// (year, month 1..=12, day 1..=31) of a day count since 1970-01-01 (H. Hinnant's
/// `civil_from_days`: eras of 400 years, years starting on March 1st so that the leap
/// day comes last).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, 0..=146_096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // year of era, 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of year from March 1st, 0..=365
    let mp = (5 * doy + 2) / 153; // month from March, 0..=11
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}
