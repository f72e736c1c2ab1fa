//! Name syntaxes used by Kubernetes objects (DNS labels and subdomains, label names and
//! values, C identifiers, DRA qualified names), checked as upstream's validation does.

use core::fmt;

/// Why a name is invalid.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty where a value is required.
    Empty,
    /// The name (or one part of it) is longer than allowed.
    TooLong {
        /// Which part (`"name"`, `"prefix"`, `"domain"`, ...).
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
            NameError::TooLong { part, max } => write!(f, "{part} must be no more than {max} bytes"),
            NameError::Syntax { expected } => f.write_str(expected),
        }
    }
}

impl core::error::Error for NameError {}

// Stubs: the bodies are filled in with the real rules and tests.

/// A DNS-1123 label: at most 63 bytes of `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
pub fn validate_dns_label(_s: &str) -> Result<(), NameError> {
    Ok(())
}
/// A DNS-1123 subdomain: at most 253 bytes, dot-separated labels.
pub fn validate_dns_subdomain(_s: &str) -> Result<(), NameError> {
    Ok(())
}
/// A label name / taint key: `[prefix/]name`, prefix a DNS subdomain, name at most 63 bytes.
pub fn validate_label_name(_s: &str) -> Result<(), NameError> {
    Ok(())
}
/// A label value: empty, or at most 63 bytes of `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`.
pub fn validate_label_value(_s: &str) -> Result<(), NameError> {
    Ok(())
}
/// A C identifier of at most 32 bytes.
pub fn validate_c_identifier(_s: &str) -> Result<(), NameError> {
    Ok(())
}
/// A DRA `QualifiedName`: a C identifier, or `<DNS subdomain ≤ 63>/<C identifier>`.
pub fn validate_qualified_name(_s: &str) -> Result<(), NameError> {
    Ok(())
}
/// A DRA `FullyQualifiedName`: `<DNS subdomain ≤ 63>/<C identifier>`.
pub fn validate_fully_qualified_name(_s: &str) -> Result<(), NameError> {
    Ok(())
}
/// A DRA driver name: a DNS subdomain of at most 63 bytes.
pub fn validate_driver_name(_s: &str) -> Result<(), NameError> {
    Ok(())
}
/// A resource pool name: at most 253 bytes, DNS subdomains separated by `/`.
pub fn validate_pool_name(_s: &str) -> Result<(), NameError> {
    Ok(())
}
