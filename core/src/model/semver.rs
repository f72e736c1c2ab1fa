//! Semantic versions, parsed strictly per [semver.org 2.0.0](https://semver.org/spec/v2.0.0.html)
//! (what DRA accepts in a device's `version` attribute).

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::str::FromStr;

use crate::alloc_prelude::*;

/// The longest version string DRA accepts in a device attribute
/// (`DeviceAttributeMaxValueLength`).
///
/// [`Version::parse`] does not enforce it: semver itself has no limit, and the limit
/// belongs to the attribute, so callers that validate attributes check it.
pub const MAX_VERSION_LEN: usize = 64;

/// One dot-separated identifier of a pre-release (`alpha`, `1`, `x-7`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum PreIdentifier {
    /// Only ASCII digits, without leading zeros (`0`, `7`, `11`). Kept as text so that any
    /// number of digits fits; compared numerically.
    Numeric(String),
    /// ASCII alphanumerics and `-`, with at least one non-digit (`alpha`, `0a`, `-`);
    /// compared in ASCII order.
    Alphanumeric(String),
}

impl PreIdentifier {
    /// The identifier as written.
    pub fn as_str(&self) -> &str {
        match self {
            PreIdentifier::Numeric(s) | PreIdentifier::Alphanumeric(s) => s,
        }
    }

    /// Whether the identifier is numeric.
    pub fn is_numeric(&self) -> bool {
        matches!(self, PreIdentifier::Numeric(_))
    }
}

impl Ord for PreIdentifier {
    /// Semver rule 11.4: numeric identifiers sort before alphanumeric ones; numeric ones
    /// compare as numbers, alphanumeric ones in ASCII order.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            // Without leading zeros, the longer number is the larger one.
            (PreIdentifier::Numeric(a), PreIdentifier::Numeric(b)) => {
                a.len().cmp(&b.len()).then_with(|| a.cmp(b))
            }
            (PreIdentifier::Numeric(_), PreIdentifier::Alphanumeric(_)) => Ordering::Less,
            (PreIdentifier::Alphanumeric(_), PreIdentifier::Numeric(_)) => Ordering::Greater,
            (PreIdentifier::Alphanumeric(a), PreIdentifier::Alphanumeric(b)) => a.cmp(b),
        }
    }
}

impl PartialOrd for PreIdentifier {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for PreIdentifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A semantic version `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`.
///
/// **Equality, ordering and hashing follow semver precedence**, which ignores build
/// metadata: `1.0.0+a == 1.0.0+b`. Use [`Version::identical`] to also compare build
/// metadata. [`Display`](fmt::Display) prints exactly the parsed text.
///
/// With the `serde` feature a version (de)serializes as its string.
///
/// ```
/// use gangpack::Version;
///
/// let rc: Version = "1.0.0-rc.1".parse()?;
/// let release = Version::parse("1.0.0+build.7")?;
/// assert!(rc < release);
/// assert_eq!(release, Version::new(1, 0, 0)); // build metadata is ignored by `==`
/// assert!(!release.identical(&Version::new(1, 0, 0)));
/// assert_eq!(release.to_string(), "1.0.0+build.7");
/// assert!(Version::parse("v1.0.0").is_err());
/// # Ok::<(), gangpack::VersionError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<PreIdentifier>,
    /// Without the `+`; empty when there is no build metadata.
    build: String,
}

/// Why a string is not a semantic version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VersionError {
    /// The string is empty.
    Empty,
    /// The string starts with `v` or `V` (`v1.2.3`), which semver 2.0.0 does not allow.
    LeadingV,
    /// `MAJOR.MINOR.PATCH` lacks a part (`1.0`).
    MissingPart {
        /// `"minor"` or `"patch"`.
        part: &'static str,
    },
    /// A part of `MAJOR.MINOR.PATCH` is empty or not made of ASCII digits (`1..0`, `1.0.x`).
    NotANumber {
        /// `"major"`, `"minor"` or `"patch"`.
        part: &'static str,
    },
    /// A numeric identifier has a leading zero (`01.0.0`, `1.0.0-01`).
    LeadingZero {
        /// `"major"`, `"minor"`, `"patch"` or `"pre-release"`.
        part: &'static str,
    },
    /// `MAJOR`, `MINOR` or `PATCH` does not fit in a `u64`.
    Overflow {
        /// `"major"`, `"minor"` or `"patch"`.
        part: &'static str,
    },
    /// A pre-release or build identifier is empty (`1.0.0-`, `1.0.0+`, `1.0.0-a..b`).
    EmptyIdentifier {
        /// `"pre-release"` or `"build metadata"`.
        part: &'static str,
    },
    /// A pre-release or build identifier has a character other than `[0-9A-Za-z-]`.
    InvalidCharacter {
        /// `"pre-release"` or `"build metadata"`.
        part: &'static str,
        /// The offending character.
        found: char,
    },
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionError::Empty => f.write_str("must not be empty"),
            VersionError::LeadingV => {
                f.write_str("must not start with 'v': semver.org 2.0.0 is MAJOR.MINOR.PATCH")
            }
            VersionError::MissingPart { part } => {
                write!(f, "missing {part} version: expected MAJOR.MINOR.PATCH")
            }
            VersionError::NotANumber { part } => {
                write!(f, "{part} version must be a decimal number")
            }
            VersionError::LeadingZero { part } => {
                write!(f, "numeric {part} identifier must not have leading zeros")
            }
            VersionError::Overflow { part } => {
                write!(f, "{part} version is larger than 18446744073709551615")
            }
            VersionError::EmptyIdentifier { part } => {
                write!(f, "{part} identifiers must not be empty")
            }
            VersionError::InvalidCharacter { part, found } => write!(
                f,
                "{part} contains {found:?}: identifiers may only contain ASCII alphanumerics and '-'"
            ),
        }
    }
}

impl core::error::Error for VersionError {}

const PRE: &str = "pre-release";
const BUILD: &str = "build metadata";

fn parse_core_number(s: &str, part: &'static str) -> Result<u64, VersionError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(VersionError::NotANumber { part });
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err(VersionError::LeadingZero { part });
    }
    s.parse().map_err(|_| VersionError::Overflow { part })
}

/// Checks the identifiers of a pre-release or build suffix: non-empty, `[0-9A-Za-z-]`.
fn check_identifiers(s: &str, part: &'static str) -> Result<(), VersionError> {
    for ident in s.split('.') {
        if ident.is_empty() {
            return Err(VersionError::EmptyIdentifier { part });
        }
        if let Some(found) = ident
            .chars()
            .find(|&c| !(c.is_ascii_alphanumeric() || c == '-'))
        {
            return Err(VersionError::InvalidCharacter { part, found });
        }
    }
    Ok(())
}

impl Version {
    /// A release version `major.minor.patch`, without pre-release or build metadata.
    pub const fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
            pre: Vec::new(),
            build: String::new(),
        }
    }

    /// Parses `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]` strictly: no leading `v`, no
    /// leading zeros in numeric identifiers, no empty identifiers, identifiers made of
    /// `[0-9A-Za-z-]`, no surrounding whitespace. Accepts exactly what upstream's semver
    /// regex accepts, except that `MAJOR`, `MINOR` and `PATCH` must fit in a `u64`.
    ///
    /// The length is not limited; DRA's limit is [`MAX_VERSION_LEN`].
    pub fn parse(s: &str) -> Result<Version, VersionError> {
        if s.is_empty() {
            return Err(VersionError::Empty);
        }
        if s.starts_with(['v', 'V']) {
            return Err(VersionError::LeadingV);
        }
        let (rest, build) = match s.split_once('+') {
            Some((rest, build)) => {
                check_identifiers(build, BUILD)?;
                (rest, build)
            }
            None => (s, ""),
        };
        let (core, pre) = match rest.split_once('-') {
            Some((core, pre)) => (core, Some(pre)),
            None => (rest, None),
        };

        let mut parts = core.splitn(3, '.');
        let major = parse_core_number(parts.next().unwrap_or(""), "major")?;
        let minor = parse_core_number(
            parts
                .next()
                .ok_or(VersionError::MissingPart { part: "minor" })?,
            "minor",
        )?;
        let patch = parse_core_number(
            parts
                .next()
                .ok_or(VersionError::MissingPart { part: "patch" })?,
            "patch",
        )?;

        let pre = match pre {
            None => Vec::new(),
            Some(pre) => {
                check_identifiers(pre, PRE)?;
                pre.split('.')
                    .map(|ident| {
                        if !ident.bytes().all(|b| b.is_ascii_digit()) {
                            Ok(PreIdentifier::Alphanumeric(ident.to_owned()))
                        } else if ident.len() > 1 && ident.starts_with('0') {
                            Err(VersionError::LeadingZero { part: PRE })
                        } else {
                            Ok(PreIdentifier::Numeric(ident.to_owned()))
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?
            }
        };

        Ok(Version {
            major,
            minor,
            patch,
            pre,
            build: build.to_owned(),
        })
    }

    /// The major version.
    pub const fn major(&self) -> u64 {
        self.major
    }

    /// The minor version.
    pub const fn minor(&self) -> u64 {
        self.minor
    }

    /// The patch version.
    pub const fn patch(&self) -> u64 {
        self.patch
    }

    /// The pre-release identifiers; empty for a release.
    pub fn pre(&self) -> &[PreIdentifier] {
        &self.pre
    }

    /// Whether this is a pre-release (`1.0.0-rc.1`), which sorts before its release.
    pub fn is_prerelease(&self) -> bool {
        !self.pre.is_empty()
    }

    /// The build metadata without the `+`, if any.
    pub fn build(&self) -> Option<&str> {
        if self.build.is_empty() {
            None
        } else {
            Some(&self.build)
        }
    }

    /// Exact equality, build metadata included (`==` ignores it, as semver precedence does).
    pub fn identical(&self, other: &Version) -> bool {
        self == other && self.build == other.build
    }
}

impl FromStr for Version {
    type Err = VersionError;

    fn from_str(s: &str) -> Result<Version, VersionError> {
        Version::parse(s)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for (i, ident) in self.pre.iter().enumerate() {
            f.write_str(if i == 0 { "-" } else { "." })?;
            f.write_str(ident.as_str())?;
        }
        if !self.build.is_empty() {
            write!(f, "+{}", self.build)?;
        }
        Ok(())
    }
}

impl Ord for Version {
    /// Semver precedence (rule 11): `MAJOR`, `MINOR`, `PATCH` numerically; then a
    /// pre-release sorts before the release; then pre-release identifiers left to right,
    /// a shorter list sorting first when all its identifiers are equal. Build metadata is
    /// ignored.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                // Slices compare lexicographically, a proper prefix first: rule 11.4.4.
                (false, false) => self.pre.as_slice().cmp(other.pre.as_slice()),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Version {
    /// Equal precedence: build metadata is ignored (see [`Version::identical`]).
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl Hash for Version {
    /// Hashes what `==` compares (build metadata excluded).
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.major.hash(state);
        self.minor.hash(state);
        self.patch.hash(state);
        self.pre.hash(state);
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Version, D::Error> {
        let s = String::deserialize(deserializer)?;
        Version::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
    }

    #[test]
    fn precedence_chain_from_semver_org() {
        let chain = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
        ];
        for (i, a) in chain.iter().enumerate() {
            for (j, b) in chain.iter().enumerate() {
                assert_eq!(v(a).cmp(&v(b)), i.cmp(&j), "{a} vs {b}");
            }
        }
        // Rule 11.2 and the core ordering.
        let core = [
            "0.0.0", "0.0.1", "0.1.0", "0.9.0", "0.10.0", "1.0.0", "2.0.0", "2.1.0", "2.1.1",
            "10.0.0",
        ];
        for w in core.windows(2) {
            assert!(v(w[0]) < v(w[1]), "{} < {}", w[0], w[1]);
        }
    }

    #[test]
    fn pre_release_identifier_rules() {
        // Numeric < alphanumeric, numeric compared as numbers of any size.
        assert!(v("1.0.0-9") < v("1.0.0-10"));
        assert!(v("1.0.0-99999999999999999999") < v("1.0.0-100000000000000000000"));
        assert!(v("1.0.0-99999999999999999999") < v("1.0.0-a"));
        assert!(v("1.0.0-1") < v("1.0.0-0a"));
        assert!(v("1.0.0-A") < v("1.0.0-a"));
        assert!(v("1.0.0--") < v("1.0.0-0a"));
        assert!(v("1.0.0-a.b") < v("1.0.0-a.b.0"));
        assert!(v("1.0.0-rc.1") > v("0.99.99"));
        assert!(v("1.0.0-0.3.7").pre()[0].is_numeric());
        assert!(!v("1.0.0-x.7.z.92").pre()[0].is_numeric());
    }

    #[test]
    fn build_metadata_is_ignored_by_eq_but_not_identical() {
        let a = v("1.0.0+20130313144700");
        let b = v("1.0.0+exp.sha.5114f85");
        let c = v("1.0.0");
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a.cmp(&b), Ordering::Equal);
        assert!(!a.identical(&b));
        assert!(!a.identical(&c));
        assert!(a.identical(&v("1.0.0+20130313144700")));
        assert_eq!(a.build(), Some("20130313144700"));
        assert_eq!(c.build(), None);
        assert!(v("1.0.0-beta+exp.sha.5114f85") < v("1.0.0+0"));

        // Hash agrees with Eq.
        let hasher = std::hash::RandomState::new();
        assert_eq!(hasher.hash_one(&a), hasher.hash_one(&b));
    }

    #[test]
    fn accepts_and_round_trips() {
        for s in [
            "0.0.0",
            "1.2.3",
            "10.20.30",
            "1.0.0-0.3.7",
            "1.0.0-x.7.z.92",
            "1.0.0-x-y-z.--",
            "1.0.0+20130313144700",
            "1.0.0-beta+exp.sha.5114f85",
            "1.0.0+21AF26D3----117B344092BD",
            "1.0.0-alpha+001",
            "1.0.0-0a.00a",
            "1.0.0+0.00.000",
            "1.1.2-prerelease+meta",
            "1.0.0-alpha-a.b-c-somethinglong+build.1-aef.1-its-okay",
            "18446744073709551615.0.0",
            "2.0.0-rc.1+build.123",
            "1.0.0-rc-1",
        ] {
            let parsed = v(s);
            assert_eq!(parsed.to_string(), s);
            assert!(parsed.identical(&s.parse::<Version>().unwrap()));
        }
        let x = v("1.2.3-alpha.7+b.1");
        assert_eq!((x.major(), x.minor(), x.patch()), (1, 2, 3));
        assert_eq!(
            x.pre(),
            &[
                PreIdentifier::Alphanumeric("alpha".into()),
                PreIdentifier::Numeric("7".into())
            ]
        );
        assert!(x.is_prerelease());
        assert_eq!(Version::new(1, 2, 3), v("1.2.3"));
        assert!(Version::new(1, 2, 3).identical(&v("1.2.3")));
    }

    #[test]
    fn rejects() {
        use VersionError as E;
        let cases: &[(&str, VersionError)] = &[
            ("", E::Empty),
            ("01.0.0", E::LeadingZero { part: "major" }),
            ("1.01.0", E::LeadingZero { part: "minor" }),
            ("1.0.01", E::LeadingZero { part: "patch" }),
            ("1.0", E::MissingPart { part: "patch" }),
            ("1", E::MissingPart { part: "minor" }),
            ("1.0.0-", E::EmptyIdentifier { part: PRE }),
            ("1.0.0-01", E::LeadingZero { part: PRE }),
            ("1.0.0-alpha.01", E::LeadingZero { part: PRE }),
            ("v1.0.0", E::LeadingV),
            ("V1.0.0", E::LeadingV),
            ("1.0.0+", E::EmptyIdentifier { part: BUILD }),
            ("1.0.0-+a", E::EmptyIdentifier { part: PRE }),
            ("1.0.0-a..b", E::EmptyIdentifier { part: PRE }),
            ("1.0.0-a.", E::EmptyIdentifier { part: PRE }),
            ("1.0.0+a..b", E::EmptyIdentifier { part: BUILD }),
            (
                "1.0.0+a+b",
                E::InvalidCharacter {
                    part: BUILD,
                    found: '+',
                },
            ),
            (
                "1.0.0-a_b",
                E::InvalidCharacter {
                    part: PRE,
                    found: '_',
                },
            ),
            (
                "1.0.0-é",
                E::InvalidCharacter {
                    part: PRE,
                    found: 'é',
                },
            ),
            (
                "1.0.0+a b",
                E::InvalidCharacter {
                    part: BUILD,
                    found: ' ',
                },
            ),
            ("1.0.0.0", E::NotANumber { part: "patch" }),
            ("1.0.x", E::NotANumber { part: "patch" }),
            ("1..0", E::NotANumber { part: "minor" }),
            (".1.0", E::NotANumber { part: "major" }),
            ("-1.0.0", E::NotANumber { part: "major" }),
            ("+1.0.0", E::NotANumber { part: "major" }),
            ("1.0.-1", E::NotANumber { part: "patch" }),
            (" 1.0.0", E::NotANumber { part: "major" }),
            ("1.0.0 ", E::NotANumber { part: "patch" }),
            ("1.0.0\n", E::NotANumber { part: "patch" }),
            ("1.2.3.DEV", E::NotANumber { part: "patch" }),
            ("1.2-SNAPSHOT", E::MissingPart { part: "patch" }),
            ("18446744073709551616.0.0", E::Overflow { part: "major" }),
        ];
        for (s, want) in cases {
            assert_eq!(Version::parse(s).as_ref(), Err(want), "{s:?}");
            // Every error prints something.
            assert!(!want.to_string().is_empty());
        }
    }
}
