//! The type checker: AST → typed [`Expr`].
//!
//! Types follow cel-go's checker for the DRA environment: `device` is an object with
//! fields `driver` (string), `attributes` (map of maps of dyn), `capacity` (map of maps
//! of quantity) and `allowMultipleAllocations` (bool). Where every operand type is known,
//! a mismatch is a compile error (`device.driver == 1`); attribute values are `dyn`, so
//! operations on them are checked at run time.

use super::eval::parse_semver;
use super::ir::{Access, ArithOp, Builtin, CmpOp, Expr, FoldKind, Key, MapKind, Shared, Ty, Value};
use super::parser::{BinOp, Kind, Node, UnOp};
use super::{CelError, CelErrorKind};
use super::{formats, net, regex, time, url};
use crate::Quantity;
use crate::alloc_prelude::*;

/// A checked expression.
pub(super) struct Checked {
    pub(super) expr: Expr,
    pub(super) ty: Ty,
    /// How many local-variable slots evaluation needs.
    pub(super) slots: usize,
}

/// Type-checks `root` and lowers it to the IR.
pub(super) fn check(root: &Node) -> Result<Checked, CelError> {
    let mut checker = Checker {
        scopes: Vec::new(),
        slots: 0,
    };
    let (expr, ty) = checker.check(root)?;
    if !matches!(ty, Ty::Bool | Ty::Dyn) {
        return Err(err(
            root.start,
            CelErrorKind::NotBool {
                found: ty.to_string(),
            },
        ));
    }
    Ok(Checked {
        expr,
        ty,
        slots: checker.slots,
    })
}

fn err(position: usize, kind: CelErrorKind) -> CelError {
    CelError { position, kind }
}

fn no_overload(position: usize, function: &str, types: String) -> CelError {
    err(
        position,
        CelErrorKind::NoMatchingOverload {
            function: function.to_owned(),
            types,
        },
    )
}

fn is_bool(ty: &Ty) -> bool {
    matches!(ty, Ty::Bool | Ty::Dyn)
}

fn lit_str(e: &Expr) -> Option<&str> {
    match e {
        Expr::Lit(Value::Str(s)) => Some(s),
        _ => None,
    }
}

/// Whether two constant map keys are equal (numbers by value, as `==`).
#[allow(clippy::cast_sign_loss)] // only for non-negative ints
fn same_constant(a: &Expr, b: &Expr) -> bool {
    match (a, b) {
        (Expr::Lit(Value::Str(x)), Expr::Lit(Value::Str(y))) => **x == **y,
        (Expr::Lit(Value::Bool(x)), Expr::Lit(Value::Bool(y))) => x == y,
        (Expr::Lit(Value::Int(x)), Expr::Lit(Value::Int(y))) => x == y,
        (Expr::Lit(Value::Uint(x)), Expr::Lit(Value::Uint(y))) => x == y,
        (Expr::Lit(Value::Int(i)), Expr::Lit(Value::Uint(u)))
        | (Expr::Lit(Value::Uint(u)), Expr::Lit(Value::Int(i))) => *i >= 0 && *i as u64 == *u,
        _ => false,
    }
}

/// `HasAttr` / `HasCap` when `map` is `device.attributes["d"]` / `device.capacity["d"]`
/// with a constant domain: the presence test of `id` resolved at compile time.
fn constant_presence(map: &Expr, id: &str) -> Option<Expr> {
    match map {
        Expr::AttrDomain(d) => lit_str(d).map(|d| Expr::HasAttr(Key::new(d, id))),
        Expr::CapDomain(d) => lit_str(d).map(|d| Expr::HasCap(Key::new(d, id))),
        _ => None,
    }
}

fn type_list(types: &[Ty]) -> String {
    let names: Vec<String> = types.iter().map(ToString::to_string).collect();
    format!("({})", names.join(", "))
}

/// Parameter kinds in built-in signatures.
#[derive(Clone, Copy)]
enum P {
    Str,
    Int,
    Uint,
    Double,
    Bool,
    Ip,
    Cidr,
    Url,
    Format,
    Duration,
    Timestamp,
    Quantity,
    Semver,
    List,
    Map,
    Opt,
    Any,
}

impl P {
    fn accepts(self, ty: &Ty) -> bool {
        matches!(
            (self, ty),
            (P::Any, _)
                | (_, Ty::Dyn)
                | (P::Str, Ty::Str)
                | (P::Int, Ty::Int)
                | (P::Uint, Ty::Uint)
                | (P::Double, Ty::Double)
                | (P::Bool, Ty::Bool)
                | (P::Ip, Ty::Ip)
                | (P::Cidr, Ty::Cidr)
                | (P::Url, Ty::Url)
                | (P::Format, Ty::Format)
                | (P::Duration, Ty::Duration)
                | (P::Timestamp, Ty::Timestamp)
                | (P::Quantity, Ty::Quantity)
                | (P::Semver, Ty::Semver)
                | (P::List, Ty::List(_))
                | (P::Map, Ty::Map(_) | Ty::Dict(..))
                | (P::Opt, Ty::Optional(_))
        )
    }
}

/// One overload: parameter kinds (a method's receiver first) and the result type.
type Sig = (&'static [P], Ty);

/// How a built-in is called.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `x.f(...)` only.
    Method,
    /// `f(...)` only.
    Global,
    /// Either.
    Both,
}

/// Method and global built-ins by name.
fn builtin_named(name: &str) -> Option<(Builtin, Form)> {
    use Builtin as B;
    Some(match name {
        "startsWith" => (B::StartsWith, Form::Method),
        "endsWith" => (B::EndsWith, Form::Method),
        "contains" => (B::Contains, Form::Method),
        "lowerAscii" => (B::LowerAscii, Form::Method),
        "upperAscii" => (B::UpperAscii, Form::Method),
        "size" => (B::Size, Form::Both),
        "includes" => (B::Includes, Form::Method),
        "quantity" => (B::Quantity, Form::Global),
        "isQuantity" => (B::IsQuantity, Form::Global),
        "semver" => (B::Semver, Form::Global),
        "isSemver" => (B::IsSemver, Form::Global),
        "isGreaterThan" => (B::IsGreaterThan, Form::Method),
        "isLessThan" => (B::IsLessThan, Form::Method),
        "compareTo" => (B::CompareTo, Form::Method),
        "major" => (B::Major, Form::Method),
        "minor" => (B::Minor, Form::Method),
        "patch" => (B::Patch, Form::Method),
        // Upstream declares `sign` as a global function only: `sign(q)`.
        "sign" => (B::Sign, Form::Global),
        "asInteger" => (B::AsInteger, Form::Method),
        "isInteger" => (B::IsInteger, Form::Method),
        "asApproximateFloat" => (B::AsApproximateFloat, Form::Method),
        "add" => (B::Add, Form::Method),
        "sub" => (B::Sub, Form::Method),
        "orValue" => (B::OrValue, Form::Method),
        "or" => (B::Or, Form::Method),
        "hasValue" => (B::HasValue, Form::Method),
        "value" => (B::Value, Form::Method),
        // The CEL strings extension (ext.Strings, as Kubernetes enables it).
        "charAt" => (B::CharAt, Form::Method),
        "indexOf" => (B::IndexOf, Form::Method),
        "lastIndexOf" => (B::LastIndexOf, Form::Method),
        "replace" => (B::Replace, Form::Method),
        "split" => (B::Split, Form::Method),
        "substring" => (B::Substring, Form::Method),
        "trim" => (B::Trim, Form::Method),
        "join" => (B::Join, Form::Method),
        "format" => (B::Format, Form::Method),
        // Regular expressions: `matches` is standard CEL (method and global), `find`
        // and `findAll` the Kubernetes regex library.
        "matches" => (B::Matches, Form::Both),
        "find" => (B::Find, Form::Method),
        "findAll" => (B::FindAll, Form::Method),
        // The Kubernetes lists library.
        "isSorted" => (B::IsSorted, Form::Method),
        "sum" => (B::Sum, Form::Method),
        "min" => (B::Min, Form::Method),
        "max" => (B::Max, Form::Method),
        // Standard type conversions.
        "int" => (B::ToInt, Form::Global),
        "uint" => (B::ToUint, Form::Global),
        "double" => (B::ToDouble, Form::Global),
        "string" => (B::ToString, Form::Global),
        "bool" => (B::ToBool, Form::Global),
        "type" => (B::TypeOf, Form::Global),
        // The Kubernetes IP and CIDR libraries (`cidr.ip()` is resolved by the caller).
        "ip" => (B::Ip, Form::Global),
        "isIP" => (B::IsIp, Form::Global),
        "family" => (B::Family, Form::Method),
        "isUnspecified" => (B::IsUnspecified, Form::Method),
        "isLoopback" => (B::IsLoopback, Form::Method),
        "isLinkLocalMulticast" => (B::IsLinkLocalMulticast, Form::Method),
        "isLinkLocalUnicast" => (B::IsLinkLocalUnicast, Form::Method),
        "isGlobalUnicast" => (B::IsGlobalUnicast, Form::Method),
        "cidr" => (B::Cidr, Form::Global),
        "isCIDR" => (B::IsCidr, Form::Global),
        "containsIP" => (B::ContainsIp, Form::Method),
        "containsCIDR" => (B::ContainsCidr, Form::Method),
        "masked" => (B::Masked, Form::Method),
        "prefixLength" => (B::PrefixLength, Form::Method),
        // The Kubernetes URL library.
        "url" => (B::Url, Form::Global),
        "isURL" => (B::IsUrl, Form::Global),
        "getScheme" => (B::GetScheme, Form::Method),
        "getHost" => (B::GetHost, Form::Method),
        "getHostname" => (B::GetHostname, Form::Method),
        "getPort" => (B::GetPort, Form::Method),
        "getEscapedPath" => (B::GetEscapedPath, Form::Method),
        "getQuery" => (B::GetQuery, Form::Method),
        // The Kubernetes format library (`format.named()` is resolved by the caller).
        "validate" => (B::Validate, Form::Method),
        // Durations and timestamps.
        "duration" => (B::ToDuration, Form::Global),
        "timestamp" => (B::ToTimestamp, Form::Global),
        "getFullYear" => (B::GetFullYear, Form::Method),
        "getMonth" => (B::GetMonth, Form::Method),
        "getDate" => (B::GetDate, Form::Method),
        "getDayOfMonth" => (B::GetDayOfMonth, Form::Method),
        "getDayOfWeek" => (B::GetDayOfWeek, Form::Method),
        "getDayOfYear" => (B::GetDayOfYear, Form::Method),
        "getHours" => (B::GetHours, Form::Method),
        "getMinutes" => (B::GetMinutes, Form::Method),
        "getSeconds" => (B::GetSeconds, Form::Method),
        "getMilliseconds" => (B::GetMilliseconds, Form::Method),
        _ => return None,
    })
}

/// The type values CEL names by identifier (`type(x) == string`).
fn type_named(name: &str) -> Option<&'static str> {
    Some(match name {
        "bool" => "bool",
        "int" => "int",
        "uint" => "uint",
        "double" => "double",
        "string" => "string",
        "bytes" => "bytes",
        "list" => "list",
        "map" => "map",
        "null_type" => "null_type",
        "type" => "type",
        _ => return None,
    })
}

/// Signatures of the built-ins whose result type does not depend on their arguments.
fn signatures(f: Builtin) -> Vec<Sig> {
    use Builtin as B;
    match f {
        B::StartsWith | B::EndsWith | B::Contains | B::Matches => {
            vec![(&[P::Str, P::Str], Ty::Bool)]
        }
        B::LowerAscii | B::UpperAscii | B::Trim | B::Quote => vec![(&[P::Str], Ty::Str)],
        B::Size => vec![
            (&[P::Str], Ty::Int),
            (&[P::List], Ty::Int),
            (&[P::Map], Ty::Int),
        ],
        B::Includes => vec![(&[P::Any, P::Any], Ty::Bool)],
        B::Quantity => vec![(&[P::Str], Ty::Quantity)],
        B::IsQuantity | B::IsIp | B::IpIsCanonical | B::IsCidr | B::IsUrl => {
            vec![(&[P::Str], Ty::Bool)]
        }
        B::Semver => vec![(&[P::Str], Ty::Semver), (&[P::Str, P::Bool], Ty::Semver)],
        B::IsSemver => vec![(&[P::Str], Ty::Bool), (&[P::Str, P::Bool], Ty::Bool)],
        B::IsGreaterThan | B::IsLessThan => vec![
            (&[P::Quantity, P::Quantity], Ty::Bool),
            (&[P::Semver, P::Semver], Ty::Bool),
        ],
        B::CompareTo => vec![
            (&[P::Quantity, P::Quantity], Ty::Int),
            (&[P::Semver, P::Semver], Ty::Int),
        ],
        B::Major | B::Minor | B::Patch => vec![(&[P::Semver], Ty::Int)],
        B::Sign | B::AsInteger => vec![(&[P::Quantity], Ty::Int)],
        B::IsInteger => vec![(&[P::Quantity], Ty::Bool)],
        B::Add | B::Sub => vec![
            (&[P::Quantity, P::Quantity], Ty::Quantity),
            (&[P::Quantity, P::Int], Ty::Quantity),
        ],
        B::HasValue => vec![(&[P::Opt], Ty::Bool)],
        B::CharAt => vec![(&[P::Str, P::Int], Ty::Str)],
        B::IndexOf | B::LastIndexOf => vec![
            (&[P::Str, P::Str], Ty::Int),
            (&[P::Str, P::Str, P::Int], Ty::Int),
            (&[P::List, P::Any], Ty::Int),
        ],
        B::Replace => vec![
            (&[P::Str, P::Str, P::Str], Ty::Str),
            (&[P::Str, P::Str, P::Str, P::Int], Ty::Str),
        ],
        B::Split | B::FindAll => vec![
            (&[P::Str, P::Str], Ty::List(Box::new(Ty::Str))),
            (&[P::Str, P::Str, P::Int], Ty::List(Box::new(Ty::Str))),
        ],
        B::Substring => vec![
            (&[P::Str, P::Int], Ty::Str),
            (&[P::Str, P::Int, P::Int], Ty::Str),
        ],
        B::Join => vec![(&[P::List], Ty::Str), (&[P::List, P::Str], Ty::Str)],
        B::Find => vec![(&[P::Str, P::Str], Ty::Str)],
        B::Format => vec![(&[P::Str, P::List], Ty::Str)],
        B::IsSorted => vec![(&[P::List], Ty::Bool)],
        B::SetsContains | B::SetsEquivalent | B::SetsIntersects => {
            vec![(&[P::List, P::List], Ty::Bool)]
        }
        B::ToInt => vec![
            (&[P::Int], Ty::Int),
            (&[P::Uint], Ty::Int),
            (&[P::Double], Ty::Int),
            (&[P::Str], Ty::Int),
            (&[P::Duration], Ty::Int),
            (&[P::Timestamp], Ty::Int),
        ],
        B::ToDuration => vec![(&[P::Str], Ty::Duration), (&[P::Duration], Ty::Duration)],
        B::ToTimestamp => vec![
            (&[P::Str], Ty::Timestamp),
            (&[P::Timestamp], Ty::Timestamp),
            (&[P::Int], Ty::Timestamp),
        ],
        B::GetFullYear
        | B::GetMonth
        | B::GetDate
        | B::GetDayOfMonth
        | B::GetDayOfWeek
        | B::GetDayOfYear => vec![
            (&[P::Timestamp], Ty::Int),
            (&[P::Timestamp, P::Str], Ty::Int),
        ],
        B::GetHours | B::GetMinutes | B::GetSeconds | B::GetMilliseconds => vec![
            (&[P::Timestamp], Ty::Int),
            (&[P::Timestamp, P::Str], Ty::Int),
            (&[P::Duration], Ty::Int),
        ],
        B::ToUint => vec![
            (&[P::Int], Ty::Uint),
            (&[P::Uint], Ty::Uint),
            (&[P::Double], Ty::Uint),
            (&[P::Str], Ty::Uint),
        ],
        B::ToDouble => vec![
            (&[P::Int], Ty::Double),
            (&[P::Uint], Ty::Double),
            (&[P::Double], Ty::Double),
            (&[P::Str], Ty::Double),
        ],
        B::ToString => vec![
            (&[P::Int], Ty::Str),
            (&[P::Uint], Ty::Str),
            (&[P::Double], Ty::Str),
            (&[P::Str], Ty::Str),
            (&[P::Bool], Ty::Str),
            (&[P::Ip], Ty::Str),
            (&[P::Cidr], Ty::Str),
            (&[P::Duration], Ty::Str),
            (&[P::Timestamp], Ty::Str),
        ],
        B::ToBool => vec![(&[P::Bool], Ty::Bool), (&[P::Str], Ty::Bool)],
        B::TypeOf => vec![(&[P::Any], Ty::Type)],
        B::Ip => vec![(&[P::Str], Ty::Ip)],
        B::CidrIp => vec![(&[P::Cidr], Ty::Ip)],
        B::Family => vec![(&[P::Ip], Ty::Int)],
        B::IsUnspecified
        | B::IsLoopback
        | B::IsLinkLocalMulticast
        | B::IsLinkLocalUnicast
        | B::IsGlobalUnicast => vec![(&[P::Ip], Ty::Bool)],
        B::Cidr => vec![(&[P::Str], Ty::Cidr)],
        B::ContainsIp => vec![
            (&[P::Cidr, P::Ip], Ty::Bool),
            (&[P::Cidr, P::Str], Ty::Bool),
        ],
        B::ContainsCidr => vec![
            (&[P::Cidr, P::Cidr], Ty::Bool),
            (&[P::Cidr, P::Str], Ty::Bool),
        ],
        B::Masked => vec![(&[P::Cidr], Ty::Cidr)],
        B::PrefixLength => vec![(&[P::Cidr], Ty::Int)],
        B::Url => vec![(&[P::Str], Ty::Url)],
        B::AsApproximateFloat => vec![(&[P::Quantity], Ty::Double)],
        B::FormatNamed => vec![(&[P::Str], Ty::Optional(Box::new(Ty::Format)))],
        B::Validate => vec![(
            &[P::Format, P::Str],
            Ty::Optional(Box::new(Ty::List(Box::new(Ty::Str)))),
        )],
        B::GetScheme | B::GetHost | B::GetHostname | B::GetPort | B::GetEscapedPath => {
            vec![(&[P::Url], Ty::Str)]
        }
        B::GetQuery => vec![(
            &[P::Url],
            Ty::Dict(Box::new(Ty::Str), Box::new(Ty::List(Box::new(Ty::Str)))),
        )],
        // Typed in `builtin_typed` because their result depends on the argument.
        B::OrValue
        | B::Or
        | B::Value
        | B::OptionalOf
        | B::OfNonZeroValue
        | B::Sum
        | B::Min
        | B::Max => Vec::new(),
    }
}

/// Functions CEL (or the Kubernetes libraries) define that this front end rejects, with
/// the reason shown to the user.
fn unsupported_reason(name: &str) -> Option<&'static str> {
    Some(match name {
        "bytes" => "bytes are not supported",
        "mul" | "div" | "divInt" => {
            "quantity multiplication and division are not in the Kubernetes quantity library"
        }
        "image" | "isImage" | "containsDigest" | "registry" | "repository" | "identifier"
        | "tag" | "digest" => "the Kubernetes image library is not supported",
        "reverse" => {
            "not in the CEL environment Kubernetes gives DRA selectors (it needs version 3 \
             of the strings extension)"
        }
        "sortBy" | "slice" | "flatten" | "distinct" | "range" | "sort" | "first" | "last" => {
            "not in the CEL environment Kubernetes gives DRA selectors (cel-go's lists \
             extension is not enabled)"
        }
        _ => return None,
    })
}

struct Checker {
    /// Bound variables, innermost last: name, slot, type.
    scopes: Vec<(String, usize, Ty)>,
    /// Slots handed out so far.
    slots: usize,
}

impl Checker {
    fn lookup(&self, name: &str) -> Option<&(String, usize, Ty)> {
        self.scopes.iter().rev().find(|(n, _, _)| n == name)
    }

    /// Whether `node` is the global identifier `name` (not shadowed by a binding).
    fn is_global(&self, node: &Node, name: &str) -> bool {
        matches!(&node.kind, Kind::Ident(n) if n == name) && self.lookup(name).is_none()
    }

    /// Checks one node. A thin dispatcher (see `eval::eval` for why).
    fn check(&mut self, n: &Node) -> Result<(Expr, Ty), CelError> {
        match &n.kind {
            Kind::Int(i) => Ok((Expr::Lit(Value::Int(*i)), Ty::Int)),
            Kind::Uint(u) => Ok((Expr::Lit(Value::Uint(*u)), Ty::Uint)),
            Kind::Double(bits) => Ok((Expr::Lit(Value::Double(f64::from_bits(*bits))), Ty::Double)),
            Kind::Str(s) => Ok((Expr::Lit(Value::Str(Shared::Owned(s.clone()))), Ty::Str)),
            Kind::Bool(b) => Ok((Expr::Lit(Value::Bool(*b)), Ty::Bool)),
            Kind::Null => Ok((Expr::Lit(Value::Null), Ty::Null)),
            Kind::Ident(name) => self.ident(n, name),
            Kind::Select {
                base,
                field,
                optional,
            } => self.select(n, base, field, *optional),
            Kind::Index {
                base,
                key,
                optional,
            } => self.index(n, base, key, *optional),
            Kind::Call { target, name, args } => self.call(n, target.as_deref(), name, args),
            Kind::List(items) => self.list(items),
            Kind::Map(entries) => self.map_literal(entries),
            Kind::Unary { op, arg } => self.unary(n, *op, arg),
            Kind::Binary { op, lhs, rhs } => self.binary(n, *op, lhs, rhs),
            Kind::And(items) => self.logic(n, items, true),
            Kind::Or(items) => self.logic(n, items, false),
            Kind::Cond {
                cond,
                then,
                otherwise,
            } => self.cond(n, cond, then, otherwise),
        }
    }

    fn ident(&self, n: &Node, name: &str) -> Result<(Expr, Ty), CelError> {
        if let Some((_, slot, ty)) = self.lookup(name) {
            return Ok((Expr::Local(*slot), ty.clone()));
        }
        if let Some(type_name) = type_named(name) {
            return Ok((Expr::Lit(Value::Type(type_name)), Ty::Type));
        }
        if name == "device" {
            return Err(err(
                n.pos,
                CelErrorKind::UnsupportedSyntax {
                    what: "uses of `device` other than selecting a field",
                },
            ));
        }
        Err(err(
            n.pos,
            CelErrorKind::UnknownVariable {
                name: name.to_owned(),
            },
        ))
    }

    fn select(
        &mut self,
        n: &Node,
        base: &Node,
        field: &str,
        optional: bool,
    ) -> Result<(Expr, Ty), CelError> {
        if self.is_global(base, "device") {
            return device_field(field, optional, n.pos);
        }
        let (b, bt) = self.check(base)?;
        let key = Expr::Lit(Value::Str(Shared::Owned(field.to_owned())));
        Self::access(b, bt, key, &Ty::Str, optional, n.pos, Some(field))
    }

    fn index(
        &mut self,
        n: &Node,
        base: &Node,
        key: &Node,
        optional: bool,
    ) -> Result<(Expr, Ty), CelError> {
        let (b, bt) = self.check(base)?;
        let (k, kt) = self.check(key)?;
        Self::access(b, bt, k, &kt, optional, n.pos, None)
    }

    fn list(&mut self, items: &[Node]) -> Result<(Expr, Ty), CelError> {
        let mut exprs = Vec::with_capacity(items.len());
        let mut item_ty: Option<Ty> = None;
        for item in items {
            let (e, t) = self.check(item)?;
            // Kubernetes enables cel-go's HomogeneousAggregateLiterals: every item must
            // have the type of the others (`dyn` fits any).
            item_ty = Some(match item_ty {
                None => t,
                Some(prev) => prev.join(&t).ok_or_else(|| {
                    err(
                        item.start,
                        CelErrorKind::TypeMismatch {
                            expected: prev.to_string(),
                            found: t.to_string(),
                        },
                    )
                })?,
            });
            exprs.push(e);
        }
        let ty = Ty::List(Box::new(item_ty.unwrap_or(Ty::Dyn)));
        if exprs.iter().all(|e| matches!(e, Expr::Lit(_))) {
            let values = exprs
                .into_iter()
                .filter_map(|e| match e {
                    Expr::Lit(v) => Some(v),
                    _ => None,
                })
                .collect();
            return Ok((Expr::Lit(Value::List(Shared::Owned(values))), ty));
        }
        Ok((Expr::List(exprs), ty))
    }

    /// `{k: v, ...}`: keys of one type among int, uint, bool and string, values of one
    /// type (homogeneous, as lists); folded to a constant when every entry is constant
    /// and the keys are distinct.
    fn map_literal(&mut self, entries: &[(Node, Node)]) -> Result<(Expr, Ty), CelError> {
        let mut exprs = Vec::with_capacity(entries.len());
        let mut key_ty: Option<Ty> = None;
        let mut value_ty: Option<Ty> = None;
        for (k, v) in entries {
            let (ke, kt) = self.check(k)?;
            if !matches!(kt, Ty::Int | Ty::Uint | Ty::Bool | Ty::Str | Ty::Dyn) {
                return Err(err(
                    k.start,
                    CelErrorKind::UnsupportedSyntax {
                        what: "map keys other than int, uint, bool and string",
                    },
                ));
            }
            let (ve, vt) = self.check(v)?;
            for (slot, t, node) in [(&mut key_ty, kt, k), (&mut value_ty, vt, v)] {
                *slot = Some(match slot.take() {
                    None => t,
                    Some(prev) => prev.join(&t).ok_or_else(|| {
                        err(
                            node.start,
                            CelErrorKind::TypeMismatch {
                                expected: prev.to_string(),
                                found: t.to_string(),
                            },
                        )
                    })?,
                });
            }
            exprs.push((ke, ve));
        }
        let ty = Ty::Dict(
            Box::new(key_ty.unwrap_or(Ty::Dyn)),
            Box::new(value_ty.unwrap_or(Ty::Dyn)),
        );
        let constant = exprs
            .iter()
            .all(|(k, v)| matches!((k, v), (Expr::Lit(_), Expr::Lit(_))));
        let distinct = exprs
            .iter()
            .enumerate()
            .all(|(i, (k, _))| exprs[..i].iter().all(|(other, _)| !same_constant(k, other)));
        if constant && distinct {
            let values = exprs
                .into_iter()
                .filter_map(|e| match e {
                    (Expr::Lit(k), Expr::Lit(v)) => Some((k, v)),
                    _ => None,
                })
                .collect();
            let map = super::ir::MapRef::Literal(Shared::Owned(values));
            return Ok((Expr::Lit(Value::Map(map)), ty));
        }
        Ok((Expr::MapLit(exprs), ty))
    }

    fn unary(&mut self, n: &Node, op: UnOp, arg: &Node) -> Result<(Expr, Ty), CelError> {
        let checked = self.check(arg)?;
        unary_typed(n.pos, op, checked)
    }

    fn cond(
        &mut self,
        n: &Node,
        cond: &Node,
        then: &Node,
        otherwise: &Node,
    ) -> Result<(Expr, Ty), CelError> {
        let c = self.check(cond)?;
        let a = self.check(then)?;
        let b = self.check(otherwise)?;
        cond_typed(n.pos, c, a, b)
    }

    /// `base[key]` or `base.field` (when `field` is set), `?`-variants when `optional`.
    #[allow(clippy::too_many_arguments)]
    fn access(
        base: Expr,
        base_ty: Ty,
        key: Expr,
        key_ty: &Ty,
        optional: bool,
        pos: usize,
        field: Option<&str>,
    ) -> Result<(Expr, Ty), CelError> {
        let (inner, access) = match base_ty {
            Ty::Optional(inner) => (*inner, Access::Optional),
            other if optional => (other, Access::Optional),
            other => (other, Access::Strict),
        };
        let mismatch = |inner: &Ty| {
            if let Some(field) = field {
                err(
                    pos,
                    CelErrorKind::UndefinedField {
                        ty: inner.to_string(),
                        field: field.to_owned(),
                    },
                )
            } else {
                no_overload(pos, "_[_]", type_list(&[inner.clone(), key_ty.clone()]))
            }
        };
        let value_ty = match &inner {
            Ty::Map(kind) if matches!(key_ty, Ty::Str | Ty::Dyn) => kind.value_ty(),
            Ty::Dict(k, v) if k.comparable(key_ty) || (k.is_numeric() && key_ty.is_numeric()) => {
                (**v).clone()
            }
            Ty::List(item) if field.is_none() && matches!(key_ty, Ty::Int | Ty::Dyn) => {
                (**item).clone()
            }
            Ty::Dyn => Ty::Dyn,
            _ => return Err(mismatch(&inner)),
        };
        if access == Access::Optional {
            let expr = Expr::Index {
                base: Box::new(base),
                key: Box::new(key),
                access,
            };
            return Ok((expr, Ty::Optional(Box::new(value_ty))));
        }
        let expr = match base {
            Expr::Attributes => Expr::AttrDomain(Box::new(key)),
            Expr::Capacity => Expr::CapDomain(Box::new(key)),
            Expr::AttrDomain(domain) => match (lit_str(&domain), lit_str(&key)) {
                (Some(d), Some(id)) => Expr::Attr(Key::new(d, id)),
                _ => Expr::Index {
                    base: Box::new(Expr::AttrDomain(domain)),
                    key: Box::new(key),
                    access,
                },
            },
            Expr::CapDomain(domain) => match (lit_str(&domain), lit_str(&key)) {
                (Some(d), Some(id)) => Expr::Cap(Key::new(d, id)),
                _ => Expr::Index {
                    base: Box::new(Expr::CapDomain(domain)),
                    key: Box::new(key),
                    access,
                },
            },
            base => Expr::Index {
                base: Box::new(base),
                key: Box::new(key),
                access,
            },
        };
        Ok((expr, value_ty))
    }

    /// `has(base.field)`.
    fn has(&mut self, n: &Node, args: &[Node]) -> Result<(Expr, Ty), CelError> {
        let [arg] = args else {
            return Err(err(
                n.pos,
                CelErrorKind::WrongArgumentCount {
                    function: "has".to_owned(),
                    expected: 1,
                    found: args.len(),
                },
            ));
        };
        let Kind::Select {
            base,
            field,
            optional: false,
        } = &arg.kind
        else {
            return Err(err(
                arg.start,
                CelErrorKind::InvalidMacroArgument {
                    function: "has",
                    reason: "the argument must be a field selection such as has(m.f)",
                },
            ));
        };
        if self.is_global(base, "device") {
            // Every declared field of `device` is always present.
            device_field(field, false, arg.pos)?;
            return Ok((Expr::Lit(Value::Bool(true)), Ty::Bool));
        }
        let (b, bt) = self.check(base)?;
        if let Some(presence) = constant_presence(&b, field) {
            return Ok((presence, Ty::Bool));
        }
        let expr = match (b, &bt) {
            (b, Ty::Map(_) | Ty::Dict(..) | Ty::Dyn) => Expr::Has {
                base: Box::new(b),
                key: field.clone(),
            },
            (_, other) => {
                return Err(err(
                    arg.pos,
                    CelErrorKind::UndefinedField {
                        ty: other.to_string(),
                        field: field.clone(),
                    },
                ));
            }
        };
        Ok((expr, Ty::Bool))
    }

    fn binary(
        &mut self,
        n: &Node,
        op: BinOp,
        lhs: &Node,
        rhs: &Node,
    ) -> Result<(Expr, Ty), CelError> {
        let left = self.check(lhs)?;
        let right = self.check(rhs)?;
        binary_typed(n.pos, op, left, right)
    }

    /// An n-ary `&&` (`is_and`) or `||`, folding constant operands. A constant that
    /// decides the result absorbs everything else, errors included (CEL's logical
    /// operators are commutative with respect to errors).
    fn logic(&mut self, n: &Node, items: &[Node], is_and: bool) -> Result<(Expr, Ty), CelError> {
        let mut checked = Vec::with_capacity(items.len());
        for item in items {
            checked.push(self.check(item)?);
        }
        logic_typed(n.pos, checked, is_and)
    }

    fn call(
        &mut self,
        n: &Node,
        target: Option<&Node>,
        name: &str,
        args: &[Node],
    ) -> Result<(Expr, Ty), CelError> {
        if let Some(reason) = unsupported_reason(name) {
            return Err(err(
                n.pos,
                CelErrorKind::UnsupportedFunction {
                    name: name.to_owned(),
                    reason,
                },
            ));
        }
        let Some(target) = target else {
            return match name {
                "has" => self.has(n, args),
                "dyn" => {
                    let [arg] = args else {
                        return Err(arg_count(n, "dyn", 1, args.len()));
                    };
                    let (e, _) = self.check(arg)?;
                    Ok((e, Ty::Dyn))
                }
                _ => match builtin_named(name) {
                    Some((f, form)) => self.builtin(n, f, form == Form::Method, None, args),
                    None => Err(err(
                        n.pos,
                        CelErrorKind::UnknownFunction {
                            name: name.to_owned(),
                        },
                    )),
                },
            };
        };
        if self.is_global(target, "cel") && name == "bind" {
            return self.bind(n, args);
        }
        let namespaced = match name {
            "quote" if self.is_global(target, "strings") => Some(Builtin::Quote),
            "contains" if self.is_global(target, "sets") => Some(Builtin::SetsContains),
            "equivalent" if self.is_global(target, "sets") => Some(Builtin::SetsEquivalent),
            "intersects" if self.is_global(target, "sets") => Some(Builtin::SetsIntersects),
            "isCanonical" if self.is_global(target, "ip") => Some(Builtin::IpIsCanonical),
            _ => None,
        };
        if let Some(f) = namespaced {
            return self.builtin(n, f, false, None, args);
        }
        if self.is_global(target, "format") {
            if name == "named" {
                return self.builtin(n, Builtin::FormatNamed, false, None, args);
            }
            return match (formats::named(name), args) {
                (Some(format), []) => Ok((Expr::Lit(Value::Format(format)), Ty::Format)),
                (Some(_), _) => Err(arg_count(n, &format!("format.{name}"), 0, args.len())),
                (None, _) => Err(err(
                    n.pos,
                    CelErrorKind::UnknownFunction {
                        name: format!("format.{name}"),
                    },
                )),
            };
        }
        if name == "ip" {
            return self.builtin(n, Builtin::CidrIp, false, Some(target), args);
        }
        if matches!(name, "transformMap" | "transformMapEntry") {
            return self.transform_map(n, name, target, args);
        }
        if matches!(name, "map" | "filter" | "transformList") {
            return self.comprehend(n, name, target, args);
        }
        if self.is_global(target, "optional") && matches!(name, "of" | "none" | "ofNonZeroValue") {
            return match (name, args) {
                ("none", []) => Ok((
                    Expr::Lit(Value::Optional(None)),
                    Ty::Optional(Box::new(Ty::Dyn)),
                )),
                ("of" | "ofNonZeroValue", [arg]) => {
                    let (e, t) = self.check(arg)?;
                    let f = if name == "of" {
                        Builtin::OptionalOf
                    } else {
                        Builtin::OfNonZeroValue
                    };
                    let call = Expr::Call { f, args: vec![e] };
                    Ok((call, Ty::Optional(Box::new(t))))
                }
                _ => Err(arg_count(
                    n,
                    &format!("optional.{name}"),
                    usize::from(name != "none"),
                    args.len(),
                )),
            };
        }
        let fold = match name {
            "all" => Some(FoldKind::All),
            "exists" => Some(FoldKind::Exists),
            "exists_one" | "existsOne" => Some(FoldKind::ExistsOne),
            _ => None,
        };
        if let Some(kind) = fold {
            return self.fold(n, kind, name, target, args);
        }
        match builtin_named(name) {
            Some((f, form)) => self.builtin(n, f, form == Form::Global, Some(target), args),
            None => Err(err(
                n.pos,
                CelErrorKind::UnknownFunction {
                    name: name.to_owned(),
                },
            )),
        }
    }

    /// A built-in call; `wrong_form` when called as a method but global-only or vice
    /// versa (reported as cel-go does, as a missing overload).
    fn builtin(
        &mut self,
        n: &Node,
        f: Builtin,
        wrong_form: bool,
        target: Option<&Node>,
        args: &[Node],
    ) -> Result<(Expr, Ty), CelError> {
        let mut checked = Vec::with_capacity(args.len() + 1);
        for node in target.into_iter().chain(args) {
            checked.push(self.check(node)?);
        }
        let starts = args_start(target, args);
        builtin_typed(n.pos, f, wrong_form, target.is_some(), checked, &starts)
    }

    /// `cel.bind(name, value, body)`.
    fn bind(&mut self, n: &Node, args: &[Node]) -> Result<(Expr, Ty), CelError> {
        let [var, value, body] = args else {
            return Err(arg_count(n, "cel.bind", 3, args.len()));
        };
        let Kind::Ident(name) = &var.kind else {
            return Err(err(
                var.start,
                CelErrorKind::InvalidMacroArgument {
                    function: "cel.bind",
                    reason: "the first argument must be a simple name",
                },
            ));
        };
        let (value, value_ty) = self.check(value)?;
        let slot = self.slots;
        self.slots += 1;
        self.scopes.push((name.clone(), slot, value_ty));
        let body = self.check(body);
        self.scopes.pop();
        let (body, ty) = body?;
        Ok((
            Expr::Let {
                slot,
                value: Box::new(value),
                body: Box::new(body),
            },
            ty,
        ))
    }

    /// `range.all(x, pred)`, `range.exists(x, pred)`, `range.exists_one(x, pred)`, and
    /// the two-variable forms `all(i, v, pred)`, `exists(i, v, pred)`,
    /// `existsOne(i, v, pred)` (index and item of a list, key and value of a map).
    fn fold(
        &mut self,
        n: &Node,
        kind: FoldKind,
        name: &str,
        range: &Node,
        args: &[Node],
    ) -> Result<(Expr, Ty), CelError> {
        let function = match kind {
            FoldKind::All => "all",
            FoldKind::Exists => "exists",
            FoldKind::ExistsOne if name == "existsOne" => "existsOne",
            FoldKind::ExistsOne => "exists_one",
        };
        let (vars, pred) = match args {
            [var, pred] if function != "existsOne" => (vec![var], pred),
            [key, value, pred] => (vec![key, value], pred),
            _ => {
                let expected = if function == "existsOne" { 3 } else { 2 };
                return Err(arg_count(n, name, expected, args.len()));
            }
        };
        let (range_expr, range_ty) = self.check(range)?;
        let (slot, value_slot) = self.bind_vars(function, &vars, range, &range_ty)?;
        let checked = self.check(pred);
        self.scopes.truncate(self.scopes.len() - vars.len());
        let (pred_expr, pred_ty) = checked?;
        if !is_bool(&pred_ty) {
            return Err(no_overload(
                pred.pos,
                "_&&_",
                type_list(&[Ty::Bool, pred_ty]),
            ));
        }
        Ok((
            Expr::Fold {
                kind,
                slot,
                value_slot,
                range: Box::new(range_expr),
                pred: Box::new(pred_expr),
            },
            Ty::Bool,
        ))
    }

    /// Binds the variables of a comprehension over a range of type `range_ty`: one
    /// variable (a list's items, a map's keys) or two (index and item, key and value).
    /// Returns their slots; the caller pops the scopes.
    fn bind_vars(
        &mut self,
        function: &'static str,
        vars: &[&Node],
        range: &Node,
        range_ty: &Ty,
    ) -> Result<(usize, Option<usize>), CelError> {
        let mut names = Vec::with_capacity(vars.len());
        for var in vars {
            let Kind::Ident(name) = &var.kind else {
                return Err(err(
                    var.start,
                    CelErrorKind::InvalidMacroArgument {
                        function,
                        reason: "the variables must be simple names",
                    },
                ));
            };
            names.push(name.clone());
        }
        let types = match (range_ty, vars.len()) {
            (Ty::List(item), 1) => vec![(**item).clone()],
            (Ty::List(item), _) => vec![Ty::Int, (**item).clone()],
            (Ty::Map(_), 1) => vec![Ty::Str],
            (Ty::Map(kind), _) => vec![Ty::Str, kind.value_ty()],
            (Ty::Dict(k, _), 1) => vec![(**k).clone()],
            (Ty::Dict(k, v), _) => vec![(**k).clone(), (**v).clone()],
            (Ty::Dyn, count) => vec![Ty::Dyn; count],
            _ => {
                return Err(err(
                    range.start,
                    CelErrorKind::InvalidMacroArgument {
                        function,
                        reason: "the range must be a list or a map",
                    },
                ));
            }
        };
        let first = self.slots;
        for (name, ty) in names.into_iter().zip(types) {
            self.scopes.push((name, self.slots, ty));
            self.slots += 1;
        }
        Ok((first, (vars.len() == 2).then_some(first + 1)))
    }

    /// `range.map(x, e)`, `range.map(x, p, e)`, `range.filter(x, p)` and the
    /// two-variable `range.transformList(i, v, e)`, `range.transformList(i, v, p, e)`.
    fn comprehend(
        &mut self,
        n: &Node,
        name: &str,
        range: &Node,
        args: &[Node],
    ) -> Result<(Expr, Ty), CelError> {
        let function = match name {
            "map" => "map",
            "filter" => "filter",
            _ => "transformList",
        };
        let (vars, filter, transform) = match (function, args) {
            ("map", [var, transform]) => (vec![var], None, Some(transform)),
            ("map", [var, filter, transform]) => (vec![var], Some(filter), Some(transform)),
            ("filter", [var, filter]) => (vec![var], Some(filter), None),
            ("transformList", [i, v, transform]) => (vec![i, v], None, Some(transform)),
            ("transformList", [i, v, filter, transform]) => {
                (vec![i, v], Some(filter), Some(transform))
            }
            _ => {
                let expected = if function == "transformList" { 3 } else { 2 };
                return Err(arg_count(n, function, expected, args.len()));
            }
        };
        let (range_expr, range_ty) = self.check(range)?;
        let (slot, value_slot) = self.bind_vars(function, &vars, range, &range_ty)?;
        let item_ty = self.scopes.last().map_or(Ty::Dyn, |(_, _, t)| t.clone());
        let checked = self.comprehend_parts(filter, transform);
        self.scopes.truncate(self.scopes.len() - vars.len());
        let (filter, transform, out_ty) = checked?;
        Ok((
            Expr::Comprehend {
                slot,
                value_slot,
                range: Box::new(range_expr),
                filter: filter.map(Box::new),
                transform: transform.map(Box::new),
            },
            Ty::List(Box::new(out_ty.unwrap_or(item_ty))),
        ))
    }

    /// `range.transformMap(k, v, [p,] e)` and `range.transformMapEntry(k, v, [p,] m)`.
    fn transform_map(
        &mut self,
        n: &Node,
        name: &str,
        range: &Node,
        args: &[Node],
    ) -> Result<(Expr, Ty), CelError> {
        let (function, entries) = if name == "transformMap" {
            ("transformMap", false)
        } else {
            ("transformMapEntry", true)
        };
        let (vars, filter, transform) = match args {
            [k, v, transform] => (vec![k, v], None, transform),
            [k, v, filter, transform] => (vec![k, v], Some(filter), transform),
            _ => return Err(arg_count(n, function, 3, args.len())),
        };
        let (range_expr, range_ty) = self.check(range)?;
        let (slot, value_slot) = self.bind_vars(function, &vars, range, &range_ty)?;
        let key_ty = self
            .scopes
            .get(self.scopes.len() - 2)
            .map_or(Ty::Dyn, |(_, _, t)| t.clone());
        let checked = self.comprehend_parts(filter, Some(transform));
        self.scopes.truncate(self.scopes.len() - vars.len());
        let (filter, transform_expr, out_ty) = checked?;
        let out_ty = out_ty.unwrap_or(Ty::Dyn);
        let ty = if entries {
            match out_ty {
                Ty::Dict(..) | Ty::Dyn => out_ty,
                Ty::Map(kind) => Ty::Dict(Box::new(Ty::Str), Box::new(kind.value_ty())),
                other => {
                    return Err(no_overload(
                        transform.pos,
                        function,
                        type_list(&[range_ty, other]),
                    ));
                }
            }
        } else {
            Ty::Dict(Box::new(key_ty), Box::new(out_ty))
        };
        let (Some(transform), Some(value_slot)) = (transform_expr, value_slot) else {
            return Err(arg_count(n, function, 3, args.len()));
        };
        Ok((
            Expr::TransformMap {
                slot,
                value_slot,
                range: Box::new(range_expr),
                filter: filter.map(Box::new),
                transform: Box::new(transform),
                entries,
            },
            ty,
        ))
    }

    /// The filter and transform of a `map` / `filter`, checked with the variable bound.
    #[allow(clippy::type_complexity)]
    fn comprehend_parts(
        &mut self,
        filter: Option<&Node>,
        transform: Option<&Node>,
    ) -> Result<(Option<Expr>, Option<Expr>, Option<Ty>), CelError> {
        let filter = match filter {
            Some(node) => {
                let (e, t) = self.check(node)?;
                if !is_bool(&t) {
                    return Err(no_overload(node.pos, "_&&_", type_list(&[Ty::Bool, t])));
                }
                Some(e)
            }
            None => None,
        };
        let (transform, ty) = match transform {
            Some(node) => {
                let (e, t) = self.check(node)?;
                (Some(e), Some(t))
            }
            None => (None, None),
        };
        Ok((filter, transform, ty))
    }
}

fn arg_count(n: &Node, function: &str, expected: usize, found: usize) -> CelError {
    err(
        n.pos,
        CelErrorKind::WrongArgumentCount {
            function: function.to_owned(),
            expected,
            found,
        },
    )
}

/// Where each argument (receiver first) starts, for errors from constant folding.
fn args_start(target: Option<&Node>, args: &[Node]) -> Vec<usize> {
    target.into_iter().chain(args).map(|a| a.start).collect()
}

/// `device.<field>`.
fn device_field(field: &str, optional: bool, pos: usize) -> Result<(Expr, Ty), CelError> {
    if optional {
        return Err(err(
            pos,
            CelErrorKind::UnsupportedSyntax {
                what: "optional selections of `device` fields (they are always present)",
            },
        ));
    }
    Ok(match field {
        "driver" => (Expr::Driver, Ty::Str),
        "attributes" => (Expr::Attributes, Ty::Map(MapKind::Attributes)),
        "capacity" => (Expr::Capacity, Ty::Map(MapKind::Capacity)),
        "allowMultipleAllocations" => (Expr::AllowMultiple, Ty::Bool),
        _ => {
            return Err(err(
                pos,
                CelErrorKind::UndefinedField {
                    ty: "kubernetes.DRADevice".to_owned(),
                    field: field.to_owned(),
                },
            ));
        }
    })
}

/// Evaluates conversions of constants once, at compile time: `quantity("40Gi")`,
/// `semver("1.2.3")`, `isQuantity("x")`, `isSemver("x", true)`. A constant that does
/// not convert is a compile error pointing at the literal.
fn fold_constant(f: Builtin, args: Vec<Expr>, starts: &[usize]) -> Result<Expr, CelError> {
    let literal = |i: usize| match args.get(i) {
        Some(Expr::Lit(v)) => Some(v),
        _ => None,
    };
    let text = literal(0).and_then(|v| match v {
        Value::Str(s) => Some(&**s),
        _ => None,
    });
    let normalize = match (args.len(), literal(1)) {
        (1, _) => Some(false),
        (2, Some(Value::Bool(b))) => Some(*b),
        _ => None,
    };
    let position = starts.first().copied().unwrap_or(0);
    if matches!(f, Builtin::Matches | Builtin::Find | Builtin::FindAll) {
        return fold_pattern(f, args, starts);
    }
    // A constant that does not convert: the error at the literal.
    let bad = |kind: CelErrorKind| err(position, kind);
    let folded = match (f, text, normalize) {
        (Builtin::Ip, Some(s), _) => Value::Ip(net::parse_ip(s).map_err(|reason| {
            bad(CelErrorKind::InvalidIp {
                value: s.to_owned(),
                reason,
            })
        })?),
        (Builtin::Cidr, Some(s), _) => Value::Cidr(net::parse_cidr(s).map_err(|reason| {
            bad(CelErrorKind::InvalidCidr {
                value: s.to_owned(),
                reason,
            })
        })?),
        (Builtin::Url, Some(s), _) => Value::Url(Box::new(url::parse(s).map_err(|reason| {
            bad(CelErrorKind::InvalidUrl {
                value: s.to_owned(),
                reason,
            })
        })?)),
        (Builtin::IsUrl, Some(s), _) => Value::Bool(url::is_url(s)),
        (Builtin::ToDuration, Some(s), _) => Value::Duration(
            time::parse_duration(s).map_err(|reason| bad(CelErrorKind::InvalidTime { reason }))?,
        ),
        (Builtin::ToTimestamp, Some(s), _) => Value::Timestamp(
            time::parse_timestamp(s).map_err(|reason| bad(CelErrorKind::InvalidTime { reason }))?,
        ),
        (Builtin::IsIp, Some(s), _) => Value::Bool(net::parse_ip(s).is_ok()),
        (Builtin::IsCidr, Some(s), _) => Value::Bool(net::parse_cidr(s).is_ok()),
        (Builtin::Quantity, Some(s), _) => {
            Value::Quantity(Quantity::parse(s).map_err(|error| {
                bad(CelErrorKind::InvalidQuantity {
                    value: s.to_owned(),
                    error,
                })
            })?)
        }
        (Builtin::IsQuantity, Some(s), _) => Value::Bool(Quantity::parse(s).is_ok()),
        (Builtin::Semver, Some(s), Some(normalize)) => Value::Semver(Shared::Owned(
            parse_semver(s, normalize).map_err(|error| {
                bad(CelErrorKind::InvalidSemver {
                    value: s.to_owned(),
                    error,
                })
            })?,
        )),
        (Builtin::IsSemver, Some(s), Some(normalize)) => {
            Value::Bool(parse_semver(s, normalize).is_ok())
        }
        _ => return Ok(Expr::Call { f, args }),
    };
    Ok(Expr::Lit(folded))
}

/// Compiles a constant pattern of `matches` / `find` / `findAll` once, at compile
/// time (an invalid one is a compile error pointing at it); other patterns compile at
/// run time.
fn fold_pattern(f: Builtin, mut args: Vec<Expr>, starts: &[usize]) -> Result<Expr, CelError> {
    if let Some(pattern) = args.get(1).and_then(lit_str) {
        match regex::compile(pattern) {
            Ok(re) => args[1] = Expr::Lit(Value::Regex(Shared::Owned(re))),
            Err(reason) => {
                return Err(err(
                    starts.get(1).copied().unwrap_or(0),
                    CelErrorKind::InvalidRegex {
                        pattern: pattern.to_owned(),
                        reason,
                    },
                ));
            }
        }
    }
    Ok(Expr::Call { f, args })
}

/// Types a binary operator whose operands are checked.
fn binary_typed(
    pos: usize,
    op: BinOp,
    (left, lt): (Expr, Ty),
    (right, rt): (Expr, Ty),
) -> Result<(Expr, Ty), CelError> {
    let mismatch = || no_overload(pos, op.cel_name(), type_list(&[lt.clone(), rt.clone()]));
    let cmp = |op: CmpOp, lhs: Expr, rhs: Expr| {
        Ok((
            Expr::Cmp {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            Ty::Bool,
        ))
    };
    // Numbers compare across int, uint and double (cel-go's
    // CrossTypeNumericComparisons, which Kubernetes enables); other types with themselves.
    let orderable = |a: &Ty, b: &Ty| {
        (a.is_numeric() && b.is_numeric()) || (a.is_ordered() && b.is_ordered() && a.comparable(b))
    };
    match op {
        BinOp::Eq | BinOp::Ne => {
            if !lt.comparable(&rt) {
                return Err(mismatch());
            }
            cmp(
                if op == BinOp::Eq {
                    CmpOp::Eq
                } else {
                    CmpOp::Ne
                },
                left,
                right,
            )
        }
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            if !orderable(&lt, &rt) {
                return Err(mismatch());
            }
            let op = match op {
                BinOp::Lt => CmpOp::Lt,
                BinOp::Le => CmpOp::Le,
                BinOp::Gt => CmpOp::Gt,
                _ => CmpOp::Ge,
            };
            cmp(op, left, right)
        }
        BinOp::In => {
            let ok = match &rt {
                Ty::List(item) => lt.comparable(item),
                Ty::Map(_) => matches!(lt, Ty::Str | Ty::Dyn),
                Ty::Dict(k, _) => k.comparable(&lt) || (k.is_numeric() && lt.is_numeric()),
                Ty::Dyn => true,
                _ => false,
            };
            if !ok {
                return Err(mismatch());
            }
            let presence = lit_str(&left).and_then(|id| constant_presence(&right, id));
            let expr = match presence {
                Some(presence) => presence,
                None => Expr::In {
                    item: Box::new(left),
                    container: Box::new(right),
                },
            };
            Ok((expr, Ty::Bool))
        }
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
            let ty = match (op, &lt, &rt) {
                (_, Ty::Int, Ty::Int | Ty::Dyn) | (_, Ty::Dyn, Ty::Int) => Ty::Int,
                (_, Ty::Uint, Ty::Uint | Ty::Dyn) | (_, Ty::Dyn, Ty::Uint) => Ty::Uint,
                (BinOp::Add | BinOp::Sub, Ty::Timestamp, Ty::Duration)
                | (BinOp::Add, Ty::Duration, Ty::Timestamp) => Ty::Timestamp,
                (BinOp::Sub, Ty::Timestamp, Ty::Timestamp)
                | (BinOp::Add | BinOp::Sub, Ty::Duration, Ty::Duration) => Ty::Duration,
                (
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div,
                    Ty::Double,
                    Ty::Double | Ty::Dyn,
                )
                | (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div, Ty::Dyn, Ty::Double) => {
                    Ty::Double
                }
                (_, Ty::Dyn, Ty::Dyn)
                | (BinOp::Add, Ty::List(_), Ty::Dyn)
                | (BinOp::Add, Ty::Dyn, Ty::List(_))
                | (BinOp::Add | BinOp::Sub, Ty::Duration | Ty::Timestamp, Ty::Dyn)
                | (BinOp::Add | BinOp::Sub, Ty::Dyn, Ty::Duration | Ty::Timestamp) => Ty::Dyn,
                (BinOp::Add, Ty::Str, Ty::Str | Ty::Dyn) | (BinOp::Add, Ty::Dyn, Ty::Str) => {
                    Ty::Str
                }
                (BinOp::Add, Ty::List(a), Ty::List(b)) => {
                    Ty::List(Box::new(a.join(b).unwrap_or(Ty::Dyn)))
                }
                _ => return Err(mismatch()),
            };
            let op = match op {
                BinOp::Add => ArithOp::Add,
                BinOp::Sub => ArithOp::Sub,
                BinOp::Mul => ArithOp::Mul,
                BinOp::Div => ArithOp::Div,
                _ => ArithOp::Mod,
            };
            Ok((
                Expr::Arith {
                    op,
                    lhs: Box::new(left),
                    rhs: Box::new(right),
                },
                ty,
            ))
        }
    }
}

/// Types and folds an n-ary `&&` (`is_and`) or `||` whose operands are checked. A
/// constant that decides the result absorbs everything else, errors included (CEL's
/// logical operators are commutative with respect to errors).
fn logic_typed(pos: usize, checked: Vec<(Expr, Ty)>, is_and: bool) -> Result<(Expr, Ty), CelError> {
    if !checked.iter().all(|(_, t)| is_bool(t)) {
        let name = if is_and { "_&&_" } else { "_||_" };
        let types: Vec<Ty> = checked.into_iter().map(|(_, t)| t).collect();
        return Err(no_overload(pos, name, type_list(&types)));
    }
    let decisive = !is_and;
    if checked
        .iter()
        .any(|(e, _)| matches!(e, Expr::Lit(Value::Bool(b)) if *b == decisive))
    {
        return Ok((Expr::Lit(Value::Bool(decisive)), Ty::Bool));
    }
    let mut kept: Vec<(Expr, Ty)> = checked
        .into_iter()
        .filter(|(e, _)| !matches!(e, Expr::Lit(Value::Bool(_))))
        .collect();
    match kept.len() {
        0 => Ok((Expr::Lit(Value::Bool(!decisive)), Ty::Bool)),
        1 if kept[0].1 == Ty::Bool => Ok((kept.remove(0).0, Ty::Bool)),
        _ => {
            let exprs = kept.into_iter().map(|(e, _)| e).collect();
            let expr = if is_and {
                Expr::And(exprs)
            } else {
                Expr::Or(exprs)
            };
            Ok((expr, Ty::Bool))
        }
    }
}

/// Types (and folds, when constant) a built-in call whose arguments are checked; a
/// method's receiver comes first. `wrong_form` when called as a method but global-only
/// or vice versa (reported as cel-go does, as a missing overload).
fn builtin_typed(
    pos: usize,
    f: Builtin,
    wrong_form: bool,
    method: bool,
    checked: Vec<(Expr, Ty)>,
    starts: &[usize],
) -> Result<(Expr, Ty), CelError> {
    let (exprs, types): (Vec<Expr>, Vec<Ty>) = checked.into_iter().unzip();
    let mismatch = || {
        let shown = if method {
            let rest: Vec<String> = types[1..].iter().map(ToString::to_string).collect();
            format!("{}.({})", types[0], rest.join(", "))
        } else {
            type_list(&types)
        };
        no_overload(pos, f.name(), shown)
    };
    if wrong_form {
        return Err(mismatch());
    }
    let ty = match f {
        Builtin::OrValue => match types.as_slice() {
            [Ty::Optional(inner), alt] => inner.join(alt).ok_or_else(mismatch)?,
            [Ty::Dyn, _] => Ty::Dyn,
            _ => return Err(mismatch()),
        },
        Builtin::Or => match types.as_slice() {
            [Ty::Optional(a), Ty::Optional(b)] => {
                Ty::Optional(Box::new(a.join(b).ok_or_else(mismatch)?))
            }
            [Ty::Optional(_) | Ty::Dyn, Ty::Optional(_) | Ty::Dyn] => {
                Ty::Optional(Box::new(Ty::Dyn))
            }
            _ => return Err(mismatch()),
        },
        Builtin::Value => match types.as_slice() {
            [Ty::Optional(inner)] => (**inner).clone(),
            [Ty::Dyn] => Ty::Dyn,
            _ => return Err(mismatch()),
        },
        Builtin::Sum => match types.as_slice() {
            [Ty::List(item)] if item.is_numeric() || **item == Ty::Duration => (**item).clone(),
            [Ty::Dyn] => Ty::Dyn,
            _ => return Err(mismatch()),
        },
        Builtin::Min | Builtin::Max => match types.as_slice() {
            [Ty::List(item)] if item.is_ordered() => (**item).clone(),
            [Ty::Dyn] => Ty::Dyn,
            _ => return Err(mismatch()),
        },
        // `list.indexOf(x)`: `x` must have the list's item type (upstream's `list(A), A`).
        Builtin::IndexOf | Builtin::LastIndexOf if matches!(types.as_slice(), [Ty::List(item), needle] if !item.comparable(needle)) =>
        {
            return Err(mismatch());
        }
        Builtin::IsSorted => match types.as_slice() {
            [Ty::List(item)] if item.is_ordered() => Ty::Bool,
            [Ty::Dyn] => Ty::Bool,
            _ => return Err(mismatch()),
        },
        _ => {
            let sigs = signatures(f);
            let mut matching = sigs.iter().filter(|(params, _)| {
                params.len() == types.len() && params.iter().zip(&types).all(|(p, t)| p.accepts(t))
            });
            let Some((_, first)) = matching.next() else {
                return Err(mismatch());
            };
            if matching.all(|(_, ty)| ty == first) {
                first.clone()
            } else {
                Ty::Dyn
            }
        }
    };
    let expr = fold_constant(f, exprs, starts)?;
    Ok((expr, ty))
}

/// Types and folds `c ? a : b` whose operands are checked.
fn cond_typed(
    pos: usize,
    (c, ct): (Expr, Ty),
    (a, at): (Expr, Ty),
    (b, bt): (Expr, Ty),
) -> Result<(Expr, Ty), CelError> {
    let joined = at.join(&bt);
    let (true, Some(ty)) = (is_bool(&ct), joined) else {
        return Err(no_overload(pos, "_?_:_", type_list(&[ct, at, bt])));
    };
    if let Expr::Lit(Value::Bool(flag)) = c {
        return Ok((if flag { a } else { b }, ty));
    }
    Ok((
        Expr::Cond {
            cond: Box::new(c),
            then: Box::new(a),
            otherwise: Box::new(b),
        },
        ty,
    ))
}

/// Types and folds `!e` / `-e` whose operand is checked.
fn unary_typed(pos: usize, op: UnOp, (e, t): (Expr, Ty)) -> Result<(Expr, Ty), CelError> {
    match op {
        UnOp::Not => {
            if !is_bool(&t) {
                return Err(no_overload(pos, "!_", type_list(&[t])));
            }
            if let Expr::Lit(Value::Bool(b)) = e {
                return Ok((Expr::Lit(Value::Bool(!b)), Ty::Bool));
            }
            Ok((Expr::Not(Box::new(e)), Ty::Bool))
        }
        UnOp::Neg => {
            if t == Ty::Double {
                if let Expr::Lit(Value::Double(d)) = e {
                    return Ok((Expr::Lit(Value::Double(-d)), Ty::Double));
                }
                return Ok((Expr::Neg(Box::new(e)), Ty::Double));
            }
            if !matches!(t, Ty::Int | Ty::Dyn) {
                return Err(no_overload(pos, "-_", type_list(&[t])));
            }
            if let Expr::Lit(Value::Int(i)) = e
                && let Some(neg) = i.checked_neg()
            {
                return Ok((Expr::Lit(Value::Int(neg)), Ty::Int));
            }
            Ok((Expr::Neg(Box::new(e)), t))
        }
    }
}
