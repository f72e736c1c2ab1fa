//! The logical clock as JavaScript gives and reads it: RFC 3339 text or seconds since
//! the Unix epoch. One parser and one formatter for every build (with or without the
//! `k8s` feature), in whole seconds as Kubernetes stores `metav1.Time`.

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

/// `YYYY-MM-DD(T|t| )hh:mm:ss[.frac](Z|z|±hh:mm)`.
pub(crate) fn parse(text: &str) -> Option<Time> {
    let bytes = text.as_bytes();
    let digits = |from: usize, len: usize| -> Option<i64> {
        bytes
            .get(from..from + len)?
            .iter()
            .try_fold(0i64, |acc, &c| {
                c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
            })
    };
    let at = |pos: usize, c: u8| bytes.get(pos) == Some(&c);
    if !(at(4, b'-')
        && at(7, b'-')
        && at(13, b':')
        && at(16, b':')
        && matches!(bytes.get(10), Some(b'T' | b't' | b' ')))
    {
        return None;
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    if !(1..=12).contains(&month)
        || !(1..=month_days(year, month)).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut end = 19;
    if at(end, b'.') {
        let start = end + 1;
        end = start;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        if end == start {
            return None;
        }
    }
    let offset_minutes = match bytes.get(end..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (hours, mins) = (digits(end + 1, 2)?, digits(end + 4, 2)?);
            if hours > 23 || mins > 59 {
                return None;
            }
            if *sign == b'-' {
                -(hours * 60 + mins)
            } else {
                hours * 60 + mins
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    Some(Time(
        days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60,
    ))
}

/// `2026-11-05T08:00:00Z`.
pub(crate) fn format(t: Time) -> String {
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

fn month_days(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (eras of 400 years, years
/// starting in March so the leap day comes last).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
