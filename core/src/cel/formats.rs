//! The Kubernetes format library: `format.named(name)`, `format.<name>()` and
//! `<format>.validate(s)`, with apimachinery's validation messages
//! (`k8s.io/apimachinery/pkg/util/validation`) and kube-openapi's `strfmt` checks.

use super::url;
use crate::alloc_prelude::*;

/// The format names, as `format.named()` and `format.<name>()` spell them.
pub(super) const NAMES: [&str; 13] = [
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// The static name of a format, if `name` is one.
pub(super) fn named(name: &str) -> Option<&'static str> {
    NAMES.iter().copied().find(|n| *n == name)
}

const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case \
                                 alphanumeric characters or '-', and must start and end with \
                                 an alphanumeric character";
const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower \
                                     case alphanumeric characters, '-' or '.', and must start \
                                     and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric \
                                 characters or '-', start with an alphabetic character, and \
                                 end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
                                  and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of \
                               alphanumeric characters, '-', '_' or '.', and must start and \
                               end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

/// apimachinery's `RegexError`.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = String::from(msg);
    out.push_str(" (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(e);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(fmt);
    out.push_str("')");
    out
}

fn max_len_error(max: usize) -> String {
    format!("must be no more than {max} characters")
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, or with `alpha_first` `[a-z]([-a-z0-9]*[a-z0-9])?`.
fn is_label(s: &str, alpha_first: bool) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    let first_ok = if alpha_first {
        first.is_ascii_lowercase()
    } else {
        is_lower_alnum(first)
    };
    first_ok && is_lower_alnum(last) && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
}

fn dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !is_label(s, false) {
        errs.push(regex_error(
            DNS1123_LABEL_MSG,
            DNS1123_LABEL_FMT,
            &["my-name", "123-abc"],
        ));
    }
    errs
}

fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !s.split('.').all(|part| is_label(part, false)) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

fn dns1035_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !is_label(s, true) {
        errs.push(regex_error(
            DNS1035_LABEL_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// apimachinery's `maskTrailingDash`, for the `…Prefix` formats (a name prefix may end
/// in `-`).
fn mask_trailing_dash(s: &str) -> String {
    if s.len() > 1 && s.ends_with('-') {
        let mut out = String::from(s.get(..s.len() - 2).unwrap_or(""));
        out.push('a');
        out
    } else {
        String::from(s)
    }
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter().all(|&c| is_name_char(c))
        }
        _ => false,
    }
}

fn qualified_name(s: &str) -> Vec<String> {
    let examples = ["MyName", "my.name", "123-abc"];
    let mut errs = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(String::from("prefix part must be non-empty"));
            } else {
                for e in dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {e}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. \
                 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &examples)
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push(String::from("name part must be non-empty"));
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &examples)
        ));
    }
    errs
}

fn label_value(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !s.is_empty() && !is_qualified_name_part(s) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// strfmt's `uuid`: 8-4-4-4-12 hex digits, or 32 hex digits (any case).
fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() == 32 {
        return b.iter().all(u8::is_ascii_hexdigit);
    }
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// Go's `base64.StdEncoding.DecodeString` succeeds (padding required; `\r` and `\n`
/// ignored).
fn is_base64(s: &str) -> bool {
    let b: Vec<u8> = s.bytes().filter(|c| !matches!(c, b'\r' | b'\n')).collect();
    if !b.len().is_multiple_of(4) {
        return false;
    }
    let pad = b.iter().rev().take_while(|c| **c == b'=').count();
    if pad > 2 {
        return false;
    }
    b[..b.len() - pad]
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/'))
}

fn two_digits(b: &[u8]) -> Option<u32> {
    match b {
        [x, y] if x.is_ascii_digit() && y.is_ascii_digit() => {
            Some(u32::from(x - b'0') * 10 + u32::from(y - b'0'))
        }
        _ => None,
    }
}

/// Go's `time.Parse("2006-01-02", s)` succeeds.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !b[..4].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let year: u32 = s[..4].parse().unwrap_or(0);
    let (Some(month), Some(day)) = (two_digits(&b[5..7]), two_digits(&b[8..10])) else {
        return false;
    };
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// strfmt's `IsDateTime`: a date, `t`, then `hh:mm:ss[.fraction](z|±hh:mm)`
/// (case-insensitive).
fn is_datetime(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let t = time.as_bytes();
    if t.len() < 9 || t[2] != b':' || t[5] != b':' {
        return false;
    }
    let (Some(h), Some(m), Some(sec)) = (
        two_digits(&t[..2]),
        two_digits(&t[3..5]),
        two_digits(&t[6..8]),
    ) else {
        return false;
    };
    let mut rest = &t[8..];
    // `(.[0-9]+)?`: any one character, then digits.
    if rest.len() >= 2
        && rest[1].is_ascii_digit()
        && rest[0] != b'z'
        && rest[0] != b'+'
        && rest[0] != b'-'
    {
        let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        rest = &rest[1 + digits..];
    }
    let zone_ok = rest == b"z"
        || (rest.len() == 6
            && matches!(rest[0], b'+' | b'-')
            && two_digits(&rest[1..3]).is_some()
            && rest[3] == b':'
            && two_digits(&rest[4..6]).is_some());
    zone_ok && h <= 23 && m <= 59 && sec <= 59
}

/// `format.<name>().validate(s)`: the validation errors, empty when `s` is valid.
pub(super) fn validate(name: &str, s: &str) -> Vec<String> {
    let one = |ok: bool, msg: &str| {
        if ok {
            Vec::new()
        } else {
            vec![String::from(msg)]
        }
    };
    match name {
        "dns1123Label" => dns1123_label(s),
        "dns1123Subdomain" => dns1123_subdomain(s),
        "dns1035Label" => dns1035_label(s),
        "qualifiedName" => qualified_name(s),
        "dns1123LabelPrefix" => dns1123_label(&mask_trailing_dash(s)),
        "dns1123SubdomainPrefix" => dns1123_subdomain(&mask_trailing_dash(s)),
        "dns1035LabelPrefix" => dns1035_label(&mask_trailing_dash(s)),
        "labelValue" => label_value(s),
        "uri" => match url::parse_request_uri(s) {
            Ok(()) => Vec::new(),
            Err(e) => vec![e],
        },
        "uuid" => one(is_uuid(s), "does not match the UUID format"),
        "byte" => one(is_base64(s), "invalid base64"),
        "date" => one(is_date(s), "invalid date"),
        _ => one(is_datetime(s), "invalid datetime"),
    }
}
