//! Evaluation of the IR against one device.

use core::cell::Cell;
use core::cmp::Ordering;

use super::EvalError;
use super::ir::{
    Access, ArithOp, Builtin, CmpOp, Expr, FoldKind, Key, MapRef, Shared, Text, Value,
};
use crate::alloc_prelude::*;
use crate::model::names::qualify;
use crate::{Device, DeviceAttribute, Quantity, Version, VersionError};

/// Upstream's `includes()` looks at no more than this many list items
/// (`ResourceSliceMaxAttributeValuesPerDevice`).
const INCLUDES_MAX_ITEMS: usize = 48;

/// The cost budget of one evaluation (upstream `CELSelectorExpressionMaxCost`).
///
/// One unit is one evaluated node, one list item or map key visited or compared, or
/// eight bytes of string processed or of list built. cel-go's units differ in detail, but
/// the order of magnitude is the same: the budget stops expressions whose work grows
/// exponentially with nesting (`cel.bind` doubling a list, nested comprehensions).
pub(super) const COST_LIMIT: u64 = 1_000_000;

/// The cost of building one list item: its size in 8-byte units, so that, as for
/// strings, the budget also bounds the memory an evaluation allocates (to about
/// 8 bytes per unit).
const ITEM_COST: usize = core::mem::size_of::<Value<'static>>().div_ceil(8);

/// What an evaluation reads: the device, its driver and the local variables.
pub(super) struct Ctx<'a> {
    pub(super) driver: &'a str,
    pub(super) device: &'a Device,
    pub(super) slots: Vec<Option<Value<'a>>>,
    /// Cost units left.
    pub(super) budget: Cell<u64>,
}

impl Ctx<'_> {
    /// Spends `units` of the budget.
    fn charge(&self, units: usize) -> Result<(), EvalError> {
        let units = u64::try_from(units).unwrap_or(u64::MAX);
        let left = self.budget.get().checked_sub(units);
        self.budget.set(left.unwrap_or(0));
        left.map(|_| ())
            .ok_or(EvalError::CostLimitExceeded { limit: COST_LIMIT })
    }

    /// Spends the cost of processing `bytes` bytes of text.
    fn charge_text(&self, bytes: usize) -> Result<(), EvalError> {
        self.charge(bytes / 8 + 1)
    }
}

/// Evaluates `e`.
///
/// A thin dispatcher: every non-trivial node is evaluated by its own function, so that
/// the frame of this recursive function stays small (debug builds give each
/// temporary of a large `match` its own stack slot).
pub(super) fn eval<'a>(e: &'a Expr, cx: &mut Ctx<'a>) -> Result<Value<'a>, EvalError> {
    cx.charge(1)?;
    match e {
        Expr::Lit(v) => Ok(v.view()),
        Expr::Local(slot) => Ok(local(cx, *slot)),
        Expr::Driver => Ok(Value::Str(Shared::Borrowed(cx.driver))),
        Expr::AllowMultiple => Ok(Value::Bool(cx.device.allow_multiple_allocations)),
        Expr::Attributes => Ok(Value::Map(MapRef::Attributes)),
        Expr::Capacity => Ok(Value::Map(MapRef::Capacity)),
        Expr::AttrDomain(domain) => domain_map(domain, true, cx),
        Expr::CapDomain(domain) => domain_map(domain, false, cx),
        Expr::Attr(key) => attr(key, cx),
        Expr::Cap(key) => capacity(key, cx),
        Expr::HasAttr(key) => Ok(Value::Bool(
            find_key(&cx.device.attributes, cx.driver, key).is_some(),
        )),
        Expr::HasCap(key) => Ok(Value::Bool(
            find_key(&cx.device.capacity, cx.driver, key).is_some(),
        )),
        Expr::Index { base, key, access } => index(base, key, *access, cx),
        Expr::Has { base, key } => has(base, key, cx),
        Expr::List(items) => list_literal(items, cx),
        Expr::Not(arg) => not(arg, cx),
        Expr::Neg(arg) => neg(arg, cx),
        Expr::And(items) => logic(items, false, "_&&_", cx),
        Expr::Or(items) => logic(items, true, "_||_", cx),
        Expr::Cmp { op, lhs, rhs } => compare(*op, lhs, rhs, cx),
        Expr::Arith { op, lhs, rhs } => arith(*op, lhs, rhs, cx),
        Expr::In { item, container } => membership(item, container, cx),
        Expr::Cond {
            cond,
            then,
            otherwise,
        } => conditional(cond, then, otherwise, cx),
        Expr::Call { f, args } => call(*f, args, cx),
        Expr::Let { slot, value, body } => bind(*slot, value, body, cx),
        Expr::Fold {
            kind,
            slot,
            range,
            pred,
        } => fold(*kind, *slot, range, pred, cx),
    }
}

fn local<'a>(cx: &Ctx<'a>, slot: usize) -> Value<'a> {
    cx.slots.get(slot).cloned().flatten().unwrap_or(Value::Null)
}

fn domain_map<'a>(
    domain: &'a Expr,
    attributes: bool,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let domain = match eval(domain, cx)? {
        Value::Str(s) => s,
        other => {
            let map = if attributes {
                MapRef::Attributes
            } else {
                MapRef::Capacity
            };
            return Err(overload("_[_]", &[&Value::Map(map), &other]));
        }
    };
    Ok(Value::Map(if attributes {
        MapRef::AttrDomain(domain)
    } else {
        MapRef::CapDomain(domain)
    }))
}

fn attr<'a>(key: &Key, cx: &Ctx<'a>) -> Result<Value<'a>, EvalError> {
    match find_key(&cx.device.attributes, cx.driver, key) {
        Some((name, attr)) => attribute_value(name, attr),
        None => Err(no_such_key(&key.id)),
    }
}

fn capacity<'a>(key: &Key, cx: &Ctx<'a>) -> Result<Value<'a>, EvalError> {
    match find_key(&cx.device.capacity, cx.driver, key) {
        Some((_, cap)) => Ok(Value::Quantity(cap.value)),
        None => Err(no_such_key(&key.id)),
    }
}

fn index<'a>(
    base: &'a Expr,
    key: &'a Expr,
    access: Access,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let base = eval(base, cx)?;
    let key = eval(key, cx)?;
    index_value(base, key, access, cx)
}

fn has<'a>(base: &'a Expr, key: &str, cx: &mut Ctx<'a>) -> Result<Value<'a>, EvalError> {
    match eval(base, cx)? {
        Value::Map(m) => Ok(Value::Bool(map_contains(&m, key, cx))),
        other => Err(overload("has", &[&other])),
    }
}

fn list_literal<'a>(items: &'a [Expr], cx: &mut Ctx<'a>) -> Result<Value<'a>, EvalError> {
    let mut values = Vec::with_capacity(items.len());
    for item in items {
        values.push(eval(item, cx)?);
    }
    Ok(list(values))
}

fn not<'a>(arg: &'a Expr, cx: &mut Ctx<'a>) -> Result<Value<'a>, EvalError> {
    match eval(arg, cx)? {
        Value::Bool(b) => Ok(Value::Bool(!b)),
        other => Err(overload("!_", &[&other])),
    }
}

fn neg<'a>(arg: &'a Expr, cx: &mut Ctx<'a>) -> Result<Value<'a>, EvalError> {
    match eval(arg, cx)? {
        Value::Int(i) => i
            .checked_neg()
            .map(Value::Int)
            .ok_or(EvalError::IntegerOverflow { operation: "-_" }),
        other => Err(overload("-_", &[&other])),
    }
}

fn compare<'a>(
    op: CmpOp,
    lhs: &'a Expr,
    rhs: &'a Expr,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let a = eval(lhs, cx)?;
    let b = eval(rhs, cx)?;
    Ok(Value::Bool(match op {
        CmpOp::Eq => equal(&a, &b, cx)?,
        CmpOp::Ne => !equal(&a, &b, cx)?,
        CmpOp::Lt => order(&a, &b, op)?.is_lt(),
        CmpOp::Le => order(&a, &b, op)?.is_le(),
        CmpOp::Gt => order(&a, &b, op)?.is_gt(),
        CmpOp::Ge => order(&a, &b, op)?.is_ge(),
    }))
}

fn arith<'a>(
    op: ArithOp,
    lhs: &'a Expr,
    rhs: &'a Expr,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let a = eval(lhs, cx)?;
    let b = eval(rhs, cx)?;
    arith_values(op, a, b, cx)
}

fn membership<'a>(
    item: &'a Expr,
    container: &'a Expr,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let item = eval(item, cx)?;
    let container = eval(container, cx)?;
    Ok(Value::Bool(contains(&container, &item, cx)?))
}

fn conditional<'a>(
    cond: &'a Expr,
    then: &'a Expr,
    otherwise: &'a Expr,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    match eval(cond, cx)? {
        Value::Bool(true) => eval(then, cx),
        Value::Bool(false) => eval(otherwise, cx),
        other => Err(overload("_?_:_", &[&other])),
    }
}

fn call<'a>(f: Builtin, args: &'a [Expr], cx: &mut Ctx<'a>) -> Result<Value<'a>, EvalError> {
    let mut values = Vec::with_capacity(args.len());
    for arg in args {
        values.push(eval(arg, cx)?);
    }
    call_values(f, values, cx)
}

fn bind<'a>(
    slot: usize,
    value: &'a Expr,
    body: &'a Expr,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let value = eval(value, cx)?;
    set_slot(cx, slot, value);
    eval(body, cx)
}

fn set_slot<'a>(cx: &mut Ctx<'a>, slot: usize, value: Value<'a>) {
    if let Some(s) = cx.slots.get_mut(slot) {
        *s = Some(value);
    }
}

fn no_such_key(key: &str) -> EvalError {
    EvalError::NoSuchKey {
        key: key.to_owned(),
    }
}

fn overload(function: &'static str, args: &[&Value<'_>]) -> EvalError {
    let names: Vec<&str> = args.iter().map(|v| v.type_name()).collect();
    EvalError::NoSuchOverload {
        function,
        types: format!("({})", names.join(", ")),
    }
}

/// `&&` (`decisive == false`) or `||` (`decisive == true`): a decisive operand wins
/// whatever the others are, errors included; otherwise the first error, if any.
fn logic<'a>(
    items: &'a [Expr],
    decisive: bool,
    name: &'static str,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let mut first_error = None;
    for item in items {
        match eval(item, cx) {
            Ok(Value::Bool(b)) if b == decisive => return Ok(Value::Bool(decisive)),
            Ok(Value::Bool(_)) => {}
            Ok(other) => {
                first_error.get_or_insert_with(|| overload(name, &[&other]));
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(Value::Bool(!decisive)),
    }
}

/// Looks up a device attribute or capacity by domain and identifier: first the
/// qualified name `domain/id`, then, in the driver's own domain, the bare name `id`.
fn find<'d, T>(
    map: &'d BTreeMap<String, T>,
    driver: &str,
    domain: &str,
    id: &str,
    qualified: Option<&str>,
) -> Option<(&'d str, &'d T)> {
    if domain.contains('/') {
        // A name splits at its first '/', so no name has such a domain.
        return None;
    }
    let exact = match qualified {
        Some(q) => map.get_key_value(q),
        None => map.get_key_value(format!("{domain}/{id}").as_str()),
    };
    exact
        .or_else(|| {
            (domain == driver && !id.contains('/'))
                .then(|| map.get_key_value(id))
                .flatten()
        })
        .map(|(k, v)| (k.as_str(), v))
}

fn find_key<'d, T>(
    map: &'d BTreeMap<String, T>,
    driver: &str,
    key: &Key,
) -> Option<(&'d str, &'d T)> {
    find(map, driver, &key.domain, &key.id, Some(&key.qualified))
}

/// The CEL value of a device attribute: versions become semver values, lists lists.
fn attribute_value<'a>(name: &str, attr: &'a DeviceAttribute) -> Result<Value<'a>, EvalError> {
    let version = |s: &str| {
        Version::parse(s)
            .map(|v| Value::Semver(Shared::Owned(v)))
            .map_err(|error| EvalError::InvalidVersionAttribute {
                attribute: name.to_owned(),
                error,
            })
    };
    Ok(match attr {
        DeviceAttribute::Int(i) => Value::Int(*i),
        DeviceAttribute::Bool(b) => Value::Bool(*b),
        DeviceAttribute::String(s) => Value::Str(Shared::Borrowed(s)),
        DeviceAttribute::Version(s) => version(s)?,
        DeviceAttribute::Ints(v) => list(v.iter().map(|i| Value::Int(*i)).collect()),
        DeviceAttribute::Bools(v) => list(v.iter().map(|b| Value::Bool(*b)).collect()),
        DeviceAttribute::Strings(v) => list(
            v.iter()
                .map(|s| Value::Str(Shared::Borrowed(s.as_str())))
                .collect(),
        ),
        DeviceAttribute::Versions(v) => {
            list(v.iter().map(|s| version(s)).collect::<Result<_, _>>()?)
        }
    })
}

fn list(values: Vec<Value<'_>>) -> Value<'_> {
    Value::List(Shared::Owned(values))
}

/// The value under `key` in a map, `None` when absent.
fn map_get<'a>(
    m: &MapRef<'a>,
    key: Text<'a>,
    cx: &Ctx<'a>,
) -> Result<Option<Value<'a>>, EvalError> {
    let device = cx.device;
    Ok(match m {
        // Unknown domains are empty maps (upstream's map with a default).
        MapRef::Attributes => Some(Value::Map(MapRef::AttrDomain(key))),
        MapRef::Capacity => Some(Value::Map(MapRef::CapDomain(key))),
        MapRef::AttrDomain(domain) => match find(&device.attributes, cx.driver, domain, &key, None)
        {
            Some((name, attr)) => Some(attribute_value(name, attr)?),
            None => None,
        },
        MapRef::CapDomain(domain) => find(&device.capacity, cx.driver, domain, &key, None)
            .map(|(_, cap)| Value::Quantity(cap.value)),
    })
}

/// Whether `key` is present in a map (`in`, `has`).
fn map_contains(m: &MapRef<'_>, key: &str, cx: &Ctx<'_>) -> bool {
    let device = cx.device;
    match m {
        MapRef::Attributes => device
            .attributes
            .keys()
            .any(|k| qualify(k, cx.driver).0 == key),
        MapRef::Capacity => device
            .capacity
            .keys()
            .any(|k| qualify(k, cx.driver).0 == key),
        MapRef::AttrDomain(domain) => {
            find(&device.attributes, cx.driver, domain, key, None).is_some()
        }
        MapRef::CapDomain(domain) => find(&device.capacity, cx.driver, domain, key, None).is_some(),
    }
}

/// The keys of a map, sorted and without duplicates.
fn map_keys<'a>(m: &MapRef<'a>, cx: &Ctx<'a>) -> Result<Vec<&'a str>, EvalError> {
    let device = cx.device;
    let driver = cx.driver;
    let keys: BTreeSet<&'a str> = match m {
        MapRef::Attributes => device
            .attributes
            .keys()
            .map(|k| qualify(k, driver).0)
            .collect(),
        MapRef::Capacity => device
            .capacity
            .keys()
            .map(|k| qualify(k, driver).0)
            .collect(),
        MapRef::AttrDomain(domain) => device
            .attributes
            .keys()
            .map(|k| qualify(k, driver))
            .filter(|(d, _)| d == &&**domain)
            .map(|(_, id)| id)
            .collect(),
        MapRef::CapDomain(domain) => device
            .capacity
            .keys()
            .map(|k| qualify(k, driver))
            .filter(|(d, _)| d == &&**domain)
            .map(|(_, id)| id)
            .collect(),
    };
    cx.charge(keys.len())?;
    Ok(keys.into_iter().collect())
}

fn index_value<'a>(
    base: Value<'a>,
    key: Value<'a>,
    access: Access,
    cx: &Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let base = match (access, base) {
        (Access::Optional, Value::Optional(None)) => return Ok(Value::Optional(None)),
        (Access::Optional, Value::Optional(Some(inner))) => *inner,
        (_, base) => base,
    };
    let found = match (&base, key) {
        (Value::Map(m), Value::Str(k)) => {
            let shown = if access == Access::Strict {
                Some(String::from(&*k))
            } else {
                None
            };
            match map_get(m, k, cx)? {
                Some(v) => Some(v),
                None if access == Access::Strict => {
                    return Err(no_such_key(&shown.unwrap_or_default()));
                }
                None => None,
            }
        }
        (Value::Map(_), other) if access == Access::Strict => {
            return Err(no_such_key(&display_key(&other)));
        }
        (Value::Map(_), _) => None,
        (Value::List(items), Value::Int(i)) => {
            let len = items.len();
            let at = usize::try_from(i).ok().filter(|&at| at < len);
            match (at, base) {
                (Some(at), Value::List(Shared::Borrowed(items))) => Some(items[at].view()),
                (Some(at), Value::List(Shared::Owned(mut items))) => Some(items.swap_remove(at)),
                (_, _) if access == Access::Strict => {
                    return Err(EvalError::IndexOutOfRange { index: i, len });
                }
                _ => None,
            }
        }
        (_, key) => return Err(overload("_[_]", &[&base, &key])),
    };
    Ok(match access {
        Access::Strict => found.unwrap_or(Value::Null),
        Access::Optional => Value::Optional(found.map(Box::new)),
    })
}

fn display_key(v: &Value<'_>) -> String {
    match v {
        Value::Int(i) => format!("{i}"),
        Value::Bool(b) => format!("{b}"),
        Value::Str(s) => String::from(&**s),
        other => String::from(other.type_name()),
    }
}

/// CEL's heterogeneous equality: values of different types are unequal.
fn equal(lhs: &Value<'_>, rhs: &Value<'_>, cx: &Ctx<'_>) -> Result<bool, EvalError> {
    Ok(match (lhs, rhs) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => {
            cx.charge_text(x.len().min(y.len()))?;
            **x == **y
        }
        (Value::Quantity(x), Value::Quantity(y)) => x == y,
        (Value::Semver(x), Value::Semver(y)) => **x == **y,
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            cx.charge(x.len())?;
            for (p, q) in x.iter().zip(y.iter()) {
                if !equal(p, q, cx)? {
                    return Ok(false);
                }
            }
            true
        }
        (Value::Map(left), Value::Map(right)) => {
            let keys = map_keys(left, cx)?;
            if keys != map_keys(right, cx)? {
                return Ok(false);
            }
            for key in keys {
                let p = map_get(left, Shared::Borrowed(key), cx)?;
                let q = map_get(right, Shared::Borrowed(key), cx)?;
                match (p, q) {
                    (Some(p), Some(q)) if equal(&p, &q, cx)? => {}
                    _ => return Ok(false),
                }
            }
            true
        }
        (Value::Optional(left), Value::Optional(right)) => match (left, right) {
            (None, None) => true,
            (Some(p), Some(q)) => equal(p, q, cx)?,
            _ => false,
        },
        _ => false,
    })
}

/// Ordering for `< <= > >=`: ints, strings (by code point) and bools.
fn order(a: &Value<'_>, b: &Value<'_>, op: CmpOp) -> Result<Ordering, EvalError> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x.cmp(y)),
        (Value::Str(x), Value::Str(y)) => Ok((**x).cmp(&**y)),
        (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(y)),
        _ => Err(overload(op.cel_name(), &[a, b])),
    }
}

fn arith_values<'a>(
    op: ArithOp,
    lhs: Value<'a>,
    rhs: Value<'a>,
    cx: &Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let overflow = || EvalError::IntegerOverflow {
        operation: op.cel_name(),
    };
    Ok(match (op, lhs, rhs) {
        (ArithOp::Add, Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_add(y).ok_or_else(overflow)?)
        }
        (ArithOp::Sub, Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_sub(y).ok_or_else(overflow)?)
        }
        (ArithOp::Mul, Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_mul(y).ok_or_else(overflow)?)
        }
        (ArithOp::Div, Value::Int(_), Value::Int(0)) => return Err(EvalError::DivisionByZero),
        (ArithOp::Div, Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_div(y).ok_or_else(overflow)?)
        }
        (ArithOp::Mod, Value::Int(_), Value::Int(0)) => return Err(EvalError::ModulusByZero),
        (ArithOp::Mod, Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_rem(y).ok_or_else(overflow)?)
        }
        (ArithOp::Add, Value::Str(left), Value::Str(right)) => {
            cx.charge_text(left.len() + right.len())?;
            let mut joined = String::with_capacity(left.len() + right.len());
            joined.push_str(&left);
            joined.push_str(&right);
            Value::Str(Shared::Owned(joined))
        }
        (ArithOp::Add, Value::List(left), Value::List(right)) => {
            cx.charge((left.len() + right.len()) * ITEM_COST)?;
            let mut items = Vec::with_capacity(left.len() + right.len());
            items.extend(left.iter().cloned());
            items.extend(right.iter().cloned());
            list(items)
        }
        (op, left, right) => return Err(overload(op.cel_name(), &[&left, &right])),
    })
}

/// `item in container`.
fn contains(container: &Value<'_>, item: &Value<'_>, cx: &Ctx<'_>) -> Result<bool, EvalError> {
    match (container, item) {
        (Value::List(items), _) => {
            cx.charge(items.len())?;
            for candidate in items.iter() {
                if equal(candidate, item, cx)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        (Value::Map(m), Value::Str(key)) => Ok(map_contains(m, key, cx)),
        // Maps here have string keys only.
        (Value::Map(_), _) => Ok(false),
        _ => Err(overload("@in", &[item, container])),
    }
}

fn fold<'a>(
    kind: FoldKind,
    slot: usize,
    range: &'a Expr,
    pred: &'a Expr,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let items: Vec<Value<'a>> = match eval(range, cx)? {
        Value::List(Shared::Borrowed(items)) => {
            cx.charge(items.len())?;
            items.iter().map(Value::view).collect()
        }
        Value::List(Shared::Owned(items)) => items,
        Value::Map(m) => map_keys(&m, cx)?
            .into_iter()
            .map(|k| Value::Str(Shared::Borrowed(k)))
            .collect(),
        other => {
            return Err(EvalError::NotIterable {
                found: other.type_name(),
            });
        }
    };
    let (name, decisive) = match kind {
        FoldKind::All => ("all", false),
        FoldKind::Exists => ("exists", true),
        FoldKind::ExistsOne => ("exists_one", true),
    };
    let mut first_error = None;
    let mut count = 0usize;
    for item in items {
        set_slot(cx, slot, item);
        match eval(pred, cx) {
            Ok(Value::Bool(b)) if kind == FoldKind::ExistsOne => count += usize::from(b),
            Ok(Value::Bool(b)) if b == decisive => return Ok(Value::Bool(decisive)),
            Ok(Value::Bool(_)) => {}
            Ok(other) => {
                let e = overload(name, &[&other]);
                if kind == FoldKind::ExistsOne {
                    return Err(e);
                }
                first_error.get_or_insert(e);
            }
            // exists_one has no short cut: every error surfaces.
            Err(e) if kind == FoldKind::ExistsOne => return Err(e),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(Value::Bool(match kind {
        FoldKind::ExistsOne => count == 1,
        _ => !decisive,
    }))
}

/// Parses a version for `semver()` / `isSemver()`; with `normalize`, as upstream's
/// `normalizeAndParse`: drop one leading `v`, strip leading zeros of the dotted parts,
/// fill in a missing minor / patch with `0` (not allowed together with a pre-release or
/// build suffix).
pub(super) fn parse_semver(s: &str, normalize: bool) -> Result<Version, VersionError> {
    if !normalize {
        return Version::parse(s);
    }
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s.splitn(3, '.').map(ToOwned::to_owned).collect();
    for part in &mut parts {
        if part.len() > 1 {
            let trimmed = part.trim_start_matches('0');
            *part = if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                trimmed.to_owned()
            } else {
                format!("0{trimmed}")
            };
        }
    }
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            let part = if parts.len() == 1 { "minor" } else { "patch" };
            return Err(VersionError::MissingPart { part });
        }
        parts.resize(3, "0".to_owned());
    }
    Version::parse(&parts.join("."))
}

fn int_of(ordering: Ordering) -> i64 {
    match ordering {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }
}

/// A quantity's value as an `int64` when it is a whole number in range
/// (upstream `AsInt64`).
fn quantity_as_int(q: Quantity) -> Option<i64> {
    const NANO: i128 = 1_000_000_000;
    let nano = q.as_nano();
    if nano % NANO != 0 {
        return None;
    }
    i64::try_from(nano / NANO).ok()
}

#[allow(clippy::cast_possible_wrap)] // upstream converts uint64 version parts with int64(...)
fn version_part(v: u64) -> i64 {
    v as i64
}

fn call_values<'a>(
    f: Builtin,
    mut args: Vec<Value<'a>>,
    cx: &Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    use Builtin as B;
    use Value as V;
    // String functions are linear in their arguments; the rest is charged where it
    // iterates (`equal`, `map_keys`).
    for arg in &args {
        if let V::Str(s) = arg {
            cx.charge_text(s.len())?;
        }
    }
    let qoverflow = || EvalError::QuantityOverflow { function: f.name() };
    let result = match (f, args.as_slice()) {
        (B::StartsWith, [V::Str(s), V::Str(p)]) => V::Bool(s.starts_with(&**p)),
        (B::EndsWith, [V::Str(s), V::Str(p)]) => V::Bool(s.ends_with(&**p)),
        (B::Contains, [V::Str(s), V::Str(p)]) => V::Bool(s.contains(&**p)),
        (B::LowerAscii, [V::Str(s)]) => V::Str(Shared::Owned(s.to_ascii_lowercase())),
        (B::UpperAscii, [V::Str(s)]) => V::Str(Shared::Owned(s.to_ascii_uppercase())),
        (B::Size, [V::Str(s)]) => V::Int(len_i64(s.chars().count())),
        (B::Size, [V::List(items)]) => V::Int(len_i64(items.len())),
        (B::Size, [V::Map(m)]) => V::Int(len_i64(map_keys(m, cx)?.len())),
        (B::Includes, [V::List(items), needle]) => {
            let mut found = false;
            for item in items.iter().take(INCLUDES_MAX_ITEMS) {
                if equal(item, needle, cx)? {
                    found = true;
                    break;
                }
            }
            V::Bool(found)
        }
        (B::Includes, [target, needle]) => V::Bool(equal(target, needle, cx)?),
        (B::Quantity, [V::Str(s)]) => {
            V::Quantity(
                Quantity::parse(s).map_err(|error| EvalError::InvalidQuantity {
                    value: String::from(&**s),
                    error,
                })?,
            )
        }
        (B::IsQuantity, [V::Str(s)]) => V::Bool(Quantity::parse(s).is_ok()),
        (B::Semver, [V::Str(s), rest @ ..]) if semver_flag(rest).is_some() => {
            let normalize = semver_flag(rest).unwrap_or(false);
            V::Semver(Shared::Owned(parse_semver(s, normalize).map_err(
                |error| EvalError::InvalidSemver {
                    value: String::from(&**s),
                    error,
                },
            )?))
        }
        (B::IsSemver, [V::Str(s), rest @ ..]) if semver_flag(rest).is_some() => {
            V::Bool(parse_semver(s, semver_flag(rest).unwrap_or(false)).is_ok())
        }
        (B::IsGreaterThan, [V::Quantity(a), V::Quantity(b)]) => V::Bool(a > b),
        (B::IsGreaterThan, [V::Semver(a), V::Semver(b)]) => V::Bool(**a > **b),
        (B::IsLessThan, [V::Quantity(a), V::Quantity(b)]) => V::Bool(a < b),
        (B::IsLessThan, [V::Semver(a), V::Semver(b)]) => V::Bool(**a < **b),
        (B::CompareTo, [V::Quantity(a), V::Quantity(b)]) => V::Int(int_of(a.cmp(b))),
        (B::CompareTo, [V::Semver(a), V::Semver(b)]) => V::Int(int_of((**a).cmp(&**b))),
        (B::Major, [V::Semver(v)]) => V::Int(version_part(v.major())),
        (B::Minor, [V::Semver(v)]) => V::Int(version_part(v.minor())),
        (B::Patch, [V::Semver(v)]) => V::Int(version_part(v.patch())),
        (B::Sign, [V::Quantity(q)]) => V::Int(i64::from(q.sign())),
        (B::AsInteger, [V::Quantity(q)]) => {
            V::Int(quantity_as_int(*q).ok_or(EvalError::NotAnInteger)?)
        }
        (B::IsInteger, [V::Quantity(q)]) => V::Bool(quantity_as_int(*q).is_some()),
        (B::Add, [V::Quantity(a), V::Quantity(b)]) => {
            V::Quantity(a.checked_add(*b).ok_or_else(qoverflow)?)
        }
        (B::Add, [V::Quantity(a), V::Int(b)]) => V::Quantity(
            a.checked_add(Quantity::from_int(*b))
                .ok_or_else(qoverflow)?,
        ),
        (B::Sub, [V::Quantity(a), V::Quantity(b)]) => {
            V::Quantity(a.checked_sub(*b).ok_or_else(qoverflow)?)
        }
        (B::Sub, [V::Quantity(a), V::Int(b)]) => V::Quantity(
            a.checked_sub(Quantity::from_int(*b))
                .ok_or_else(qoverflow)?,
        ),
        (B::HasValue, [V::Optional(o)]) => V::Bool(o.is_some()),
        (B::Value, [V::Optional(None)]) => return Err(EvalError::OptionalNone),
        (B::Value, [V::Optional(Some(_))]) | (B::OrValue, [V::Optional(Some(_)), _]) => {
            match args.swap_remove(0) {
                V::Optional(Some(inner)) => *inner,
                other => other,
            }
        }
        (B::OrValue, [V::Optional(None), _]) => args.swap_remove(1),
        (B::OptionalOf, [_]) => V::Optional(args.pop().map(Box::new)),
        (B::CharAt, [V::Str(s), V::Int(i)]) => V::Str(Shared::Owned(strings::char_at(s, *i)?)),
        (B::IndexOf, [V::Str(s), V::Str(sub)]) => V::Int(strings::find(s, sub, None, false)?),
        (B::IndexOf, [V::Str(s), V::Str(sub), V::Int(off)]) => {
            V::Int(strings::find(s, sub, Some(*off), false)?)
        }
        (B::LastIndexOf, [V::Str(s), V::Str(sub)]) => V::Int(strings::find(s, sub, None, true)?),
        (B::LastIndexOf, [V::Str(s), V::Str(sub), V::Int(off)]) => {
            V::Int(strings::find(s, sub, Some(*off), true)?)
        }
        (B::Replace, [V::Str(s), V::Str(old), V::Str(new)]) => {
            let out = strings::replace(s, old, new, -1);
            cx.charge_text(out.len())?;
            V::Str(Shared::Owned(out))
        }
        (B::Replace, [V::Str(s), V::Str(old), V::Str(new), V::Int(n)]) => {
            let out = strings::replace(s, old, new, *n);
            cx.charge_text(out.len())?;
            V::Str(Shared::Owned(out))
        }
        (B::Split, [V::Str(s), V::Str(sep)]) => strings::split(s, sep, -1),
        (B::Split, [V::Str(s), V::Str(sep), V::Int(n)]) => strings::split(s, sep, *n),
        (B::Substring, [V::Str(s), V::Int(start)]) => {
            V::Str(Shared::Owned(strings::substring(s, *start, None)?))
        }
        (B::Substring, [V::Str(s), V::Int(start), V::Int(end)]) => {
            V::Str(Shared::Owned(strings::substring(s, *start, Some(*end))?))
        }
        (B::Trim, [V::Str(s)]) => V::Str(Shared::Owned(String::from(s.trim()))),
        (B::Join, [V::List(items)]) if items.iter().all(|v| matches!(v, V::Str(_))) => {
            V::Str(Shared::Owned(strings::join(items, "", cx)?))
        }
        (B::Join, [V::List(items), V::Str(sep)])
            if items.iter().all(|v| matches!(v, V::Str(_))) =>
        {
            V::Str(Shared::Owned(strings::join(items, sep, cx)?))
        }
        _ => {
            let refs: Vec<&Value<'_>> = args.iter().collect();
            return Err(overload(f.name(), &refs));
        }
    };
    Ok(result)
}

/// The optional `normalize` argument of `semver` / `isSemver`: `Some(flag)` when the
/// rest of the arguments is empty or one bool.
fn semver_flag(rest: &[Value<'_>]) -> Option<bool> {
    match rest {
        [] => Some(false),
        [Value::Bool(b)] => Some(*b),
        _ => None,
    }
}

fn len_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The CEL strings extension (cel-go `ext.Strings`, which Kubernetes enables for DRA
/// selectors): indices are code points, errors are cel-go's.
mod strings {
    use super::{Ctx, EvalError, Shared, Value, len_i64};
    use crate::alloc_prelude::*;

    fn index(i: i64, len: usize) -> Result<usize, EvalError> {
        usize::try_from(i)
            .ok()
            .filter(|&u| u <= len)
            .ok_or(EvalError::StringIndexOutOfRange { index: i })
    }

    /// `s.charAt(i)`: the code point at `i`; `""` at the length; an error beyond.
    pub(super) fn char_at(s: &str, i: i64) -> Result<String, EvalError> {
        let chars: Vec<char> = s.chars().collect();
        let at = index(i, chars.len())?;
        Ok(chars.get(at).map(|c| String::from(*c)).unwrap_or_default())
    }

    /// `s.indexOf(sub[, offset])` (`last == false`: the first code-point index at or
    /// after `offset`, default 0) and `s.lastIndexOf(sub[, offset])` (`last`: the last
    /// at or before `offset`, default the end), or -1. An empty `sub` answers the
    /// offset (by default 0, or the length for `lastIndexOf`); a given `offset` must be
    /// inside the string; a `sub` longer than the string answers -1.
    pub(super) fn find(
        s: &str,
        sub: &str,
        offset: Option<i64>,
        last: bool,
    ) -> Result<i64, EvalError> {
        let hay: Vec<char> = s.chars().collect();
        if sub.is_empty() {
            return Ok(offset.unwrap_or(if last { len_i64(hay.len()) } else { 0 }));
        }
        let needle: Vec<char> = sub.chars().collect();
        let off = match offset {
            Some(o) => usize::try_from(o)
                .ok()
                .filter(|&u| u < hay.len())
                .ok_or(EvalError::StringIndexOutOfRange { index: o })?,
            None if last => hay.len().saturating_sub(1),
            None => 0,
        };
        if needle.len() > hay.len() {
            return Ok(-1);
        }
        let at = |i: &usize| hay[*i..*i + needle.len()] == needle[..];
        let found = if last {
            (0..=off.min(hay.len() - needle.len())).rev().find(at)
        } else {
            (off..=hay.len() - needle.len()).find(at)
        };
        Ok(found.map_or(-1, len_i64))
    }

    /// `s.replace(old, new, n)`: the first `n` non-overlapping `old` replaced (all when
    /// `n < 0`), as Go's `strings.Replace` (an empty `old` matches before every code
    /// point and at the end).
    pub(super) fn replace(s: &str, old: &str, new: &str, n: i64) -> String {
        match usize::try_from(n) {
            Err(_) => s.replace(old, new),
            Ok(n) => s.replacen(old, new, n),
        }
    }

    /// `s.split(sep, n)`: as Go's `strings.SplitN`: `n < 0` all, `n == 0` none, else at
    /// most `n` parts (the last holding the rest); an empty `sep` splits into code
    /// points.
    pub(super) fn split<'a>(s: &str, sep: &str, n: i64) -> Value<'a> {
        let parts: Vec<String> = match usize::try_from(n) {
            Ok(0) => Vec::new(),
            Ok(n) if sep.is_empty() => {
                let chars: Vec<char> = s.chars().collect();
                let mut out: Vec<String> =
                    chars.iter().take(n - 1).map(|c| String::from(*c)).collect();
                if chars.len() >= n {
                    out.push(chars[n - 1..].iter().collect());
                }
                out
            }
            Ok(n) => s.splitn(n, sep).map(String::from).collect(),
            Err(_) if sep.is_empty() => s.chars().map(String::from).collect(),
            Err(_) => s.split(sep).map(String::from).collect(),
        };
        Value::List(Shared::Owned(
            parts
                .into_iter()
                .map(|p| Value::Str(Shared::Owned(p)))
                .collect(),
        ))
    }

    /// `s.substring(start[, end])`, in code points.
    pub(super) fn substring(s: &str, start: i64, end: Option<i64>) -> Result<String, EvalError> {
        let chars: Vec<char> = s.chars().collect();
        if let Some(end) = end
            && start > end
        {
            return Err(EvalError::InvalidSubstringRange { start, end });
        }
        let from = index(start, chars.len())?;
        let to = match end {
            Some(e) => index(e, chars.len())?,
            None => chars.len(),
        };
        Ok(chars[from..to].iter().collect())
    }

    /// `list.join(sep)` of a list of strings.
    pub(super) fn join(items: &[Value<'_>], sep: &str, cx: &Ctx<'_>) -> Result<String, EvalError> {
        let mut out = String::new();
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            if let Value::Str(s) = v {
                out.push_str(s);
            }
        }
        cx.charge_text(out.len())?;
        Ok(out)
    }
}
