//! Logical time.

use crate::alloc_prelude::*;

/// A point in time, in whole seconds since the Unix epoch.
///
/// gangpack never reads a clock: every time is an input, so runs are reproducible.
/// Kubernetes truncates `timeAdded` to seconds, so seconds are exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct Time(pub i64);

impl Time {
    /// Parses RFC 3339 text as Kubernetes writes `metav1.Time`:
    /// `2026-11-05T08:00:00Z`, `2026-11-05T10:00:00+02:00`, `2026-11-05t08:00:00.5z` or
    /// `2026-11-05 08:00:00Z` (RFC 3339 allows a space for `T`). Fractions are dropped,
    /// as Kubernetes truncates to seconds; a leap second (`:60`) is the next second, as
    /// in Unix time.
    ///
    /// ```
    /// use gangpack::Time;
    ///
    /// assert_eq!(Time::parse_rfc3339("2026-08-26T02:00:00+02:00"), Some(Time(1_787_702_400)));
    /// assert_eq!(Time::parse_rfc3339("2026-08-26"), None);
    /// ```
    pub fn parse_rfc3339(s: &str) -> Option<Time> {
        let b = s.as_bytes();
        if b.len() < 20 {
            return None;
        }
        let num = |from: usize, len: usize| -> Option<i64> {
            let digits = b.get(from..from + len)?;
            digits.iter().try_fold(0i64, |acc, &c| {
                c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
            })
        };
        let sep = |at: usize, c: u8| b.get(at) == Some(&c);
        if !(sep(4, b'-') && sep(7, b'-') && sep(13, b':') && sep(16, b':')) {
            return None;
        }
        if !matches!(b[10], b'T' | b't' | b' ') {
            return None;
        }
        let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
        let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 60
        {
            return None;
        }
        let mut end = 19;
        if b.get(end) == Some(&b'.') {
            end += 1;
            let start = end;
            while b.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            if end == start {
                return None;
            }
        }
        let offset = match b.get(end..)? {
            [b'Z' | b'z'] => 0,
            [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
                let (hours, mins) = (num(end + 1, 2)?, num(end + 4, 2)?);
                if hours > 23 || mins > 59 {
                    return None;
                }
                let minutes = hours * 60 + mins;
                if *sign == b'-' { -minutes } else { minutes }
            }
            _ => return None,
        };
        let days = days_from_civil(year, month, day);
        // A leap second (:60) counts as the next second, as Unix time does.
        Some(Time(
            days * 86_400 + hour * 3600 + minute * 60 + second - offset * 60,
        ))
    }

    /// The RFC 3339 form Kubernetes prints for `metav1.Time` (UTC, whole seconds):
    /// `2026-08-26T00:00:00Z`. Proleptic Gregorian calendar, no leap seconds (as Unix
    /// time); years outside 0..=9999 print with more (or signed) digits, which RFC 3339
    /// does not allow.
    ///
    /// ```
    /// use gangpack::Time;
    ///
    /// assert_eq!(Time(0).to_rfc3339(), "1970-01-01T00:00:00Z");
    /// assert_eq!(Time(1_787_702_400).to_rfc3339(), "2026-08-26T00:00:00Z");
    /// ```
    #[must_use]
    pub fn to_rfc3339(self) -> String {
        let days = self.0.div_euclid(86_400);
        let secs = self.0.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }

    /// `self` plus `seconds` (saturating).
    #[must_use]
    pub const fn plus_seconds(self, seconds: i64) -> Time {
        Time(self.0.saturating_add(seconds))
    }
}

pub(crate) fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

pub(crate) fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month 1..=12, day 1..=31) of a day count since 1970-01-01 (H. Hinnant's
/// `civil_from_days`: eras of 400 years, years starting on March 1st so that the leap
/// day comes last).
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rfc3339() {
        assert_eq!(Time::parse_rfc3339("1970-01-01T00:00:00Z"), Some(Time(0)));
        assert_eq!(
            Time::parse_rfc3339("2026-08-26T00:00:00Z"),
            Some(Time(1_787_702_400))
        );
        assert_eq!(
            Time::parse_rfc3339("2026-08-26T02:00:00+02:00"),
            Some(Time(1_787_702_400))
        );
        assert_eq!(
            Time::parse_rfc3339("2026-08-25t19:30:00.999-04:30"),
            Some(Time(1_787_702_400))
        );
        assert_eq!(
            Time::parse_rfc3339("2024-02-29 12:00:00Z"),
            Some(Time(1_709_208_000))
        );
        assert_eq!(Time::parse_rfc3339("1969-12-31T23:59:59Z"), Some(Time(-1)));
    }

    #[test]
    fn rejects_what_is_not_rfc3339() {
        for bad in [
            "",
            "2026-08-26",
            "2026-08-26T00:00:00",
            "2026-08-26T00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-08-26T24:00:00Z",
            "2026-08-26T00:00:00.Z",
            "2026-08-26T00:00:00+0200",
            "1787702400",
            "2026-08-26T00:00:00Zjunk",
        ] {
            assert_eq!(Time::parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_what_it_parses() {
        for t in [0, -1, 1_787_702_400, 951_782_400, 253_402_300_799] {
            assert_eq!(
                Time::parse_rfc3339(&Time(t).to_rfc3339()),
                Some(Time(t)),
                "{t}"
            );
        }
    }
}
