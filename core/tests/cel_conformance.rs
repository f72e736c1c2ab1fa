//! CEL conformance: every function and operator gangpack supports, with the value (or
//! the error) upstream CEL gives for it — from the CEL language definition and
//! conformance suite, cel-go's extension docs (strings v2, sets) and the Kubernetes
//! library docs (lists, regex, quantity, semver, IP, CIDR) — plus the DRA selectors
//! real drivers' DeviceClasses and claims use.
//!
//! Each row is an expression and what it must give: a value (checked as
//! `(expr) == value` evaluating to `true`), a runtime error message (the expression,
//! wrapped in `dyn(...)`, fails with exactly that message) or a compile error message.

use gangpack::{Device, DeviceAttribute, Quantity, Selector};

const NV: &str = "gpu.nvidia.com";

/// What a row's expression must give.
#[derive(Clone, Copy)]
enum Want {
    /// The expression equals this CEL literal (`(expr) == lit` is `true`).
    Is(&'static str),
    /// The expression is `true`.
    T,
    /// The expression is `false`.
    F,
    /// Evaluation fails with this message.
    Err(&'static str),
    /// Compilation fails with this message (position left out).
    Bad(&'static str),
}
use Want::{Bad, Err, F, Is, T};

/// An H100 as NVIDIA's DRA driver publishes it, plus a second domain.
fn device() -> Device {
    let mut d = Device::new("gpu-0");
    let attrs = [
        (
            "productName",
            DeviceAttribute::String("NVIDIA H100 80GB HBM3".into()),
        ),
        ("type", DeviceAttribute::String("mig".into())),
        ("profile", DeviceAttribute::String("1g.10gb".into())),
        ("architecture", DeviceAttribute::String("Hopper".into())),
        ("uuid", DeviceAttribute::String("GPU-4e8b2f6a-1c3d".into())),
        (
            "cudaComputeCapability",
            DeviceAttribute::Version("9.0.0".into()),
        ),
        (
            "driverVersion",
            DeviceAttribute::Version("550.54.15".into()),
        ),
        ("index", DeviceAttribute::Int(3)),
        ("pciBusID", DeviceAttribute::String("0000:3b:00.0".into())),
        (
            "dra.example.com/profile",
            DeviceAttribute::String("2g.20gb".into()),
        ),
        (
            "dra.example.com/ip",
            DeviceAttribute::String("10.1.2.3".into()),
        ),
        (
            "dra.example.com/cidr",
            DeviceAttribute::String("10.1.0.0/16".into()),
        ),
        ("dra.example.com/numa", DeviceAttribute::Ints(vec![0, 1])),
        (
            "dra.example.com/tags",
            DeviceAttribute::Strings(vec!["b".into(), "a".into(), "c".into()]),
        ),
    ];
    for (k, v) in attrs {
        d.attributes.insert(k.into(), v);
    }
    d.capacity
        .insert("memory".into(), Quantity::parse("80Gi").unwrap().into());
    d
}

fn check(expr: &str, want: &Want) -> Result<(), String> {
    let dev = device();
    let (src, expected) = match want {
        Is(lit) => (format!("({expr}) == {lit}"), Some(true)),
        T => (expr.to_owned(), Some(true)),
        F => (expr.to_owned(), Some(false)),
        Err(_) | Bad(_) => (format!("dyn({expr}) == null"), None),
    };
    let compiled = Selector::compile(&src);
    match (want, compiled) {
        (Bad(msg), Ok(_)) => Result::Err(format!("{expr}: compiled, expected error {msg:?}")),
        (Bad(msg), Result::Err(e)) if e.kind.to_string() == *msg => Ok(()),
        (Bad(msg), Result::Err(e)) => Result::Err(format!(
            "{expr}: compile error\n  got  {:?}\n  want {msg:?}",
            e.kind.to_string()
        )),
        (_, Result::Err(e)) => Result::Err(format!("{expr}: {}", e.render(&src))),
        (Err(msg), Ok(s)) => match s.eval(NV, &dev) {
            Result::Err(e) if e.to_string() == *msg => Ok(()),
            other => Result::Err(format!(
                "{expr}:\n  got  {:?}\n  want error {msg:?}",
                other.map_err(|e| e.to_string())
            )),
        },
        (_, Ok(s)) => match s.eval(NV, &dev) {
            Ok(b) if Some(b) == expected => Ok(()),
            other => Result::Err(format!(
                "{src}:\n  got  {:?}\n  want {expected:?}",
                other.map_err(|e| e.to_string())
            )),
        },
    }
}

fn run(table: &[(&str, Want)]) {
    let failures: Vec<String> = table
        .iter()
        .filter_map(|(expr, want)| check(expr, want).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n{}",
        failures.len(),
        table.len(),
        failures.join("\n")
    );
}

#[test]
fn literals_and_operators() {
    run(&[
        // Literals.
        ("0x1F", Is("31")),
        ("-9223372036854775808", Is("-9223372036854775807 - 1")),
        ("1u", Is("uint(1)")),
        ("0x10u", Is("16u")),
        ("1.5", Is("3.0 / 2.0")),
        ("2e3", Is("2000.0")),
        (".5", Is("0.5")),
        ("'a\\tb'", Is("\"a\\u0009b\"")),
        (r#"r"a\tb""#, Is(r#""a\\tb""#)),
        ("'''x\ny'''", Is("'x\\ny'")),
        ("\"\\x41\\101\\u00e9\"", Is("'AAé'")),
        ("null", Is("null")),
        ("[1, 2, 3][1]", Is("2")),
        ("[dyn(1), dyn('a')][1]", Is("'a'")),
        // Arithmetic.
        ("1 + 2 * 3 - 4 / 2 % 3", Is("5")),
        ("-7 / 2", Is("-3")),
        ("-7 % 2", Is("-1")),
        ("9223372036854775807 + 1", Err("integer overflow in '_+_'")),
        ("-9223372036854775807 - 2", Err("integer overflow in '_-_'")),
        ("4611686018427387904 * 2", Err("integer overflow in '_*_'")),
        ("1 / 0", Err("division by zero")),
        ("1 % 0", Err("modulus by zero")),
        (
            "-(-9223372036854775807 - 1)",
            Err("integer overflow in '-_'"),
        ),
        ("3u + 4u", Is("7u")),
        ("3u - 4u", Err("unsigned integer overflow in '_-_'")),
        ("7u / 2u", Is("3u")),
        ("7u % 0u", Err("modulus by zero")),
        ("1.5 + 2.25", Is("3.75")),
        ("1.0 / 0.0 > 1e308", T),
        ("-(1.5)", Is("-1.5")),
        ("'ab' + 'cd'", Is("'abcd'")),
        ("[1] + [2, 3]", Is("[1, 2, 3]")),
        (
            "1 + 1u",
            Bad("found no matching overload for '_+_' applied to '(int, uint)'"),
        ),
        (
            "1.5 % 1.0",
            Bad("found no matching overload for '_%_' applied to '(double, double)'"),
        ),
        (
            "'a' - 'b'",
            Bad("found no matching overload for '_-_' applied to '(string, string)'"),
        ),
        // Comparison, including across numeric types (CrossTypeNumericComparisons).
        ("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3", T),
        ("'a' < 'b' && 'B' < 'a'", T),
        ("false < true", T),
        ("1 < 1.5 && 1u < 2 && 2.5 > 2u && -1 < 0u", T),
        ("dyn(1) == 1.0 && dyn(1u) == 1 && dyn(2.0) == 2u", T),
        ("dyn(1) == 'a'", F),
        (
            "1 == 1.0",
            Bad("found no matching overload for '_==_' applied to '(int, double)'"),
        ),
        ("double('NaN') == double('NaN')", F),
        ("double('NaN') < 1.0 || double('NaN') >= 1.0", F),
        ("[1, 2] == [1, 2] && [1] != [2]", T),
        (
            "dyn('a') < 1",
            Err("no such overload: '_<_' applied to '(string, int)'"),
        ),
        (
            "[1] < [2]",
            Bad("found no matching overload for '_<_' applied to '(list(int), list(int))'"),
        ),
        // Logic: commutative with respect to errors.
        ("true || 1 / 0 == 1", T),
        ("1 / 0 == 1 || true", T),
        ("false && 1 / 0 == 1", F),
        ("1 / 0 == 1 && false", F),
        ("1 / 0 == 1 && true", Err("division by zero")),
        ("!true", F),
        ("true ? 'a' : 'b'", Is("'a'")),
        ("false ? 1 / 0 : 2", Is("2")),
        // Membership.
        ("2 in [1, 2, 3]", T),
        ("'a' in ['b']", F),
        ("'gpu.nvidia.com' in device.attributes", T),
        ("'productName' in device.attributes['gpu.nvidia.com']", T),
        ("'nope' in device.attributes['gpu.nvidia.com']", F),
        // Indexing.
        ("[1, 2][1]", Is("2")),
        ("[1, 2][2]", Err("index out of range: 2 (list size 2)")),
        (
            "device.attributes['gpu.nvidia.com'].nope",
            Err("no such key: nope"),
        ),
        ("device.attributes['gpu.nvidia.com']['index']", Is("3")),
        ("size(device.attributes['no.such.domain'])", Is("0")),
    ]);
}

#[test]
fn standard_functions_and_macros() {
    run(&[
        ("size('héllo')", Is("5")),
        ("'héllo'.size()", Is("5")),
        ("size([1, 2])", Is("2")),
        ("size(device.attributes)", Is("2")),
        ("'hello'.startsWith('he') && 'hello'.endsWith('lo')", T),
        ("'hello'.contains('ell')", T),
        ("'hello'.matches('^h.*o$')", T),
        ("matches('hello', 'l+')", T),
        ("'hello'.matches('^ell')", F),
        (
            "'x'.matches('(')",
            Bad("error parsing regexp: unclosed group: `(`"),
        ),
        (
            "'x'.matches('a' + '(')",
            Err("error parsing regexp: unclosed group: `a(`"),
        ),
        ("has(device.attributes['gpu.nvidia.com'].index)", T),
        ("has(device.attributes['gpu.nvidia.com'].nope)", F),
        ("has(device.driver)", T),
        ("[1, 2, 3].all(x, x > 0)", T),
        ("[1, 2, 3].exists(x, x == 2)", T),
        ("[1, 2, 3].exists_one(x, x > 1)", F),
        ("[0, 1].exists(x, 1 / x == 1)", T),
        ("[0, 2].all(x, 1 / x == 1)", F),
        ("[0, 1].all(x, 1 / x == 1)", Err("division by zero")),
        ("[1, 2, 3].map(x, x * 2)", Is("[2, 4, 6]")),
        ("[1, 2, 3].map(x, x > 1, x * 10)", Is("[20, 30]")),
        ("[1, 2, 3].filter(x, x != 2)", Is("[1, 3]")),
        (
            "device.attributes.filter(d, d.startsWith('dra'))",
            Is("['dra.example.com']"),
        ),
        ("[1, 2].map(x, 1 / (x - 1))", Err("division by zero")),
        ("[1].map(x)", Bad("map() takes 2 argument(s), 1 given")),
        ("cel.bind(x, 2, x * x)", Is("4")),
        // Two-variable comprehensions (cel-go ext.TwoVarComprehensions, Kubernetes 1.32+).
        ("[10, 20].all(i, v, v == (i + 1) * 10)", T),
        ("[10, 20].exists(i, v, i == 1 && v == 20)", T),
        ("[1, 1, 2].existsOne(i, v, v == 2)", T),
        (
            "[1, 2].existsOne(v, v == 2)",
            Bad("existsOne() takes 3 argument(s), 2 given"),
        ),
        (
            "['a', 'b'].transformList(i, v, v + string(i))",
            Is("['a0', 'b1']"),
        ),
        ("[1, 2, 3].transformList(i, v, i > 0, v * v)", Is("[4, 9]")),
        (
            "device.attributes['dra.example.com'].exists(k, v, k == 'ip' && v == '10.1.2.3')",
            T,
        ),
        ("device.attributes.all(d, m, size(m) > 0)", T),
        // Map literals and map-building comprehensions.
        ("{'a': 1, 'b': 2}['b']", Is("2")),
        ("{'a': 1}.a", Is("1")),
        (
            "{1: 'x', 2u: 'y'}[1u]",
            Bad("expected type 'int' but found 'uint'"),
        ),
        ("{1: 'x'}[1u]", Is("'x'")),
        ("{'a': 1}.b", Err("no such key: b")),
        ("{'a': 1}[?'b'].orValue(0)", Is("0")),
        ("has({'a': 1}.a) && 'a' in {'a': 1} && !(2 in {1: true})", T),
        ("size({'a': 1, 'b': 2})", Is("2")),
        ("{'a': 1, 'b': 2} == {'b': 2, 'a': 1}", T),
        ("{'a': 1} == {'a': 2}", F),
        ("{'a': 1, 'b': 2}.all(k, k != 'c')", T),
        ("{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 2)", T),
        ("{'a': 1, 'b': 2}.map(k, k)", Is("['a', 'b']")),
        (
            "{'a': 1, 'a': 2}",
            Err("insert failed: key a already exists"),
        ),
        (
            "{1.5: 'x'}",
            Bad("map keys other than int, uint, bool and string are not supported"),
        ),
        (
            "{'a': 1, 'b': 'x'}",
            Bad("expected type 'int' but found 'string'"),
        ),
        ("[10, 20].transformMap(i, v, v + i)", Is("{0: 10, 1: 21}")),
        (
            "{'a': 1, 'b': 2}.transformMap(k, v, v > 1, v * 10)",
            Is("{'b': 20}"),
        ),
        (
            "['a', 'b'].transformMapEntry(i, v, {v: i})",
            Is("{'a': 0, 'b': 1}"),
        ),
        (
            "[1, 1].transformMapEntry(i, v, {v: i})",
            Err("insert failed: key 1 already exists"),
        ),
        (
            "device.attributes['dra.example.com'].transformMap(k, v, k == 'ip', v)",
            Is("{'ip': '10.1.2.3'}"),
        ),
        (
            "'%s'.format([{'b': [2], 'a': [1]}])",
            Is("'{\"a\":[1], \"b\":[2]}'"),
        ),
        // Homogeneous list literals (cel.HomogeneousAggregateLiterals).
        ("[1, 'a']", Bad("expected type 'int' but found 'string'")),
        ("[1, 2u]", Bad("expected type 'int' but found 'uint'")),
        (
            "[[1], ['a']]",
            Bad("expected type 'list(int)' but found 'list(string)'"),
        ),
        ("dyn(1) == 1", T),
        // Conversions.
        ("int('42')", Is("42")),
        ("int('-7')", Is("-7")),
        ("int(3.9)", Is("3")),
        ("int(-3.9)", Is("-3")),
        ("int(42u)", Is("42")),
        (
            "int(18446744073709551615u)",
            Err("range error converting to int"),
        ),
        ("int(1e19)", Err("range error converting to int")),
        (
            "int('4x')",
            Err("type conversion error from string \"4x\" to 'int'"),
        ),
        ("uint(42)", Is("42u")),
        ("uint(-1)", Err("range error converting to uint")),
        ("uint('7')", Is("7u")),
        ("double(1)", Is("1.0")),
        ("double('2.5')", Is("2.5")),
        ("double(3u)", Is("3.0")),
        ("string(42)", Is("'42'")),
        ("string(42u)", Is("'42'")),
        ("string(2.5)", Is("'2.5'")),
        ("string(1e6)", Is("'1e+06'")),
        ("string(0.000000002)", Is("'2e-09'")),
        ("string(100000.0)", Is("'100000'")),
        ("string(true)", Is("'true'")),
        ("string('x')", Is("'x'")),
        ("bool('true') && bool('T') && !bool('0')", T),
        (
            "bool('yes')",
            Err("type conversion error from string \"yes\" to 'bool'"),
        ),
        (
            "int(true)",
            Bad("found no matching overload for 'int' applied to '(bool)'"),
        ),
        (
            "type(1) == int && type('a') == string && type(1u) == uint",
            T,
        ),
        (
            "type(2.0) == double && type([]) == list && type(true) == bool",
            T,
        ),
        ("type(null) == null_type && type(int) == type", T),
        ("type(device.attributes) == map", T),
        ("type(dyn(1)) == string", F),
        // Optionals.
        (
            "device.attributes['gpu.nvidia.com'].?nope.orValue('x')",
            Is("'x'"),
        ),
        (
            "device.attributes['gpu.nvidia.com'].?index.value()",
            Is("3"),
        ),
        ("optional.none().hasValue()", F),
        ("optional.of(1).value()", Is("1")),
        (
            "optional.none().value()",
            Err("optional.none() dereference"),
        ),
        ("[1, 2][?5].orValue(0)", Is("0")),
        ("optional.of(1).orValue(1 / 0)", Is("1")),
        ("optional.none().orValue(1 / 0)", Err("division by zero")),
        ("optional.none().or(optional.of(2)).value()", Is("2")),
        ("optional.of(1).or(optional.of(1 / 0)).value()", Is("1")),
        (
            "optional.ofNonZeroValue(0).hasValue() || optional.ofNonZeroValue('').hasValue()",
            F,
        ),
        ("optional.ofNonZeroValue([1]).value()", Is("[1]")),
        (
            "optional.of(1).or(2)",
            Bad("found no matching overload for 'or' applied to 'optional_type(int).(int)'"),
        ),
    ]);
}

#[test]
fn strings_extension() {
    run(&[
        ("'tacocat'.charAt(3)", Is("'o'")),
        ("'tacocat'.charAt(7)", Is("''")),
        ("'tacocat'.charAt(8)", Err("index out of range: 8")),
        ("'tacocat'.indexOf('a')", Is("1")),
        ("'tacocat'.indexOf('a', 3)", Is("5")),
        ("'tacocat'.indexOf('none')", Is("-1")),
        ("'tacocat'.indexOf('a', 30)", Err("index out of range: 30")),
        ("'tacocat'.lastIndexOf('a')", Is("5")),
        ("'tacocat'.lastIndexOf('a', 4)", Is("1")),
        ("'TacoCat'.lowerAscii()", Is("'tacocat'")),
        ("'TacoCat'.upperAscii()", Is("'TACOCAT'")),
        ("'hello hello'.replace('he', 'we')", Is("'wello wello'")),
        ("'hello hello'.replace('he', 'we', 1)", Is("'wello hello'")),
        ("'a,b,c'.split(',')", Is("['a', 'b', 'c']")),
        ("'a,b,c'.split(',', 2)", Is("['a', 'b,c']")),
        ("'a,b,c'.split(',', 0)", Is("[]")),
        ("'tacocat'.substring(4)", Is("'cat'")),
        ("'tacocat'.substring(0, 4)", Is("'taco'")),
        (
            "'tacocat'.substring(4, 2)",
            Err("invalid substring range. start: 4, end: 2"),
        ),
        ("'  \\ttrim\\n '.trim()", Is("'trim'")),
        ("['a', 'b'].join()", Is("'ab'")),
        ("['a', 'b'].join('-')", Is("'a-b'")),
        // format (strings extension version 1+).
        (
            "'%s and %s'.format(['this', 'that'])",
            Is("'this and that'"),
        ),
        ("'%d %d'.format([dyn(1), dyn(2u)])", Is("'1 2'")),
        ("'%% %s%%'.format(['x'])", Is("'% x%'")),
        ("'%.3f'.format([1.2345])", Is("'1.234'")),
        ("'%f'.format([2.71828])", Is("'2.718280'")),
        ("'%.2f'.format([1234.5678])", Is("'1,234.57'")),
        ("'%f'.format(['NaN'])", Is("'NaN'")),
        ("'%f'.format(['Infinity'])", Is("'∞'")),
        (
            "'%e'.format([2.71828])",
            Is("'2.718280\\u202f×\\u202f10⁰⁰'"),
        ),
        (
            "'%e'.format([1052.032911275])",
            Is("'1.052033\\u202f×\\u202f10⁰³'"),
        ),
        ("'%b'.format([5])", Is("'101'")),
        ("'%b'.format([-5])", Is("'-101'")),
        ("'%b'.format([true])", Is("'1'")),
        ("'%o'.format([11])", Is("'13'")),
        ("'%x'.format([30])", Is("'1e'")),
        ("'%X'.format([30])", Is("'1E'")),
        ("'%x'.format([-30])", Is("'-1e'")),
        (
            "'%x'.format(['Hello world!'])",
            Is("'48656c6c6f20776f726c6421'"),
        ),
        (
            "'%s'.format([[dyn(1), dyn('a'), dyn(2.5), dyn(null)]])",
            Is("'[1, \"a\", 2.500000, null]'"),
        ),
        ("'%s'.format([2.71])", Is("'2.71'")),
        ("'%s'.format([true])", Is("'true'")),
        ("'%s'.format([type('a')])", Is("'string'")),
        (
            "'%s'.format([device.attributes['dra.example.com'].numa])",
            Is("'[0, 1]'"),
        ),
        (
            "'%d'.format([1.5])",
            Err(
                "error during formatting: decimal clause can only be used on integers, was given double",
            ),
        ),
        (
            "'%f'.format([1])",
            Err(
                "error during formatting: fixed-point clause can only be used on doubles, was given int",
            ),
        ),
        ("'%s %s'.format(['a'])", Err("index 1 out of range")),
        (
            "'%z'.format([1])",
            Err("could not parse formatting clause: unrecognized formatting clause \"z\""),
        ),
        (
            "'%s'.format([quantity('1')])",
            Err(
                "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given kubernetes.Quantity",
            ),
        ),
        ("strings.quote('a\"b\\n')", Is("'\"a\\\\\"b\\\\n\"'")),
        ("strings.quote('héllo')", Is("'\"héllo\"'")),
        (
            "'abc'.reverse()",
            Bad(
                "unsupported function \"reverse\": not in the CEL environment Kubernetes gives DRA selectors (it needs version 3 of the strings extension)",
            ),
        ),
    ]);
}

#[test]
fn kubernetes_regex_library() {
    run(&[
        ("'abc 123'.find('[0-9]+')", Is("'123'")),
        ("'abc'.find('[0-9]+')", Is("''")),
        // Go's leftmost match of `[0-9]*` is the empty one at 0 (the Kubernetes doc's
        // example "returns '123'" is not what its implementation does).
        ("'abc 123'.find('[0-9]*')", Is("''")),
        ("'123 abc 456'.findAll('xyz')", Is("[]")),
        ("'123 abc 456'.findAll('[0-9]+')", Is("['123', '456']")),
        ("'123 abc 456'.findAll('[0-9]+', 1)", Is("['123']")),
        ("'123 abc 456'.findAll('[0-9]+', -1)", Is("['123', '456']")),
        ("'123 abc 456'.findAll('[0-9]+', 0)", Is("[]")),
        ("'abc'.findAll('x*')", Is("['', '', '', '']")),
        ("'aaa'.findAll('a*')", Is("['aaa']")),
        // RE2 / Go semantics: ASCII Perl classes, leftmost-first alternation.
        ("'٣'.matches('^\\\\d$')", F),
        ("'é'.matches('^\\\\w$')", F),
        ("'é'.matches('^\\\\pL$')", T),
        ("'ab'.find('a|ab')", Is("'a'")),
        ("'x.y'.matches('^x\\\\Q.\\\\Ey$')", T),
        ("'xzy'.matches('^x\\\\Q.\\\\Ey$')", F),
        ("'a&b'.matches('^a[&]b$')", T),
        ("'HELLO'.matches('(?i)hello')", T),
        (
            "'aaa'.matches('a{1001}')",
            Bad("error parsing regexp: invalid repeat count: `{1001}`"),
        ),
        (
            "'x'.find('[')",
            Bad("error parsing regexp: unclosed character class: `[`"),
        ),
        // The Kubernetes regex library prefixes computed patterns' errors.
        (
            "'x'.find('(' + '')",
            Err("Illegal regex: error parsing regexp: unclosed group: `(`"),
        ),
        (
            "'x'.findAll('a{2' + ',1}')",
            Err("Illegal regex: error parsing regexp: invalid repeat count: `{2,1}`"),
        ),
        (
            "'x'.matches('a' + '**')",
            Err("error parsing regexp: invalid nested repetition operator: `**`"),
        ),
        // RE2 rules: a `{` that is no repetition is literal, octal escapes, no `\<`.
        ("'a{,2}'.matches('^a{,2}$')", T),
        ("'A'.matches('^\\\\101$')", T),
        (
            "'x'.matches('\\\\<x')",
            Bad("error parsing regexp: invalid escape sequence: `\\<`"),
        ),
        (
            "'x'.matches('x{2}{3}')",
            Bad("error parsing regexp: invalid nested repetition operator: `{2}{3}`"),
        ),
        ("'aaa'.matches('^a{1000}$')", F),
        // RE2's Unicode classes: general categories and scripts, nothing else (Go
        // rejects binary properties, ages and break properties).
        ("'α'.matches('^\\\\p{Greek}$')", T),
        ("'α'.matches('^\\\\p{Latin}$')", F),
        ("'1'.matches('^\\\\p{Nd}$')", T),
        ("'ϰ'.matches('^[\\\\p{Greek}]$')", T),
        ("'A'.matches('^\\\\x{41}$')", T),
        // Script, not Script_Extensions: U+0342 (combining perispomeni) is Inherited.
        ("'\\u0342'.matches('^\\\\p{Greek}$')", F),
        ("'\\u0342'.matches('^\\\\p{Inherited}$')", T),
        (
            "'x'.matches('\\\\p{Alphabetic}')",
            Bad("error parsing regexp: invalid character class range: `\\p{Alphabetic}`"),
        ),
        (
            "'x'.matches('\\\\p{greek}')",
            Bad("error parsing regexp: invalid character class range: `\\p{greek}`"),
        ),
    ]);
}

#[test]
fn kubernetes_lists_and_sets() {
    run(&[
        ("[1, 2, 3].isSorted()", T),
        ("['a', 'b', 'b', 'c'].isSorted()", T),
        ("[2.0, 1.0].isSorted()", F),
        ("[].isSorted()", T),
        ("[1, 3].sum()", Is("4")),
        ("[1.0, 3.0].sum()", Is("4.0")),
        ("[1u, 3u].sum()", Is("4u")),
        ("[].sum()", Is("0")),
        (
            "[9223372036854775807, 1].sum()",
            Err("integer overflow in '_+_'"),
        ),
        ("[1, 3].min()", Is("1")),
        ("[1, 3].max()", Is("3")),
        ("['b', 'a'].min()", Is("'a'")),
        ("[].min()", Err("min called on empty list")),
        ("[].max()", Err("max called on empty list")),
        ("[1, 2, 2, 3].indexOf(2)", Is("1")),
        ("['a', 'b', 'b', 'c'].lastIndexOf('b')", Is("2")),
        ("[1.0].indexOf(1.1)", Is("-1")),
        ("[].indexOf('string')", Is("-1")),
        (
            "[1].indexOf('a')",
            Bad("found no matching overload for 'indexOf' applied to 'list(int).(string)'"),
        ),
        (
            "[[1]].isSorted()",
            Bad("found no matching overload for 'isSorted' applied to 'list(list(int)).()'"),
        ),
        (
            "['a'].sum()",
            Bad("found no matching overload for 'sum' applied to 'list(string).()'"),
        ),
        ("[1, 2, 3].includes(2)", T),
        ("'model-a'.includes('model-a')", T),
        ("sets.contains([1, 2, 3, 4], [2, 3])", T),
        ("sets.contains([1, 2], [3])", F),
        ("sets.contains([], [])", T),
        ("sets.equivalent([1, 2, 3], [dyn(3u), dyn(2.0), dyn(1)])", T),
        ("sets.equivalent([1, 2], [2, 2, 2])", F),
        ("sets.intersects([1], [1, 2])", T),
        ("sets.intersects([1], [])", F),
    ]);
}

#[test]
fn kubernetes_quantity_and_semver() {
    run(&[
        ("quantity('1Gi').compareTo(quantity('1024Mi'))", Is("0")),
        ("quantity('1.5').isInteger()", F),
        ("quantity('2k').asInteger()", Is("2000")),
        ("quantity('1Gi').add(quantity('1Gi')) == quantity('2Gi')", T),
        ("quantity('1').sub(1).isLessThan(quantity('1m'))", T),
        ("sign(quantity('-5'))", Is("-1")),
        ("isQuantity('1Ki') && !isQuantity('1KiB')", T),
        (
            "quantity('1.5').asInteger()",
            Err("cannot convert value to integer"),
        ),
        (
            "quantity('1 Gi')",
            Bad("invalid quantity \"1 Gi\": unexpected character ' ' at byte 1"),
        ),
        ("semver('1.2.3').major()", Is("1")),
        ("semver('1.2.3').minor() + semver('1.2.3').patch()", Is("5")),
        ("semver('v1.2', true) == semver('1.2.0')", T),
        ("semver('1.2.3').isGreaterThan(semver('1.2.3-rc.1'))", T),
        ("isSemver('1.2.3') && !isSemver('1.2')", T),
    ]);
}

#[test]
fn kubernetes_ip_and_cidr() {
    run(&[
        ("isIP('1.2.3.4') && isIP('2001:db8::1')", T),
        (
            "isIP('1.2.3.4.5') || isIP('01.2.3.4') || isIP('::ffff:1.2.3.4')",
            F,
        ),
        ("isIP('fe80::1%eth0')", F),
        ("ip('1.2.3.4').family()", Is("4")),
        ("ip('::1').family()", Is("6")),
        ("ip('1.2.3.4') == ip('1.2.3.4')", T),
        (
            "ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified()",
            T,
        ),
        ("ip('127.0.0.1').isLoopback() && ip('::1').isLoopback()", T),
        (
            "ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast()",
            T,
        ),
        (
            "ip('169.254.1.1').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast()",
            T,
        ),
        (
            "ip('10.0.0.1').isGlobalUnicast() && ip('2001:db8::1').isGlobalUnicast()",
            T,
        ),
        (
            "ip('255.255.255.255').isGlobalUnicast() || ip('127.0.0.1').isGlobalUnicast()",
            F,
        ),
        ("string(ip('2001:0db8:0000::0001'))", Is("'2001:db8::1'")),
        (
            "ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')",
            T,
        ),
        (
            "ip('1.2.3')",
            Bad(
                "IP Address \"1.2.3\" parse error during conversion from string: not a valid IP address",
            ),
        ),
        (
            "ip('::ffff:1.2.3.4')",
            Bad(
                "IP Address \"::ffff:1.2.3.4\" parse error during conversion from string: IPv4-mapped IPv6 address is not allowed",
            ),
        ),
        (
            "ip('1.2.3' + '.x')",
            Err(
                "IP Address \"1.2.3.x\" parse error during conversion from string: not a valid IP address",
            ),
        ),
        (
            "isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0/33') && !isCIDR('10.0.0.0')",
            T,
        ),
        ("cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", T),
        ("cidr('10.0.0.0/8').containsIP('11.1.2.3')", F),
        ("cidr('::/0').containsIP('1.2.3.4')", F),
        ("cidr('10.0.0.0/8').containsCIDR(cidr('10.1.0.0/16'))", T),
        ("cidr('10.0.0.0/16').containsCIDR('10.0.0.0/8')", F),
        ("cidr('10.1.2.3/8').ip() == ip('10.1.2.3')", T),
        ("cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8')", T),
        (
            "string(cidr('2001:db8::1/32').masked())",
            Is("'2001:db8::/32'"),
        ),
        ("cidr('10.0.0.0/8').prefixLength()", Is("8")),
        (
            "cidr('10.0.0.0/8').containsIP('x')",
            Err(
                "IP Address \"x\" parse error during conversion from string: not a valid IP address",
            ),
        ),
        (
            "cidr('10.0.0.0/33')",
            Bad(
                "network address \"10.0.0.0/33\" parse error during conversion from string: bad prefix length",
            ),
        ),
    ]);
}

#[test]
fn kubernetes_url_library() {
    run(&[
        (
            "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
            T,
        ),
        ("isURL('/absolute-path')", T),
        ("isURL('https://a:b:c/')", F),
        ("isURL('../relative-path')", F),
        ("url('/path').getScheme()", Is("''")),
        ("url('https://example.com/').getScheme()", Is("'https'")),
        (
            "url('https://example.com:80/').getHost()",
            Is("'example.com:80'"),
        ),
        ("url('https://example.com/').getHost()", Is("'example.com'")),
        ("url('https://[::1]:80/').getHost()", Is("'[::1]:80'")),
        ("url('https://[::1]/').getHost()", Is("'[::1]'")),
        ("url('/path').getHost()", Is("''")),
        (
            "url('https://example.com:80/').getHostname()",
            Is("'example.com'"),
        ),
        (
            "url('https://127.0.0.1:80/').getHostname()",
            Is("'127.0.0.1'"),
        ),
        ("url('https://[::1]:80/').getHostname()", Is("'::1'")),
        ("url('https://example.com:80/').getPort()", Is("'80'")),
        ("url('https://example.com/').getPort()", Is("''")),
        (
            "url('https://example.com/path').getEscapedPath()",
            Is("'/path'"),
        ),
        (
            "url('https://example.com/path with spaces/').getEscapedPath()",
            Is("'/path%20with%20spaces/'"),
        ),
        ("url('https://example.com').getEscapedPath()", Is("''")),
        (
            "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()",
            Is("{'k1': ['a'], 'k2': ['b', 'c']}"),
        ),
        (
            "url('https://example.com/path?key with spaces=value with spaces').getQuery()",
            Is("{'key with spaces': ['value with spaces']}"),
        ),
        ("url('https://example.com/path?').getQuery()", Is("{}")),
        (
            "url('https://example.com/path#frag').getEscapedPath()",
            Is("'/path'"),
        ),
        (
            "url('https://a:b:c/')",
            Bad(
                "URL parse error during conversion from string: parse \"https://a:b:c/\": invalid port \":c\" after host",
            ),
        ),
        (
            "url('../' + 'x')",
            Err(
                "URL parse error during conversion from string: parse \"../x\": invalid URI for request",
            ),
        ),
    ]);
}

#[test]
fn kubernetes_format_library() {
    run(&[
        ("format.dns1123Label().validate('my-name').hasValue()", F),
        (
            "format.dns1123Label().validate('My_Name').value()",
            Is(
                "[\"a lowercase RFC 1123 label must consist of lower case alphanumeric \
                characters or '-', and must start and end with an alphanumeric character (e.g. \
                'my-name',  or '123-abc', regex used for validation is \
                '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\"]",
            ),
        ),
        (
            "format.dns1123Label().validate('a' + 'b'.substring(0, 0) + \
             'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa').value()[0]",
            Is("'must be no more than 63 characters'"),
        ),
        (
            "format.dns1123Subdomain().validate('apiextensions.k8s.io').hasValue()",
            F,
        ),
        ("format.dns1123Subdomain().validate('a..b').hasValue()", T),
        ("format.dns1035Label().validate('1abc').hasValue()", T),
        ("format.dns1035Label().validate('abc-1').hasValue()", F),
        (
            "format.qualifiedName().validate('apiextensions.k8s.io/v1beta1').hasValue()",
            F,
        ),
        (
            "format.qualifiedName().validate('/x').value()",
            Is("['prefix part must be non-empty']"),
        ),
        (
            "format.dns1123LabelPrefix().validate('my-label-prefix-').hasValue()",
            F,
        ),
        (
            "format.dns1123SubdomainPrefix().validate('mysubdomain.prefix.-').hasValue()",
            F,
        ),
        ("format.labelValue().validate('').hasValue()", F),
        ("format.labelValue().validate('-x').hasValue()", T),
        ("format.uri().validate('http://example.com').hasValue()", F),
        (
            "format.uri().validate('x').value()",
            Is("['parse \"x\": invalid URI for request']"),
        ),
        (
            "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()",
            F,
        ),
        (
            "format.uuid().validate('123e4567').value()",
            Is("['does not match the UUID format']"),
        ),
        ("format.byte().validate('aGVsbG8=').hasValue()", F),
        (
            "format.byte().validate('aGVsbG8').value()",
            Is("['invalid base64']"),
        ),
        ("format.date().validate('2021-01-01').hasValue()", F),
        (
            "format.date().validate('2021-02-29').value()",
            Is("['invalid date']"),
        ),
        (
            "format.datetime().validate('2021-01-01T00:00:00Z').hasValue()",
            F,
        ),
        (
            "format.datetime().validate('2021-01-01T24:00:00Z').value()",
            Is("['invalid datetime']"),
        ),
        (
            "format.named('dns1123Label').value().validate('x').hasValue()",
            F,
        ),
        ("format.named('nope').hasValue()", F),
        (
            "format.nope()",
            Bad("undeclared reference to function 'format.nope'"),
        ),
    ]);
}

#[test]
fn durations_and_timestamps() {
    run(&[
        ("duration('1h30m')", Is("duration('90m')")),
        ("duration('1.5s') + duration('500ms')", Is("duration('2s')")),
        ("duration('1s') - duration('2s') < duration('0')", T),
        ("duration('1h').getHours()", Is("1")),
        ("duration('1h').getMinutes()", Is("60")),
        ("duration('90s').getSeconds()", Is("90")),
        ("duration('1.5s').getMilliseconds()", Is("1500")),
        ("int(duration('1s'))", Is("1000000000")),
        ("string(duration('1h45m47s'))", Is("'6347s'")),
        ("string(duration('2ns'))", Is("'0.000000002s'")),
        (
            "duration('1d')",
            Bad("time: unknown unit \"d\" in duration \"1d\""),
        ),
        (
            "duration('1' + '')",
            Err("time: missing unit in duration \"1\""),
        ),
        (
            "timestamp('2023-02-03T23:31:20+00:00')",
            Is("timestamp('2023-02-03T23:31:20Z')"),
        ),
        (
            "string(timestamp('2023-02-03T23:31:20.500+01:00'))",
            Is("'2023-02-03T22:31:20.5Z'"),
        ),
        (
            "timestamp('2024-01-01T00:00:00Z') - timestamp('2023-12-31T00:00:00Z')",
            Is("duration('24h')"),
        ),
        (
            "timestamp('2024-01-01T00:00:00Z') + duration('-1s')",
            Is("timestamp('2023-12-31T23:59:59Z')"),
        ),
        (
            "timestamp('2024-02-29T12:00:00Z').getFullYear()",
            Is("2024"),
        ),
        ("timestamp('2024-02-29T12:00:00Z').getMonth()", Is("1")),
        ("timestamp('2024-02-29T12:00:00Z').getDate()", Is("29")),
        (
            "timestamp('2024-02-29T12:00:00Z').getDayOfMonth()",
            Is("28"),
        ),
        ("timestamp('2024-02-29T12:00:00Z').getDayOfWeek()", Is("4")),
        ("timestamp('2024-02-29T12:00:00Z').getDayOfYear()", Is("59")),
        (
            "timestamp('2024-02-29T12:00:00Z').getHours('-05:00')",
            Is("7"),
        ),
        (
            "timestamp('2024-02-29T23:30:00Z').getDate('+01:00')",
            Is("1"),
        ),
        (
            "timestamp('2024-02-29T12:00:00.250Z').getMilliseconds()",
            Is("250"),
        ),
        ("int(timestamp('1970-01-01T00:01:00Z'))", Is("60")),
        ("timestamp(60) == timestamp('1970-01-01T00:01:00Z')", T),
        (
            "timestamp('2024-01-01T00:00:00Z') < timestamp('2024-01-01T00:00:01Z')",
            T,
        ),
        (
            "[duration('1s'), duration('2s')].sum()",
            Is("duration('3s')"),
        ),
        (
            "[timestamp('2024-01-02T00:00:00Z'), timestamp('2024-01-01T00:00:00Z')].min()",
            Is("timestamp('2024-01-01T00:00:00Z')"),
        ),
        (
            "'%s %s'.format([dyn(duration('90s')), dyn(timestamp('2024-01-01T00:00:00Z'))])",
            Is("'90s 2024-01-01T00:00:00Z'"),
        ),
        (
            "'%s'.format([[duration('1s')]])",
            Is("'[duration(\"1s\")]'"),
        ),
        ("type(duration('1s')) == type(duration('2s'))", T),
        (
            "timestamp('2023-02-29T00:00:00Z')",
            Bad("parsing time \"2023-02-29T00:00:00Z\": value out of range"),
        ),
        (
            "timestamp('9999-12-31T23:59:59Z') + duration('1s')",
            Err("timestamp overflow"),
        ),
        (
            "timestamp('2024-01-01T00:00:00Z').getHours('Europe/Paris')",
            Err("unknown time zone Europe/Paris"),
        ),
        (
            "timestamp('2024-01-01T00:00:00Z') + timestamp('2024-01-01T00:00:00Z')",
            Bad(
                "found no matching overload for '_+_' applied to '(google.protobuf.Timestamp, google.protobuf.Timestamp)'",
            ),
        ),
    ]);
}

#[test]
fn dra_selectors() {
    let nv = "device.attributes[\"gpu.nvidia.com\"]";
    let ex = "device.attributes[\"dra.example.com\"]";
    let rows: Vec<(String, Want)> = vec![
        (
            format!("{nv}.productName.matches(\"^NVIDIA (H100|H200|B200)\")"),
            T,
        ),
        (format!("{nv}.productName.matches(\"^NVIDIA A100\")"), F),
        (format!("{ex}.profile.split(\"g.\")[0] == \"2\""), T),
        (format!("int({nv}.profile.split(\"g.\")[0]) >= 1"), T),
        (format!("{nv}.type == \"mig\""), T),
        (
            format!("{nv}.type == \"mig\" && {nv}.profile.matches(\"^[1-3]g\\\\.\")"),
            T,
        ),
        (
            format!("{nv}.architecture.lowerAscii() in [\"hopper\", \"blackwell\"]"),
            T,
        ),
        (
            format!("{nv}.uuid.find(\"[0-9a-f]{{8}}\") == \"4e8b2f6a\""),
            T,
        ),
        (
            format!("{nv}.cudaComputeCapability.isGreaterThan(semver(\"8.0.0\"))"),
            T,
        ),
        (
            format!("{nv}.driverVersion.compareTo(semver(\"535.0.0\")) >= 0"),
            T,
        ),
        (
            format!("{nv}.pciBusID.matches(\"^0000:[0-9a-f]{{2}}:00\\\\.0$\")"),
            T,
        ),
        (format!("cidr({ex}.cidr).containsIP({ex}.ip)"), T),
        (format!("ip({ex}.ip).isGlobalUnicast()"), T),
        (
            format!("{ex}.numa.exists(n, n == 1) && {ex}.numa.sum() == 1"),
            T,
        ),
        (format!("{ex}.tags.isSorted()"), F),
        (format!("sets.contains({ex}.tags, [\"a\", \"c\"])"), T),
        (
            format!("{ex}.tags.map(t, t.upperAscii()).join(\",\") == \"B,A,C\""),
            T,
        ),
        (
            "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0"
                .to_owned(),
            T,
        ),
        (
            format!("\"%s-%d\".format([{nv}.architecture, {nv}.index]) == \"Hopper-3\""),
            T,
        ),
        // A selector reading an attribute the device lacks is an error, not a mismatch.
        (
            format!("{nv}.migProfile.matches(\"1g\")"),
            Err("no such key: migProfile"),
        ),
        (
            format!("has({nv}.migProfile) && {nv}.migProfile.matches(\"1g\")"),
            F,
        ),
    ];
    let table: Vec<(&str, Want)> = rows.iter().map(|(e, w)| (e.as_str(), *w)).collect();
    run(&table);
}

#[test]
fn still_unsupported() {
    run(&[
        (
            "image('nginx').tag()",
            Bad("unsupported function \"tag\": the Kubernetes image library is not supported"),
        ),
        (
            "isImage('nginx')",
            Bad("unsupported function \"isImage\": the Kubernetes image library is not supported"),
        ),
        (
            "[1, 2].slice(0, 1)",
            Bad(
                "unsupported function \"slice\": not in the CEL environment Kubernetes gives DRA selectors (cel-go's lists extension is not enabled)",
            ),
        ),
        (
            "quantity('1').mul(2)",
            Bad(
                "unsupported function \"mul\": quantity multiplication and division are not in \
                 the Kubernetes quantity library",
            ),
        ),
        ("Foo{a: 1}", Bad("message literals are not supported")),
        ("b'abc'", Bad("bytes literals are not supported")),
        (
            "bytes('abc')",
            Bad("unsupported function \"bytes\": bytes are not supported"),
        ),
    ]);
}
