//! `string.format` and `strings.quote` of the CEL strings extension (version 2, as
//! Kubernetes enables it), and the text of numbers (`string(1.5)`).
//!
//! Clauses: `%s`, `%d`, `%f` / `%.Nf`, `%e`, `%b`, `%o`, `%x`, `%X` and `%%`. As in
//! cel-go with its default `en-US` locale, `%f` groups thousands (`1,234.500000`) and
//! `%e` writes `1.052033 × 10⁰³`; cel-go reads the `N` of `%.Ne` as a width, not a
//! precision, and so does this.

use core::fmt::Write as _;

use super::super::ir::{MapRef, Value};
use super::{Ctx, EvalError, map_entries};
use crate::alloc_prelude::*;
use crate::cel::time;

/// The precision of `%f` / `%e` without one, and of doubles inside lists.
const DEFAULT_PRECISION: usize = 6;

const STRING_CLAUSE: &str = "string clause can only be used on strings, bools, bytes, ints, \
                             doubles, maps, lists, types, durations, and timestamps";
const DECIMAL_CLAUSE: &str = "decimal clause can only be used on integers";
const FIXED_CLAUSE: &str = "fixed-point clause can only be used on doubles";
const SCIENTIFIC_CLAUSE: &str = "scientific clause can only be used on doubles";
const BINARY_CLAUSE: &str = "only integers and bools can be formatted as binary";
const HEX_CLAUSE: &str = "only integers, byte buffers, and strings can be formatted as hex";
const OCTAL_CLAUSE: &str = "octal clause can only be used on integers";

fn wrong_type(clause: &'static str, value: &Value<'_>) -> EvalError {
    EvalError::FormatArgumentType {
        clause,
        found: value.type_name(),
    }
}

fn invalid(reason: impl Into<String>) -> EvalError {
    EvalError::FormatInvalidClause {
        reason: reason.into(),
    }
}

/// `template.format(args)`.
pub(super) fn format(
    template: &str,
    args: &[Value<'_>],
    cx: &Ctx<'_>,
) -> Result<String, EvalError> {
    cx.charge(args.len())?;
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    let mut index = 0;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('%') {
            out.push('%');
            rest = after;
            continue;
        }
        let arg = args
            .get(index)
            .ok_or(EvalError::FormatMissingArgument { index })?;
        if rest.is_empty() {
            return Err(invalid("unexpected end of string"));
        }
        let precision = match rest.strip_prefix('.') {
            Some(after) => {
                let digits = after.bytes().take_while(u8::is_ascii_digit).count();
                if digits == after.len() {
                    return Err(invalid(
                        "error while parsing precision: could not find end of precision \
                         specifier",
                    ));
                }
                rest = &after[digits..];
                Some(
                    after[..digits]
                        .parse::<usize>()
                        .map_err(|_| invalid("error while parsing precision: invalid precision"))?,
                )
            }
            None => None,
        };
        let clause = rest.chars().next().unwrap_or('%');
        rest = &rest[clause.len_utf8()..];
        let text = match clause {
            's' => string_clause(arg, cx)?,
            'd' => decimal(arg)?,
            'f' => fixed_clause(arg, precision.unwrap_or(DEFAULT_PRECISION))?,
            'e' => scientific_clause(arg, precision)?,
            'b' => binary(arg)?,
            'o' => octal(arg)?,
            'x' | 'X' => hex(arg, clause == 'X')?,
            other => {
                return Err(invalid(format!(
                    "unrecognized formatting clause \"{other}\""
                )));
            }
        };
        cx.charge_text(text.len())?;
        out.push_str(&text);
        index += 1;
    }
    out.push_str(rest);
    Ok(out)
}

/// `%s`: any value CEL can print.
fn string_clause(value: &Value<'_>, cx: &Ctx<'_>) -> Result<String, EvalError> {
    match value {
        Value::Str(s) => Ok(String::from(&**s)),
        Value::Null => Ok(String::from("null")),
        Value::Type(t) => Ok(String::from(*t)),
        Value::List(items) => list_text(items, cx),
        Value::Map(m) => map_text(m, cx),
        Value::Int(_)
        | Value::Uint(_)
        | Value::Double(_)
        | Value::Bool(_)
        | Value::Duration(_)
        | Value::Timestamp(_) => scalar_string(value),
        other => Err(wrong_type(STRING_CLAUSE, other)),
    }
}

/// A list as `%s` prints it: `[1, "a", 2.500000]`.
fn list_text(items: &[Value<'_>], cx: &Ctx<'_>) -> Result<String, EvalError> {
    cx.charge(items.len())?;
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&member_text(item, cx)?);
    }
    out.push(']');
    Ok(out)
}

/// A map as `%s` prints it, keys sorted: `{"a":1, "b":2}`.
fn map_text(m: &MapRef<'_>, cx: &Ctx<'_>) -> Result<String, EvalError> {
    let mut pairs = Vec::new();
    for (key, value) in map_entries(m, cx)? {
        let key = match &key {
            Value::Str(s) => go_quote(s),
            Value::Int(_) | Value::Uint(_) | Value::Bool(_) => scalar_string(&key)?,
            other => return Err(wrong_type(STRING_CLAUSE, other)),
        };
        pairs.push((key, member_text(&value, cx)?));
    }
    pairs.sort();
    let mut out = String::from("{");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(k);
        out.push(':');
        out.push_str(v);
    }
    out.push('}');
    Ok(out)
}

/// A list item or map value inside `%s`: strings quoted, doubles with six decimals.
fn member_text(value: &Value<'_>, cx: &Ctx<'_>) -> Result<String, EvalError> {
    Ok(match value {
        Value::Str(s) => go_quote(s),
        Value::Double(d) if d.is_finite() => format!("{d:.DEFAULT_PRECISION$}"),
        Value::Double(d) => go_quote(&special_double(*d)),
        Value::Duration(d) => format!("duration({})", go_quote(&time::duration_text(*d))),
        Value::Timestamp(t) => format!("timestamp({})", go_quote(&time::timestamp_text(*t))),
        other => string_clause(other, cx)?,
    })
}

/// `%d`.
fn decimal(value: &Value<'_>) -> Result<String, EvalError> {
    match value {
        Value::Int(i) => Ok(format!("{i}")),
        Value::Uint(u) => Ok(format!("{u}")),
        other => Err(wrong_type(DECIMAL_CLAUSE, other)),
    }
}

/// The double a `%f` / `%e` argument stands for: a double, or one of the strings
/// `"NaN"`, `"Infinity"`, `"-Infinity"`.
fn float_arg(value: &Value<'_>, clause: &'static str) -> Result<f64, EvalError> {
    match value {
        Value::Double(d) => Ok(*d),
        Value::Str(s) if &**s == "NaN" => Ok(f64::NAN),
        Value::Str(s) if &**s == "Infinity" => Ok(f64::INFINITY),
        Value::Str(s) if &**s == "-Infinity" => Ok(f64::NEG_INFINITY),
        other => Err(wrong_type(clause, other)),
    }
}

/// NaN and the infinities as the `en-US` number printer writes them.
fn localized_special(d: f64) -> Option<String> {
    if d.is_nan() {
        Some(String::from("NaN"))
    } else if d.is_infinite() {
        Some(String::from(if d > 0.0 { "∞" } else { "-∞" }))
    } else {
        None
    }
}

/// `%f` / `%.Nf`: fixed point, thousands grouped.
fn fixed_clause(value: &Value<'_>, precision: usize) -> Result<String, EvalError> {
    let d = float_arg(value, FIXED_CLAUSE)?;
    if let Some(special) = localized_special(d) {
        return Ok(special);
    }
    let plain = format!("{:.*}", precision.min(64), d.abs());
    let (int_part, frac) = match plain.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (plain.as_str(), None),
    };
    let mut out = String::new();
    if d.is_sign_negative() && plain.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        out.push('-');
    }
    let digits = int_part.len();
    for (i, c) in int_part.chars().enumerate() {
        if i > 0 && (digits - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(frac) = frac {
        out.push('.');
        out.push_str(frac);
    }
    Ok(out)
}

/// `%e`: `1.052033 × 10⁰³` (six decimals; a given `N` pads to width `N`, as cel-go).
fn scientific_clause(value: &Value<'_>, width: Option<usize>) -> Result<String, EvalError> {
    let d = float_arg(value, SCIENTIFIC_CLAUSE)?;
    let text = if let Some(special) = localized_special(d) {
        special
    } else {
        let plain = format!("{d:.DEFAULT_PRECISION$e}");
        let (mantissa, exp) = plain.split_once('e').unwrap_or((&plain, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let mut out = format!("{mantissa}\u{202f}×\u{202f}10");
        if exp < 0 {
            out.push('⁻');
        }
        let digits = format!("{:02}", exp.unsigned_abs());
        for c in digits.chars() {
            out.push(superscript(c));
        }
        out
    };
    let len = text.chars().count();
    let pad = width.unwrap_or(0).saturating_sub(len).min(1024);
    Ok(format!("{}{text}", " ".repeat(pad)))
}

fn superscript(digit: char) -> char {
    match digit {
        '0' => '⁰',
        '1' => '¹',
        '2' => '²',
        '3' => '³',
        '4' => '⁴',
        '5' => '⁵',
        '6' => '⁶',
        '7' => '⁷',
        '8' => '⁸',
        _ => '⁹',
    }
}

/// A signed integer in base 2, 8 or 16 with a leading `-` for negatives (as Go).
fn signed_radix(i: i64, radix: u32, upper: bool) -> String {
    let magnitude = i.unsigned_abs();
    let digits = match (radix, upper) {
        (2, _) => format!("{magnitude:b}"),
        (8, _) => format!("{magnitude:o}"),
        (_, false) => format!("{magnitude:x}"),
        (_, true) => format!("{magnitude:X}"),
    };
    if i < 0 { format!("-{digits}") } else { digits }
}

/// `%b`.
fn binary(value: &Value<'_>) -> Result<String, EvalError> {
    match value {
        Value::Int(i) => Ok(signed_radix(*i, 2, false)),
        Value::Uint(u) => Ok(format!("{u:b}")),
        Value::Bool(b) => Ok(String::from(if *b { "1" } else { "0" })),
        other => Err(wrong_type(BINARY_CLAUSE, other)),
    }
}

/// `%o`.
fn octal(value: &Value<'_>) -> Result<String, EvalError> {
    match value {
        Value::Int(i) => Ok(signed_radix(*i, 8, false)),
        Value::Uint(u) => Ok(format!("{u:o}")),
        other => Err(wrong_type(OCTAL_CLAUSE, other)),
    }
}

/// `%x` / `%X`: integers, or a string's UTF-8 bytes.
fn hex(value: &Value<'_>, upper: bool) -> Result<String, EvalError> {
    match value {
        Value::Int(i) => Ok(signed_radix(*i, 16, upper)),
        Value::Uint(u) if upper => Ok(format!("{u:X}")),
        Value::Uint(u) => Ok(format!("{u:x}")),
        Value::Str(s) => {
            let mut out = String::with_capacity(s.len() * 2);
            for b in s.bytes() {
                if upper {
                    let _ = write!(out, "{b:02X}");
                } else {
                    let _ = write!(out, "{b:02x}");
                }
            }
            Ok(out)
        }
        other => Err(wrong_type(HEX_CLAUSE, other)),
    }
}

/// `strings.quote(s)`: `s` in double quotes with `\a \b \f \n \r \t \v \\ \"` escaped,
/// everything else kept.
pub(super) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match escape(c) {
            Some(e) => out.push_str(e),
            None => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The escape both quotings share: `\a \b \f \n \r \t \v \\ \"`.
fn escape(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{7}' => "\\a",
        '\u{8}' => "\\b",
        '\u{c}' => "\\f",
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        '\u{b}' => "\\v",
        '\\' => "\\\\",
        '"' => "\\\"",
        _ => return None,
    })
}

/// Go's `%q` of a string (strings inside lists and maps of `%s`).
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if let Some(e) = escape(c) {
            out.push_str(e);
            continue;
        }
        match c {
            c if u32::from(c) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

/// NaN and the infinities as Go's `strconv.FormatFloat` writes them.
fn special_double(d: f64) -> String {
    String::from(if d.is_nan() {
        "NaN"
    } else if d > 0.0 {
        "+Inf"
    } else {
        "-Inf"
    })
}

/// The text `string(x)` gives for a scalar: Go's shortest `%g` for doubles (`2.5`,
/// `1e+06`, `2e-09`), decimal for integers, `true` / `false`, and the canonical text of
/// IP addresses and CIDRs.
pub(super) fn scalar_string(value: &Value<'_>) -> Result<String, EvalError> {
    match value {
        Value::Int(i) => Ok(format!("{i}")),
        Value::Uint(u) => Ok(format!("{u}")),
        Value::Bool(b) => Ok(format!("{b}")),
        Value::Double(d) => Ok(double_text(*d)),
        Value::Ip(ip) => Ok(format!("{ip}")),
        Value::Cidr(c) => Ok(format!("{c}")),
        Value::Duration(d) => Ok(time::duration_text(*d)),
        Value::Timestamp(t) => Ok(time::timestamp_text(*t)),
        other => Err(super::overload("string", &[other])),
    }
}

/// Go's `strconv.FormatFloat(d, 'g', -1, 64)`: the shortest digits that round-trip,
/// in exponent form when the exponent is below -4 or at least 6 (exponent with a sign
/// and at least two digits).
fn double_text(d: f64) -> String {
    if !d.is_finite() {
        return special_double(d);
    }
    let sign = if d.is_sign_negative() { "-" } else { "" };
    let shortest = format!("{:e}", d.abs());
    let (mantissa, exp) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if !(-4..6).contains(&exp) {
        let exp_sign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{mantissa}e{exp_sign}{:02}", exp.unsigned_abs());
    }
    let point = exp + 1; // digits before the decimal point
    let n = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let body = if point <= 0 {
        let zeros = usize::try_from(-point).unwrap_or(0);
        format!("0.{}{digits}", "0".repeat(zeros))
    } else if point >= n {
        let zeros = usize::try_from(point - n).unwrap_or(0);
        format!("{digits}{}", "0".repeat(zeros))
    } else {
        let split = usize::try_from(point).unwrap_or(0);
        format!("{}.{}", &digits[..split], &digits[split..])
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_go_shortest_g() {
        let cases = [
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (2.5, "2.5"),
            (100_000.0, "100000"),
            (1e6, "1e+06"),
            (123_456_789.0, "1.23456789e+08"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (2e-9, "2e-09"),
            (1e21, "1e+21"),
            (-1.5e300, "-1.5e+300"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
        ];
        for (d, want) in cases {
            assert_eq!(double_text(d), want, "{d}");
        }
    }

    #[test]
    fn fixed_and_scientific_clauses() {
        let f = |d: f64, p: usize| fixed_clause(&Value::Double(d), p).unwrap();
        assert_eq!(f(1_234_567.891, 2), "1,234,567.89");
        assert_eq!(f(-1234.5, 0), "-1,234");
        assert_eq!(f(-0.0001, 2), "0.00");
        assert_eq!(f(999.999, 2), "1,000.00");
        let e = |d: f64, w: Option<usize>| scientific_clause(&Value::Double(d), w).unwrap();
        assert_eq!(e(-0.00012, None), "-1.200000\u{202f}×\u{202f}10⁻⁰⁴");
        assert_eq!(e(1e100, None), "1.000000\u{202f}×\u{202f}10¹⁰⁰");
        assert_eq!(e(1.0, Some(20)), "     1.000000\u{202f}×\u{202f}10⁰⁰");
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("a\"b\\c\n\u{7}é"), "\"a\\\"b\\\\c\\n\\aé\"");
        assert_eq!(go_quote("a\u{1}b"), "\"a\\x01b\"");
    }
}
