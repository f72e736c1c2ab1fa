//! CEL device selectors: the expressions DRA users write, evaluated on small devices, and
//! the compile errors (with exact positions) for what is rejected.

use gangpack::{CelError, CelErrorKind, Device, DeviceAttribute, EvalError, Quantity, Selector};

const NV: &str = "gpu.nvidia.com";

fn attr(d: &mut Device, name: &str, value: DeviceAttribute) {
    d.attributes.insert(name.to_owned(), value);
}

fn cap(d: &mut Device, name: &str, value: &str) {
    d.capacity
        .insert(name.to_owned(), Quantity::parse(value).unwrap().into());
}

fn s(v: &str) -> DeviceAttribute {
    DeviceAttribute::String(v.to_owned())
}

/// An H100 with a MIG flag, a NUMA node and a list attribute.
fn h100() -> Device {
    let mut d = Device::new("gpu-0");
    attr(&mut d, "productName", s("NVIDIA H100 80GB HBM3"));
    attr(
        &mut d,
        "driverVersion",
        DeviceAttribute::Version("535.104.5".into()),
    );
    attr(&mut d, "cores", DeviceAttribute::Int(132));
    attr(&mut d, "numa", DeviceAttribute::Int(1));
    attr(&mut d, "mig", DeviceAttribute::Bool(false));
    attr(&mut d, "gpu.nvidia.com/uuid", s("GPU-1234"));
    attr(&mut d, "dra.example.com/model", s("h100"));
    attr(
        &mut d,
        "dra.example.com/links",
        DeviceAttribute::Strings(vec!["nvlink".into(), "pcie".into()]),
    );
    cap(&mut d, "memory", "80Gi");
    cap(&mut d, "dra.example.com/bandwidth", "900G");
    d
}

/// An A10: no MIG flag, no NUMA attribute, shareable.
fn a10() -> Device {
    let mut d = Device::new("gpu-1");
    attr(&mut d, "productName", s("NVIDIA A10"));
    attr(
        &mut d,
        "driverVersion",
        DeviceAttribute::Version("525.60.13".into()),
    );
    attr(&mut d, "cores", DeviceAttribute::Int(72));
    attr(&mut d, "gpu.nvidia.com/uuid", s("GPU-5678"));
    attr(&mut d, "dra.example.com/model", s("a10"));
    attr(
        &mut d,
        "dra.example.com/links",
        DeviceAttribute::Strings(vec!["pcie".into()]),
    );
    cap(&mut d, "memory", "24Gi");
    d.allow_multiple_allocations = true;
    d
}

/// What an evaluation should give.
#[derive(Debug)]
enum Want {
    /// `Ok(true)`.
    T,
    /// `Ok(false)`.
    F,
    /// A runtime error whose message is this.
    E(&'static str),
}
use Want::{E, F, T};

fn compile(src: &str) -> Selector {
    Selector::compile(src).unwrap_or_else(|e| panic!("{}", e.render(src)))
}

fn check(src: &str, driver: &str, device: &Device, want: &Want) {
    let got = compile(src).eval(driver, device);
    let ok = match (&got, want) {
        (Ok(true), T) | (Ok(false), F) => true,
        (Err(e), E(msg)) => e.to_string() == *msg,
        _ => false,
    };
    assert!(
        ok,
        "{src}\n  on {}: got {got:?}, want {want:?}",
        device.name
    );
}

const NVA: &str = r#"device.attributes["gpu.nvidia.com"]"#;

/// (expression, on the H100, on the A10); `$` stands for `device.attributes["gpu.nvidia.com"]`.
const TABLE: &[(&str, Want, Want)] = &[
    // The everyday ones.
    (r#"device.driver == "gpu.nvidia.com""#, T, T),
    (r#"$.productName.startsWith("NVIDIA H100")"#, T, F),
    (
        r#"device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0"#,
        T,
        F,
    ),
    (r#"$.driverVersion.isGreaterThan(semver("535.0.0"))"#, T, F),
    (
        r#"$.driverVersion.compareTo(semver("535.104.5")) == 0"#,
        T,
        F,
    ),
    (
        r"$.driverVersion.major() >= 530 && $.driverVersion.minor() > 0",
        T,
        F,
    ),
    (r"has($.mig)", T, F),
    (
        r#"device.attributes["dra.example.com"].model in ["a100", "h100"]"#,
        T,
        F,
    ),
    (r#""numa" in $"#, T, F),
    (r#"$["productName"].endsWith("HBM3")"#, T, F),
    (r#"$.productName > "NVIDIA B""#, T, F),
    (r#"$.productName.contains("A10") || $.cores > 100"#, T, T),
    (
        r"$.productName.size() > 10 && size($.productName) < 30",
        T,
        F,
    ),
    (r"device.allowMultipleAllocations", F, T),
    (r"device.allowMultipleAllocations == false", T, F),
    (
        r#"device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("32Gi"))"#,
        F,
        T,
    ),
    // Names: bare names live in the driver's domain, qualified ones in theirs.
    (r"$.numa == 1", T, E("no such key: numa")),
    (r#"$.uuid == "GPU-1234""#, T, F),
    (r"has($.model)", F, F),
    (r#"device.attributes["dra.example.com"].model != """#, T, T),
    (
        r#"has(device.attributes["dra.example.com"].productName)"#,
        F,
        F,
    ),
    (
        r#"device.capacity["dra.example.com"].bandwidth.isGreaterThan(quantity("1T"))"#,
        F,
        E("no such key: bandwidth"),
    ),
    // Missing keys are errors, unknown domains are empty maps.
    (
        r"$.missing == 1",
        E("no such key: missing"),
        E("no such key: missing"),
    ),
    (
        r#"device.attributes["unknown.example.com"].x"#,
        E("no such key: x"),
        E("no such key: x"),
    ),
    (r#"has(device.attributes["unknown.example.com"].x)"#, F, F),
    (r#""unknown.example.com" in device.attributes"#, F, F),
    (r#""dra.example.com" in device.attributes"#, T, T),
    (
        r#"device.attributes["unknown.example.com"].size() == 0"#,
        T,
        T,
    ),
    (r"$.?numa.orValue(0) == 1", T, F),
    // && and || are commutative with respect to errors.
    (r"$.numa == 1 && false", F, F),
    (r"false && $.missing", F, F),
    (r"$.missing && false", F, F),
    (r"$.missing || true", T, T),
    (r"true || $.missing", T, T),
    (
        r"$.missing || false",
        E("no such key: missing"),
        E("no such key: missing"),
    ),
    (
        r"$.missing && true",
        E("no such key: missing"),
        E("no such key: missing"),
    ),
    (r#"$.numa == 1 || $.productName == "NVIDIA A10""#, T, T),
    (r"has($.numa) && $.numa == 1", T, F),
    (r"$.cores > 100 && $.numa == 1", T, F),
    // Ternary.
    (
        r#"device.attributes["dra.example.com"].model == "h100" ? device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("64Gi")) : true"#,
        T,
        T,
    ),
    (r"has($.numa) ? $.numa > 0 : false", T, F),
    (r#"($.cores > 100 ? "big" : "small") == "big""#, T, F),
    // Integer arithmetic.
    (r"$.cores * 2 + 1 == 265", T, F),
    (r"($.cores + 8) / 10 % 7 == 0", T, F),
    (r"-$.cores < -100", T, F),
    (
        r"$.cores * 9223372036854775807 > 0",
        E("integer overflow in '_*_'"),
        E("integer overflow in '_*_'"),
    ),
    (
        r"$.cores / 0 == 1",
        E("division by zero"),
        E("division by zero"),
    ),
    (
        r"$.cores % 0 == 1",
        E("modulus by zero"),
        E("modulus by zero"),
    ),
    (
        r"1 + 2 * 3 == 7 && (1 + 2) * 3 == 9 && 7 / 2 == 3 && -7 % 3 == -1",
        T,
        T,
    ),
    (r"0x10 == 16 && -9223372036854775808 < 0", T, T),
    // Negation and parentheses.
    (r"!has($.mig)", F, T),
    (r"!$.mig", T, E("no such key: mig")),
    (r#"!(device.driver == "x" || $.cores > 100)"#, F, T),
    (r#"!(device.driver == "x") && !($.cores > 100)"#, F, T),
    (r"(true || false) && false", F, F),
    (r"true || false && false", T, T),
    // Dynamic types: heterogeneous equality, cross-type ordering is an error.
    (r"$.productName == 1", F, F),
    (r"$.productName != 1", T, T),
    (
        r"$.productName < 1",
        E("no such overload: '_<_' applied to '(string, int)'"),
        E("no such overload: '_<_' applied to '(string, int)'"),
    ),
    (
        r#"$.productName.isGreaterThan(semver("1.0.0"))"#,
        E("no such overload: 'isGreaterThan' applied to '(string, kubernetes.Semver)'"),
        E("no such overload: 'isGreaterThan' applied to '(string, kubernetes.Semver)'"),
    ),
    (
        r"$.cores",
        E("CEL result of type int could not be converted to bool"),
        E("CEL result of type int could not be converted to bool"),
    ),
    // List attributes (alpha).
    (
        r#""nvlink" in device.attributes["dra.example.com"].links"#,
        T,
        F,
    ),
    (
        r#"device.attributes["dra.example.com"].links.includes("pcie")"#,
        T,
        T,
    ),
    (
        r#"device.attributes["dra.example.com"].links.size() == 2"#,
        T,
        F,
    ),
    (
        r#"device.attributes["dra.example.com"].links.exists(l, l.startsWith("nv"))"#,
        T,
        F,
    ),
    (r#"$.productName.includes("NVIDIA A10")"#, F, T),
    // cel.bind.
    (
        r#"cel.bind(nv, device.attributes["gpu.nvidia.com"], nv.productName.contains("H100") && nv.cores >= 100)"#,
        T,
        F,
    ),
    // Strings: escapes, raw strings, concatenation.
    (r#"$.uuid == 'GPU-' + "1234""#, T, F),
    (
        r#"$.uuid.startsWith(r"GPU-") && "\x41\u0042" == 'AB' && """a"b""" == 'a"b'"#,
        T,
        T,
    ),
];

#[test]
fn table() {
    let (h100, a10) = (h100(), a10());
    for (src, on_h100, on_a10) in TABLE {
        let src = src.replace('$', NVA);
        check(&src, NV, &h100, on_h100);
        check(&src, NV, &a10, on_a10);
    }
}

#[test]
fn quantity_sign_is_global() {
    let src = r#"sign(device.capacity["gpu.nvidia.com"].memory.sub(quantity("24Gi"))) == 0"#;
    check(src, NV, &h100(), &F);
    check(src, NV, &a10(), &T);
    let e = Selector::compile(r#"quantity("1").sign() == 1"#).unwrap_err();
    assert_eq!(
        e.to_string(),
        "at 14: found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'"
    );
}

#[test]
fn the_driver_decides_the_default_domain() {
    let d = h100();
    // Published by another driver, the bare names belong to that driver's domain.
    let other = "tpu.example.com";
    check(r#"device.driver == "gpu.nvidia.com""#, other, &d, &F);
    check(&format!("has({NVA}.numa)"), other, &d, &F);
    check(
        r#"device.attributes["tpu.example.com"].numa == 1"#,
        other,
        &d,
        &T,
    );
    check(&format!("{NVA}.uuid == 'GPU-1234'"), other, &d, &T);
    check(
        r#"device.attributes.all(domain, domain in ["dra.example.com", "gpu.nvidia.com", "tpu.example.com"])"#,
        other,
        &d,
        &T,
    );
}

#[test]
fn static_hints() {
    let s = compile(
        r#"device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].cores > 64"#,
    );
    assert_eq!(s.required_driver(), Some(NV));
    // A device of another driver never matches such a selector, even where the rest
    // would be an error.
    assert_eq!(s.eval("other.example.com", &Device::new("x")), Ok(false));
    assert_eq!(
        s.eval(NV, &Device::new("x")),
        Err(EvalError::NoSuchKey {
            key: "cores".into()
        })
    );
    assert_eq!(compile("device.driver != 'a'").required_driver(), None);
    assert_eq!(
        compile("device.driver == 'a' || device.driver == 'b'").required_driver(),
        None
    );
    assert!(compile("true").is_trivially_true());
    assert!(compile("!false && true").is_trivially_true());
    assert!(!compile("device.driver == device.driver").is_trivially_true());
    let s = compile("true");
    assert_eq!(s.source(), "true");
    assert_eq!(s, "true".parse::<Selector>().unwrap());
}

/// Expected compile error: position and full message.
fn rejects(src: &str, position: usize, message: &str) {
    let e = Selector::compile(src).expect_err(src);
    assert_eq!(
        (e.position, e.kind.to_string().as_str()),
        (position, message),
        "{src}\n{}",
        e.render(src)
    );
    assert_eq!(e.to_string(), format!("at {position}: {message}"));
}

#[test]
fn compile_errors() {
    rejects(
        r#"device.attributes["gpu.nvidia.com"].productName.matches("H100($")"#,
        56,
        "error parsing regexp: unclosed group: `H100($`",
    );
    rejects(
        r#"device.attributes["gpu.nvidia.com"].productName.reverse() == "x""#,
        48,
        "unsupported function \"reverse\": not in the CEL environment Kubernetes gives DRA \
         selectors (it needs version 3 of the strings extension)",
    );
    rejects(r#"pod.name == "x""#, 0, "undeclared reference to 'pod'");
    rejects(
        "device.driver",
        0,
        "expression must evaluate to bool, not string",
    );
    rejects("  1 + 2", 2, "expression must evaluate to bool, not int");
    rejects(
        r#"device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80 GiB")) >= 0"#,
        60,
        r#"invalid quantity "80 GiB": unexpected character ' ' at byte 2"#,
    );
    rejects(
        r#"device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("535.0"))"#,
        71,
        r#"invalid semantic version "535.0": missing patch version: expected MAJOR.MINOR.PATCH"#,
    );
    rejects(
        r#"device.driver == "gpu.nvidia.com"#,
        17,
        "unterminated string literal",
    );
    rejects(
        r#"device.driver == "a")"#,
        20,
        "syntax error: unexpected ')' after the expression",
    );
    rejects(
        r#"device.driver == "a" device"#,
        21,
        "syntax error: unexpected identifier 'device' after the expression",
    );
    rejects(
        "device.driver == 1",
        14,
        "found no matching overload for '_==_' applied to '(string, int)'",
    );
    rejects(
        "device.driver < 1",
        14,
        "found no matching overload for '_<_' applied to '(string, int)'",
    );
    rejects(
        r#"!device.driver == "x""#,
        0,
        "found no matching overload for '!_' applied to '(string)'",
    );
    rejects(
        r#"quantity("1") < quantity("2")"#,
        14,
        "found no matching overload for '_<_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'",
    );
    rejects(
        r"device.driver.startsWith(1)",
        14,
        "found no matching overload for 'startsWith' applied to 'string.(int)'",
    );
    rejects(
        "device.name == 'x'",
        7,
        "undefined field 'name' on type 'kubernetes.DRADevice'",
    );
    rejects(
        "device.driver.x == 'x'",
        14,
        "undefined field 'x' on type 'string'",
    );
    rejects(
        "device.allowMultipleAllocations && 1",
        32,
        "found no matching overload for '_&&_' applied to '(bool, int)'",
    );
    rejects(
        "device.attributes['d'].x == b'a'",
        28,
        "bytes literals are not supported",
    );
    rejects(
        "1 == 1u",
        2,
        "found no matching overload for '_==_' applied to '(int, uint)'",
    );
    rejects("{'a': 1}.a", 0, "expression must evaluate to bool, not int");
    rejects("Foo{a: 1}", 3, "message literals are not supported");
    rejects(
        "device.attributes.transformMapEntry(k, v, k).size() == 2",
        42,
        "found no matching overload for 'transformMapEntry' applied to \
         '(map(string, map(string, dyn)), string)'",
    );
    rejects(
        "[1, 'a'].size() == 2",
        4,
        "expected type 'int' but found 'string'",
    );
    rejects(
        "frobnicate(device.driver)",
        0,
        "undeclared reference to function 'frobnicate'",
    );
    rejects(
        "has(device.attributes['d'])",
        4,
        "invalid argument to has(): the argument must be a field selection such as has(m.f)",
    );
    rejects(
        "device.driver == 'a' &&",
        23,
        "syntax error: found end of input, expected an expression",
    );
    rejects(
        "",
        0,
        "syntax error: found end of input, expected an expression",
    );
    rejects(
        "device.driver == 'a' & true",
        21,
        "syntax error: unexpected character '&'",
    );
    rejects(
        "9223372036854775808 > 0",
        0,
        "invalid integer literal: must fit a signed 64-bit integer",
    );
    rejects(r"'\q' == 'q'", 1, "invalid escape sequence in string");
    rejects("if == 1", 0, "reserved identifier 'if'");
    rejects(
        "cel.bind(1, 2, true)",
        9,
        "invalid argument to cel.bind(): the first argument must be a simple name",
    );
    rejects(
        "true ? 1 : 'a'",
        5,
        "found no matching overload for '_?_:_' applied to '(bool, int, string)'",
    );
    rejects(
        "'a' in [1, 2]",
        4,
        "found no matching overload for '@in' applied to '(string, list(int))'",
    );
}

#[test]
fn length_limit() {
    let pad = " ".repeat(10 * 1024 - 4);
    let ok = format!("{pad}true");
    assert_eq!(ok.len(), 10 * 1024);
    assert!(compile(&ok).is_trivially_true());
    let long = format!("{pad} true");
    let e = Selector::compile(&long).unwrap_err();
    assert_eq!(
        e,
        CelError {
            position: 10 * 1024,
            kind: CelErrorKind::TooLong {
                len: 10 * 1024 + 1,
                max: 10 * 1024
            }
        }
    );
    assert_eq!(
        e.kind.to_string(),
        "expression is 10241 bytes long; at most 10240 are allowed"
    );
}

#[test]
fn rendered_errors_point_at_the_culprit() {
    let src = "device.driver == \"gpu.nvidia.com\" &&\n  device.attributes[\"gpu.nvidia.com\"].memory.matches(\"x{2,1}\")";
    let e = Selector::compile(src).unwrap_err();
    assert_eq!(
        e.render(src),
        "at 90: error parsing regexp: invalid repeat count: `{2,1}`\n\
         \x20|   device.attributes[\"gpu.nvidia.com\"].memory.matches(\"x{2,1}\")\n\
         \x20|                                                      ^"
    );
}

#[test]
fn errors_are_std_errors() {
    fn takes(_: &dyn core::error::Error) {}
    takes(&Selector::compile("x").unwrap_err());
    takes(&EvalError::DivisionByZero);
}

#[test]
fn runaway_expressions_hit_the_cost_limit() {
    let limit = Err(EvalError::CostLimitExceeded { limit: 1_000_000 });
    // Doubling a list or a string 40 times through nested bindings.
    for seed in ["[1, 2, 3, 4, 5, 6, 7, 8]", "'abcdefgh'"] {
        let mut body = "a40.size() > 0".to_owned();
        for i in (1..=40).rev() {
            body = format!("cel.bind(a{i}, a{0} + a{0}, {body})", i - 1);
        }
        let src = format!("cel.bind(a0, {seed}, {body})");
        assert_eq!(compile(&src).eval(NV, &h100()), limit, "{seed}");
    }
    // Nested comprehensions: 10^8 iterations.
    let mut nested = "true".to_owned();
    for i in 0..8 {
        nested = format!("[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].all(x{i}, {nested})");
    }
    assert_eq!(compile(&nested).eval(NV, &h100()), limit);
    // Upstream's "expensive" example, with the regex function replaced.
    let l = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
    let src = format!(
        "{l}.all(x, {l}.all(y, {l}.all(z, {l}.all(z2, {l}.all(z3, {l}.all(z4, {l}.all(z5, \
         size('1') < 100)))))))"
    );
    assert_eq!(compile(&src).eval(NV, &h100()), limit);
}

/// `cel.bind(a0, [device.driver], cel.bind(a1, a0 + a0, ...))`: `doublings` times, a
/// list of 2^doublings items, 2^(doublings + 1) - 2 items built in all.
fn doubling(doublings: u32) -> String {
    let mut body = format!("a{doublings}.size() > 0");
    for i in (1..=doublings).rev() {
        body = format!("cel.bind(a{i}, a{0} + a{0}, {body})", i - 1);
    }
    format!("cel.bind(a0, [device.driver], {body})")
}

/// A list item costs 10 units on every target (it used to be a value's size in 8-byte
/// words: 10 on 64-bit, 6 on wasm32, where 16 doublings fit the budget). The
/// determinism goldens run the same boundary under wasm32 (`cel-cost`).
#[test]
fn a_list_item_costs_the_same_on_every_platform() {
    // 65,534 items built: 655,340 units and a few hundred for the nodes.
    assert_eq!(compile(&doubling(15)).eval(NV, &h100()), Ok(true));
    // 131,070 items: 1,310,700 units.
    assert_eq!(
        compile(&doubling(16)).eval(NV, &h100()),
        Err(EvalError::CostLimitExceeded { limit: 1_000_000 })
    );
}

#[test]
fn selectors_with_compiled_patterns_are_send_sync_and_clone() {
    fn send_sync<T: Send + Sync + Clone>(_: &T) {}
    let s = compile(r#"device.attributes["gpu.nvidia.com"].productName.matches("^NVIDIA H1")"#);
    send_sync(&s);
    let copy = s.clone();
    std::thread::spawn(move || assert_eq!(copy.eval(NV, &h100()), Ok(true)))
        .join()
        .unwrap();
    assert_eq!(s.eval(NV, &a10()), Ok(false));
}

#[test]
fn new_functions_count_towards_the_cost_limit() {
    let limit = Err(EvalError::CostLimitExceeded { limit: 1_000_000 });
    // Upstream's "expensive" example with its regular expression.
    let l = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
    let src = format!(
        "{l}.all(x, {l}.all(y, {l}.all(z, {l}.all(z2, {l}.all(z3, {l}.all(z4, \
         'abc'.matches('.*')))))))"
    );
    assert_eq!(compile(&src).eval(NV, &h100()), limit);
    // A 2^20-byte string scanned by a regular expression 64 times.
    let mut body = "l.all(i, s.findAll('b').size() == 0)".to_owned();
    for i in (1..=17).rev() {
        body = format!("cel.bind(a{i}, a{0} + a{0}, {body})", i - 1);
    }
    let src = format!(
        "cel.bind(l, [0, 1, 2, 3, 4, 5, 6, 7], cel.bind(a0, 'aaaaaaaa', \
         {}))",
        body.replace("s.findAll", "a17.findAll")
    );
    assert_eq!(compile(&src).eval(NV, &h100()), limit);
    // map / filter / transformList build lists item by item.
    let src = format!("{l}.map(a, {l}.map(b, {l}.map(c, {l}.map(d, {l}.map(e, a))))).size() > 0");
    assert_eq!(compile(&src).eval(NV, &h100()), limit);
    // A computed pattern is compiled (and charged) on each evaluation.
    let src = format!("{l}.all(a, {l}.all(b, {l}.all(c, {l}.all(d, 'x'.matches('x' + '|y')))))");
    assert_eq!(compile(&src).eval(NV, &h100()), Ok(true));
}

#[test]
fn realistic_expressions_stay_far_below_the_cost_limit() {
    // Upstream's "all" example, 10 terms, on a device that satisfies it.
    let mut d = Device::new("dev");
    attr(&mut d, "bool", DeviceAttribute::Bool(true));
    attr(&mut d, "int", DeviceAttribute::Int(1));
    attr(&mut d, "string", s("fish"));
    attr(&mut d, "version", DeviceAttribute::Version("1.0.0".into()));
    cap(&mut d, "quantity", "1Mi");
    let src = r#"
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"#;
    assert_eq!(compile(src).eval("dra.example.com", &d), Ok(true));
    // A comprehension over every attribute domain, as upstream's tests write it.
    let src = r#"device.attributes.exists_one(x, x == "dra.example.com")"#;
    assert_eq!(compile(src).eval("dra.example.com", &d), Ok(true));
}

/// The CEL strings extension Kubernetes enables: code-point indices, Go's split and
/// replace semantics, cel-go's errors.
#[test]
fn strings_extension() {
    let d = h100();
    let cases: &[(&str, Want)] = &[
        (r#""héllo".charAt(1) == "é""#, T),
        (r#""abc".charAt(3) == """#, T),
        (r#""abc".charAt(4) == """#, E("index out of range: 4")),
        (r#""abc".charAt(-1) == """#, E("index out of range: -1")),
        (r#""hello mellow".indexOf("ello") == 1"#, T),
        (r#""hello mellow".indexOf("ello", 2) == 7"#, T),
        (r#""hello".indexOf("") == 0"#, T),
        (r#""hello".indexOf("x") == -1"#, T),
        (r#""ab".indexOf("abc") == -1"#, T),
        (
            r#""hello".indexOf("l", 5) == 0"#,
            E("index out of range: 5"),
        ),
        (r#""héllo héllo".indexOf("llo") == 2"#, T),
        (r#""hello mellow".lastIndexOf("ello") == 7"#, T),
        (r#""hello mellow".lastIndexOf("ello", 6) == 1"#, T),
        (r#""hello".lastIndexOf("") == 5"#, T),
        (r#""ab".lastIndexOf("abc") == -1"#, T),
        (r#""a-b-c".replace("-", "+") == "a+b+c""#, T),
        (r#""a-b-c".replace("-", "+", 1) == "a+b-c""#, T),
        (r#""abc".replace("", "-") == "-a-b-c-""#, T),
        (r#""a,b,c".split(",") == ["a", "b", "c"]"#, T),
        (r#""a,b,c".split(",", 2) == ["a", "b,c"]"#, T),
        (r#""a,b,c".split(",", 0).size() == 0"#, T),
        (r#""abc".split("") == ["a", "b", "c"]"#, T),
        (r#""abc".split("", 2) == ["a", "bc"]"#, T),
        (r#""".split(",") == [""]"#, T),
        (r#""héllo".substring(1) == "éllo""#, T),
        (r#""héllo".substring(1, 3) == "él""#, T),
        (r#""abc".substring(3) == """#, T),
        (r#""abc".substring(4) == """#, E("index out of range: 4")),
        (
            r#""abc".substring(2, 1) == """#,
            E("invalid substring range. start: 2, end: 1"),
        ),
        ("' \\t padded \\n'.trim() == 'padded'", T),
        (r#"["a", "b"].join() == "ab""#, T),
        (r#"["a", "b"].join(", ") == "a, b""#, T),
        (r#"[].join("-") == """#, T),
        // On attributes: the model's suffix, a list attribute's members.
        (
            r#"device.attributes["gpu.nvidia.com"].productName.split(" ")[1] == "H100""#,
            T,
        ),
        (
            r#"device.attributes["dra.example.com"].links.join("+") == "nvlink+pcie""#,
            T,
        ),
        (
            r#"device.attributes["gpu.nvidia.com"].uuid.substring(0, 4).lowerAscii() == "gpu-""#,
            T,
        ),
    ];
    for (src, want) in cases {
        check(src, NV, &d, want);
    }
}
