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
mod tests {
    use super::Format::{BinarySI as B, DecimalExponent as X, DecimalSI as D};
    use super::*;

    /// Units to nano-units.
    const fn u(units: i128) -> i128 {
        units * NANO_PER_UNIT
    }

    fn q(text: &str) -> Quantity {
        match Quantity::parse(text) {
            Ok(q) => q,
            Err(e) => panic!("{text:?} should parse: {e}"),
        }
    }

    /// Upstream's `TestQuantityParse` table (values written independently as nano counts),
    /// plus a few of ours.
    const PARSE_OK: &[(&str, i128, Format)] = &[
        ("0", 0, D),
        ("0n", 0, D),
        ("0u", 0, D),
        ("0m", 0, D),
        ("0Ki", 0, B),
        ("0k", 0, D),
        ("0Mi", 0, B),
        ("0M", 0, D),
        ("0Gi", 0, B),
        ("0G", 0, D),
        ("0Ti", 0, B),
        ("0T", 0, D),
        ("1", u(1), D),
        // Binary suffixes.
        ("1Ki", u(1024), B),
        ("8Ki", u(8 * 1024), B),
        ("7Mi", u(7 << 20), B),
        ("6Gi", u(6 << 30), B),
        ("5Ti", u(5 << 40), B),
        ("4Pi", u(4 << 50), B),
        ("3Ei", u(3 << 60), B),
        ("10Ti", u(10 << 40), B),
        ("100Ti", u(100 << 40), B),
        // Decimal suffixes.
        ("5n", 5, D),
        ("4u", 4_000, D),
        ("3m", 3_000_000, D),
        ("9", u(9), D),
        ("8k", u(8_000), D),
        ("50k", u(50_000), D),
        ("7M", u(7_000_000), D),
        ("6G", u(6_000_000_000), D),
        ("5T", u(5_000_000_000_000), D),
        ("40T", u(40_000_000_000_000), D),
        ("300T", u(300_000_000_000_000), D),
        ("2P", u(2_000_000_000_000_000), D),
        ("1E", u(1_000_000_000_000_000_000), D),
        // Decimal exponents.
        ("1E-3", 1_000_000, X),
        ("1e3", u(1_000), X),
        ("1E6", u(1_000_000), X),
        ("1e9", u(1_000_000_000), X),
        ("1E12", u(1_000_000_000_000), X),
        ("1e15", u(1_000_000_000_000_000), X),
        ("1E18", u(1_000_000_000_000_000_000), X),
        ("1e14", u(100_000_000_000_000), X),
        ("1e13", u(10_000_000_000_000), X),
        ("100.035k", u(100_035), D),
        // Things that look like floating point.
        ("0.001", 1_000_000, D),
        ("0.0005k", 500_000_000, D),
        ("0.005", 5_000_000, D),
        ("0.05", 50_000_000, D),
        ("0.5", 500_000_000, D),
        ("0.00050k", 500_000_000, D),
        ("0.00500", 5_000_000, D),
        ("0.05000", 50_000_000, D),
        ("0.50000", 500_000_000, D),
        ("0.5e0", 500_000_000, X),
        ("0.5e-1", 50_000_000, X),
        ("0.5e-2", 5_000_000, X),
        ("10.035M", u(10_035_000), D),
        ("1.2e3", u(1_200), X),
        ("1.3E+6", u(1_300_000), X),
        ("1.40e9", u(1_400_000_000), X),
        ("1.53E12", u(1_530_000_000_000), X),
        ("1.6e15", u(1_600_000_000_000_000), X),
        ("1.7E18", u(1_700_000_000_000_000_000), X),
        ("9.01", 9_010_000_000, D),
        ("8.1k", u(8_100), D),
        ("7.123456M", u(7_123_456), D),
        ("6.987654321G", u(6_987_654_321), D),
        ("5.444T", u(5_444_000_000_000), D),
        ("40.1T", u(40_100_000_000_000), D),
        ("300.2T", u(300_200_000_000_000), D),
        ("2.5P", u(2_500_000_000_000_000), D),
        ("1.01E", u(1_010_000_000_000_000_000), D),
        // Finer than nano: rounded away from zero.
        ("3.001n", 4, D),
        ("1.1E-9", 2, X),
        ("0.0000000001", 1, D),
        ("0.0000000005", 1, D),
        ("0.00000000050", 1, D),
        ("0.5e-9", 1, X),
        ("0.9n", 1, D),
        ("0.00000012345", 124, D),
        ("0.00000012354", 124, D),
        // Binary values are capped at 2^63 - 1.
        ("9Ei", u(i64::MAX as i128), B),
        ("8Ei", u(i64::MAX as i128), B),
        ("9223372036854775807Ki", u(i64::MAX as i128), B),
        ("12E", u(12_000_000_000_000_000_000), D),
        // Fractional binary values.
        ("100.035Ki", 102_435_840_000_000, B),
        ("0.5Mi", u(512 * 1024), B),
        ("0.05Gi", 53_687_091_200_000_000, B),
        ("0.025Ti", 27_487_790_694_400_000_000, B),
        // Written by trolls.
        ("0.000000000001Ki", 2, D), // rounds up, leaves binary
        (".001", 1_000_000, D),
        (".0001k", 100_000_000, D),
        ("1.", u(1), D),
        ("1.G", u(1_000_000_000), D),
        // Ours: binary rounding with a carry, extreme exponents, the i128 bounds.
        ("1.0000000001Ki", 1_024_000_000_103, B),
        ("0.0000000000001Ki", 1, D),
        ("0.3Ki", 307_200_000_000, B),
        ("1e-400", 1, X),
        ("1e-9223372036854775808", 1, X),
        ("0e400", 0, X),
        ("0.000e9223372036854775807", 0, X),
        ("007", u(7), D),
        ("1.e3", u(1_000), X),
        ("1e+03", u(1_000), X),
        ("1e-0", u(1), X),
        (
            "9223372036854775807.5",
            9_223_372_036_854_775_807_500_000_000,
            D,
        ),
        ("1e29", u(100_000_000_000_000_000_000_000_000_000), X),
        ("170141183460469231731687303715.884105727", i128::MAX, D),
        (
            "99999999999999999999999999999999999999999999Ei",
            u(i64::MAX as i128),
            B,
        ),
    ];

    #[test]
    fn parse_accepts_upstream_table() {
        for &(text, nano, format) in PARSE_OK {
            let got = q(text);
            assert_eq!((got.as_nano(), got.format()), (nano, format), "{text}");
            let plus = q(&format!("+{text}"));
            assert_eq!((plus.as_nano(), plus.format()), (nano, format), "+{text}");
            let minus = q(&format!("-{text}"));
            assert_eq!(
                (minus.as_nano(), minus.format()),
                (-nano, format),
                "-{text}"
            );
        }
    }

    #[test]
    fn parse_rejects_malformed() {
        use QuantityError as E;
        let unexpected = |character, at| E::UnexpectedCharacter { character, at };
        let unknown = |suffix: &str| E::UnknownSuffix {
            suffix: suffix.to_string(),
        };
        let cases = [
            ("", E::Empty),
            // Upstream's invalid table.
            ("1.1.M", unexpected('.', 3)),
            ("1+1.0M", unexpected('.', 3)),
            ("0.1mi", unknown("mi")),
            ("0.1am", unexpected('a', 3)),
            ("aoeu", unexpected('a', 0)),
            (".5i", unknown("i")),
            ("1i", unknown("i")),
            ("-3.01i", unknown("i")),
            ("-3.01e-", E::MissingExponent),
            (" 1", unexpected(' ', 0)),
            ("1 ", unexpected(' ', 1)),
            // Ours.
            ("1.2.3", unexpected('.', 3)),
            ("1Gb", unexpected('b', 2)),
            ("1 Gi", unexpected(' ', 1)),
            ("80 GiB", unexpected(' ', 2)),
            ("1GiB", unexpected('B', 3)),
            ("1KB", unexpected('B', 2)),
            ("1\t", unexpected('\t', 1)),
            ("1\n", unexpected('\n', 1)),
            ("1_000", unexpected('_', 1)),
            ("1,5", unexpected(',', 1)),
            ("0x10", unexpected('x', 1)),
            ("1e1.5", unexpected('.', 3)),
            ("1e3Ki", unexpected('K', 3)),
            ("1e-3e", unexpected('e', 4)),
            ("1µ", unexpected('µ', 1)),
            ("\u{661}", unexpected('\u{661}', 0)), // ARABIC-INDIC DIGIT ONE
            ("Gi", E::MissingDigits),
            ("k", E::MissingDigits),
            ("+", E::MissingDigits),
            ("-", E::MissingDigits),
            (".", E::MissingDigits),
            ("-.", E::MissingDigits),
            ("+Ki", E::MissingDigits),
            ("e3", E::MissingDigits),
            ("--1", E::MissingDigits),
            ("1e", E::MissingExponent),
            ("1E+", E::MissingExponent),
            ("1ki", unknown("ki")),
            ("1mi", unknown("mi")),
            ("1gi", unexpected('g', 1)),
            ("1K", unknown("K")),
            ("1Ee3", unknown("Ee3")),
            ("1ei", unknown("ei")),
            ("1Mi3", unknown("Mi3")),
            ("1G-", unknown("G-")),
            ("1-3", unknown("-3")),
            ("1e99999999999999999999", E::ExponentOutOfRange),
            ("0e99999999999999999999", E::ExponentOutOfRange),
            ("1e9223372036854775808", E::ExponentOutOfRange),
            ("1e40", E::OutOfRange),
            ("-1e40", E::OutOfRange),
            ("2e29", E::OutOfRange),
            ("1e9223372036854775807", E::OutOfRange),
            ("170141183460469231731687303715.884105728", E::OutOfRange),
            ("1000000000000000000000000000000000000000000", E::OutOfRange),
        ];
        for (text, error) in cases {
            assert_eq!(Quantity::parse(text), Err(error), "{text:?}");
            assert!(text.parse::<Quantity>().is_err(), "{text:?}");
        }
    }

    /// Upstream's `TestQuantityString` table, negated too.
    #[test]
    fn canonical_form_of_values() {
        let cases: &[(i128, Format, &str)] = &[
            (u(1 << 30), B, "1Gi"),
            (u(300 << 20), B, "300Mi"),
            (u(6 * 1024), B, "6Ki"),
            (u(1001 << 30), B, "1001Gi"),
            (u(1 << 40), B, "1Ti"),
            (u(5), B, "5"),
            (500_000_000, B, "500m"),
            (u(1_000_000_000), D, "1G"),
            (1_000_000, D, "1m"),
            (80_000_000, D, "80m"),
            (1_080_000_000, D, "1080m"),
            (u(300_000_000), D, "300M"),
            (u(1_000_000_000_000), D, "1T"),
            (u(1_000_000_000_000_000_000), D, "1E"),
            (u(1_000_000_000_000_000_000_000), D, "1e21"),
            (u(5_000_000_000_000_000_000_000), D, "5e21"),
            (u(1_000_000_000_000_000_000_000_000), D, "1e24"),
            (u(1_234_567_000_000), D, "1234567M"),
            (1_234_567_000_000, B, "1234567m"),
            (u(3_000), D, "3k"),
            (u(1_025), B, "1025"),
            (0, D, "0"),
            (0, B, "0"),
            (u(1_000_000_000), X, "1e9"),
            (1_000_000, X, "1e-3"),
            (1, X, "1e-9"),
            (80_000_000, X, "80e-3"),
            (u(300_000_000), X, "300e6"),
            (u(1_000_000_000_000), X, "1e12"),
            (u(1_000), X, "1e3"),
            (u(3_000), X, "3e3"),
            (0, X, "0"),
            (1, D, "1n"),
            (80, D, "80n"),
            (1_080, D, "1080n"),
            (1_000, D, "1u"),
            (80_000, D, "80u"),
            (1_080_000, D, "1080u"),
            // Ours.
            (u(1_000), B, "1k"), // below 1Ki: decimal
            (u(2_000), B, "2000"),
            (u(1_024) + 500_000_000, B, "1024500m"), // not whole: decimal
            (u(1 << 62), B, "4Ei"),
            (u(1 << 70), B, "1024Ei"), // upstream has no suffix for 1024^7
            (u(1_200), X, "1200"),
            (i128::MAX, D, "170141183460469231731687303715884105727n"),
            (i128::MAX, B, "170141183460469231731687303715884105727n"),
        ];
        for &(nano, format, text) in cases {
            let value = Quantity::from_nano(nano).with_format(format);
            assert_eq!(value.to_string(), text, "{nano} {format}");
            if nano != 0 {
                assert_eq!((-value).to_string(), format!("-{text}"), "-{nano} {format}");
            }
            // The canonical text reads back to the same value, unless it is a binary
            // value above the cap that parsing applies.
            if format != B || nano.abs() <= BINARY_CAP_NANO {
                assert_eq!(q(text).as_nano(), nano, "{text}");
            }
        }
        assert_eq!(
            Quantity::from_nano(i128::MIN).to_string(),
            "-170141183460469231731687303715884105728n"
        );
    }

    /// Upstream's `TestQuantityParseEmit` and the alternates of `TestQuantityString`.
    #[test]
    fn canonical_form_of_parsed_text() {
        let cases = [
            ("1Ki", "1Ki"),
            ("1Mi", "1Mi"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("1000M", "1G"),
            (".001Ki", "1024m"),
            (".000001Ki", "1024u"),
            (".000000001Ki", "1024n"),
            (".000000000001Ki", "2n"),
            ("307200Ki", "300Mi"),
            ("1025024Mi", "1001Gi"),
            ("1024Gi", "1Ti"),
            ("5000m", "5"),
            ("0.5", "500m"),
            ("0.001T", "1G"),
            ("1000u", "1m"),
            ("1.08", "1080m"),
            ("1080000000n", "1080m"),
            ("1000E", "1e21"),
            ("5000E", "5e21"),
            ("1000000E", "1e24"),
            (".001e12", "1e9"),
            ("0.001e0", "1e-3"),
            ("1000e-12", "1e-9"),
            ("00", "0"),
            // Ours.
            ("1.5", "1500m"),
            ("1536Mi", "1536Mi"),
            ("0.5Gi", "512Mi"),
            ("1.5Gi", "1536Mi"),
            ("2e3", "2e3"),
            ("1000", "1k"),
            ("100m", "100m"),
            ("0", "0"),
            ("-0", "0"),
            ("-0Ki", "0"),
            ("0.0e5", "0"),
            ("0.3Ki", "307200m"),
            ("0.1Ki", "102400m"),
            ("1.5Ki", "1536"),
            ("100.035Ki", "102435840m"),
            ("1.0000000001Ki", "1024000000103n"),
            ("7Ei", "7Ei"),
            ("8Ei", "9223372036854775807"),
            ("1.2e3", "1200"),
            ("12e2", "1200"),
            ("1e0", "1"),
            ("0.5e0", "500e-3"),
            ("1e-400", "1e-9"),
            ("1.1E-9", "2e-9"),
            ("3.001n", "4n"),
            ("12E", "12E"),
            ("1.01E", "1010P"),
            ("2.5P", "2500T"),
            ("123456789", "123456789"),
            ("1e21", "1e21"),
            ("+1k", "1k"),
            ("1.G", "1G"),
        ];
        for (text, canonical) in cases {
            assert_eq!(q(text).to_string(), canonical, "{text}");
            if text.starts_with(['-', '+']) {
                continue;
            }
            let negated = q(&format!("-{text}"));
            if negated.is_zero() {
                assert_eq!(negated.to_string(), "0", "-{text}");
            } else {
                assert_eq!(negated.to_string(), format!("-{canonical}"), "-{text}");
            }
        }
    }

    /// Upstream's `TestNewSet`, `TestMilliNewSet` and `TestNewScaledSet`.
    #[test]
    fn constructors() {
        assert_eq!(Quantity::from_int(1).to_string(), "1");
        assert_eq!(Quantity::from_int(1_000).to_string(), "1k");
        assert_eq!(Quantity::from_int(1_234_000).to_string(), "1234k");
        assert_eq!(Quantity::binary_si(1024).to_string(), "1Ki");
        assert_eq!(Quantity::binary_si(1024 * 1024).to_string(), "1Mi");
        assert_eq!(
            Quantity::from_int(1_000_000).with_format(X).to_string(),
            "1e6"
        );
        assert_eq!(Quantity::from_milli(1).to_string(), "1m");
        assert_eq!(Quantity::from_milli(1_000).to_string(), "1");
        assert_eq!(Quantity::from_milli(1_234_000).to_string(), "1234");
        assert_eq!(
            Quantity::from_milli(1_024).with_format(B).to_string(),
            "1024m"
        );
        assert_eq!(
            Quantity::from_milli(1024 * 1024).with_format(B).to_string(),
            "1048576m"
        );
        assert_eq!(
            Quantity::from_milli(1_000_000).with_format(X).to_string(),
            "1e3"
        );
        assert_eq!(Quantity::from_nano(1).to_string(), "1n");
        assert_eq!(Quantity::from_nano(1_000).to_string(), "1u");
        assert_eq!(Quantity::from_nano(1_000_000).to_string(), "1m");
        assert_eq!(Quantity::ZERO.to_string(), "0");
        assert_eq!(Quantity::default(), Quantity::ZERO);
        assert_eq!(Quantity::ZERO.format(), D);
        assert_eq!(Quantity::binary_si(5).format(), B);
        assert_eq!(Quantity::from_int(i64::MIN).value(), i64::MIN);
        assert_eq!(Quantity::from_milli(i64::MAX).milli_value(), i64::MAX);
    }

    #[test]
    fn value_and_milli_value_round_away_from_zero() {
        let cases = [
            ("1.1", 2, 1_100),
            ("-1.1", -2, -1_100),
            ("0.1", 1, 100),
            ("-0.1", -1, -100),
            ("1n", 1, 1),
            ("-1n", -1, -1),
            ("1.5u", 1, 1),
            ("9.01", 10, 9_010),
            ("-9.01", -10, -9_010),
            ("100m", 1, 100),
            ("1000m", 1, 1_000),
            ("1Ki", 1_024, 1_024_000),
            ("0", 0, 0),
            ("9223372036854775.807", 9_223_372_036_854_776, i64::MAX),
            ("9223372036854775.808", 9_223_372_036_854_776, i64::MAX),
            ("9223372036854775807", i64::MAX, i64::MAX),
            ("1e20", i64::MAX, i64::MAX),
            ("-1e20", i64::MIN, i64::MIN),
        ];
        for (text, value, milli) in cases {
            assert_eq!(
                (q(text).value(), q(text).milli_value()),
                (value, milli),
                "{text}"
            );
        }
    }

    #[test]
    fn sign_and_zero() {
        assert_eq!(q("-1n").sign(), -1);
        assert_eq!(q("0Ki").sign(), 0);
        assert_eq!(q("1n").sign(), 1);
        assert!(q("-1n").is_negative() && !q("-1n").is_positive());
        assert!(q("1n").is_positive() && !q("1n").is_negative());
        assert!(q("0").is_zero() && q("-0.0e7").is_zero() && !q("1n").is_zero());
    }

    /// Upstream's `TestAdd`, `TestSub` and `TestMul`, plus the zero-format rule.
    #[test]
    fn arithmetic() {
        let n = |units: i64, format| Quantity::from_int(units).with_format(format);
        let add = |a: Quantity, b| a.checked_add(b).unwrap();
        let sub = |a: Quantity, b| a.checked_sub(b).unwrap();
        let same =
            |a: Quantity, b: Quantity| (a.as_nano(), a.format()) == (b.as_nano(), b.format());
        assert!(same(add(n(10, D), n(10, D)), n(20, D)));
        assert!(same(add(n(10, D), n(1, B)), n(11, D)));
        assert!(same(add(n(10, B), n(1, D)), n(11, B)));
        assert!(same(add(n(0, D), n(50, D)), n(50, D)));
        assert!(same(add(n(50, D), n(0, D)), n(50, D)));
        assert!(same(add(n(0, D), n(0, D)), n(0, D)));
        assert!(same(sub(n(10, D), n(10, D)), n(0, D)));
        assert!(same(sub(n(10, D), n(1, B)), n(9, D)));
        assert!(same(sub(n(10, B), n(1, D)), n(9, B)));
        assert!(same(sub(n(0, D), n(50, D)), n(-50, D)));
        // A zero left operand takes the other's format (upstream `Add`/`Sub`).
        for text in ["100m", "1Gi", "2e3"] {
            assert_eq!(add(q(text), q("0")).to_string(), text);
            assert_eq!(add(q("0"), q(text)).to_string(), text);
            assert_eq!(sub(q(text), q("0")).to_string(), text);
            assert_eq!(sub(q("0"), q(text)).to_string(), format!("-{text}"));
            assert_eq!(q("0").saturating_add(q(text)).to_string(), text);
            assert_eq!(
                q("0").saturating_sub(q(text)).to_string(),
                format!("-{text}")
            );
        }
        let mul = |a: Quantity, b| a.checked_mul_int(b).unwrap();
        assert!(same(mul(n(10, D), 10), n(100, D)));
        assert!(same(mul(n(10, B), 1), n(10, B)));
        assert!(same(mul(n(10, B), -1), n(-10, B)));
        assert!(same(mul(n(50, D), 0), n(0, D)));
        assert!(same(mul(n(-50, D), -50), n(2_500, D)));
        let big = mul(n(i64::MAX, D), 2);
        assert_eq!(big.as_nano(), u(i128::from(i64::MAX) * 2));
        assert_eq!(big.to_string(), "18446744073709551614");
        assert_eq!(mul(n(i64::MIN, D), -1).to_string(), "9223372036854775808");
        assert_eq!(mul(q("512Mi"), 6).to_string(), "3Gi");
        assert_eq!(q("1.5").saturating_mul_int(3).to_string(), "4500m");
        // Negation keeps the format.
        assert_eq!((-q("9.01")).to_string(), "-9010m");
        assert_eq!((-q("1Gi")).to_string(), "-1Gi");
        assert_eq!((-(-q("1Gi"))).to_string(), "1Gi");
        assert_eq!(
            q("1Gi").checked_neg().map(|v| v.to_string()).as_deref(),
            Some("-1Gi")
        );
    }

    #[test]
    fn arithmetic_overflow() {
        let max = Quantity::from_nano(i128::MAX);
        let min = Quantity::from_nano(i128::MIN);
        let one = Quantity::from_nano(1);
        assert_eq!(max.checked_add(one), None);
        assert_eq!(min.checked_sub(one), None);
        assert_eq!(max.checked_mul_int(2), None);
        assert_eq!(min.checked_mul_int(-1), None);
        assert_eq!(min.checked_neg(), None);
        assert_eq!(max.saturating_add(one), max);
        assert_eq!(min.saturating_sub(one), min);
        assert_eq!(max.saturating_mul_int(-2), min);
        assert_eq!(min.saturating_mul_int(2), min);
        assert_eq!(-min, max);
        assert_eq!(
            max.checked_sub(one).map(Quantity::as_nano),
            Some(i128::MAX - 1)
        );
        assert_eq!(max.value(), i64::MAX);
        assert_eq!(min.milli_value(), i64::MIN);
    }

    #[test]
    fn add_and_sub_cancel() {
        let mut sum = Quantity::ZERO;
        let parts = ["1Gi", "1.5", "3n", "7e12", "-250m", "0.3Ki", "9Ei", "12E"];
        for part in parts {
            sum = sum.checked_add(q(part)).unwrap();
        }
        for part in parts {
            sum = sum.checked_sub(q(part)).unwrap();
        }
        assert!(sum.is_zero());
    }

    /// Upstream's `TestQuantityCmp`, plus equality across formats.
    #[test]
    fn comparison_ignores_format() {
        use core::hash::BuildHasher;
        assert_eq!(q("0").cmp(&q("0")), Ordering::Equal);
        assert!(q("100m") > q("50m"));
        assert!(q("50m") < q("100m"));
        assert!(q("10000T") > q("100Gi"));
        assert!(q("1Gi") > q("1G"));
        assert!(q("-1Gi") < q("-1G"));
        assert_eq!(q("1000m"), q("1"));
        assert_eq!(q("1Gi"), q("1073741824"));
        assert_eq!(q("1Gi"), q("1024Mi"));
        assert_eq!(q("1e3"), q("1k"));
        assert_eq!(q("0Ki"), q("0"));
        assert_ne!(q("1n"), q("0"));
        let hasher = std::hash::RandomState::new();
        assert_eq!(hasher.hash_one(q("1Gi")), hasher.hash_one(q("1073741824")));
        let set: BTreeSet<Quantity> = ["1Gi", "1024Mi", "1073741824", "1.073741824G"]
            .into_iter()
            .map(q)
            .collect();
        assert_eq!(set.len(), 1);
        let mut sorted: Vec<Quantity> = ["1Gi", "1G", "500Mi", "1", "-1", "0", "1m"]
            .into_iter()
            .map(q)
            .collect();
        sorted.sort();
        let texts: Vec<String> = sorted.iter().map(ToString::to_string).collect();
        assert_eq!(texts, ["-1", "0", "1m", "1", "500Mi", "1G", "1Gi"]);
    }

    #[test]
    fn display_pads_and_is_copy() {
        fn copy<T: Copy>(value: T) -> (T, T) {
            (value, value)
        }
        let (a, b) = copy(q("1Gi"));
        assert_eq!(format!("{a:>6}|{b:<6}|"), "   1Gi|1Gi   |");
        assert_eq!(format!("{B}"), "BinarySI");
        assert_eq!(X.as_str(), "DecimalExponent");
    }

    #[test]
    fn error_messages() {
        let message = |text: &str| Quantity::parse(text).unwrap_err().to_string();
        assert_eq!(message(""), "must not be empty");
        assert_eq!(message("80 GiB"), "unexpected character ' ' at byte 2");
        assert_eq!(message("1\t"), "unexpected character '\\t' at byte 1");
        assert_eq!(
            message("Gi"),
            "missing number: expected digits such as 1, 1.5 or .5 before the suffix"
        );
        assert_eq!(
            message("1ki"),
            "unknown suffix \"ki\": expected one of n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, \
             Pi, Ei or an exponent such as e3"
        );
        assert_eq!(
            message("1e"),
            "the exponent has no digits: expected e.g. e3 or E-6"
        );
        assert_eq!(
            message("1e99999999999999999999"),
            "the exponent does not fit a 64-bit integer"
        );
        assert_eq!(
            message("1e40"),
            "value out of range: magnitudes up to about 1.7e29 (nano precision in 128 bits) are \
             supported"
        );
        let error: &dyn core::error::Error = &QuantityError::Empty;
        assert!(error.source().is_none());
    }

    #[cfg(all(feature = "serde", not(target_arch = "wasm32")))]
    #[test]
    fn serde_json() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Limits {
            memory: Quantity,
            cpu: Option<Quantity>,
        }
        assert_eq!(serde_json::to_string(&q("1.5Gi")).unwrap(), "\"1536Mi\"");
        assert_eq!(serde_json::to_string(&q("2e3")).unwrap(), "\"2e3\"");
        let from = |json: &str| serde_json::from_str::<Quantity>(json);
        for (json, canonical) in [
            ("\"1Gi\"", "1Gi"),
            ("\" 1\"", "1"),
            ("\"1 \"", "1"),
            ("1", "1"),
            (" 1", "1"),
            ("10", "10"),
            ("-1", "-1"),
            ("1.5", "1500m"),
            ("-0.25", "-250m"),
            ("1e3", "1k"),
            ("0.1", "100m"),
            ("18446744073709551615", "18446744073709551615"),
            ("-9223372036854775808", "-9223372036854775808"),
        ] {
            assert_eq!(from(json).unwrap().to_string(), canonical, "{json}");
        }
        let error = from("\"80 GiB\"").unwrap_err().to_string();
        assert!(
            error.starts_with("invalid quantity \"80 GiB\": unexpected character ' ' at byte 2"),
            "{error}"
        );
        assert!(from("true").is_err());
        assert!(from("null").is_err());
        assert!(from("1e300").is_err());
        let limits: Limits = serde_json::from_str(r#"{"memory":"0.5Gi","cpu":null}"#).unwrap();
        assert_eq!(limits.memory.to_string(), "512Mi");
        assert!(limits.cpu.is_none());
        assert_eq!(
            serde_json::to_string(&limits).unwrap(),
            r#"{"memory":"512Mi","cpu":null}"#
        );
    }
}
