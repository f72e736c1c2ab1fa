//! `--now`: RFC 3339 timestamps to the core's logical time (whole seconds since the
//! Unix epoch; fractions are dropped, as Kubernetes truncates `metav1.Time`).

use gangpack::Time;

/// Parses `2026-11-05T08:00:00Z`, `2026-11-05T10:00:00+02:00`, `2026-11-05t08:00:00.5z`
/// or `2026-11-05 08:00:00Z` (RFC 3339 allows a space for `T`).
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

/// clap value parser for `--now`.
pub fn parse_rfc3339_arg(s: &str) -> Result<Time, String> {
    parse_rfc3339(s)
        .ok_or_else(|| format!("not an RFC 3339 time: {s:?} (expected e.g. 2026-11-05T08:00:00Z)"))
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rfc3339() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(Time(0)));
        assert_eq!(
            parse_rfc3339("2026-08-26T00:00:00Z"),
            Some(Time(1_787_702_400))
        );
        assert_eq!(
            parse_rfc3339("2026-08-26T02:00:00+02:00"),
            Some(Time(1_787_702_400))
        );
        assert_eq!(
            parse_rfc3339("2026-08-25t19:30:00.999-04:30"),
            Some(Time(1_787_702_400))
        );
        assert_eq!(
            parse_rfc3339("2024-02-29 12:00:00Z"),
            Some(Time(1_709_208_000))
        );
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59Z"), Some(Time(-1)));
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
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
