//! Kubernetes resource quantities: `resource.Quantity` from `k8s.io/apimachinery`.
//!
//! A [`Quantity`] is an exact fixed-point number (no floating point anywhere) with the
//! *format* its text used: binary SI (`Ki`, `Mi`, ...), decimal SI (`m`, `k`, `M`, ...)
//! or a decimal exponent (`e3`). Parsing, rounding and the canonical text follow
//! upstream's `quantity.go`, `suffix.go` and `amount.go`.
//!
//! See [`Quantity`] for the range and for where this differs from upstream.

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::Neg;
use core::str::FromStr;

use crate::alloc_prelude::*;

/// Nano-units in one unit.
const NANO_PER_UNIT: i128 = 1_000_000_000;
/// Nano-units in one milli-unit.
const NANO_PER_MILLI: i128 = 1_000_000;
/// Upstream caps the magnitude of a parsed binary-SI quantity at `i64::MAX` units.
const BINARY_CAP_NANO: i128 = i64::MAX as i128 * NANO_PER_UNIT;
/// The binary-SI suffixes, indexed by their power of 1024.
const BINARY_SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
/// The bytes a suffix may be made of before its optional signed digits (upstream's scanner).
const SUFFIX_LETTERS: &[u8] = b"eEinumkKMGTP";

/// How a quantity is written: which family of suffixes its canonical text uses.
///
/// A parsed quantity remembers the family of its suffix (a number without a suffix is
/// `Format::DecimalSI`), and [`Quantity`]'s `Display` writes it back in that family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Powers of 1024: `Ki`, `Mi`, `Gi`, `Ti`, `Pi`, `Ei` (e.g. `12Mi` = 12 × 2²⁰).
    ///
    /// A value strictly between -1024 and 1024, or one that is not a whole number, is
    /// printed as `Format::DecimalSI` so that no precision is lost.
    BinarySI,
    /// Powers of 1000: `n`, `u`, `m`, none, `k`, `M`, `G`, `T`, `P`, `E` (e.g. `12M` = 12 × 10⁶).
    ///
    /// A value that would need a suffix above `E` is printed with an exponent (`1e21`).
    DecimalSI,
    /// A power of ten written as `e<n>` (e.g. `12e6`); `E<n>` is accepted when parsing.
    DecimalExponent,
}

impl Format {
    /// The format's name as upstream spells it: `"BinarySI"`, `"DecimalSI"` or
    /// `"DecimalExponent"`.
    ///
    /// ```
    /// use gangpack::Quantity;
    /// assert_eq!(Quantity::parse("1Gi")?.format().as_str(), "BinarySI");
    /// assert_eq!(Quantity::parse("1G")?.format().as_str(), "DecimalSI");
    /// assert_eq!(Quantity::parse("1e9")?.format().as_str(), "DecimalExponent");
    /// # Ok::<(), gangpack::QuantityError>(())
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Format::BinarySI => "BinarySI",
            Format::DecimalSI => "DecimalSI",
            Format::DecimalExponent => "DecimalExponent",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A Kubernetes resource quantity (`resource.Quantity`): an exact number with nano
/// precision, plus the `Format` its text used.
///
/// Equality, ordering and hashing look at the numeric value only, as upstream's `Cmp` and
/// `Equal` do: `1Gi == 1073741824` and `1000m == 1`. `Display` writes upstream's canonical
/// form (`String()`): no fractional digits, the largest suffix that loses nothing.
///
/// The text follows upstream's grammar:
///
/// ```text
/// <quantity>        ::= <signedNumber><suffix>
/// <signedNumber>    ::= <number> | <sign><number>
/// <sign>            ::= "+" | "-"
/// <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
/// <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
/// <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
/// <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
/// <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>   (an integer)
/// ```
///
/// Digits are ASCII; no whitespace is allowed anywhere.
///
/// ```
/// use gangpack::Quantity;
///
/// let q: Quantity = "1.5Gi".parse()?;
/// assert_eq!(q.to_string(), "1536Mi");
/// assert_eq!(q.value(), 1_610_612_736);
/// assert!(q > Quantity::parse("1G")?);
/// assert_eq!(Quantity::parse("1.5")?.to_string(), "1500m");
/// assert_eq!(Quantity::parse("1024Mi")?, Quantity::binary_si(1 << 30));
/// # Ok::<(), gangpack::QuantityError>(())
/// ```
///
/// # Range, and where this differs from upstream
///
/// The value is kept as an `i128` count of nano-units (value × 10⁹), which is exactly
/// upstream's precision: upstream rounds every parsed value to 10⁻⁹, away from zero, so a
/// non-zero request never becomes zero (`0.9n` is `1n`, `-0.9n` is `-1n`). Upstream falls
/// back to arbitrary precision for huge values; here a value whose nano count does not fit
/// an `i128` (a magnitude of about 1.7 × 10²⁹ or more, e.g. `1e40`) is rejected with
/// [`QuantityError::OutOfRange`], and arithmetic is checked or saturating. That covers every
/// realistic capacity.
///
/// Other deliberate differences, all on inputs no real manifest contains:
///
/// * A number must have at least one digit. Upstream's scanner reads a missing number as
///   zero, so it accepts `"Gi"`, `"+"`, `"-"`, `"."` and `"e3"` as zero; these are
///   [`QuantityError::MissingDigits`] here, as the grammar above says.
/// * An exponent is used exactly. Upstream parses it as a 64-bit integer and then keeps
///   only its low 32 bits, so `1e4294967296` is `1` there; here it is out of range (and
///   `1e-4294967296` rounds to `1n`).
/// * A binary-SI value of 2⁷⁰ or more that is a multiple of 1024⁷ (reachable only through
///   arithmetic) prints with `Ei` (`1024Ei`); upstream has no suffix for 1024⁷ and prints a
///   wrong value.
///
/// Kept from upstream on purpose: parsing a binary-SI quantity silently caps its magnitude
/// at 2⁶³ − 1 (`9Ei` parses as 9223372036854775807), and `Value`/`MilliValue` round away
/// from zero.
#[derive(Clone, Copy, Debug)]
pub struct Quantity {
    /// The value times 10⁹.
    nano: i128,
    /// The suffix family to print with.
    format: Format,
}

impl Quantity {
    /// Zero, in `Format::DecimalSI`.
    pub const ZERO: Quantity = Quantity {
        nano: 0,
        format: Format::DecimalSI,
    };

    /// Parses a quantity such as `"500m"`, `"1.5Gi"`, `"2e3"` or `"-1"`.
    ///
    /// A value finer than 10⁻⁹ is rounded to 10⁻⁹ away from zero, as upstream does. A
    /// binary-SI value's magnitude is capped at 2⁶³ − 1 (upstream does so silently).
    ///
    /// ```
    /// use gangpack::{Quantity, QuantityError};
    ///
    /// assert_eq!(Quantity::parse("0.5Gi")?.to_string(), "512Mi");
    /// assert_eq!(Quantity::parse("0.9n")?.as_nano(), 1);
    /// assert_eq!(
    ///     Quantity::parse("80 GiB").unwrap_err().to_string(),
    ///     "unexpected character ' ' at byte 2"
    /// );
    /// assert_eq!(Quantity::parse("1e40"), Err(QuantityError::OutOfRange));
    /// # Ok::<(), QuantityError>(())
    /// ```
    pub fn parse(input: &str) -> Result<Quantity, QuantityError> {
        let scanned = scan(input)?;
        let (multiplier, mut format) = interpret_suffix(scanned.suffix)?;
        let magnitude = magnitude_nano(scanned.int_digits, scanned.frac_digits, multiplier)
            .and_then(|m| i128::try_from(m).ok());
        let magnitude = match (magnitude, multiplier) {
            (Some(m), Multiplier::Binary(_)) => m.min(BINARY_CAP_NANO),
            (None, Multiplier::Binary(_)) => BINARY_CAP_NANO,
            (Some(m), Multiplier::Decimal(_)) => m,
            (None, Multiplier::Decimal(_)) => return Err(QuantityError::OutOfRange),
        };
        if format == Format::BinarySI && magnitude > 0 && magnitude < NANO_PER_UNIT {
            // Upstream: a non-zero binary value below one is shown in decimal, not rounded.
            format = Format::DecimalSI;
        }
        let nano = if scanned.negative {
            -magnitude
        } else {
            magnitude
        };
        Ok(Quantity { nano, format })
    }

    /// `value` units, in `Format::DecimalSI` (upstream `NewQuantity(value, DecimalSI)`).
    ///
    /// ```
    /// use gangpack::Quantity;
    /// assert_eq!(Quantity::from_int(4000).to_string(), "4k");
    /// ```
    pub const fn from_int(value: i64) -> Quantity {
        Quantity {
            nano: value as i128 * NANO_PER_UNIT,
            format: Format::DecimalSI,
        }
    }

    /// `value` thousandths, in `Format::DecimalSI` (upstream `NewMilliQuantity`).
    ///
    /// ```
    /// use gangpack::Quantity;
    /// assert_eq!(Quantity::from_milli(250).to_string(), "250m");
    /// assert_eq!(Quantity::from_milli(2000).to_string(), "2");
    /// ```
    pub const fn from_milli(value: i64) -> Quantity {
        Quantity {
            nano: value as i128 * NANO_PER_MILLI,
            format: Format::DecimalSI,
        }
    }

    /// `nano` billionths, in `Format::DecimalSI`.
    ///
    /// Every nano count is accepted, but the text of `i128::MIN` (whose magnitude exceeds
    /// `i128::MAX`) does not parse back: [`Quantity::parse`] rejects it as out of range.
    ///
    /// ```
    /// use gangpack::Quantity;
    /// assert_eq!(Quantity::from_nano(1_500).to_string(), "1500n");
    /// assert_eq!(Quantity::from_nano(1_000_000).to_string(), "1m");
    /// ```
    pub const fn from_nano(nano: i128) -> Quantity {
        Quantity {
            nano,
            format: Format::DecimalSI,
        }
    }

    /// `bytes` units in `Format::BinarySI` (upstream `NewQuantity(bytes, BinarySI)`).
    ///
    /// ```
    /// use gangpack::Quantity;
    /// assert_eq!(Quantity::binary_si(3 << 30).to_string(), "3Gi");
    /// assert_eq!(Quantity::binary_si(1500).to_string(), "1500");
    /// assert_eq!(Quantity::binary_si(1000).to_string(), "1k"); // below 1Ki: decimal
    /// ```
    pub const fn binary_si(bytes: i64) -> Quantity {
        Quantity {
            nano: bytes as i128 * NANO_PER_UNIT,
            format: Format::BinarySI,
        }
    }

    /// The same value, printed in `format`.
    ///
    /// ```
    /// use gangpack::Quantity;
    /// let exponent = Quantity::parse("1e0")?.format();
    /// assert_eq!(Quantity::from_int(5000).with_format(exponent).to_string(), "5e3");
    /// # Ok::<(), gangpack::QuantityError>(())
    /// ```
    #[must_use]
    pub const fn with_format(self, format: Format) -> Quantity {
        Quantity {
            nano: self.nano,
            format,
        }
    }

    /// The value rounded to a whole number away from zero, saturating at the `i64` bounds
    /// (upstream `Value()`, which is undefined on overflow).
    ///
    /// ```
    /// use gangpack::Quantity;
    /// assert_eq!(Quantity::parse("1.1")?.value(), 2);
    /// assert_eq!(Quantity::parse("-1.1")?.value(), -2);
    /// assert_eq!(Quantity::parse("1e20")?.value(), i64::MAX);
    /// # Ok::<(), gangpack::QuantityError>(())
    /// ```
    pub fn value(self) -> i64 {
        saturate_i64(div_away_from_zero(self.nano, NANO_PER_UNIT))
    }

    /// The value in thousandths, rounded away from zero, saturating at the `i64` bounds
    /// (upstream `MilliValue()`).
    ///
    /// ```
    /// use gangpack::Quantity;
    /// assert_eq!(Quantity::parse("1.5")?.milli_value(), 1500);
    /// assert_eq!(Quantity::parse("1n")?.milli_value(), 1);
    /// # Ok::<(), gangpack::QuantityError>(())
    /// ```
    pub fn milli_value(self) -> i64 {
        saturate_i64(div_away_from_zero(self.nano, NANO_PER_MILLI))
    }

    /// The exact value times 10⁹.
    ///
    /// ```
    /// use gangpack::Quantity;
    /// assert_eq!(Quantity::parse("1.5u")?.as_nano(), 1_500);
    /// # Ok::<(), gangpack::QuantityError>(())
    /// ```
    pub const fn as_nano(self) -> i128 {
        self.nano
    }

    /// The format [`Display`](fmt::Display) uses.
    pub const fn format(self) -> Format {
        self.format
    }

    /// Whether the value is zero.
    pub const fn is_zero(self) -> bool {
        self.nano == 0
    }

    /// -1, 0 or 1 as the value is negative, zero or positive (upstream `Sign()`).
    pub const fn sign(self) -> i32 {
        if self.nano < 0 {
            -1
        } else if self.nano > 0 {
            1
        } else {
            0
        }
    }

    /// Whether the value is below zero.
    pub const fn is_negative(self) -> bool {
        self.nano < 0
    }

    /// Whether the value is above zero.
    pub const fn is_positive(self) -> bool {
        self.nano > 0
    }

    /// The format of a sum or difference with `self` on the left: upstream's `Add` and
    /// `Sub` keep the receiver's format unless the receiver is zero.
    const fn combined_format(self, rhs: Quantity) -> Format {
        if self.nano == 0 {
            rhs.format
        } else {
            self.format
        }
    }

    /// `self + rhs`, or `None` on overflow. The result has `self`'s format, or `rhs`'s
    /// when `self` is zero (as upstream `Add`).
    ///
    /// ```
    /// use gangpack::Quantity;
    /// let sum = Quantity::parse("1Gi")?.checked_add(Quantity::parse("512Mi")?).unwrap();
    /// assert_eq!(sum.to_string(), "1536Mi");
    /// let from_zero = Quantity::ZERO.checked_add(Quantity::parse("1Gi")?).unwrap();
    /// assert_eq!(from_zero.to_string(), "1Gi");
    /// # Ok::<(), gangpack::QuantityError>(())
    /// ```
    pub const fn checked_add(self, rhs: Quantity) -> Option<Quantity> {
        match self.nano.checked_add(rhs.nano) {
            Some(nano) => Some(Quantity {
                nano,
                format: self.combined_format(rhs),
            }),
            None => None,
        }
    }

    /// `self - rhs`, or `None` on overflow. Formats combine as in [`Quantity::checked_add`].
    ///
    /// ```
    /// use gangpack::Quantity;
    /// let left = Quantity::parse("2")?.checked_sub(Quantity::parse("500m")?).unwrap();
    /// assert_eq!(left.to_string(), "1500m");
    /// # Ok::<(), gangpack::QuantityError>(())
    /// ```
    pub const fn checked_sub(self, rhs: Quantity) -> Option<Quantity> {
        match self.nano.checked_sub(rhs.nano) {
            Some(nano) => Some(Quantity {
                nano,
                format: self.combined_format(rhs),
            }),
            None => None,
        }
    }

    /// `self × factor`, or `None` on overflow; keeps `self`'s format (as upstream `Mul`).
    ///
    /// ```
    /// use gangpack::Quantity;
    /// let q = Quantity::parse("512Mi")?.checked_mul_int(6).unwrap();
    /// assert_eq!(q.to_string(), "3Gi");
    /// # Ok::<(), gangpack::QuantityError>(())
    /// ```
    pub const fn checked_mul_int(self, factor: i64) -> Option<Quantity> {
        match self.nano.checked_mul(factor as i128) {
            Some(nano) => Some(Quantity {
                nano,
                format: self.format,
            }),
            None => None,
        }
    }

    /// `-self`, or `None` when the nano count is `i128::MIN`.
    pub const fn checked_neg(self) -> Option<Quantity> {
        match self.nano.checked_neg() {
            Some(nano) => Some(Quantity {
                nano,
                format: self.format,
            }),
            None => None,
        }
    }

    /// `self + rhs`, saturating at the representable bounds. Formats combine as in
    /// [`Quantity::checked_add`].
    #[must_use]
    pub const fn saturating_add(self, rhs: Quantity) -> Quantity {
        Quantity {
            nano: self.nano.saturating_add(rhs.nano),
            format: self.combined_format(rhs),
        }
    }

    /// `self - rhs`, saturating at the representable bounds. Formats combine as in
    /// [`Quantity::checked_add`].
    #[must_use]
    pub const fn saturating_sub(self, rhs: Quantity) -> Quantity {
        Quantity {
            nano: self.nano.saturating_sub(rhs.nano),
            format: self.combined_format(rhs),
        }
    }

    /// `self × factor`, saturating at the representable bounds; keeps `self`'s format.
    #[must_use]
    pub const fn saturating_mul_int(self, factor: i64) -> Quantity {
        Quantity {
            nano: self.nano.saturating_mul(factor as i128),
            format: self.format,
        }
    }

    /// Writes the canonical text (upstream `CanonicalizeBytes`).
    fn write_canonical<W: fmt::Write>(self, out: &mut W) -> fmt::Result {
        if self.nano == 0 {
            return out.write_str("0");
        }
        let sign = if self.nano < 0 { "-" } else { "" };
        let magnitude = self.nano.unsigned_abs();
        // Upstream: a binary value strictly between -1024 and 1024, or one with a
        // fraction, is written in decimal so that nothing is rounded.
        let whole_binary = self.format == Format::BinarySI
            && magnitude >= 1024 * NANO_PER_UNIT.unsigned_abs()
            && magnitude.is_multiple_of(NANO_PER_UNIT.unsigned_abs());
        if whole_binary {
            let mut mantissa = magnitude / NANO_PER_UNIT.unsigned_abs();
            let mut power = 0;
            while power + 1 < BINARY_SUFFIXES.len() && mantissa.is_multiple_of(1024) {
                mantissa /= 1024;
                power += 1;
            }
            return write!(out, "{sign}{mantissa}{}", BINARY_SUFFIXES[power]);
        }
        // Decimal: move factors of ten into the exponent, then lower the exponent to a
        // multiple of three (the mantissa never grows past the nano count).
        let mut mantissa = magnitude;
        let mut exponent: i32 = -9;
        while mantissa.is_multiple_of(10) {
            mantissa /= 10;
            exponent += 1;
        }
        let excess = exponent.rem_euclid(3);
        mantissa *= 10u128.pow(excess.unsigned_abs());
        exponent -= excess;
        let decimal_suffix = match exponent {
            -9 => Some("n"),
            -6 => Some("u"),
            -3 => Some("m"),
            0 => Some(""),
            3 => Some("k"),
            6 => Some("M"),
            9 => Some("G"),
            12 => Some("T"),
            15 => Some("P"),
            18 => Some("E"),
            _ => None,
        };
        match (self.format, decimal_suffix) {
            (Format::BinarySI | Format::DecimalSI, Some(suffix)) => {
                write!(out, "{sign}{mantissa}{suffix}")
            }
            // DecimalExponent, or beyond `E`: upstream falls back to an exponent.
            _ if exponent == 0 => write!(out, "{sign}{mantissa}"),
            _ => write!(out, "{sign}{mantissa}e{exponent}"),
        }
    }
}

impl Default for Quantity {
    /// [`Quantity::ZERO`].
    fn default() -> Quantity {
        Quantity::ZERO
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;

    /// Same as [`Quantity::parse`].
    fn from_str(s: &str) -> Result<Quantity, QuantityError> {
        Quantity::parse(s)
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Quantity) -> bool {
        self.nano == other.nano
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Quantity) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Quantity) -> Ordering {
        self.nano.cmp(&other.nano)
    }
}

impl Hash for Quantity {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.nano.hash(state);
    }
}

impl Neg for Quantity {
    type Output = Quantity;

    /// `-self`, keeping the format. The one value without a negation (nano count
    /// `i128::MIN`) saturates to the largest value; see [`Quantity::checked_neg`].
    fn neg(self) -> Quantity {
        Quantity {
            nano: self.nano.saturating_neg(),
            format: self.format,
        }
    }
}

impl fmt::Display for Quantity {
    /// The canonical form (upstream `String()`); honours width and alignment.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = StackText::default();
        self.write_canonical(&mut buf)?;
        f.pad(buf.as_str())
    }
}

/// A small stack buffer for the canonical text (at most 46 bytes: a sign, 39 digits and
/// a suffix of at most 3 bytes), so `Display` can pad without allocating.
struct StackText {
    bytes: [u8; 64],
    len: usize,
}

impl Default for StackText {
    fn default() -> StackText {
        StackText {
            bytes: [0; 64],
            len: 0,
        }
    }
}

impl StackText {
    fn as_str(&self) -> &str {
        // Only whole `&str`s are ever appended, so this always succeeds.
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        let slot = self.bytes.get_mut(self.len..end).ok_or(fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Why a text is not a valid quantity.
///
/// The messages do not repeat the input; callers print it, e.g.
/// `invalid quantity "80 GiB": unexpected character ' ' at byte 2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QuantityError {
    /// The text is empty.
    Empty,
    /// A character the grammar does not allow where it stands: whitespace, a second `.`,
    /// a unit such as `B`, a sign inside the number, ...
    UnexpectedCharacter {
        /// The character found.
        character: char,
        /// Its byte offset in the text.
        at: usize,
    },
    /// The number has no digits, as in `"Gi"`, `"+"`, `"-"` or `"."`.
    MissingDigits,
    /// The suffix is not one of `n u m k M G T P E Ki Mi Gi Ti Pi Ei` nor an exponent
    /// `e<int>` / `E<int>` (suffixes are case-sensitive: `ki` and `mi` are unknown).
    UnknownSuffix {
        /// The suffix as written.
        suffix: String,
    },
    /// An exponent suffix has no digits, as in `"1e"`, `"1e+"` or `"1E-"`.
    MissingExponent,
    /// The exponent does not fit a signed 64-bit integer (upstream rejects it too).
    ExponentOutOfRange,
    /// The value is too large: its count of nano-units must fit an `i128`, i.e. its
    /// magnitude must stay below about 1.7 × 10²⁹. Upstream would keep such values with
    /// arbitrary precision.
    OutOfRange,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuantityError::Empty => f.write_str("must not be empty"),
            QuantityError::UnexpectedCharacter { character, at } => {
                write!(f, "unexpected character {character:?} at byte {at}")
            }
            QuantityError::MissingDigits => f.write_str(
                "missing number: expected digits such as 1, 1.5 or .5 before the suffix",
            ),
            QuantityError::UnknownSuffix { suffix } => write!(
                f,
                "unknown suffix \"{suffix}\": expected one of n, u, m, k, M, G, T, P, E, \
                 Ki, Mi, Gi, Ti, Pi, Ei or an exponent such as e3"
            ),
            QuantityError::MissingExponent => {
                f.write_str("the exponent has no digits: expected e.g. e3 or E-6")
            }
            QuantityError::ExponentOutOfRange => {
                f.write_str("the exponent does not fit a 64-bit integer")
            }
            QuantityError::OutOfRange => f.write_str(
                "value out of range: magnitudes up to about 1.7e29 (nano precision in 128 bits) \
                 are supported",
            ),
        }
    }
}

impl core::error::Error for QuantityError {}

/// The pieces of a syntactically valid quantity text.
struct Scanned<'a> {
    negative: bool,
    int_digits: &'a str,
    frac_digits: &'a str,
    suffix: &'a str,
}

/// What the suffix multiplies the number by.
#[derive(Clone, Copy)]
enum Multiplier {
    /// 10 to this power.
    Decimal(i64),
    /// 2 to this power (10 to 60).
    Binary(u32),
}

/// Splits `input` as upstream's scanner does: sign, digits, `.` and digits, then a suffix
/// made of suffix letters, an optional sign and digits.
fn scan(input: &str) -> Result<Scanned<'_>, QuantityError> {
    let bytes = input.as_bytes();
    let digits_from = |mut pos: usize| {
        while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        }
        pos
    };
    let (negative, mut pos) = match bytes.first() {
        None => return Err(QuantityError::Empty),
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        Some(_) => (false, 0),
    };
    let int_start = pos;
    pos = digits_from(pos);
    let int_digits = &input[int_start..pos];
    let mut frac_digits = "";
    if bytes.get(pos) == Some(&b'.') {
        let frac_start = pos + 1;
        pos = digits_from(frac_start);
        frac_digits = &input[frac_start..pos];
    }
    let suffix_start = pos;
    while bytes.get(pos).is_some_and(|b| SUFFIX_LETTERS.contains(b)) {
        pos += 1;
    }
    if matches!(bytes.get(pos), Some(b'+' | b'-')) {
        pos += 1;
    }
    pos = digits_from(pos);
    if pos < bytes.len() {
        // Every byte before `pos` is ASCII, so `pos` is a character boundary.
        let character = input[pos..]
            .chars()
            .next()
            .unwrap_or(char::REPLACEMENT_CHARACTER);
        return Err(QuantityError::UnexpectedCharacter { character, at: pos });
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return Err(QuantityError::MissingDigits);
    }
    Ok(Scanned {
        negative,
        int_digits,
        frac_digits,
        suffix: &input[suffix_start..],
    })
}

/// The multiplier and format a suffix stands for (upstream `suffix.go`).
fn interpret_suffix(suffix: &str) -> Result<(Multiplier, Format), QuantityError> {
    let decimal = |power| Ok((Multiplier::Decimal(power), Format::DecimalSI));
    let binary = |power| Ok((Multiplier::Binary(power), Format::BinarySI));
    match suffix {
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "" => decimal(0),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => match suffix.strip_prefix(['e', 'E']) {
            Some(exponent) => {
                let power = parse_exponent(exponent).map_err(|error| match error {
                    ExponentError::NotAnInteger => QuantityError::UnknownSuffix {
                        suffix: suffix.to_string(),
                    },
                    ExponentError::NoDigits => QuantityError::MissingExponent,
                    ExponentError::TooLarge => QuantityError::ExponentOutOfRange,
                })?;
                Ok((Multiplier::Decimal(power), Format::DecimalExponent))
            }
            None => Err(QuantityError::UnknownSuffix {
                suffix: suffix.to_string(),
            }),
        },
    }
}

/// Why the text after `e` is not an exponent.
enum ExponentError {
    NotAnInteger,
    NoDigits,
    TooLarge,
}

/// Parses an optionally signed decimal integer into an `i64` (Go's `ParseInt(s, 10, 64)`).
fn parse_exponent(text: &str) -> Result<i64, ExponentError> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ExponentError::NotAnInteger);
    }
    if digits.is_empty() {
        return Err(ExponentError::NoDigits);
    }
    let mut magnitude: i128 = 0;
    for b in digits.bytes() {
        magnitude = magnitude
            .checked_mul(10)
            .and_then(|m| m.checked_add(i128::from(b - b'0')))
            .ok_or(ExponentError::TooLarge)?;
    }
    let value = if negative { -magnitude } else { magnitude };
    i64::try_from(value).map_err(|_| ExponentError::TooLarge)
}

/// The magnitude of `int_digits.frac_digits × multiplier` in nano-units, rounded up
/// (away from zero) to a whole nano-unit; `None` if it does not fit a `u128`.
fn magnitude_nano(int_digits: &str, frac_digits: &str, multiplier: Multiplier) -> Option<u128> {
    let digits = || {
        int_digits
            .bytes()
            .chain(frac_digits.bytes())
            .map(|b| u128::from(b - b'0'))
    };
    if digits().all(|d| d == 0) {
        return Some(0);
    }
    // value = D × factor × 10^shift nano-units, D being all the digits as an integer.
    let (factor, power_of_ten) = match multiplier {
        Multiplier::Decimal(power) => (1u128, i128::from(power)),
        Multiplier::Binary(power) => (1u128 << power, 0),
    };
    let frac_len = i128::try_from(frac_digits.len()).ok()?;
    let shift = power_of_ten - frac_len + 9;
    let total = int_digits.len() + frac_digits.len();
    let accumulate = |count: usize| {
        digits()
            .take(count)
            .try_fold(0u128, |acc, d| acc.checked_mul(10)?.checked_add(d))
    };
    if shift >= 0 {
        let scale = 10u128.checked_pow(u32::try_from(shift).ok()?)?;
        return accumulate(total)?.checked_mul(factor)?.checked_mul(scale);
    }
    // The last `cut` digit positions are below one nano-unit. Multiply those digits by
    // `factor` from the least significant one; what carries out is whole nano-units.
    let cut = shift.unsigned_abs();
    let tail_len = usize::try_from(cut).map_or(total, |cut| cut.min(total));
    let mut carry = 0u128;
    let mut inexact = false;
    for d in digits().rev().take(tail_len) {
        let v = d * factor + carry;
        inexact |= !v.is_multiple_of(10);
        carry = v / 10;
    }
    let mut whole = accumulate(total - tail_len)?
        .checked_mul(factor)?
        .checked_add(carry)?;
    // Cutting more positions than there are digits divides by a further power of ten
    // (here `whole` is just the carry, below `factor` <= 2^60 < 10^19).
    let extra = cut - tail_len as u128;
    if extra > 0 {
        let divisor = u32::try_from(extra)
            .ok()
            .and_then(|e| 10u128.checked_pow(e));
        if let Some(divisor) = divisor {
            inexact |= !whole.is_multiple_of(divisor);
            whole /= divisor;
        } else {
            inexact |= whole != 0;
            whole = 0;
        }
    }
    whole.checked_add(u128::from(inexact))
}

/// `n / d` rounded away from zero (`d > 0`).
const fn div_away_from_zero(n: i128, d: i128) -> i128 {
    let q = n / d;
    if n % d == 0 {
        q
    } else if n > 0 {
        q + 1
    } else {
        q - 1
    }
}

/// `v` clamped to the `i64` range.
fn saturate_i64(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(feature = "serde")]
mod serde_impl {
    use core::fmt;

    use serde::de::{self, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Quantity;
    use crate::alloc_prelude::*;

    impl Serialize for Quantity {
        /// The canonical text, e.g. `"1536Mi"`.
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_str(self)
        }
    }

    impl<'de> Deserialize<'de> for Quantity {
        /// A quantity string (surrounding whitespace is trimmed, as upstream's JSON
        /// decoding does) or, in human-readable formats, a JSON integer or float. A float
        /// is read from its shortest decimal text, so `1.5` is `1500m`; numbers get
        /// `Format::DecimalSI`.
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Quantity, D::Error> {
            if deserializer.is_human_readable() {
                deserializer.deserialize_any(QuantityVisitor)
            } else {
                deserializer.deserialize_str(QuantityVisitor)
            }
        }
    }

    struct QuantityVisitor;

    impl QuantityVisitor {
        fn parse<E: de::Error>(text: &str) -> Result<Quantity, E> {
            let text = text.trim();
            Quantity::parse(text)
                .map_err(|error| E::custom(format_args!("invalid quantity \"{text}\": {error}")))
        }
    }

    impl Visitor<'_> for QuantityVisitor {
        type Value = Quantity;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a Kubernetes quantity such as \"500m\" or \"1Gi\", or a number")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
            Self::parse(v)
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
            Ok(Quantity::from_int(v))
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
            Ok(Quantity::from_nano(i128::from(v) * super::NANO_PER_UNIT))
        }

        fn visit_i128<E: de::Error>(self, v: i128) -> Result<Quantity, E> {
            Self::parse(&v.to_string())
        }

        fn visit_u128<E: de::Error>(self, v: u128) -> Result<Quantity, E> {
            Self::parse(&v.to_string())
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
            if !v.is_finite() {
                return Err(E::custom(format_args!(
                    "invalid quantity: {v} is not finite"
                )));
            }
            // `Display` for f64 never uses an exponent: it prints the shortest decimal
            // that reads back as `v`, which is what the JSON text most likely said.
            Self::parse(&format!("{v}"))
        }
    }
}

#[cfg(test)]
mod tests;
