//! DRA device selectors: a CEL front end (lexer, parser, type checker) compiling the
//! expressions of DeviceClasses and requests into a small typed predicate IR, and an
//! evaluator for that IR.
//!
//! The environment is upstream's (`k8s.io/dynamic-resource-allocation/cel` on top of
//! the Kubernetes base environment, `k8s.io/apiserver/pkg/cel/environment`): one
//! variable `device` with `driver`, `attributes`, `capacity` and
//! `allowMultipleAllocations`; CEL's standard definitions over bool, int, uint,
//! double, string, list, map and type values (with cross-type numeric comparisons and
//! homogeneous aggregate literals); the strings extension (version 2, incl. `format`
//! and `strings.quote`); RE2 regular expressions (`matches`, `find`, `findAll`); the
//! Kubernetes lists, sets, quantity, semver, IP, CIDR, URL and format libraries;
//! `cel.bind`, optionals, the `map` / `filter` macros and two-variable comprehensions;
//! durations and timestamps; the runtime cost limit. See [`Selector`] for the
//! supported subset, what is still rejected (bytes, the image library) and how this
//! differs from upstream.
//!
//! Layer: above the model only (a selector reads a [`Device`] of a
//! slice); the cluster's class cache, the allocator and the validator evaluate
//! selectors through it.

use core::fmt;

use crate::alloc_prelude::*;
use crate::{Device, QuantityError, VersionError};

mod check;
mod eval;
mod formats;
mod ir;
mod lexer;
mod net;
mod parser;
mod regex;
mod time;
mod url;

use ir::{CmpOp, Expr, Value};

/// The longest expression accepted, in bytes (upstream `CELSelectorExpressionMaxLength`).
const MAX_LEN: usize = crate::model::class::MAX_CEL_LEN;

/// A compiled CEL device selector.
///
/// Compile once with [`Selector::compile`], then [`eval`](Selector::eval) against each
/// candidate device. Equality compares the source text.
///
/// ```
/// use gangpack::{Device, DeviceAttribute, Quantity, Selector};
///
/// let selector = Selector::compile(
///     r#"device.driver == "gpu.example.com" &&
///        device.attributes["gpu.example.com"].model.startsWith("H100") &&
///        device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0"#,
/// )?;
/// assert_eq!(selector.required_driver(), Some("gpu.example.com"));
///
/// let mut gpu = Device::new("gpu-0");
/// gpu.attributes.insert("model".into(), DeviceAttribute::String("H100-SXM".into()));
/// gpu.capacity.insert("memory".into(), Quantity::parse("80Gi")?.into());
/// assert_eq!(selector.eval("gpu.example.com", &gpu), Ok(true));
///
/// // A missing attribute is an error, not a mismatch (as upstream): guard with has().
/// let bare = Device::new("gpu-1");
/// assert!(selector.eval("gpu.example.com", &bare).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Supported subset
///
/// | Construct | Notes |
/// | --- | --- |
/// | `device.driver`, `device.allowMultipleAllocations` | string, bool |
/// | `device.attributes["d"].id`, `device.attributes["d"]["id"]` | `dyn`: int, bool, string, semver, or a list of those; the qualified name `d/id` first, then the bare name `id` when `d` is the driver |
/// | `device.capacity["d"].id` | quantity, same lookup |
/// | unknown domain / missing id | empty map / runtime error "no such key" |
/// | `has(m.id)`, `"id" in m`, `"d" in device.attributes` | presence tests, never an error |
/// | `m.?id`, `m[?k]`, `.orValue(x)`, `.or(o)`, `.hasValue()`, `.value()`, `optional.of(x)`, `optional.ofNonZeroValue(x)`, `optional.none()` | optionals; any access on an optional stays optional; `or` / `orValue` evaluate their argument only when empty |
/// | `== !=` | heterogeneous: different runtime types are unequal, except numbers, which compare by value (`dyn(1) == 1.0`); statically the types must match |
/// | `< <= > >=` | int, uint, double (also across these three, cel-go's cross-type numeric comparisons), string (code point order), bool; NaN compares false; other runtime types: error "no such overload" |
/// | `+ - * / %`, unary `-` | int64 and uint64 with overflow, division and modulus by zero as errors; double `+ - * /` as IEEE 754; `+` also joins strings and lists |
/// | `&& \|\| !`, `c ? a : b` | `&&` / `\|\|` absorb errors when the other side decides |
/// | `x in [..]`, `x in list`, `k in map` | list membership, map key presence |
/// | `s.startsWith(p)`, `.endsWith(p)`, `.contains(p)`, `.lowerAscii()`, `.upperAscii()` | strings |
/// | `s.charAt(i)`, `.indexOf(t[, i])`, `.lastIndexOf(t[, i])`, `.substring(i[, j])`, `.replace(a, b[, n])`, `.split(sep[, n])`, `.trim()`, `list.join([sep])` | the CEL strings extension: code-point indices, Go's `strings.SplitN` / `Replace` semantics, cel-go's errors ("index out of range: 4", "invalid substring range. start: 2, end: 1") |
/// | `"…".format(list)`, `strings.quote(s)` | strings extension (version 1+): `%s %d %f %.Nf %e %b %o %x %X %%`, cel-go's `en-US` output (`1,234.57`, `1.052033 × 10⁰³`) and errors ("error during formatting: decimal clause can only be used on integers, was given double") |
/// | `s.matches(re)`, `matches(s, re)`, `s.find(re)`, `s.findAll(re[, n])` | RE2 syntax and semantics as Go's `regexp` (ASCII `\d \w \s \b`, leftmost-first, `\Q…\E`, octal escapes, a `{` that starts no repetition is literal, counts up to 1000, stacked repetitions such as `a**` are errors), linear time; `find` gives the first match or `""`, `findAll` the non-overlapping matches as Go's `FindAllString` (at most `n`, all when `n < 0`); a computed pattern's error reads "Illegal regex: …" for `find` / `findAll`, as upstream |
/// | `size(x)`, `x.size()` | string (code points), list, map |
/// | `int(x)`, `uint(x)`, `double(x)`, `string(x)`, `bool(x)`, `type(x)`, `dyn(x)` | standard conversions (from int, uint, double, string; `string()` also of bool, IP, CIDR, duration and timestamp; `bool()` of Go's `ParseBool` words); out of range is an error; type values `int`, `uint`, `double`, `bool`, `string`, `list`, `map`, `null_type`, `type` |
/// | `l.isSorted()`, `.sum()`, `.min()`, `.max()`, `.indexOf(x)`, `.lastIndexOf(x)` | Kubernetes lists library; `min` / `max` of an empty list is an error |
/// | `sets.contains(a, b)`, `sets.equivalent(a, b)`, `sets.intersects(a, b)` | cel-go sets extension |
/// | `quantity(s)`, `isQuantity(s)`, `q.compareTo(q)`, `.isGreaterThan(q)`, `.isLessThan(q)`, `.asInteger()`, `.isInteger()`, `.asApproximateFloat()`, `.add(q\|int)`, `.sub(q\|int)`, `sign(q)` | Kubernetes quantity library; `sign` is global only, as upstream declares it |
/// | `semver(s)`, `semver(s, true)`, `isSemver(s[, true])`, `v.compareTo(v)`, `.isGreaterThan(v)`, `.isLessThan(v)`, `.major()`, `.minor()`, `.patch()` | Kubernetes semver library (`true` normalises `v1.2` to `1.2.0`) |
/// | `ip(s)`, `isIP(s)`, `ip.isCanonical(s)`, `ip.family()`, `.isUnspecified()`, `.isLoopback()`, `.isLinkLocalMulticast()`, `.isLinkLocalUnicast()`, `.isGlobalUnicast()` | Kubernetes IP library (Go's `netip` classes; IPv4-mapped IPv6 and zones rejected) |
/// | `cidr(s)`, `isCIDR(s)`, `c.containsIP(ip\|s)`, `.containsCIDR(cidr\|s)`, `.ip()`, `.masked()`, `.prefixLength()` | Kubernetes CIDR library |
/// | `format.dns1123Label()` (and `dns1123Subdomain`, `dns1035Label`, `qualifiedName`, the three `…Prefix`, `labelValue`, `uri`, `uuid`, `byte`, `date`, `datetime`), `format.named(s)`, `f.validate(s)` | Kubernetes format library: `validate` is `optional.none()` when valid, else the list of apimachinery's messages |
/// | `url(s)`, `isURL(s)`, `u.getScheme()`, `.getHost()`, `.getHostname()`, `.getPort()`, `.getEscapedPath()`, `.getQuery()` | Kubernetes URL library (Go's `net/url`: `url.ParseRequestURI` to accept, `url.Parse` for the parts) |
/// | `duration(s)`, `timestamp(s)`, `timestamp(int)`, `+ -` (timestamp ± duration, timestamp − timestamp, duration ± duration), `< <= > >=`, `t.getFullYear([tz])`, `.getMonth([tz])`, `.getDate([tz])`, `.getDayOfMonth([tz])`, `.getDayOfWeek([tz])`, `.getDayOfYear([tz])`, `.getHours([tz])`, `.getMinutes([tz])`, `.getSeconds([tz])`, `.getMilliseconds([tz])`, `d.getHours()`, … , `int(t)`, `int(d)`, `string(t)`, `string(d)` | CEL durations (Go's `time.ParseDuration`, nanoseconds in an int64) and timestamps (RFC 3339, years 1–9999); `tz` is `UTC` or `±HH:MM` |
/// | `x.includes(y)` | DRA list-attribute helper: membership in a list (first 48 items), equality for a scalar |
/// | `cel.bind(n, v, e)` | `v` evaluated once |
/// | `r.all(x, p)`, `.exists(x, p)`, `.exists_one(x, p)`, `.map(x, e)`, `.map(x, p, e)`, `.filter(x, p)` | macros over lists and maps (keys) |
/// | `r.all(i, v, p)`, `.exists(i, v, p)`, `.existsOne(i, v, p)`, `.transformList(i, v, [p,] e)`, `.transformMap(i, v, [p,] e)`, `.transformMapEntry(i, v, [p,] m)` | two-variable comprehensions: index and item of a list, key and value of a map; a key produced twice is an error |
/// | literals | int (decimal, hex), uint (`1u`), double (`1.5`, `2e3`, `.5`), string (`"…"`, `'…'`, triple-quoted, raw `r"…"`, all escapes), bool, `null`, lists and maps (homogeneous: `[1, "a"]` is an error, as upstream; map keys int, uint, bool or string; a repeated key is an error) |
///
/// Constant conversions (`quantity("40Gi")`, `semver("1.2.3")`, `ip("10.0.0.1")`,
/// `cidr("10.0.0.0/8")`, `url("https://…")`, `duration("1h")`, `timestamp("…")`) and
/// constant regular expressions are evaluated once at compile
/// time, and a bad constant is a compile error pointing at it; computed ones are
/// converted (or compiled) at run time, where a bad one is an evaluation error.
///
/// # Rejected at compile time
///
/// Each with "unsupported function" and the reason:
///
/// * The Kubernetes image library (`image()`, `isImage()`, `.registry()`, `.tag()`, …):
///   "the Kubernetes image library is not supported".
/// * `bytes()`: "bytes are not supported".
/// * `reverse`, `sortBy`, `slice`, `flatten`, `distinct`, `range`, `sort`, `first`,
///   `last`, quantity `mul` / `div`: not in Kubernetes' DRA environment either (strings
///   extension version 3, cel-go's lists extension); upstream reports them as
///   undeclared.
///
/// And, as syntax: bytes literals and message literals (`Type{field: v}`). Also
/// rejected, as upstream: operations whose static types cannot match
/// (`device.driver == 1`, `"a" < 1`, `1 == 1u`, `quantity("1") > quantity("2")`),
/// heterogeneous list and map literals, unknown variables and `device` fields, a result
/// that cannot be a bool, expressions over 10 KiB or nested more than 64 levels.
///
/// # Differences from upstream
///
/// * A version attribute that does not parse fails only the evaluations that read it
///   (upstream converts every attribute first, so any evaluation on that device fails);
///   `Device::validate` rejects such devices anyway.
/// * No compile-time cost estimation. The runtime cost limit (1,000,000) is enforced,
///   counting one unit per evaluated node, per list item or map key visited or
///   compared, per 8 bytes of string processed or list built (so it also bounds
///   memory, to about 8 MB), and per byte a regular expression scans or a computed
///   pattern compiles; cel-go's units differ in detail.
/// * `quantity.asInteger()` accepts every whole value that fits an int64 (`2000m`).
/// * Regular-expression errors use Go's words for the RE2 rules checked here
///   ("invalid repeat count: `{1001}`", "invalid nested repetition operator: `**`",
///   "invalid escape sequence: `\<`"), otherwise `regex-syntax`'s, followed by the
///   pattern ("unclosed group: `(a`" where Go says "missing closing ): `(a`"); a
///   compiled pattern is limited to 1 MiB of automaton (RE2 limits its program size
///   too, differently).
/// * `format`'s checks run at evaluation only (cel-go also checks constant format
///   strings at compile time, e.g. "too many arguments supplied to string.format").
///   As in cel-go's version-1 formatter, `%.Ne` keeps six decimals and reads `N` as a
///   width; `%f` groups thousands and `%e` writes `× 10ⁿ` as its `en-US` printer does.
/// * `url()` follows Go's `net/url` on the paths selectors take (scheme, authority,
///   port, `%`-escapes, query); some rare checks (escapes inside IPv6 zones, userinfo
///   details) are simplified. The format library's `date` / `datetime` / `byte` /
///   `uuid` follow kube-openapi's `strfmt` checks, rewritten.
/// * Conversion errors from strings read "type conversion error from string "x" to
///   'int'" rather than Go's `strconv` wording; `double("…")` accepts Rust's float
///   syntax (Go also takes hex floats and `_` separators).
/// * Time zones of the timestamp getters are `UTC` or numeric offsets (`-05:00`); a
///   named IANA zone (`America/New_York`), which needs a zone database, is the
///   evaluation error "unknown time zone America/New_York". `string(timestamp)` is
///   always in UTC (`Z`), and a timestamp that does not parse reads "parsing time
///   "x" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 timestamp" (Go names the
///   failing element).
/// * An empty list's `sum()` is the int `0` whatever the list's static type (upstream
///   gives `0.0` / `0u` for lists statically typed double / uint); it still equals them.
#[derive(Clone, Debug)]
pub struct Selector {
    source: String,
    expr: Expr,
    slots: usize,
}

impl PartialEq for Selector {
    fn eq(&self, other: &Selector) -> bool {
        self.source == other.source
    }
}

impl Eq for Selector {}

impl Selector {
    /// Parses and type-checks a CEL expression over `device`.
    ///
    /// ```
    /// use gangpack::{CelErrorKind, Selector};
    ///
    /// let e = Selector::compile(r#"device.attributes["d"].name.reverse() == "a""#).unwrap_err();
    /// assert_eq!(e.position, 28);
    /// assert!(matches!(e.kind, CelErrorKind::UnsupportedFunction { .. }));
    /// assert_eq!(
    ///     e.to_string(),
    ///     "at 28: unsupported function \"reverse\": not in the CEL environment Kubernetes \
    ///      gives DRA selectors (it needs version 3 of the strings extension)"
    /// );
    ///
    /// // A constant regular expression is compiled here: a bad one is a compile error.
    /// let e = Selector::compile(r#"device.attributes["d"].name.matches("^(a")"#).unwrap_err();
    /// assert_eq!(e.to_string(), "at 36: error parsing regexp: unclosed group: `^(a`");
    /// ```
    pub fn compile(expr: &str) -> Result<Selector, CelError> {
        if expr.len() > MAX_LEN {
            return Err(CelError {
                position: MAX_LEN,
                kind: CelErrorKind::TooLong {
                    len: expr.len(),
                    max: MAX_LEN,
                },
            });
        }
        let ast = parser::parse(expr)?;
        let checked = check::check(&ast)?;
        debug_assert!(matches!(checked.ty, ir::Ty::Bool | ir::Ty::Dyn));
        Ok(Selector {
            source: expr.to_owned(),
            expr: checked.expr,
            slots: checked.slots,
        })
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates the selector on `device`, published by `driver` (the slice's driver,
    /// which is also the domain of the device's unqualified attribute names).
    ///
    /// `Ok(false)` means "no match"; an error means the allocation must fail, as
    /// upstream's scheduler does.
    pub fn eval(&self, driver: &str, device: &Device) -> Result<bool, EvalError> {
        let mut cx = eval::Ctx {
            driver,
            device,
            slots: vec![None; self.slots],
            budget: core::cell::Cell::new(eval::COST_LIMIT),
        };
        match eval::eval(&self.expr, &mut cx)? {
            Value::Bool(b) => Ok(b),
            other => Err(EvalError::NotBool {
                found: other.type_name(),
            }),
        }
    }

    /// The driver every matching device must have, when the expression is
    /// `device.driver == "X"` or a top-level `&&` with such a term: an index can skip
    /// other drivers' devices (on them the result is `false`, never an error, because
    /// `&&` absorbs errors). `None` when nothing so simple is known.
    ///
    /// ```
    /// use gangpack::Selector;
    /// let s = Selector::compile(r#"device.attributes["a"].x > 1 && "gpu.example.com" == device.driver"#)?;
    /// assert_eq!(s.required_driver(), Some("gpu.example.com"));
    /// let s = Selector::compile(r#"device.driver == "a" || device.driver == "b""#)?;
    /// assert_eq!(s.required_driver(), None);
    /// # Ok::<(), gangpack::CelError>(())
    /// ```
    pub fn required_driver(&self) -> Option<&str> {
        fn of(e: &Expr) -> Option<&str> {
            match e {
                Expr::Cmp {
                    op: CmpOp::Eq,
                    lhs,
                    rhs,
                } => match (&**lhs, &**rhs) {
                    (Expr::Driver, Expr::Lit(Value::Str(s)))
                    | (Expr::Lit(Value::Str(s)), Expr::Driver) => Some(s),
                    _ => None,
                },
                Expr::And(items) => items.iter().find_map(of),
                _ => None,
            }
        }
        of(&self.expr)
    }

    /// Whether the selector matches every device (it folded to the constant `true`).
    ///
    /// ```
    /// use gangpack::Selector;
    /// assert!(Selector::compile("true")?.is_trivially_true());
    /// assert!(Selector::compile("true || device.driver == 'x'")?.is_trivially_true());
    /// assert!(!Selector::compile("device.driver != ''")?.is_trivially_true());
    /// # Ok::<(), gangpack::CelError>(())
    /// ```
    pub fn is_trivially_true(&self) -> bool {
        matches!(self.expr, Expr::Lit(Value::Bool(true)))
    }
}

impl core::str::FromStr for Selector {
    type Err = CelError;

    fn from_str(s: &str) -> Result<Selector, CelError> {
        Selector::compile(s)
    }
}

/// Why a CEL expression does not compile: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CelError {
    /// Byte offset in the expression the error points at.
    pub position: usize,
    /// What is wrong.
    pub kind: CelErrorKind,
}

impl CelError {
    /// The message followed by the source line with a caret under the position.
    ///
    /// ```
    /// use gangpack::Selector;
    /// let src = "device.driver == 1";
    /// let e = Selector::compile(src).unwrap_err();
    /// assert_eq!(
    ///     e.render(src),
    ///     "at 14: found no matching overload for '_==_' applied to '(string, int)'\n\
    ///      \x20| device.driver == 1\n\
    ///      \x20|               ^"
    /// );
    /// ```
    pub fn render(&self, source: &str) -> String {
        let mut at = self.position.min(source.len());
        while !source.is_char_boundary(at) {
            at -= 1;
        }
        let line_start = source[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[at..].find('\n').map_or(source.len(), |i| at + i);
        let line = &source[line_start..line_end];
        let column = source[line_start..at].chars().count();
        let pad: String = core::iter::repeat_n(' ', column).collect();
        format!("{self}\n | {line}\n | {pad}^")
    }
}

impl fmt::Display for CelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", self.position, self.kind)
    }
}

impl core::error::Error for CelError {}

/// The kinds of [`CelError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CelErrorKind {
    /// The expression is longer than the 10 KiB upstream allows.
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A character that cannot start a token.
    UnexpectedCharacter {
        /// The character.
        found: char,
    },
    /// A string literal without its closing quote (or a newline in a single-line one).
    UnterminatedString,
    /// A backslash escape CEL does not define, or one naming an invalid code point.
    InvalidEscape,
    /// An integer literal outside the int64 range.
    InvalidNumber,
    /// One of CEL's reserved words (`if`, `for`, `let`, …) used as a name.
    ReservedIdentifier {
        /// The word.
        name: String,
    },
    /// A token the grammar does not allow here.
    UnexpectedToken {
        /// The token found.
        found: String,
        /// What would have been allowed.
        expected: &'static str,
    },
    /// Input left over after a complete expression.
    TrailingInput {
        /// The first leftover token.
        found: String,
    },
    /// The expression nests deeper than the limit.
    TooDeep {
        /// The limit.
        max: usize,
    },
    /// Valid CEL syntax outside the supported subset (bytes, map literals, …).
    UnsupportedSyntax {
        /// What it is, in the plural.
        what: &'static str,
    },
    /// A name that is neither `device` nor bound by `cel.bind` or a macro.
    UnknownVariable {
        /// The name.
        name: String,
    },
    /// A field the type does not have (`device.name`), or field selection on a type
    /// without fields.
    UndefinedField {
        /// The type, as CEL prints it.
        ty: String,
        /// The field.
        field: String,
    },
    /// A function that exists neither in CEL nor in the Kubernetes libraries.
    UnknownFunction {
        /// The name.
        name: String,
    },
    /// A CEL or Kubernetes library function this front end does not implement.
    UnsupportedFunction {
        /// The name.
        name: String,
        /// Why, and what to use instead.
        reason: &'static str,
    },
    /// A macro or constructor called with the wrong number of arguments.
    WrongArgumentCount {
        /// The function.
        function: String,
        /// The number it takes.
        expected: usize,
        /// The number given.
        found: usize,
    },
    /// No overload of an operator or function accepts these static types.
    NoMatchingOverload {
        /// The function, with operators spelled as CEL does internally (`_==_`).
        function: String,
        /// The argument types, `(a, b)` or `receiver.(a)` for a method.
        types: String,
    },
    /// A macro argument of the wrong shape (`has(x)` instead of `has(x.f)`).
    InvalidMacroArgument {
        /// The macro.
        function: &'static str,
        /// What is expected.
        reason: &'static str,
    },
    /// A constant `quantity("…")` that is not a quantity.
    InvalidQuantity {
        /// The text.
        value: String,
        /// Why.
        error: QuantityError,
    },
    /// A constant `semver("…")` that is not a semantic version.
    InvalidSemver {
        /// The text.
        value: String,
        /// Why.
        error: VersionError,
    },
    /// A list literal whose items have different types (`[1, "a"]`; Kubernetes
    /// enables cel-go's homogeneous aggregate literals).
    TypeMismatch {
        /// The type of the items before.
        expected: String,
        /// The type of this item.
        found: String,
    },
    /// A constant regular expression (`matches`, `find`, `findAll`) that does not
    /// compile.
    InvalidRegex {
        /// The pattern.
        pattern: String,
        /// Why, as Go's `regexp` words it for the RE2 rules checked here (`invalid
        /// repeat count: `{1001}``), else `regex-syntax`'s reason and the pattern.
        reason: String,
    },
    /// A constant `ip("…")` that is not an IP address Kubernetes accepts.
    InvalidIp {
        /// The text.
        value: String,
        /// Why.
        reason: &'static str,
    },
    /// A constant `cidr("…")` that is not a CIDR Kubernetes accepts.
    InvalidCidr {
        /// The text.
        value: String,
        /// Why.
        reason: &'static str,
    },
    /// A constant `duration("…")` or `timestamp("…")` that does not parse.
    InvalidTime {
        /// Why, as Go's `time` package words it.
        reason: String,
    },
    /// A constant `url("…")` that is not an absolute URI or absolute path.
    InvalidUrl {
        /// The text.
        value: String,
        /// Why, as Go's `net/url` words it.
        reason: String,
    },
    /// The expression cannot evaluate to a bool.
    NotBool {
        /// Its type, as CEL prints it.
        found: String,
    },
}

impl fmt::Display for CelErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CelErrorKind::TooLong { len, max } => {
                write!(
                    f,
                    "expression is {len} bytes long; at most {max} are allowed"
                )
            }
            CelErrorKind::UnexpectedCharacter { found } => {
                write!(f, "syntax error: unexpected character {found:?}")
            }
            CelErrorKind::UnterminatedString => f.write_str("unterminated string literal"),
            CelErrorKind::InvalidEscape => f.write_str("invalid escape sequence in string"),
            CelErrorKind::InvalidNumber => {
                f.write_str("invalid integer literal: must fit a signed 64-bit integer")
            }
            CelErrorKind::ReservedIdentifier { name } => {
                write!(f, "reserved identifier '{name}'")
            }
            CelErrorKind::UnexpectedToken { found, expected } => {
                write!(f, "syntax error: found {found}, expected {expected}")
            }
            CelErrorKind::TrailingInput { found } => {
                write!(f, "syntax error: unexpected {found} after the expression")
            }
            CelErrorKind::TooDeep { max } => {
                write!(f, "expression nested too deeply (more than {max} levels)")
            }
            CelErrorKind::UnsupportedSyntax { what } => write!(f, "{what} are not supported"),
            CelErrorKind::UnknownVariable { name } => {
                write!(f, "undeclared reference to '{name}'")
            }
            CelErrorKind::UndefinedField { ty, field } => {
                write!(f, "undefined field '{field}' on type '{ty}'")
            }
            CelErrorKind::UnknownFunction { name } => {
                write!(f, "undeclared reference to function '{name}'")
            }
            CelErrorKind::UnsupportedFunction { name, reason } => {
                write!(f, "unsupported function \"{name}\": {reason}")
            }
            CelErrorKind::WrongArgumentCount {
                function,
                expected,
                found,
            } => write!(
                f,
                "{function}() takes {expected} argument(s), {found} given"
            ),
            CelErrorKind::NoMatchingOverload { function, types } => write!(
                f,
                "found no matching overload for '{function}' applied to '{types}'"
            ),
            CelErrorKind::InvalidMacroArgument { function, reason } => {
                write!(f, "invalid argument to {function}(): {reason}")
            }
            CelErrorKind::InvalidQuantity { value, error } => {
                write!(f, "invalid quantity {value:?}: {error}")
            }
            CelErrorKind::InvalidSemver { value, error } => {
                write!(f, "invalid semantic version {value:?}: {error}")
            }
            CelErrorKind::TypeMismatch { expected, found } => {
                write!(f, "expected type '{expected}' but found '{found}'")
            }
            CelErrorKind::InvalidRegex { reason, .. } => {
                write!(f, "error parsing regexp: {reason}")
            }
            CelErrorKind::InvalidIp { value, reason } => {
                write!(
                    f,
                    "IP Address {value:?} parse error during conversion from string: {reason}"
                )
            }
            CelErrorKind::InvalidCidr { value, reason } => {
                write!(
                    f,
                    "network address {value:?} parse error during conversion from string: {reason}"
                )
            }
            CelErrorKind::InvalidTime { reason } => f.write_str(reason),
            CelErrorKind::InvalidUrl { reason, .. } => {
                write!(f, "URL parse error during conversion from string: {reason}")
            }
            CelErrorKind::NotBool { found } => {
                write!(f, "expression must evaluate to bool, not {found}")
            }
        }
    }
}

/// Why evaluating a selector on a device failed. Upstream aborts the allocation with
/// an error in every such case (it is not a mere mismatch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// A map has no such key: `device.attributes["d"].missing`.
    NoSuchKey {
        /// The key.
        key: String,
    },
    /// An operator or function got runtime types it has no overload for (`attr < 1`
    /// where the attribute is a string).
    NoSuchOverload {
        /// The function, operators spelled as CEL does internally (`_<_`).
        function: &'static str,
        /// The runtime argument types, `(a, b)`.
        types: String,
    },
    /// int64 arithmetic overflowed.
    IntegerOverflow {
        /// The operator.
        operation: &'static str,
    },
    /// Integer division by zero.
    DivisionByZero,
    /// Integer modulus by zero.
    ModulusByZero,
    /// A list index outside the list.
    IndexOutOfRange {
        /// The index.
        index: i64,
        /// The list's length.
        len: usize,
    },
    /// A string function's index outside the string (`charAt`, `indexOf`,
    /// `lastIndexOf`, `substring`; counted in code points).
    StringIndexOutOfRange {
        /// The index.
        index: i64,
    },
    /// `substring(start, end)` with `start > end`.
    InvalidSubstringRange {
        /// The start.
        start: i64,
        /// The end.
        end: i64,
    },
    /// `quantity(s)` on a computed string that is not a quantity.
    InvalidQuantity {
        /// The text.
        value: String,
        /// Why.
        error: QuantityError,
    },
    /// `semver(s)` on a computed string that is not a semantic version.
    InvalidSemver {
        /// The text.
        value: String,
        /// Why.
        error: VersionError,
    },
    /// A version attribute of the device does not parse.
    InvalidVersionAttribute {
        /// The attribute's name as stored on the device.
        attribute: String,
        /// Why.
        error: VersionError,
    },
    /// Quantity arithmetic (`add`, `sub`) left the representable range.
    QuantityOverflow {
        /// The function.
        function: &'static str,
    },
    /// `asInteger()` on a quantity that is not a whole number in the int64 range.
    NotAnInteger,
    /// `value()` on an empty optional.
    OptionalNone,
    /// A comprehension (`all`, `exists`, `exists_one`) over a value that is neither a
    /// list nor a map.
    NotIterable {
        /// The value's type.
        found: &'static str,
    },
    /// uint64 arithmetic overflowed (or went below zero).
    UnsignedOverflow {
        /// The operator.
        operation: &'static str,
    },
    /// A conversion (`int(x)`, `uint(x)`) whose value is outside the target's range.
    ConversionRange {
        /// The target type.
        to: &'static str,
    },
    /// A conversion from a string (`int("x")`, `double("x")`, `bool("x")`) whose text
    /// is not a value of the target type.
    InvalidConversion {
        /// The text.
        value: String,
        /// The target type.
        to: &'static str,
    },
    /// A regular expression computed at run time that does not compile.
    InvalidRegex {
        /// The function (`matches`, `find`, `findAll`; the last two are the Kubernetes
        /// regex library's, whose message starts with "Illegal regex: ").
        function: &'static str,
        /// The pattern.
        pattern: String,
        /// Why, as Go's `regexp` words it for the RE2 rules checked here (`invalid
        /// repeat count: `{1001}``), else `regex-syntax`'s reason and the pattern.
        reason: String,
    },
    /// `ip(s)`, `cidr.containsIP(s)` on a computed string that is not an IP address
    /// Kubernetes accepts.
    InvalidIp {
        /// The text.
        value: String,
        /// Why.
        reason: &'static str,
    },
    /// `cidr(s)`, `cidr.containsCIDR(s)` on a computed string that is not a CIDR.
    InvalidCidr {
        /// The text.
        value: String,
        /// Why.
        reason: &'static str,
    },
    /// A map built by the expression (a literal, `transformMap`) got the same key twice.
    DuplicateMapKey {
        /// The key.
        key: String,
    },
    /// `duration(s)` / `timestamp(s)` of a computed string that does not parse, a time
    /// zone that is not `UTC` or `±HH:MM`, or a timestamp outside years 1–9999.
    InvalidTime {
        /// Why.
        reason: String,
    },
    /// Duration or timestamp arithmetic left the representable range.
    TimeOverflow {
        /// `duration` or `timestamp`.
        kind: &'static str,
    },
    /// `url(s)` of a computed string that is not an absolute URI or absolute path.
    InvalidUrl {
        /// The text.
        value: String,
        /// Why, as Go's `net/url` words it.
        reason: String,
    },
    /// `min()` / `max()` of an empty list.
    EmptyList {
        /// The function.
        function: &'static str,
    },
    /// `format`: a `%` clause with no argument left in the list.
    FormatMissingArgument {
        /// The index of the missing argument.
        index: usize,
    },
    /// `format`: a clause letter that does not exist (`%z`), or a clause cut short.
    FormatInvalidClause {
        /// What is wrong.
        reason: String,
    },
    /// `format`: an argument of a type the clause cannot format (`%d` of a string).
    FormatArgumentType {
        /// The clause, spelled as cel-go names it (`decimal clause can only be used on
        /// integers`).
        clause: &'static str,
        /// The argument's type.
        found: &'static str,
    },
    /// The expression evaluated to something other than a bool.
    NotBool {
        /// The value's type.
        found: &'static str,
    },
    /// The evaluation did more work than the runtime cost limit allows (upstream
    /// `CELSelectorExpressionMaxCost`, 1,000,000).
    CostLimitExceeded {
        /// The limit, in cost units.
        limit: u64,
    },
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::NoSuchKey { key } => write!(f, "no such key: {key}"),
            EvalError::NoSuchOverload { function, types } => {
                write!(f, "no such overload: '{function}' applied to '{types}'")
            }
            EvalError::IntegerOverflow { operation } => {
                write!(f, "integer overflow in '{operation}'")
            }
            EvalError::DivisionByZero => f.write_str("division by zero"),
            EvalError::ModulusByZero => f.write_str("modulus by zero"),
            EvalError::IndexOutOfRange { index, len } => {
                write!(f, "index out of range: {index} (list size {len})")
            }
            EvalError::StringIndexOutOfRange { index } => {
                write!(f, "index out of range: {index}")
            }
            EvalError::InvalidSubstringRange { start, end } => {
                write!(f, "invalid substring range. start: {start}, end: {end}")
            }
            EvalError::InvalidQuantity { value, error } => {
                write!(f, "invalid quantity {value:?}: {error}")
            }
            EvalError::InvalidSemver { value, error } => {
                write!(f, "invalid semantic version {value:?}: {error}")
            }
            EvalError::InvalidVersionAttribute { attribute, error } => {
                write!(f, "attribute {attribute}: parse semantic version: {error}")
            }
            EvalError::QuantityOverflow { function } => {
                write!(f, "quantity overflow in {function}()")
            }
            EvalError::NotAnInteger => f.write_str("cannot convert value to integer"),
            EvalError::OptionalNone => f.write_str("optional.none() dereference"),
            EvalError::NotIterable { found } => {
                write!(f, "got '{found}', expected iterable type")
            }
            EvalError::UnsignedOverflow { operation } => {
                write!(f, "unsigned integer overflow in '{operation}'")
            }
            EvalError::ConversionRange { to } => {
                write!(f, "range error converting to {to}")
            }
            EvalError::InvalidConversion { value, to } => {
                write!(f, "type conversion error from string {value:?} to '{to}'")
            }
            EvalError::InvalidRegex {
                function, reason, ..
            } => {
                if *function != "matches" {
                    f.write_str("Illegal regex: ")?;
                }
                write!(f, "error parsing regexp: {reason}")
            }
            EvalError::InvalidIp { value, reason } => {
                write!(
                    f,
                    "IP Address {value:?} parse error during conversion from string: {reason}"
                )
            }
            EvalError::InvalidCidr { value, reason } => {
                write!(
                    f,
                    "network address {value:?} parse error during conversion from string: {reason}"
                )
            }
            EvalError::InvalidTime { reason } => f.write_str(reason),
            EvalError::TimeOverflow { kind } => write!(f, "{kind} overflow"),
            EvalError::InvalidUrl { reason, .. } => {
                write!(f, "URL parse error during conversion from string: {reason}")
            }
            EvalError::EmptyList { function } => write!(f, "{function} called on empty list"),
            EvalError::DuplicateMapKey { key } => {
                write!(f, "insert failed: key {key} already exists")
            }
            EvalError::FormatMissingArgument { index } => {
                write!(f, "index {index} out of range")
            }
            EvalError::FormatInvalidClause { reason } => {
                write!(f, "could not parse formatting clause: {reason}")
            }
            EvalError::FormatArgumentType { clause, found } => {
                write!(f, "error during formatting: {clause}, was given {found}")
            }
            EvalError::NotBool { found } => {
                write!(
                    f,
                    "CEL result of type {found} could not be converted to bool"
                )
            }
            EvalError::CostLimitExceeded { limit } => {
                write!(
                    f,
                    "operation cancelled: actual cost limit exceeded ({limit})"
                )
            }
        }
    }
}

impl core::error::Error for EvalError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DeviceAttribute, Quantity};

    const DRIVER: &str = "gpu.example.com";

    fn device() -> Device {
        let mut d = Device::new("gpu-0");
        let attrs = [
            ("model", DeviceAttribute::String("H100".into())),
            ("cores", DeviceAttribute::Int(132)),
            ("mig", DeviceAttribute::Bool(true)),
            (
                "driverVersion",
                DeviceAttribute::Version("535.104.5".into()),
            ),
            (
                "other.example.com/zone",
                DeviceAttribute::String("z1".into()),
            ),
            ("links", DeviceAttribute::Ints(vec![1, 2, 3])),
            ("bad", DeviceAttribute::Version("x".into())),
        ];
        for (k, v) in attrs {
            d.attributes.insert(k.into(), v);
        }
        d.capacity
            .insert("memory".into(), Quantity::parse("80Gi").unwrap().into());
        d
    }

    fn run(src: &str) -> Result<bool, EvalError> {
        Selector::compile(src)
            .unwrap_or_else(|e| panic!("{}", e.render(src)))
            .eval(DRIVER, &device())
    }

    #[test]
    fn lookups() {
        assert_eq!(
            run(r#"device.attributes["gpu.example.com"].cores == 132"#),
            Ok(true)
        );
        assert_eq!(
            run(r#"device.attributes["other.example.com"].zone == "z1""#),
            Ok(true)
        );
        assert_eq!(
            run(r#"device.attributes["gpu.example.com"].zone == "z1""#),
            Err(EvalError::NoSuchKey { key: "zone".into() })
        );
        assert_eq!(run("size(device.attributes) == 2"), Ok(true));
        assert_eq!(
            run(r#"device.attributes["gpu.example.com"].size() == 6"#),
            Ok(true)
        );
        assert_eq!(run(r#"device.attributes["a/b"].size() == 0"#), Ok(true));
        assert_eq!(
            run(r#"device.attributes.exists_one(d, d == "other.example.com")"#),
            Ok(true)
        );
        assert_eq!(run("device.attributes[device.driver].mig"), Ok(true));
        assert_eq!(
            run(r#"device.attributes["gpu.example.com"].bad.major() == 1"#),
            Err(EvalError::InvalidVersionAttribute {
                attribute: "bad".into(),
                error: crate::Version::parse("x").unwrap_err()
            })
        );
    }

    #[test]
    fn optionals() {
        let d = r#"device.attributes["gpu.example.com"]"#;
        assert_eq!(
            run(&format!("{d}.?zone.orValue('none') == 'none'")),
            Ok(true)
        );
        assert_eq!(
            run(&format!("{d}.?model.orValue('none') == 'H100'")),
            Ok(true)
        );
        assert_eq!(run(&format!("{d}.?zone.hasValue()")), Ok(false));
        assert_eq!(run(&format!("{d}[?'links'][1].value() == 2")), Ok(true));
        assert_eq!(run(&format!("{d}[?'links'][7].hasValue()")), Ok(false));
        assert_eq!(
            run(&format!("{d}.?zone.value() == 1")),
            Err(EvalError::OptionalNone)
        );
        assert_eq!(run("optional.of(1).value() == 1"), Ok(true));
        assert_eq!(run("optional.none().orValue(true)"), Ok(true));
    }

    #[test]
    fn folds_and_lists() {
        let d = r#"device.attributes["gpu.example.com"]"#;
        assert_eq!(run(&format!("{d}.links.all(x, x > 0)")), Ok(true));
        assert_eq!(run(&format!("{d}.links.exists(x, x == 3)")), Ok(true));
        assert_eq!(run(&format!("{d}.links.exists_one(x, x >= 2)")), Ok(false));
        assert_eq!(
            run(&format!("2 in {d}.links && {d}.links.includes(3)")),
            Ok(true)
        );
        assert_eq!(run(&format!("{d}.cores.includes(132)")), Ok(true));
        assert_eq!(
            run(&format!("{d}.cores.all(x, x > 0)")),
            Err(EvalError::NotIterable { found: "int" })
        );
        // `exists` absorbs an error when another element decides.
        assert_eq!(run("[0, 1].exists(x, 10 / x == 10)"), Ok(true));
        assert_eq!(
            run("[0, 2].exists(x, 10 / x == 10)"),
            Err(EvalError::DivisionByZero)
        );
        assert_eq!(run("[1, 2] + [3] == [1, 2, 3]"), Ok(true));
        assert_eq!(run("[dyn(1), 'a'][1] == 'a'"), Ok(true));
        assert_eq!(
            run("[1][3] == 1"),
            Err(EvalError::IndexOutOfRange { index: 3, len: 1 })
        );
    }

    #[test]
    fn bind_and_semver() {
        assert_eq!(
            run(r#"cel.bind(g, device.attributes["gpu.example.com"], g.cores > 100 && g.mig)"#),
            Ok(true)
        );
        assert_eq!(
            run("cel.bind(x, 1 / 0, true)"),
            Err(EvalError::DivisionByZero)
        );
        assert_eq!(run(r#"semver("v1.2", true) == semver("1.2.0")"#), Ok(true));
        assert_eq!(
            run(r#"isSemver("01.02.03", true) && !isSemver("1.2")"#),
            Ok(true)
        );
        assert_eq!(
            run(r#"semver("1.2.3").compareTo(semver("1.2.3-rc.1")) == 1"#),
            Ok(true)
        );
        assert_eq!(
            run(r#"cel.bind(s, "1.2" + ".x", semver(s).major() == 1)"#),
            Err(EvalError::InvalidSemver {
                value: "1.2.x".into(),
                error: crate::Version::parse("1.2.x").unwrap_err()
            })
        );
    }

    #[test]
    fn quantities() {
        let m = r#"device.capacity["gpu.example.com"].memory"#;
        assert_eq!(run(&format!("{m}.asInteger() == 85899345920")), Ok(true));
        assert_eq!(
            run(&format!(
                "{m}.sub(quantity('40Gi')).isGreaterThan(quantity('39Gi'))"
            )),
            Ok(true)
        );
        assert_eq!(
            run(&format!("{m}.add(1).isInteger() && sign({m}) == 1")),
            Ok(true)
        );
        assert_eq!(run("quantity('1.5').isInteger()"), Ok(false));
        assert_eq!(
            run("quantity('1.5').asInteger() == 1"),
            Err(EvalError::NotAnInteger)
        );
        assert_eq!(run("isQuantity('1Ki') && !isQuantity('1KiB')"), Ok(true));
    }

    #[test]
    fn render_points_at_the_column() {
        let src = "true &&\n  device.nope";
        let e = Selector::compile(src).unwrap_err();
        assert_eq!(e.position, 17);
        assert_eq!(
            e.render(src),
            "at 17: undefined field 'nope' on type 'kubernetes.DRADevice'\n | \
             \x20 device.nope\n |          ^"
        );
    }

    #[test]
    fn folding() {
        let s = Selector::compile("false && device.attributes['x'].y").unwrap();
        assert_eq!(s.eval(DRIVER, &device()), Ok(false));
        assert!(matches!(s.expr, Expr::Lit(Value::Bool(false))));
        let s = Selector::compile("true && device.attributes['x'].y").unwrap();
        assert!(matches!(s.expr, Expr::And(_)));
        let s = Selector::compile(r#"true ? device.driver == "a" : false"#).unwrap();
        assert_eq!(s.required_driver(), Some("a"));
        let q = Selector::compile(r#"quantity("1Gi").isLessThan(quantity("2Gi"))"#).unwrap();
        let Expr::Call { args, .. } = &q.expr else {
            panic!("{:?}", q.expr)
        };
        assert!(
            args.iter()
                .all(|a| matches!(a, Expr::Lit(Value::Quantity(_))))
        );
    }
}
