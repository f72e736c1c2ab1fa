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
    Bool,
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
                | (P::Bool, Ty::Bool)
                | (P::Quantity, Ty::Quantity)
                | (P::Semver, Ty::Semver)
                | (P::List, Ty::List(_))
                | (P::Map, Ty::Map(_))
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
        "add" => (B::Add, Form::Method),
        "sub" => (B::Sub, Form::Method),
        "orValue" => (B::OrValue, Form::Method),
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
        _ => return None,
    })
}

/// Signatures of the built-ins whose result type does not depend on their arguments.
fn signatures(f: Builtin) -> Vec<Sig> {
    use Builtin as B;
    match f {
        B::StartsWith | B::EndsWith | B::Contains => vec![(&[P::Str, P::Str], Ty::Bool)],
        B::LowerAscii | B::UpperAscii | B::Trim => vec![(&[P::Str], Ty::Str)],
        B::Size => vec![
            (&[P::Str], Ty::Int),
            (&[P::List], Ty::Int),
            (&[P::Map], Ty::Int),
        ],
        B::Includes => vec![(&[P::Any, P::Any], Ty::Bool)],
        B::Quantity => vec![(&[P::Str], Ty::Quantity)],
        B::IsQuantity => vec![(&[P::Str], Ty::Bool)],
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
        ],
        B::Replace => vec![
            (&[P::Str, P::Str, P::Str], Ty::Str),
            (&[P::Str, P::Str, P::Str, P::Int], Ty::Str),
        ],
        B::Split => vec![
            (&[P::Str, P::Str], Ty::List(Box::new(Ty::Str))),
            (&[P::Str, P::Str, P::Int], Ty::List(Box::new(Ty::Str))),
        ],
        B::Substring => vec![
            (&[P::Str, P::Int], Ty::Str),
            (&[P::Str, P::Int, P::Int], Ty::Str),
        ],
        B::Join => vec![(&[P::List], Ty::Str), (&[P::List, P::Str], Ty::Str)],
        // Typed in `Checker::builtin` because their result depends on the argument.
        B::OrValue | B::Value | B::OptionalOf => Vec::new(),
    }
}

/// Functions CEL (or the Kubernetes libraries) define that this front end rejects, with
/// the reason shown to the user.
fn unsupported_reason(name: &str) -> Option<&'static str> {
    Some(match name {
        "matches" | "find" | "findAll" => "regular expressions are not supported",
        "map" | "filter" | "transformList" | "transformMap" | "transformMapEntry" | "sortBy" => {
            "only the all, exists and exists_one macros are supported"
        }
        "int" | "uint" | "double" | "string" | "bytes" | "bool" | "type" | "duration"
        | "timestamp" => "type conversions are not supported",
        "asApproximateFloat" => "floating-point values are not supported",
        "mul" | "div" | "divInt" => "quantity multiplication and division are not supported",
        "format" | "quote" | "reverse" => "this string function is not supported",
        "url" | "isURL" | "ip" | "isIP" | "cidr" | "isCIDR" => {
            "network and URL functions are not supported"
        }
        "max" | "min" | "sum" | "isSorted" | "distinct" | "flatten" | "slice" | "range" => {
            "list library functions are not supported"
        }
        "or" | "ofNonZeroValue" => {
            "only optional.of, optional.none, hasValue, value and \
                                    orValue are supported"
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
            item_ty = Some(match item_ty {
                None => t,
                Some(prev) => prev.join(&t).unwrap_or(Ty::Dyn),
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
            (b, Ty::Map(_) | Ty::Dyn) => Expr::Has {
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
        if self.is_global(target, "optional") && matches!(name, "of" | "none") {
            return match (name, args) {
                ("none", []) => Ok((
                    Expr::Lit(Value::Optional(None)),
                    Ty::Optional(Box::new(Ty::Dyn)),
                )),
                ("of", [arg]) => {
                    let (e, t) = self.check(arg)?;
                    let call = Expr::Call {
                        f: Builtin::OptionalOf,
                        args: vec![e],
                    };
                    Ok((call, Ty::Optional(Box::new(t))))
                }
                _ => Err(arg_count(
                    n,
                    &format!("optional.{name}"),
                    usize::from(name == "of"),
                    args.len(),
                )),
            };
        }
        let fold = match name {
            "all" => Some(FoldKind::All),
            "exists" => Some(FoldKind::Exists),
            "exists_one" => Some(FoldKind::ExistsOne),
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

    /// `range.all(x, pred)`, `range.exists(x, pred)`, `range.exists_one(x, pred)`.
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
            FoldKind::ExistsOne => "exists_one",
        };
        let [var, pred] = args else {
            return Err(arg_count(n, name, 2, args.len()));
        };
        let Kind::Ident(var_name) = &var.kind else {
            return Err(err(
                var.start,
                CelErrorKind::InvalidMacroArgument {
                    function,
                    reason: "the first argument must be a simple name",
                },
            ));
        };
        let (range_expr, range_ty) = self.check(range)?;
        let item_ty = match range_ty {
            Ty::List(item) => *item,
            Ty::Map(_) => Ty::Str,
            Ty::Dyn => Ty::Dyn,
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
        let slot = self.slots;
        self.slots += 1;
        self.scopes.push((var_name.clone(), slot, item_ty));
        let checked = self.check(pred);
        self.scopes.pop();
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
                range: Box::new(range_expr),
                pred: Box::new(pred_expr),
            },
            Ty::Bool,
        ))
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
    let folded = match (f, text, normalize) {
        (Builtin::Quantity, Some(s), _) => match Quantity::parse(s) {
            Ok(q) => Value::Quantity(q),
            Err(error) => {
                return Err(err(
                    position,
                    CelErrorKind::InvalidQuantity {
                        value: s.to_owned(),
                        error,
                    },
                ));
            }
        },
        (Builtin::IsQuantity, Some(s), _) => Value::Bool(Quantity::parse(s).is_ok()),
        (Builtin::Semver, Some(s), Some(normalize)) => match parse_semver(s, normalize) {
            Ok(v) => Value::Semver(Shared::Owned(v)),
            Err(error) => {
                return Err(err(
                    position,
                    CelErrorKind::InvalidSemver {
                        value: s.to_owned(),
                        error,
                    },
                ));
            }
        },
        (Builtin::IsSemver, Some(s), Some(normalize)) => {
            Value::Bool(parse_semver(s, normalize).is_ok())
        }
        _ => return Ok(Expr::Call { f, args }),
    };
    Ok(Expr::Lit(folded))
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
    let ordered = |t: &Ty| matches!(t, Ty::Int | Ty::Str | Ty::Bool | Ty::Dyn);
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
            if !(ordered(&lt) && ordered(&rt) && lt.comparable(&rt)) {
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
                (_, Ty::Dyn, Ty::Dyn)
                | (BinOp::Add, Ty::List(_), Ty::Dyn)
                | (BinOp::Add, Ty::Dyn, Ty::List(_)) => Ty::Dyn,
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
        Builtin::Value => match types.as_slice() {
            [Ty::Optional(inner)] => (**inner).clone(),
            [Ty::Dyn] => Ty::Dyn,
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
            if !matches!(t, Ty::Int | Ty::Dyn) {
                return Err(no_overload(pos, "-_", type_list(&[t])));
            }
            if let Expr::Lit(Value::Int(i)) = e
                && let Some(neg) = i.checked_neg()
            {
                return Ok((Expr::Lit(Value::Int(neg)), Ty::Int));
            }
            Ok((Expr::Neg(Box::new(e)), Ty::Int))
        }
    }
}
