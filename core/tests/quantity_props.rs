#![cfg(not(target_arch = "wasm32"))]
//! Property tests for `Quantity`: canonical text round trips, suffix arithmetic against an
//! independent `i128` reference, and ordering.

use gangpack::{Quantity, QuantityError};
use proptest::prelude::*;

const NANO: i128 = 1_000_000_000;
/// Parsing caps a binary-SI magnitude at `i64::MAX` units.
const BINARY_CAP: i128 = i64::MAX as i128 * NANO;

/// Decimal-SI suffixes and their powers of ten.
const DECIMAL: [(&str, i32); 10] = [
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
    ("E", 18),
];
/// Binary-SI suffixes and their powers of two.
const BINARY: [(&str, u32); 6] = [
    ("Ki", 10),
    ("Mi", 20),
    ("Gi", 30),
    ("Ti", 40),
    ("Pi", 50),
    ("Ei", 60),
];

fn q(text: &str) -> Quantity {
    Quantity::parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
}

/// `Quantity::with_format` takes a `Format`; get the three by parsing (0: binary SI,
/// 1: decimal SI, 2: decimal exponent).
fn with_format(value: Quantity, which: usize) -> Quantity {
    let formats = [q("1Ki").format(), q("1").format(), q("1e0").format()];
    value.with_format(formats[which])
}

/// `n / d` rounded away from zero (`d > 0`).
fn div_away(n: i128, d: i128) -> i128 {
    let q = n / d;
    if n % d == 0 {
        q
    } else if n > 0 {
        q + 1
    } else {
        q - 1
    }
}

/// Reference: `numerator × 10^power` nano-units, rounded away from zero; `None` on overflow.
fn scale_ten(numerator: i128, power: i32) -> Option<i128> {
    if power >= 0 {
        numerator.checked_mul(10i128.checked_pow(power.unsigned_abs())?)
    } else {
        match 10i128.checked_pow(power.unsigned_abs()) {
            Some(divisor) => Some(div_away(numerator, divisor)),
            None => Some(numerator.signum()),
        }
    }
}

/// Nano counts with many trailing zeros, binary multiples and arbitrary values.
fn nano_strategy() -> impl Strategy<Value = i128> {
    prop_oneof![
        (i128::MIN + 1)..=i128::MAX,
        (any::<i64>(), 0u32..=19).prop_map(|(m, e)| i128::from(m) * 10i128.pow(e)),
        (any::<i32>(), 0u32..=6).prop_map(|(m, k)| i128::from(m) * (1i128 << (10 * k)) * NANO),
        (-2_000_000i128..=2_000_000).prop_map(|m| m * 1_000_000),
    ]
}

/// Named `quantity::*` so that `cargo test quantity` selects these tests.
mod quantity {
    use super::*;

    proptest! {
        /// `parse(q.to_string()) == q` for every value and format (binary values within the
        /// cap that parsing applies).
        #[test]
        fn display_parse_round_trip(nano in nano_strategy(), which in 0usize..3) {
            let nano = if which == 0 { nano % (BINARY_CAP + 1) } else { nano };
            let value = with_format(Quantity::from_nano(nano), which);
            let text = value.to_string();
            prop_assert!(!text.contains('.') && !text.contains(' '), "{}", text);
            let back = Quantity::parse(&text);
            prop_assert_eq!(back.map(Quantity::as_nano), Ok(nano), "{}", text);
        }

        /// The canonical text of a decimal value is stable: printing what it parses to gives
        /// the same text.
        #[test]
        fn decimal_canonical_text_is_stable(nano in nano_strategy(), which in 1usize..3) {
            let text = with_format(Quantity::from_nano(nano), which).to_string();
            prop_assert_eq!(q(&text).to_string(), text);
        }

        /// `{int}{decimal suffix}` is `int × 10^power`.
        #[test]
        fn decimal_suffix_matches_reference(int in any::<i64>(), index in 0usize..DECIMAL.len()) {
            let (suffix, power) = DECIMAL[index];
            let expected = scale_ten(i128::from(int), power + 9).ok_or(QuantityError::OutOfRange);
            let got = Quantity::parse(&format!("{int}{suffix}"));
            prop_assert_eq!(got.as_ref().map(|v| v.as_nano()), expected.as_ref().copied());
            if let Ok(v) = got {
                prop_assert_eq!(v.format(), q("1").format());
            }
        }

        /// `{int}e{power}` is `int × 10^power`, rounded away from zero to a nano-unit.
        #[test]
        fn exponent_suffix_matches_reference(
            int in any::<i64>(),
            power in -40i32..=40,
            capital in any::<bool>(),
        ) {
            let e = if capital { 'E' } else { 'e' };
            let expected = scale_ten(i128::from(int), power + 9).ok_or(QuantityError::OutOfRange);
            let got = Quantity::parse(&format!("{int}{e}{power}"));
            prop_assert_eq!(got.as_ref().map(|v| v.as_nano()), expected.as_ref().copied());
            if let Ok(v) = got {
                prop_assert_eq!(v.format(), q("1e0").format());
            }
        }

        /// `{int}{binary suffix}` is `int × 2^power`, capped at `i64::MAX` in magnitude.
        #[test]
        fn binary_suffix_matches_reference(int in any::<i64>(), index in 0usize..BINARY.len()) {
            let (suffix, power) = BINARY[index];
            let units = i128::from(int) * (1i128 << power);
            let expected = units.clamp(-i128::from(i64::MAX), i128::from(i64::MAX)) * NANO;
            let got = q(&format!("{int}{suffix}"));
            prop_assert_eq!(got.as_nano(), expected);
            prop_assert_eq!(got.format(), q("1Ki").format());
        }

        /// `{int}.{fraction}{suffix}` matches an exact rational reference, rounded away from
        /// zero to a nano-unit.
        #[test]
        fn fractions_match_reference(
            negative in any::<bool>(),
            int in 0i128..1_000_000,
            fraction in "[0-9]{0,12}",
            index in 0usize..(DECIMAL.len() + BINARY.len()),
        ) {
            let frac_len = i32::try_from(fraction.len()).unwrap();
            let frac_value: i128 = if fraction.is_empty() { 0 } else { fraction.parse().unwrap() };
            let mantissa = int * 10i128.pow(frac_len.unsigned_abs()) + frac_value;
            let mantissa = if negative { -mantissa } else { mantissa };
            let sign = if negative { "-" } else { "" };
            let (suffix, expected) = if index < DECIMAL.len() {
                let (suffix, power) = DECIMAL[index];
                (suffix, scale_ten(mantissa, power + 9 - frac_len).ok_or(QuantityError::OutOfRange))
            } else {
                let (suffix, power) = BINARY[index - DECIMAL.len()];
                let scaled = scale_ten(mantissa * (1i128 << power), 9 - frac_len);
                let capped = scaled.map_or(BINARY_CAP * mantissa.signum(), |v| {
                    v.clamp(-BINARY_CAP, BINARY_CAP)
                });
                (suffix, Ok(capped))
            };
            let text = format!("{sign}{int}.{fraction}{suffix}");
            let got = Quantity::parse(&text);
            prop_assert_eq!(got.as_ref().map(|v| v.as_nano()), expected.as_ref().copied(), "{}", text);
            // Whatever parses prints a text that parses back to the same value.
            if let Ok(v) = got {
                prop_assert_eq!(q(&v.to_string()).as_nano(), v.as_nano(), "{}", text);
            }
        }

        /// Ordering and equality agree with the nano counts, whatever the formats.
        #[test]
        fn ordering_matches_i128(
            a in nano_strategy(),
            b in nano_strategy(),
            fa in 0usize..3,
            fb in 0usize..3,
        ) {
            let qa = with_format(Quantity::from_nano(a), fa);
            let qb = with_format(Quantity::from_nano(b), fb);
            prop_assert_eq!(qa.cmp(&qb), a.cmp(&b));
            prop_assert_eq!(qa == qb, a == b);
            prop_assert_eq!(qa.checked_add(qb).map(Quantity::as_nano), a.checked_add(b));
            prop_assert_eq!(qa.checked_sub(qb).map(Quantity::as_nano), a.checked_sub(b));
        }

        /// Parsing never panics, and whatever parses round-trips through its canonical text.
        #[test]
        fn parse_is_total(text in "[-+]?[0-9]{0,25}\\.?[0-9]{0,25}[eEinumkKMGTP]{0,2}[-+]?[0-9]{0,4}") {
            if let Ok(v) = Quantity::parse(&text) {
                prop_assert_eq!(q(&v.to_string()).as_nano(), v.as_nano(), "{}", text);
            }
        }

        /// Arbitrary text never panics the parser.
        #[test]
        fn parse_never_panics(text in any::<String>()) {
            let _ = Quantity::parse(&text);
        }
    }
}
