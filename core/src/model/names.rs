//! Name syntaxes used by Kubernetes objects (DNS labels and subdomains, label names and
//! values, C identifiers, DRA qualified names), checked as upstream's validation does.
//!
//! Every check is a hand-written byte scan equivalent to upstream's regular expression
//! (Go's `regexp`, anchored with `^...$`, where `$` only matches at the very end). Lengths
//! are in bytes, as Go's `len` counts them. When a name breaks several rules, the error
//! for the first rule upstream checks is returned (length before syntax, prefix before name).

use core::fmt;

/// Maximum length of a DNS-1123 label (RFC 1123).
pub const DNS_LABEL_MAX_LEN: usize = 63;
/// Maximum length of a DNS-1123 subdomain (RFC 1123).
pub const DNS_SUBDOMAIN_MAX_LEN: usize = 253;
/// Maximum length of the name part of a label name (the part after the optional `prefix/`).
pub const LABEL_NAME_MAX_LEN: usize = 63;
/// Maximum length of a label value.
pub const LABEL_VALUE_MAX_LEN: usize = 63;
/// Maximum length of the identifier of a DRA qualified name (`DeviceMaxIDLength`).
pub const C_IDENTIFIER_MAX_LEN: usize = 32;
/// Maximum length of a DRA driver name, and of the domain of a qualified name
/// (`DeviceMaxDomainLength`).
pub const DRIVER_NAME_MAX_LEN: usize = 63;
/// Maximum length of a resource pool name (`PoolNameMaxLength`).
pub const POOL_NAME_MAX_LEN: usize = 253;
/// Maximum length of a DRA qualified name: domain, `/`, identifier.
pub const QUALIFIED_NAME_MAX_LEN: usize = DRIVER_NAME_MAX_LEN + 1 + C_IDENTIFIER_MAX_LEN;

/// Why a name is invalid.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty where a value is required.
    Empty,
    /// The name (or one part of it) is longer than allowed.
    TooLong {
        /// Which part, as printed before "must be no more than": `"DNS label"`,
        /// `"prefix part"`, `"name part"`, `"domain"`, `"identifier"`, `"pool name"`, ...
        part: &'static str,
        /// The limit in bytes.
        max: usize,
    },
    /// The name does not match the syntax.
    Syntax {
        /// A description of the expected syntax, as upstream words it.
        expected: &'static str,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Empty => f.write_str("must not be empty"),
            NameError::TooLong { part, max } => {
                write!(f, "{part} must be no more than {max} bytes")
            }
            NameError::Syntax { expected } => f.write_str(expected),
        }
    }
}

impl core::error::Error for NameError {}

// Messages, worded as upstream's (apimachinery `validate/content` and DRA validation).
const DNS_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS_LABEL_DOTS_MSG: &str = "must not contain dots";
const DNS_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS_SUBDOMAIN_CASELESS_MSG: &str = "an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const PREFIX_EMPTY_MSG: &str = "prefix part must be non-empty";
const PREFIX_SUBDOMAIN_MSG: &str = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const NAME_EMPTY_MSG: &str = "name part must be non-empty";
const NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_SLASHES_MSG: &str = "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const C_IDENTIFIER_MSG: &str = "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'";
const DOMAIN_EMPTY_MSG: &str = "the domain must not be empty";
const ID_EMPTY_MSG: &str = "the name must not be empty";
const QUALIFIED_SLASHES_MSG: &str =
    "a qualified name must be a C identifier, optionally prefixed by a domain and a single '/'";
const FULLY_QUALIFIED_MSG: &str =
    "a fully qualified name must be a domain and a name separated by a slash";
const EXTENDED_NO_DOMAIN_MSG: &str =
    "an extended resource name must have a domain prefix (e.g. 'example.com/my-resource')";
const EXTENDED_NATIVE_MSG: &str =
    "an extended resource name must not be in the kubernetes.io domain";
const EXTENDED_REQUESTS_MSG: &str = "an extended resource name must not start with 'requests.'";
const POOL_PART_MSG: &str = "each '/'-separated part of a pool name must be a lowercase RFC 1123 subdomain: lower case alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character";

const fn syntax(expected: &'static str) -> NameError {
    NameError::Syntax { expected }
}

fn too_long(s: &str, part: &'static str, max: usize) -> Result<(), NameError> {
    if s.len() > max {
        Err(NameError::TooLong { part, max })
    } else {
        Ok(())
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, or with `caseless` the same over `[A-Za-z0-9]`.
fn is_dns_label_syntax(s: &str, caseless: bool) -> bool {
    let alnum = |b: u8| {
        b.is_ascii_digit() || b.is_ascii_lowercase() || (caseless && b.is_ascii_uppercase())
    };
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&first), Some(&last)) => {
            alnum(first) && alnum(last) && bytes.iter().all(|&b| alnum(b) || b == b'-')
        }
        _ => false,
    }
}

/// DNS labels separated by single dots (no limit on each label's length: upstream's
/// regex has none, only the 253-byte total).
fn is_dns_subdomain_syntax(s: &str, caseless: bool) -> bool {
    s.split('.')
        .all(|label| is_dns_label_syntax(label, caseless))
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`: the name part of a label name and a
/// non-empty label value.
fn is_label_token(s: &str) -> bool {
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
fn is_c_identifier_syntax(s: &str) -> bool {
    let bytes = s.as_bytes();
    match bytes.first() {
        Some(&first) => {
            (first.is_ascii_alphabetic() || first == b'_')
                && bytes
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b == b'_')
        }
        None => false,
    }
}

/// `IsDNS1123Subdomain` with an optional caseless syntax, without the empty check.
fn check_subdomain(
    s: &str,
    part: &'static str,
    max: usize,
    caseless: bool,
    msg: &'static str,
) -> Result<(), NameError> {
    too_long(s, part, max)?;
    if is_dns_subdomain_syntax(s, caseless) {
        Ok(())
    } else {
        Err(syntax(msg))
    }
}

/// A DNS-1123 label: at most 63 bytes of `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
///
/// Used for device, request and counter names. A valid subdomain with dots gets the
/// "must not contain dots" message, as upstream.
pub fn validate_dns_label(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    too_long(s, "DNS label", DNS_LABEL_MAX_LEN)?;
    if is_dns_label_syntax(s, false) {
        Ok(())
    } else if is_dns_subdomain_syntax(s, false) {
        Err(syntax(DNS_LABEL_DOTS_MSG))
    } else {
        Err(syntax(DNS_LABEL_MSG))
    }
}

/// A DNS-1123 subdomain: at most 253 bytes, lowercase DNS labels separated by dots
/// (`[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`).
///
/// Used for object names (nodes, device classes, slices, claims) and label-name prefixes.
pub fn validate_dns_subdomain(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    check_subdomain(
        s,
        "DNS subdomain",
        DNS_SUBDOMAIN_MAX_LEN,
        false,
        DNS_SUBDOMAIN_MSG,
    )
}

/// A label name / taint key (upstream `IsQualifiedName`, a.k.a. `IsLabelKey`):
/// `[prefix/]name`, where the optional prefix is a lowercase DNS subdomain of at most
/// 253 bytes and must not be empty when the `/` is present, and the name is at most 63
/// bytes of `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`. At most one `/`.
pub fn validate_label_name(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    let name = match s.split_once('/') {
        None => s,
        Some((_, rest)) if rest.contains('/') => return Err(syntax(LABEL_KEY_SLASHES_MSG)),
        Some((prefix, name)) => {
            if prefix.is_empty() {
                return Err(syntax(PREFIX_EMPTY_MSG));
            }
            check_subdomain(
                prefix,
                "prefix part",
                DNS_SUBDOMAIN_MAX_LEN,
                false,
                PREFIX_SUBDOMAIN_MSG,
            )?;
            name
        }
    };
    if name.is_empty() {
        return Err(syntax(NAME_EMPTY_MSG));
    }
    too_long(name, "name part", LABEL_NAME_MAX_LEN)?;
    if is_label_token(name) {
        Ok(())
    } else {
        Err(syntax(NAME_PART_MSG))
    }
}

/// A label value: empty, or at most 63 bytes of `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`.
pub fn validate_label_value(s: &str) -> Result<(), NameError> {
    too_long(s, "label value", LABEL_VALUE_MAX_LEN)?;
    if s.is_empty() || is_label_token(s) {
        Ok(())
    } else {
        Err(syntax(LABEL_VALUE_MSG))
    }
}

/// A C identifier of at most 32 bytes: `[A-Za-z_][A-Za-z0-9_]*` (the identifier part of a
/// DRA attribute or capacity name; the 32-byte limit is DRA's `DeviceMaxIDLength`).
pub fn validate_c_identifier(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    too_long(s, "C identifier", C_IDENTIFIER_MAX_LEN)?;
    if is_c_identifier_syntax(s) {
        Ok(())
    } else {
        Err(syntax(C_IDENTIFIER_MSG))
    }
}

/// The identifier part of a qualified name (same rule as [`validate_c_identifier`], with
/// the length error naming the part).
fn check_identifier(id: &str) -> Result<(), NameError> {
    if id.is_empty() {
        return Err(syntax(ID_EMPTY_MSG));
    }
    too_long(id, "identifier", C_IDENTIFIER_MAX_LEN)?;
    if is_c_identifier_syntax(id) {
        Ok(())
    } else {
        Err(syntax(C_IDENTIFIER_MSG))
    }
}

/// The domain part of a qualified name: a driver name (see [`validate_driver_name`]).
fn check_domain(domain: &str) -> Result<(), NameError> {
    if domain.is_empty() {
        return Err(syntax(DOMAIN_EMPTY_MSG));
    }
    check_subdomain(
        domain,
        "domain",
        DRIVER_NAME_MAX_LEN,
        true,
        DNS_SUBDOMAIN_CASELESS_MSG,
    )
}

/// A DRA `QualifiedName` (device attribute and capacity names): a C identifier of at most
/// 32 bytes, or `<domain>/<C identifier>` where the domain follows the driver-name rule
/// ([`validate_driver_name`]: a DNS subdomain of at most 63 bytes).
///
/// Names with more than one `/` are rejected (upstream currently lets them through by
/// accident, see the TODO in `validateQualifiedName`).
pub fn validate_qualified_name(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    match split_qualified_name(s) {
        (None, id) => validate_c_identifier(id),
        (Some(_), id) if id.contains('/') => Err(syntax(QUALIFIED_SLASHES_MSG)),
        (Some(domain), id) => {
            check_domain(domain)?;
            check_identifier(id)
        }
    }
}

/// A DRA `FullyQualifiedName` (e.g. `matchAttribute` in constraints): a
/// [qualified name](validate_qualified_name) whose domain is present.
pub fn validate_fully_qualified_name(s: &str) -> Result<(), NameError> {
    validate_qualified_name(s)?;
    if s.contains('/') {
        Ok(())
    } else {
        Err(syntax(FULLY_QUALIFIED_MSG))
    }
}

/// The quota prefix upstream puts before an extended resource name
/// (`DefaultResourceRequestsPrefix`).
const REQUESTS_PREFIX: &str = "requests.";

/// An extended resource name (upstream `IsExtendedResourceName`, used for a
/// DeviceClass's `extendedResourceName`):
///
/// 1. it has a `/` and does not contain `kubernetes.io/` (otherwise it is a native
///    resource: `gpu`, `kubernetes.io/gpu`, `foo.kubernetes.io/gpu`);
/// 2. it does not start with `requests.` (the quota convention);
/// 3. `requests.` + the name is a [label name](validate_label_name): at most one `/`,
///    the prefix a lowercase DNS subdomain (at most 253 bytes *with* `requests.`, so 244
///    without), the name part at most 63 bytes of `[A-Za-z0-9][-A-Za-z0-9_.]*`.
pub fn validate_extended_resource_name(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    let Some((prefix, name)) = s.split_once('/') else {
        return Err(syntax(EXTENDED_NO_DOMAIN_MSG));
    };
    if s.contains("kubernetes.io/") {
        return Err(syntax(EXTENDED_NATIVE_MSG));
    }
    if s.starts_with(REQUESTS_PREFIX) {
        return Err(syntax(EXTENDED_REQUESTS_MSG));
    }
    // `validate_label_name(&format!("requests.{s}"))` without allocating: the prefix
    // gains `requests.` (never empty then, and a valid subdomain exactly when `prefix`
    // is one), the name part is unchanged.
    if name.contains('/') {
        return Err(syntax(LABEL_KEY_SLASHES_MSG));
    }
    too_long(
        prefix,
        "prefix part",
        DNS_SUBDOMAIN_MAX_LEN - REQUESTS_PREFIX.len(),
    )?;
    if !is_dns_subdomain_syntax(prefix, false) {
        return Err(syntax(PREFIX_SUBDOMAIN_MSG));
    }
    if name.is_empty() {
        return Err(syntax(NAME_EMPTY_MSG));
    }
    too_long(name, "name part", LABEL_NAME_MAX_LEN)?;
    if is_label_token(name) {
        Ok(())
    } else {
        Err(syntax(NAME_PART_MSG))
    }
}

/// A DRA driver name: a DNS subdomain of at most 63 bytes.
///
/// Like upstream (which reuses the CSI driver name rule and lowercases before checking),
/// upper-case letters are accepted: `GPU.Example.com` is a valid driver name. Names are
/// still compared byte for byte everywhere else.
pub fn validate_driver_name(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    check_subdomain(
        s,
        "driver name",
        DRIVER_NAME_MAX_LEN,
        true,
        DNS_SUBDOMAIN_CASELESS_MSG,
    )
}

/// A resource pool name: at most 253 bytes, one or more lowercase DNS subdomains separated
/// by `/` (so no empty parts, no leading or trailing `/`).
pub fn validate_pool_name(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    too_long(s, "pool name", POOL_NAME_MAX_LEN)?;
    if s.split('/')
        .all(|part| is_dns_subdomain_syntax(part, false))
    {
        Ok(())
    } else {
        Err(syntax(POOL_PART_MSG))
    }
}

/// Splits a DRA qualified name at its first `/` into `(domain, identifier)`.
///
/// `"gpu.example.com/model"` gives `(Some("gpu.example.com"), "model")`; `"model"` gives
/// `(None, "model")`. The name is not validated.
pub fn split_qualified_name(name: &str) -> (Option<&str>, &str) {
    match name.split_once('/') {
        Some((domain, id)) => (Some(domain), id),
        None => (None, name),
    }
}

/// The `(domain, identifier)` a DRA attribute or capacity name stands for.
///
/// In a ResourceSlice, an attribute or capacity name without a domain belongs to the
/// driver's own domain: for driver `gpu.example.com`, `model` and `gpu.example.com/model`
/// name the same attribute (that is how CEL's `device.attributes["gpu.example.com"].model`
/// and `matchAttribute: gpu.example.com/model` find it). Pass the driver name as
/// `default_domain`. The name is not validated.
pub fn qualify<'a>(name: &'a str, default_domain: &'a str) -> (&'a str, &'a str) {
    match split_qualified_name(name) {
        (Some(domain), id) => (domain, id),
        (None, id) => (default_domain, id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc_prelude::*;

    fn rep(c: char, n: usize) -> String {
        core::iter::repeat_n(c, n).collect()
    }

    /// Checks each accepted name passes and each rejected name fails, naming the culprit.
    fn table(f: fn(&str) -> Result<(), NameError>, accept: &[&str], reject: &[&str]) {
        for s in accept {
            assert_eq!(f(s), Ok(()), "should accept {s:?}");
        }
        for s in reject {
            assert!(f(s).is_err(), "should reject {s:?}");
        }
    }

    #[test]
    fn dns_label() {
        let l63 = rep('a', 63);
        let l64 = rep('a', 64);
        table(
            validate_dns_label,
            &[
                "a", "0", "abc", "a-b", "a--b", "1-2", "123-abc", "my-name", "a1", "9z", &l63,
            ],
            &[
                "", "-", "-a", "a-", "A", "aBc", "a_b", "a.b", "a b", "a/b", "ä", "a\n", &l64, "*",
                ".a",
            ],
        );
        assert_eq!(validate_dns_label(""), Err(NameError::Empty));
        assert_eq!(
            validate_dns_label(&l64),
            Err(NameError::TooLong {
                part: "DNS label",
                max: 63
            })
        );
        assert_eq!(
            validate_dns_label("a.b"),
            Err(NameError::Syntax {
                expected: "must not contain dots"
            })
        );
        assert_eq!(
            validate_dns_label("A").unwrap_err().to_string(),
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
        );
    }

    #[test]
    fn dns_subdomain() {
        // 4 × 63 + 3 dots = 255; build exact 253 and 254 byte names.
        let s253 = format!(
            "{}.{}.{}.{}",
            rep('a', 63),
            rep('b', 63),
            rep('c', 63),
            rep('d', 61)
        );
        let s254 = format!(
            "{}.{}.{}.{}",
            rep('a', 63),
            rep('b', 63),
            rep('c', 63),
            rep('d', 62)
        );
        assert_eq!((s253.len(), s254.len()), (253, 254));
        // Upstream's regex puts no limit on one label within a subdomain.
        let long_label = rep('x', 100);
        table(
            validate_dns_subdomain,
            &[
                "a",
                "example.com",
                "a.b.c",
                "a-b.c-d",
                "0.0",
                "1.2.3.4",
                &s253,
                &long_label,
            ],
            &[
                "", ".", "a.", ".a", "a..b", "-a.b", "a-.b", "a.-b", "A.b", "a_b.c", "a/b", "a b",
                "*.a", &s254,
            ],
        );
        assert_eq!(
            validate_dns_subdomain(&s254),
            Err(NameError::TooLong {
                part: "DNS subdomain",
                max: 253
            })
        );
    }

    #[test]
    fn label_name() {
        let n63 = rep('n', 63);
        let n64 = rep('n', 64);
        let p253 = format!(
            "{}.{}.{}.{}",
            rep('a', 63),
            rep('b', 63),
            rep('c', 63),
            rep('d', 61)
        );
        let p254 = format!("{p253}e");
        let with_p253 = format!("{p253}/{n63}");
        let with_p254 = format!("{p254}/n");
        let with_n64 = format!("example.com/{n64}");
        table(
            validate_label_name,
            &[
                "a",
                "A",
                "MyName",
                "my.name",
                "123-abc",
                "a_b",
                "a-b.c_d",
                "a..b",
                "Z9",
                "example.com/MyName",
                "k8s.io/a",
                "nvidia.com/gpu.product",
                &n63,
                &with_p253,
            ],
            &[
                "",
                "/",
                "/a",
                "a/",
                "a/b/c",
                "-a",
                "a-",
                "_a",
                "a_",
                ".a",
                "a.",
                "a b",
                "a:b",
                "Example.com/a",
                "ex_ample.com/a",
                "-ex.com/a",
                "ex..com/a",
                "ex.com/-a",
                "ex.com/a b",
                &n64,
                &with_p254,
                &with_n64,
            ],
        );
        assert_eq!(validate_label_name(""), Err(NameError::Empty));
        assert_eq!(
            validate_label_name("/a"),
            Err(NameError::Syntax {
                expected: "prefix part must be non-empty"
            })
        );
        assert_eq!(
            validate_label_name("a/"),
            Err(NameError::Syntax {
                expected: "name part must be non-empty"
            })
        );
        assert_eq!(
            validate_label_name(&with_p254),
            Err(NameError::TooLong {
                part: "prefix part",
                max: 253
            })
        );
        assert_eq!(
            validate_label_name(&with_n64).unwrap_err().to_string(),
            "name part must be no more than 63 bytes"
        );
        assert!(
            validate_label_name("Example.com/a")
                .unwrap_err()
                .to_string()
                .starts_with("prefix part a lowercase RFC 1123 subdomain")
        );
    }

    #[test]
    fn label_value() {
        let v63 = rep('v', 63);
        let v64 = rep('v', 64);
        table(
            validate_label_value,
            &[
                "", "a", "A", "MyValue", "my_value", "12345", "a.b-c_d", "a..b", "0", &v63,
            ],
            &[
                "-", "_", ".", "-a", "a-", "_a", "a_", ".a", "a.", "a b", "a/b", "a:b", "é", &v64,
            ],
        );
        assert_eq!(
            validate_label_value(&v64),
            Err(NameError::TooLong {
                part: "label value",
                max: 63
            })
        );
    }

    #[test]
    fn c_identifier() {
        let i32_ = rep('i', 32);
        let i33 = rep('i', 33);
        table(
            validate_c_identifier,
            &[
                "a", "_", "_a", "A", "my_name", "MY_NAME", "MyName", "a1", "__9", &i32_,
            ],
            &["", "1", "1a", "a-b", "a.b", "a/b", "a b", "é", "a$", &i33],
        );
        assert_eq!(
            validate_c_identifier(&i33),
            Err(NameError::TooLong {
                part: "C identifier",
                max: 32
            })
        );
    }

    #[test]
    fn qualified_name() {
        let d63 = format!("{}.com", rep('d', 59));
        let d64 = format!("{}.com", rep('d', 60));
        let i32_ = rep('i', 32);
        let i33 = rep('i', 33);
        let max = format!("{d63}/{i32_}");
        assert_eq!(max.len(), QUALIFIED_NAME_MAX_LEN);
        let long_domain = format!("{d64}/a");
        let long_id = format!("ex.com/{i33}");
        table(
            validate_qualified_name,
            &[
                "model",
                "_x",
                "gpu.example.com/model",
                "GPU.Example.com/model",
                "a/b",
                "a-b.c/_",
                &i32_,
                &max,
            ],
            &[
                "",
                "/",
                "/a",
                "a/",
                "a/b/c",
                "1model",
                "mo-del",
                "mo.del",
                "ex.com/1a",
                "ex.com/a-b",
                "-ex.com/a",
                "ex_.com/a",
                "ex..com/a",
                &i33,
                &long_domain,
                &long_id,
            ],
        );
        assert_eq!(
            validate_qualified_name("/a"),
            Err(NameError::Syntax {
                expected: "the domain must not be empty"
            })
        );
        assert_eq!(
            validate_qualified_name("a/"),
            Err(NameError::Syntax {
                expected: "the name must not be empty"
            })
        );
        assert_eq!(
            validate_qualified_name(&long_domain),
            Err(NameError::TooLong {
                part: "domain",
                max: 63
            })
        );
        assert_eq!(
            validate_qualified_name(&long_id),
            Err(NameError::TooLong {
                part: "identifier",
                max: 32
            })
        );
    }

    #[test]
    fn fully_qualified_name() {
        table(
            validate_fully_qualified_name,
            &["gpu.example.com/model", "a/b", "Ex.com/_"],
            &["", "model", "/model", "a/", "a/b/c", "ex.com/1"],
        );
        assert_eq!(
            validate_fully_qualified_name("model")
                .unwrap_err()
                .to_string(),
            "a fully qualified name must be a domain and a name separated by a slash"
        );
    }

    #[test]
    fn extended_resource_name() {
        let p244 = format!("{}.com", rep('p', 240));
        let p245 = format!("{}.com", rep('p', 241));
        let n63 = rep('n', 63);
        let n64 = rep('n', 64);
        let max = format!("{p244}/{n63}");
        // Same verdict as the definition: `requests.` + name is a label name.
        for ok in [
            "example.com/gpu",
            "example.com/GPU_x.1-a",
            "a/b",
            "kubernetes.iox/gpu",
            "requests/gpu",
            "requestsx.example.com/gpu",
            &max,
        ] {
            assert_eq!(validate_extended_resource_name(ok), Ok(()), "{ok}");
            assert_eq!(validate_label_name(&format!("requests.{ok}")), Ok(()));
        }
        for bad in [
            "",
            "gpu",
            "kubernetes.io/gpu",
            "foo.kubernetes.io/gpu",
            "example.com/kubernetes.io/gpu",
            "requests.example.com/gpu",
            "/gpu",
            "example.com/",
            "example.com/a/b",
            "Example.com/gpu",
            "-example.com/gpu",
            "example.com/-gpu",
            "example.com/g pu",
            &format!("{p245}/a"),
            &format!("example.com/{n64}"),
        ] {
            assert!(validate_extended_resource_name(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            validate_extended_resource_name(&format!("{p245}/a")),
            Err(NameError::TooLong {
                part: "prefix part",
                max: 244
            })
        );
        assert_eq!(
            validate_extended_resource_name("gpu"),
            Err(syntax(EXTENDED_NO_DOMAIN_MSG))
        );
        assert_eq!(
            validate_extended_resource_name("kubernetes.io/gpu"),
            Err(syntax(EXTENDED_NATIVE_MSG))
        );
        assert_eq!(
            validate_extended_resource_name("requests.example.com/gpu"),
            Err(syntax(EXTENDED_REQUESTS_MSG))
        );
    }

    #[test]
    fn driver_name() {
        let d63 = format!("{}.com", rep('d', 59));
        let d64 = format!("{}.com", rep('d', 60));
        table(
            validate_driver_name,
            &[
                "gpu.example.com",
                "a",
                "dra-driver",
                "GPU.Example.COM",
                "a1.b2",
                &d63,
            ],
            &[
                "",
                "a_b",
                "a/b",
                ".a",
                "a.",
                "a..b",
                "-a",
                "a-",
                "a b",
                "gpu.example.com/x",
                &d64,
            ],
        );
        assert_eq!(
            validate_driver_name(&d64),
            Err(NameError::TooLong {
                part: "driver name",
                max: 63
            })
        );
    }

    #[test]
    fn pool_name() {
        let s253 = format!(
            "{}.{}.{}.{}",
            rep('a', 63),
            rep('b', 63),
            rep('c', 63),
            rep('d', 61)
        );
        let s254 = format!("{s253}x");
        let slashed253 = format!("{}/{}", rep('a', 126), rep('b', 126));
        assert_eq!(slashed253.len(), 253);
        table(
            validate_pool_name,
            &[
                "node-1",
                "a/b",
                "a.b/c.d/e",
                "worker-7.gpu/pool-0",
                &s253,
                &slashed253,
            ],
            &[
                "", "/", "a/", "/a", "a//b", "A", "a_b", "a/B", "a/.b", "a b", &s254,
            ],
        );
        assert_eq!(
            validate_pool_name(&s254),
            Err(NameError::TooLong {
                part: "pool name",
                max: 253
            })
        );
    }

    #[test]
    fn split_and_qualify() {
        assert_eq!(split_qualified_name("model"), (None, "model"));
        assert_eq!(
            split_qualified_name("gpu.example.com/model"),
            (Some("gpu.example.com"), "model")
        );
        assert_eq!(split_qualified_name("/x"), (Some(""), "x"));
        assert_eq!(
            qualify("model", "gpu.example.com"),
            ("gpu.example.com", "model")
        );
        assert_eq!(
            qualify("other.io/model", "gpu.example.com"),
            ("other.io", "model")
        );
    }
}
