//! The typed predicate IR a selector compiles to, its static types and its runtime
//! values.
//!
//! The checker (`check.rs`) turns the AST into an [`Expr`] tree whose shape already
//! reflects what was resolved statically: device fields become [`Expr::Driver`] /
//! [`Expr::Attr`] / [`Expr::Cap`] (with the qualified key precomputed), literal
//! conversions such as `quantity("40Gi")` become constants, `&&` / `||` are n-ary and
//! constant operands are folded. The evaluator (`eval.rs`) walks this tree.

use core::borrow::Borrow;
use core::fmt;
use core::ops::Deref;

use core::net::IpAddr;

use regex_automata::meta::Regex;

use super::net::Cidr;
use super::url::Url;
use crate::alloc_prelude::*;
use crate::{Quantity, Version};

/// A static type of the checker, named as cel-go prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    Bool,
    Int,
    Uint,
    Double,
    Str,
    Null,
    /// A type value (`type(x)`, `int`, `string`, …).
    Type,
    /// `net.IP` (Kubernetes IP library).
    Ip,
    /// `net.CIDR` (Kubernetes CIDR library).
    Cidr,
    /// `kubernetes.URL` (Kubernetes URL library).
    Url,
    /// `kubernetes.NamedFormat` (Kubernetes format library).
    Format,
    /// `google.protobuf.Duration`.
    Duration,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    Quantity,
    Semver,
    List(Box<Ty>),
    Map(MapKind),
    /// A map built by the expression (a literal, `transformMap`): key and value types.
    Dict(Box<Ty>, Box<Ty>),
    Optional(Box<Ty>),
    /// Known only at run time: attribute values, comprehension variables over them.
    Dyn,
}

impl Ty {
    /// The common type of two branches or list items, if any.
    pub(super) fn join(&self, other: &Ty) -> Option<Ty> {
        match (self, other) {
            // A device map against a map built by the expression is compared at run time.
            (Ty::Dyn, _)
            | (_, Ty::Dyn)
            | (Ty::Map(_), Ty::Dict(..))
            | (Ty::Dict(..), Ty::Map(_)) => Some(Ty::Dyn),
            (Ty::List(a), Ty::List(b)) => Some(Ty::List(Box::new(a.join(b)?))),
            (Ty::Dict(ka, va), Ty::Dict(kb, vb)) => {
                Some(Ty::Dict(Box::new(ka.join(kb)?), Box::new(va.join(vb)?)))
            }
            (Ty::Optional(a), Ty::Optional(b)) => Some(Ty::Optional(Box::new(a.join(b)?))),
            (a, b) if a == b => Some(a.clone()),
            _ => None,
        }
    }

    /// Whether `==` between the two types can type-check.
    pub(super) fn comparable(&self, other: &Ty) -> bool {
        self.join(other).is_some()
    }

    /// Whether the type is one of CEL's numbers (or `dyn`).
    pub(super) fn is_numeric(&self) -> bool {
        matches!(self, Ty::Int | Ty::Uint | Ty::Double | Ty::Dyn)
    }

    /// Whether `< <= > >=` are defined on the type (numbers compare across types).
    pub(super) fn is_ordered(&self) -> bool {
        matches!(self, Ty::Str | Ty::Bool | Ty::Duration | Ty::Timestamp) || self.is_numeric()
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Bool => f.write_str("bool"),
            Ty::Int => f.write_str("int"),
            Ty::Uint => f.write_str("uint"),
            Ty::Double => f.write_str("double"),
            Ty::Str => f.write_str("string"),
            Ty::Null => f.write_str("null_type"),
            Ty::Type => f.write_str("type"),
            Ty::Ip => f.write_str("net.IP"),
            Ty::Cidr => f.write_str("net.CIDR"),
            Ty::Url => f.write_str("kubernetes.URL"),
            Ty::Format => f.write_str("kubernetes.NamedFormat"),
            Ty::Duration => f.write_str("google.protobuf.Duration"),
            Ty::Timestamp => f.write_str("google.protobuf.Timestamp"),
            Ty::Quantity => f.write_str("kubernetes.Quantity"),
            Ty::Semver => f.write_str("kubernetes.Semver"),
            Ty::List(item) => write!(f, "list({item})"),
            Ty::Map(kind) => write!(f, "map(string, {})", kind.value_ty()),
            Ty::Dict(key, value) => write!(f, "map({key}, {value})"),
            Ty::Optional(inner) => write!(f, "optional_type({inner})"),
            Ty::Dyn => f.write_str("dyn"),
        }
    }
}

/// The four maps reachable from `device`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MapKind {
    /// `device.attributes`: domain → map of attributes.
    Attributes,
    /// `device.attributes[domain]`: identifier → attribute value.
    AttrDomain,
    /// `device.capacity`: domain → map of capacities.
    Capacity,
    /// `device.capacity[domain]`: identifier → quantity.
    CapDomain,
}

impl MapKind {
    /// The type of the map's values.
    pub(super) fn value_ty(self) -> Ty {
        match self {
            MapKind::Attributes => Ty::Map(MapKind::AttrDomain),
            MapKind::AttrDomain => Ty::Dyn,
            MapKind::Capacity => Ty::Map(MapKind::CapDomain),
            MapKind::CapDomain => Ty::Quantity,
        }
    }
}

/// A borrowed or owned value, like `Cow` but covariant in its lifetime, so that a
/// constant stored in the selector and a value borrowed from the device can share one
/// [`Value`] type.
pub(super) enum Shared<'a, B: ?Sized, O> {
    Borrowed(&'a B),
    Owned(O),
}

impl<B: ?Sized, O: Borrow<B>> Deref for Shared<'_, B, O> {
    type Target = B;
    fn deref(&self) -> &B {
        match self {
            Shared::Borrowed(b) => b,
            Shared::Owned(o) => o.borrow(),
        }
    }
}

impl<B: ?Sized, O: Clone> Clone for Shared<'_, B, O> {
    fn clone(&self) -> Self {
        match self {
            Shared::Borrowed(b) => Shared::Borrowed(b),
            Shared::Owned(o) => Shared::Owned(o.clone()),
        }
    }
}

impl<B: ?Sized + fmt::Debug, O: Borrow<B>> fmt::Debug for Shared<'_, B, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Text, borrowed or owned.
pub(super) type Text<'a> = Shared<'a, str, String>;

/// The entries of a map built by the expression, borrowed or owned.
pub(super) type Entries<'a> = Shared<'a, [(Value<'a>, Value<'a>)], Vec<(Value<'a>, Value<'a>)>>;

/// A map value: which map and, for the inner maps, which domain.
#[derive(Clone, Debug)]
pub(super) enum MapRef<'a> {
    /// `device.attributes`.
    Attributes,
    /// `device.attributes[domain]`.
    AttrDomain(Text<'a>),
    /// `device.capacity`.
    Capacity,
    /// `device.capacity[domain]`.
    CapDomain(Text<'a>),
    /// A map built by the expression: its entries in insertion order, keys distinct.
    Literal(Entries<'a>),
}

/// A runtime value. `Value<'static>` is also the constant form stored in [`Expr::Lit`].
#[derive(Clone, Debug)]
pub(super) enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(Text<'a>),
    /// A type value, by its CEL name (`type(1) == int`).
    Type(&'static str),
    Quantity(Quantity),
    Semver(Shared<'a, Version, Version>),
    Ip(IpAddr),
    Cidr(Cidr),
    Url(Box<Url>),
    /// A named format of the Kubernetes format library, by name (`dns1123Label`).
    Format(&'static str),
    /// A duration, in nanoseconds.
    Duration(i64),
    /// A timestamp, in nanoseconds since the Unix epoch.
    Timestamp(i128),
    List(Shared<'a, [Value<'a>], Vec<Value<'a>>>),
    Map(MapRef<'a>),
    Optional(Option<Box<Value<'a>>>),
    /// A regular expression compiled at compile time from a constant pattern. Never a
    /// user-visible value: it only replaces the pattern argument of `matches`, `find`
    /// and `findAll`.
    Regex(Shared<'a, Regex, Regex>),
}

impl Value<'_> {
    /// A view of a constant that borrows its text and lists instead of copying them.
    pub(super) fn view(&self) -> Value<'_> {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(*b),
            Value::Int(i) => Value::Int(*i),
            Value::Uint(u) => Value::Uint(*u),
            Value::Double(d) => Value::Double(*d),
            Value::Str(s) => Value::Str(Shared::Borrowed(s)),
            Value::Type(t) => Value::Type(t),
            Value::Quantity(q) => Value::Quantity(*q),
            Value::Semver(v) => Value::Semver(Shared::Borrowed(v)),
            Value::Ip(ip) => Value::Ip(*ip),
            Value::Cidr(c) => Value::Cidr(*c),
            Value::Url(u) => Value::Url(u.clone()),
            Value::Format(name) => Value::Format(name),
            Value::Duration(d) => Value::Duration(*d),
            Value::Timestamp(t) => Value::Timestamp(*t),
            Value::Regex(r) => Value::Regex(Shared::Borrowed(r)),
            Value::List(items) => Value::List(Shared::Borrowed(items)),
            Value::Map(m) => Value::Map(match m {
                MapRef::Attributes => MapRef::Attributes,
                MapRef::Capacity => MapRef::Capacity,
                MapRef::AttrDomain(d) => MapRef::AttrDomain(Shared::Borrowed(d)),
                MapRef::CapDomain(d) => MapRef::CapDomain(Shared::Borrowed(d)),
                MapRef::Literal(entries) => MapRef::Literal(Shared::Borrowed(entries)),
            }),
            Value::Optional(inner) => Value::Optional(inner.as_ref().map(|v| Box::new(v.view()))),
        }
    }

    /// The CEL type name of the value, for runtime errors.
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null_type",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint",
            Value::Double(_) => "double",
            Value::Str(_) | Value::Regex(_) => "string",
            Value::Type(_) => "type",
            Value::Quantity(_) => "kubernetes.Quantity",
            Value::Semver(_) => "kubernetes.Semver",
            Value::Ip(_) => "net.IP",
            Value::Cidr(_) => "net.CIDR",
            Value::Url(_) => "kubernetes.URL",
            Value::Format(_) => "kubernetes.NamedFormat",
            Value::Duration(_) => "google.protobuf.Duration",
            Value::Timestamp(_) => "google.protobuf.Timestamp",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::Optional(_) => "optional_type",
        }
    }
}

/// A domain/identifier pair resolved at compile time, with the qualified key
/// `domain/identifier` precomputed so a lookup does not allocate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Key {
    pub(super) domain: String,
    pub(super) id: String,
    pub(super) qualified: String,
}

impl Key {
    pub(super) fn new(domain: &str, id: &str) -> Key {
        Key {
            domain: domain.to_owned(),
            id: id.to_owned(),
            qualified: format!("{domain}/{id}"),
        }
    }
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub(super) fn cel_name(self) -> &'static str {
        match self {
            CmpOp::Eq => "_==_",
            CmpOp::Ne => "_!=_",
            CmpOp::Lt => "_<_",
            CmpOp::Le => "_<=_",
            CmpOp::Gt => "_>_",
            CmpOp::Ge => "_>=_",
        }
    }
}

/// Integer (and `+` on strings and lists) arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

impl ArithOp {
    pub(super) fn cel_name(self) -> &'static str {
        match self {
            ArithOp::Add => "_+_",
            ArithOp::Sub => "_-_",
            ArithOp::Mul => "_*_",
            ArithOp::Div => "_/_",
            ArithOp::Mod => "_%_",
        }
    }
}

/// How an index or field access treats a missing key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Access {
    /// `m[k]`, `m.k`: a missing key is a runtime error.
    Strict,
    /// `m[?k]`, `m.?k`, or any access on an optional: yields an optional, empty when the
    /// base is empty or the key is missing.
    Optional,
}

/// The comprehension macros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FoldKind {
    /// `r.all(x, p)`.
    All,
    /// `r.exists(x, p)`.
    Exists,
    /// `r.exists_one(x, p)`.
    ExistsOne,
}

/// Built-in functions (method or global form, see `check.rs` for their signatures).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Builtin {
    StartsWith,
    EndsWith,
    Contains,
    LowerAscii,
    UpperAscii,
    Size,
    Includes,
    Quantity,
    IsQuantity,
    Semver,
    IsSemver,
    IsGreaterThan,
    IsLessThan,
    CompareTo,
    Major,
    Minor,
    Patch,
    Sign,
    AsInteger,
    IsInteger,
    Add,
    Sub,
    OrValue,
    Or,
    OfNonZeroValue,
    HasValue,
    Value,
    OptionalOf,
    CharAt,
    IndexOf,
    LastIndexOf,
    Replace,
    Split,
    Substring,
    Trim,
    Join,
    Matches,
    Find,
    FindAll,
    Format,
    Quote,
    IsSorted,
    Sum,
    Min,
    Max,
    SetsContains,
    SetsEquivalent,
    SetsIntersects,
    ToInt,
    ToUint,
    ToDouble,
    ToString,
    ToBool,
    TypeOf,
    Ip,
    IsIp,
    IpIsCanonical,
    Family,
    IsUnspecified,
    IsLoopback,
    IsLinkLocalMulticast,
    IsLinkLocalUnicast,
    IsGlobalUnicast,
    Cidr,
    IsCidr,
    ContainsIp,
    ContainsCidr,
    CidrIp,
    Masked,
    PrefixLength,
    AsApproximateFloat,
    Url,
    IsUrl,
    GetScheme,
    GetHost,
    GetHostname,
    GetPort,
    GetEscapedPath,
    GetQuery,
    FormatNamed,
    Validate,
    ToDuration,
    ToTimestamp,
    GetFullYear,
    GetMonth,
    GetDate,
    GetDayOfMonth,
    GetDayOfWeek,
    GetDayOfYear,
    GetHours,
    GetMinutes,
    GetSeconds,
    GetMilliseconds,
}

impl Builtin {
    /// The CEL function name.
    pub(super) fn name(self) -> &'static str {
        match self {
            Builtin::StartsWith => "startsWith",
            Builtin::EndsWith => "endsWith",
            Builtin::Contains => "contains",
            Builtin::LowerAscii => "lowerAscii",
            Builtin::UpperAscii => "upperAscii",
            Builtin::Size => "size",
            Builtin::Includes => "includes",
            Builtin::Quantity => "quantity",
            Builtin::IsQuantity => "isQuantity",
            Builtin::Semver => "semver",
            Builtin::IsSemver => "isSemver",
            Builtin::IsGreaterThan => "isGreaterThan",
            Builtin::IsLessThan => "isLessThan",
            Builtin::CompareTo => "compareTo",
            Builtin::Major => "major",
            Builtin::Minor => "minor",
            Builtin::Patch => "patch",
            Builtin::Sign => "sign",
            Builtin::AsInteger => "asInteger",
            Builtin::IsInteger => "isInteger",
            Builtin::Add => "add",
            Builtin::Sub => "sub",
            Builtin::OrValue => "orValue",
            Builtin::Or => "or",
            Builtin::OfNonZeroValue => "optional.ofNonZeroValue",
            Builtin::HasValue => "hasValue",
            Builtin::Value => "value",
            Builtin::OptionalOf => "optional.of",
            Builtin::CharAt => "charAt",
            Builtin::IndexOf => "indexOf",
            Builtin::LastIndexOf => "lastIndexOf",
            Builtin::Replace => "replace",
            Builtin::Split => "split",
            Builtin::Substring => "substring",
            Builtin::Trim => "trim",
            Builtin::Join => "join",
            Builtin::Matches => "matches",
            Builtin::Find => "find",
            Builtin::FindAll => "findAll",
            Builtin::Format => "format",
            Builtin::Quote => "strings.quote",
            Builtin::IsSorted => "isSorted",
            Builtin::Sum => "sum",
            Builtin::Min => "min",
            Builtin::Max => "max",
            Builtin::SetsContains => "sets.contains",
            Builtin::SetsEquivalent => "sets.equivalent",
            Builtin::SetsIntersects => "sets.intersects",
            Builtin::ToInt => "int",
            Builtin::ToUint => "uint",
            Builtin::ToDouble => "double",
            Builtin::ToString => "string",
            Builtin::ToBool => "bool",
            Builtin::TypeOf => "type",
            Builtin::Ip | Builtin::CidrIp => "ip",
            Builtin::IsIp => "isIP",
            Builtin::IpIsCanonical => "ip.isCanonical",
            Builtin::Family => "family",
            Builtin::IsUnspecified => "isUnspecified",
            Builtin::IsLoopback => "isLoopback",
            Builtin::IsLinkLocalMulticast => "isLinkLocalMulticast",
            Builtin::IsLinkLocalUnicast => "isLinkLocalUnicast",
            Builtin::IsGlobalUnicast => "isGlobalUnicast",
            Builtin::Cidr => "cidr",
            Builtin::IsCidr => "isCIDR",
            Builtin::ContainsIp => "containsIP",
            Builtin::ContainsCidr => "containsCIDR",
            Builtin::Masked => "masked",
            Builtin::PrefixLength => "prefixLength",
            Builtin::AsApproximateFloat => "asApproximateFloat",
            Builtin::Url => "url",
            Builtin::IsUrl => "isURL",
            Builtin::GetScheme => "getScheme",
            Builtin::GetHost => "getHost",
            Builtin::GetHostname => "getHostname",
            Builtin::GetPort => "getPort",
            Builtin::GetEscapedPath => "getEscapedPath",
            Builtin::GetQuery => "getQuery",
            Builtin::FormatNamed => "format.named",
            Builtin::Validate => "validate",
            Builtin::ToDuration => "duration",
            Builtin::ToTimestamp => "timestamp",
            Builtin::GetFullYear => "getFullYear",
            Builtin::GetMonth => "getMonth",
            Builtin::GetDate => "getDate",
            Builtin::GetDayOfMonth => "getDayOfMonth",
            Builtin::GetDayOfWeek => "getDayOfWeek",
            Builtin::GetDayOfYear => "getDayOfYear",
            Builtin::GetHours => "getHours",
            Builtin::GetMinutes => "getMinutes",
            Builtin::GetSeconds => "getSeconds",
            Builtin::GetMilliseconds => "getMilliseconds",
        }
    }
}

/// A node of the predicate IR.
#[derive(Clone, Debug)]
pub(super) enum Expr {
    /// A constant (literals and folded conversions such as `quantity("40Gi")`).
    Lit(Value<'static>),
    /// A variable bound by `cel.bind` or a comprehension, by slot.
    Local(usize),
    /// `device.driver`.
    Driver,
    /// `device.allowMultipleAllocations`.
    AllowMultiple,
    /// `device.attributes` (a map value).
    Attributes,
    /// `device.capacity` (a map value).
    Capacity,
    /// `device.attributes[domain]` (a map value).
    AttrDomain(Box<Expr>),
    /// `device.capacity[domain]` (a map value).
    CapDomain(Box<Expr>),
    /// `device.attributes["domain"].id` with both names constant.
    Attr(Key),
    /// `device.capacity["domain"].id` with both names constant.
    Cap(Key),
    /// `has(device.attributes["domain"].id)` / `"id" in device.attributes["domain"]`.
    HasAttr(Key),
    /// `has(device.capacity["domain"].id)` / `"id" in device.capacity["domain"]`.
    HasCap(Key),
    /// `base[key]` / `base.key` in general.
    Index {
        base: Box<Expr>,
        key: Box<Expr>,
        access: Access,
    },
    /// `has(base.key)` in general.
    Has { base: Box<Expr>, key: String },
    /// A list literal with non-constant items.
    List(Vec<Expr>),
    /// A map literal with non-constant keys or values.
    MapLit(Vec<(Expr, Expr)>),
    /// `!e`.
    Not(Box<Expr>),
    /// `-e`.
    Neg(Box<Expr>),
    /// `e1 && e2 && ...` (commutative with respect to errors).
    And(Vec<Expr>),
    /// `e1 || e2 || ...` (commutative with respect to errors).
    Or(Vec<Expr>),
    /// `lhs op rhs` for `== != < <= > >=`.
    Cmp {
        op: CmpOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `lhs op rhs` for `+ - * / %`.
    Arith {
        op: ArithOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `item in container` (list membership or map key presence).
    In {
        item: Box<Expr>,
        container: Box<Expr>,
    },
    /// `cond ? then : otherwise`.
    Cond {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    /// A built-in function; a method's receiver is `args[0]`.
    Call { f: Builtin, args: Vec<Expr> },
    /// `cel.bind(name, value, body)`: `value` is evaluated once into `slot`.
    Let {
        slot: usize,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// `range.all(x, pred)` and friends, `x` living in `slot`; with `value_slot`, the
    /// two-variable form `range.all(i, v, pred)` (`i` in `slot`, `v` in `value_slot`).
    Fold {
        kind: FoldKind,
        slot: usize,
        value_slot: Option<usize>,
        range: Box<Expr>,
        pred: Box<Expr>,
    },
    /// `range.transformMap(k, v, [filter,] value)` (`entries == false`) and
    /// `range.transformMapEntry(k, v, [filter,] map)` (`entries`): a new map.
    TransformMap {
        slot: usize,
        value_slot: usize,
        range: Box<Expr>,
        filter: Option<Box<Expr>>,
        transform: Box<Expr>,
        entries: bool,
    },
    /// `range.map(x, transform)`, `range.filter(x, filter)` and
    /// `range.map(x, filter, transform)`: a new list, `x` living in `slot`; with
    /// `value_slot`, `range.transformList(i, v, [filter,] transform)`.
    Comprehend {
        slot: usize,
        value_slot: Option<usize>,
        range: Box<Expr>,
        filter: Option<Box<Expr>>,
        transform: Option<Box<Expr>>,
    },
}
