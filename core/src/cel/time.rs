//! CEL's `google.protobuf.Duration` and `google.protobuf.Timestamp`: parsing and
//! printing as cel-go does (Go's `time.ParseDuration`, RFC 3339), civil-time getters
//! in UTC or a fixed offset.
//!
//! Durations are nanoseconds in an `i64` (Go's `time.Duration`); timestamps are
//! nanoseconds since the Unix epoch, between years 1 and 9999 (CEL's range).

use core::fmt::Write as _;

use crate::alloc_prelude::*;

const NANOS_PER_SEC: i128 = 1_000_000_000;
/// 0001-01-01T00:00:00Z.
const MIN_SECS: i128 = -62_135_596_800;
/// 9999-12-31T23:59:59Z.
const MAX_SECS: i128 = 253_402_300_799;

/// Go's `%q` for the messages.
fn q(s: &str) -> String {
    format!("{s:?}")
}

/// Go's `time.ParseDuration`.
pub(super) fn parse_duration(s: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", q(s));
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(f) => {
                let n = f.bytes().take_while(u8::is_ascii_digit).count();
                (Some(&f[..n]), &f[n..])
            }
            None => (None, after),
        };
        if int_part.is_empty() && frac_part.is_none_or(str::is_empty) {
            return Err(invalid());
        }
        let unit_len = after
            .bytes()
            .take_while(|b| *b != b'.' && !b.is_ascii_digit())
            .count();
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", q(s)));
        }
        let (unit, next) = after.split_at(unit_len);
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => NANOS_PER_SEC,
            "m" => 60 * NANOS_PER_SEC,
            "h" => 3600 * NANOS_PER_SEC,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    q(unit),
                    q(s)
                ));
            }
        };
        let whole: i128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| invalid())?
        };
        let mut value = whole.checked_mul(scale).ok_or_else(invalid)?;
        if let Some(frac) = frac_part {
            // Go keeps the fraction's digits as long as they fit, then truncates.
            let mut f: i128 = 0;
            let mut div: i128 = 1;
            for d in frac.bytes().take(30) {
                f = f * 10 + i128::from(d - b'0');
                div *= 10;
            }
            value += f * scale / div;
        }
        total = total.checked_add(value).ok_or_else(invalid)?;
        if total > i128::from(i64::MAX) + i128::from(neg) {
            return Err(invalid());
        }
        rest = next;
    }
    let signed = if neg { -total } else { total };
    i64::try_from(signed).map_err(|_| invalid())
}

/// A duration as cel-go prints it: seconds with the fraction they need, and `s`
/// (`"1.5s"`, `"-0.000000002s"`, `"3600s"`).
pub(super) fn duration_text(nanos: i64) -> String {
    let n = i128::from(nanos);
    let sign = if n < 0 { "-" } else { "" };
    let abs = n.abs();
    let (secs, frac) = (abs / NANOS_PER_SEC, abs % NANOS_PER_SEC);
    if frac == 0 {
        return format!("{sign}{secs}s");
    }
    let digits = format!("{frac:09}");
    format!("{sign}{secs}.{}s", digits.trim_end_matches('0'))
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    crate::model::time::days_from_civil(y, i64::from(m), i64::from(d))
}

/// The civil date of a day count since 1970-01-01: (year, month 1–12, day 1–31).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let (y, m, d) = crate::model::time::civil_from_days(z);
    let month = u32::try_from(m).expect("a month is 1..=12");
    let day = u32::try_from(d).expect("a day is 1..=31");
    (y, month, day)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    u32::try_from(crate::model::time::days_in_month(y, i64::from(m))).expect("28..=31 days")
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    b.iter().try_fold(0u32, |acc, d| {
        acc.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })
}

/// Whether `nanos` is within CEL's timestamp range.
pub(super) fn in_range(nanos: i128) -> bool {
    (MIN_SECS * NANOS_PER_SEC..(MAX_SECS + 1) * NANOS_PER_SEC).contains(&nanos)
}

/// An RFC 3339 timestamp (`2006-01-02T15:04:05[.999999999](Z|±07:00)`), as Go's
/// `time.Parse(time.RFC3339, s)` reads it, in nanoseconds since the epoch.
pub(super) fn parse_timestamp(s: &str) -> Result<i128, String> {
    let bad = || {
        format!(
            "parsing time {} as \"2006-01-02T15:04:05Z07:00\": not an RFC 3339 timestamp",
            q(s)
        )
    };
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return Err(bad());
    }
    if b[16] != b':' {
        return Err(bad());
    }
    let field = |r: core::ops::Range<usize>| digits(&b[r]).ok_or_else(bad);
    let (year, month, day) = (field(0..4)?, field(5..7)?, field(8..10)?);
    let (hour, minute, second) = (field(11..13)?, field(14..16)?, field(17..19)?);
    let year = i64::from(year);
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return Err(format!("parsing time {}: value out of range", q(s)));
    }
    let mut rest = &s[19..];
    let mut nanos: i128 = 0;
    if let Some(f) = rest.strip_prefix('.') {
        let n = f.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return Err(bad());
        }
        let frac = &f[..n];
        let mut value: i128 = 0;
        for (i, d) in frac.bytes().enumerate() {
            if i < 9 {
                value = value * 10 + i128::from(d - b'0');
            }
        }
        for _ in n..9 {
            value *= 10;
        }
        nanos = value;
        rest = &f[n..];
    }
    let offset_secs: i128 = match rest.as_bytes() {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let h = digits(&[*h1, *h2]).ok_or_else(bad)?;
            let m = digits(&[*m1, *m2]).ok_or_else(bad)?;
            if h > 24 || m > 59 {
                return Err(format!(
                    "parsing time {}: time zone offset out of range",
                    q(s)
                ));
            }
            let secs = i128::from(h * 3600 + m * 60);
            if *sign == b'-' { -secs } else { secs }
        }
        _ => return Err(bad()),
    };
    let days = i128::from(days_from_civil(year, month, day));
    let secs = days * 86_400 + i128::from(hour * 3600 + minute * 60 + second) - offset_secs;
    let total = secs * NANOS_PER_SEC + nanos;
    if !in_range(total) {
        return Err(String::from("timestamp out of range"));
    }
    Ok(total)
}

/// The civil fields of a timestamp at `offset` seconds east of UTC.
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    /// Days since January 1st.
    yday: i64,
    /// 0 = Sunday.
    wday: i64,
    hour: i64,
    minute: i64,
    second: i64,
    nanos: i64,
}

fn civil(nanos: i128, offset: i64) -> Civil {
    let local = nanos + i128::from(offset) * NANOS_PER_SEC;
    let secs = i64::try_from(local.div_euclid(NANOS_PER_SEC)).unwrap_or(0);
    let sub = i64::try_from(local.rem_euclid(NANOS_PER_SEC)).unwrap_or(0);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    Civil {
        year,
        month,
        day,
        yday: days - days_from_civil(year, 1, 1),
        // 1970-01-01 was a Thursday.
        wday: (days + 4).rem_euclid(7),
        hour: sod / 3600,
        minute: sod % 3600 / 60,
        second: sod % 60,
        nanos: sub,
    }
}

/// A timestamp in RFC 3339 with the fraction it needs, in UTC (Go's `RFC3339Nano`).
pub(super) fn timestamp_text(nanos: i128) -> String {
    let c = civil(nanos, 0);
    let mut out = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    );
    if c.nanos != 0 {
        let frac = format!("{:09}", c.nanos);
        let _ = write!(out, ".{}", frac.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

/// The offset, in seconds east of UTC, a getter's time-zone argument names: `UTC`
/// (or empty), or `±HH:MM` (cel-go's numeric form). Named IANA zones need a zone
/// database this crate does not carry.
pub(super) fn zone_offset(tz: &str) -> Result<i64, String> {
    if tz.is_empty() || tz == "UTC" {
        return Ok(0);
    }
    let Some((h, m)) = tz.split_once(':') else {
        return Err(format!("unknown time zone {tz}"));
    };
    let hours: i64 = h.parse().map_err(|_| format!("unknown time zone {tz}"))?;
    let minutes: i64 = m.parse().map_err(|_| format!("unknown time zone {tz}"))?;
    let total = hours.abs() * 60 + minutes;
    Ok(if h.starts_with('-') { -total } else { total } * 60)
}

/// The timestamp getters: `getFullYear`, `getMonth` (0–11), `getDate` (1–31),
/// `getDayOfMonth` (0–30), `getDayOfWeek` (0 = Sunday), `getDayOfYear` (0–365),
/// `getHours`, `getMinutes`, `getSeconds`, `getMilliseconds`.
pub(super) fn timestamp_field(name: &str, nanos: i128, offset: i64) -> i64 {
    let c = civil(nanos, offset);
    match name {
        "getFullYear" => c.year,
        "getMonth" => i64::from(c.month) - 1,
        "getDate" => i64::from(c.day),
        "getDayOfMonth" => i64::from(c.day) - 1,
        "getDayOfWeek" => c.wday,
        "getDayOfYear" => c.yday,
        "getHours" => c.hour,
        "getMinutes" => c.minute,
        "getSeconds" => c.second,
        _ => c.nanos / 1_000_000,
    }
}

/// The duration getters: whole hours, minutes, seconds or milliseconds (truncated).
pub(super) fn duration_field(name: &str, nanos: i64) -> i64 {
    match name {
        "getHours" => nanos / 3_600_000_000_000,
        "getMinutes" => nanos / 60_000_000_000,
        "getSeconds" => nanos / 1_000_000_000,
        _ => nanos / 1_000_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(parse_duration("-1.5s"), Ok(-1_500_000_000));
        assert_eq!(parse_duration("2ns"), Ok(2));
        assert_eq!(parse_duration("1µs1us"), Ok(2000));
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(parse_duration(".5m"), Ok(30_000_000_000));
        assert_eq!(
            parse_duration("1"),
            Err(String::from("time: missing unit in duration \"1\""))
        );
        assert_eq!(
            parse_duration("1d"),
            Err(String::from("time: unknown unit \"d\" in duration \"1d\""))
        );
        assert_eq!(
            parse_duration(""),
            Err(String::from("time: invalid duration \"\""))
        );
        assert!(parse_duration("9999999999h").is_err());
        assert_eq!(duration_text(6_347_000_000_000), "6347s");
        assert_eq!(duration_text(2), "0.000000002s");
        assert_eq!(duration_text(-1_500_000_000), "-1.5s");
    }

    #[test]
    fn timestamps() {
        let t = parse_timestamp("2023-02-03T23:31:20+00:00").unwrap();
        assert_eq!(timestamp_text(t), "2023-02-03T23:31:20Z");
        let t = parse_timestamp("2024-02-29T12:00:00.250-05:30").unwrap();
        assert_eq!(timestamp_text(t), "2024-02-29T17:30:00.25Z");
        assert_eq!(timestamp_field("getDayOfWeek", t, 0), 4);
        assert_eq!(timestamp_field("getDayOfYear", t, 0), 59);
        assert_eq!(timestamp_field("getMilliseconds", t, 0), 250);
        assert_eq!(timestamp_field("getHours", t, -5 * 3600 - 1800), 12);
        assert_eq!(parse_timestamp("1970-01-01T00:00:00Z"), Ok(0));
        assert!(parse_timestamp("2023-02-29T00:00:00Z").is_err());
        assert!(parse_timestamp("2023-01-01 00:00:00Z").is_err());
        assert!(parse_timestamp("0001-01-01T00:00:00Z").is_ok());
        assert!(parse_timestamp("0000-12-31T23:59:59Z").is_err());
        assert_eq!(zone_offset("-08:00"), Ok(-8 * 3600));
        assert!(zone_offset("America/New_York").is_err());
    }
}
