//! Unit tests of `Quantity`: upstream's parse table, canonical printing, arithmetic,
//! rounding and serde.

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
    let same = |a: Quantity, b: Quantity| (a.as_nano(), a.format()) == (b.as_nano(), b.format());
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
