//! Evaluation of the IR against one device.

use core::cell::Cell;
use core::cmp::Ordering;

use regex_automata::meta::Regex;

use super::EvalError;
use super::ir::{
    Access, ArithOp, Builtin, CmpOp, Expr, FoldKind, Key, MapRef, Shared, Text, Value,
};
use super::{formats, net, regex, time, url};
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

/// The cost of building one list item: a value's size in 8-byte units, so that, as for
/// strings, the budget also bounds the memory an evaluation allocates (to about
/// 8 bytes per unit).
///
/// A constant, the size on 64-bit targets (80 bytes), not `size_of::<Value>()`: a value
/// is 48 bytes on wasm32, where the budget would then stop fewer expressions, and a
/// selector must select the same devices in the browser as natively (the determinism
/// goldens, `wasm/tests/determinism/`, pin it under wasm32). The assertion below keeps
/// it an upper bound of the real size.
const ITEM_COST: usize = 10;

const _: () = assert!(core::mem::size_of::<Value<'static>>() <= ITEM_COST * 8);

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
        Expr::MapLit(entries) => map_literal(entries, cx),
        Expr::TransformMap {
            slot,
            value_slot,
            range,
            filter,
            transform,
            entries,
        } => transform_map(
            (*slot, Some(*value_slot)),
            range,
            filter.as_deref(),
            transform,
            *entries,
            cx,
        ),
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
            value_slot,
            range,
            pred,
        } => fold(*kind, (*slot, *value_slot), range, pred, cx),
        Expr::Comprehend {
            slot,
            value_slot,
            range,
            filter,
            transform,
        } => comprehend(
            (*slot, *value_slot),
            range,
            filter.as_deref(),
            transform.as_deref(),
            cx,
        ),
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

fn map_literal<'a>(entries: &'a [(Expr, Expr)], cx: &mut Ctx<'a>) -> Result<Value<'a>, EvalError> {
    let mut out: Vec<(Value<'a>, Value<'a>)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let key = eval(k, cx)?;
        let value = eval(v, cx)?;
        insert_entry(&mut out, key, value, cx)?;
    }
    Ok(Value::Map(MapRef::Literal(Shared::Owned(out))))
}

/// Adds an entry to a map being built; a key already there is an error (as cel-go).
fn insert_entry<'a>(
    entries: &mut Vec<(Value<'a>, Value<'a>)>,
    key: Value<'a>,
    value: Value<'a>,
    cx: &Ctx<'a>,
) -> Result<(), EvalError> {
    if !matches!(
        key,
        Value::Int(_) | Value::Uint(_) | Value::Bool(_) | Value::Str(_)
    ) {
        return Err(overload("{_:_}", &[&key]));
    }
    cx.charge(entries.len() + 2 * ITEM_COST)?;
    for (k, _) in entries.iter() {
        if equal(k, &key, cx)? {
            return Err(EvalError::DuplicateMapKey {
                key: display_key(&key),
            });
        }
    }
    entries.push((key, value));
    Ok(())
}

fn not<'a>(arg: &'a Expr, cx: &mut Ctx<'a>) -> Result<Value<'a>, EvalError> {
    match eval(arg, cx)? {
        Value::Bool(b) => Ok(Value::Bool(!b)),
        other => Err(overload("!_", &[&other])),
    }
}

fn neg<'a>(arg: &'a Expr, cx: &mut Ctx<'a>) -> Result<Value<'a>, EvalError> {
    match eval(arg, cx)? {
        Value::Double(d) => Ok(Value::Double(-d)),
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
        CmpOp::Lt => order(&a, &b, op)?.is_some_and(Ordering::is_lt),
        CmpOp::Le => order(&a, &b, op)?.is_some_and(Ordering::is_le),
        CmpOp::Gt => order(&a, &b, op)?.is_some_and(Ordering::is_gt),
        CmpOp::Ge => order(&a, &b, op)?.is_some_and(Ordering::is_ge),
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
    if let (Builtin::Or | Builtin::OrValue, [first, alternative]) = (f, args) {
        return optional_or(f, first, alternative, cx);
    }
    let mut values = Vec::with_capacity(args.len());
    for arg in args {
        values.push(eval(arg, cx)?);
    }
    call_values(f, values, cx)
}

/// `a.or(b)` / `a.orValue(v)`: the alternative is evaluated only when `a` is empty
/// (cel-go plans both as short-circuiting calls).
fn optional_or<'a>(
    f: Builtin,
    first: &'a Expr,
    alternative: &'a Expr,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    match eval(first, cx)? {
        Value::Optional(Some(inner)) if f == Builtin::OrValue => Ok(*inner),
        present @ Value::Optional(Some(_)) => Ok(present),
        Value::Optional(None) => {
            let alt = eval(alternative, cx)?;
            match (f, alt) {
                (Builtin::Or, alt @ Value::Optional(_)) | (Builtin::OrValue, alt) => Ok(alt),
                (_, other) => Err(overload(f.name(), &[&Value::Optional(None), &other])),
            }
        }
        other => Err(overload(f.name(), &[&other])),
    }
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
        MapRef::Literal(_) => literal_get(m, &Value::Str(key), cx)?,
    })
}

/// The value under `key` in a map built by the expression (keys compare as `==` does,
/// so `{1: 'a'}[1u]` finds it). `None` for other maps.
fn literal_get<'a>(
    m: &MapRef<'a>,
    key: &Value<'_>,
    cx: &Ctx<'a>,
) -> Result<Option<Value<'a>>, EvalError> {
    let MapRef::Literal(entries) = m else {
        return Ok(None);
    };
    cx.charge(entries.len())?;
    for (k, v) in entries.iter() {
        if equal(k, key, cx)? {
            return Ok(Some(v.clone()));
        }
    }
    Ok(None)
}

/// A map's entries, keys sorted for the device's maps and in insertion order for maps
/// built by the expression.
fn map_entries<'a>(m: &MapRef<'a>, cx: &Ctx<'a>) -> Result<Vec<(Value<'a>, Value<'a>)>, EvalError> {
    if let MapRef::Literal(entries) = m {
        cx.charge(entries.len() * ITEM_COST)?;
        return Ok(entries.to_vec());
    }
    let mut out = Vec::new();
    for key in map_keys(m, cx)? {
        let value = map_get(m, Shared::Borrowed(key), cx)?.unwrap_or(Value::Null);
        out.push((Value::Str(Shared::Borrowed(key)), value));
    }
    Ok(out)
}

/// How many entries a map has.
fn map_len(m: &MapRef<'_>, cx: &Ctx<'_>) -> Result<usize, EvalError> {
    match m {
        MapRef::Literal(entries) => Ok(entries.len()),
        _ => Ok(map_keys(m, cx)?.len()),
    }
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
        MapRef::Literal(entries) => entries
            .iter()
            .any(|(k, _)| matches!(k, Value::Str(s) if &**s == key)),
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
        // Maps built by the expression have keys of any type: see `map_entries`.
        MapRef::Literal(_) => BTreeSet::new(),
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
        (Value::Map(m @ MapRef::Literal(_)), key) => match literal_get(m, &key, cx)? {
            Some(v) => Some(v),
            None if access == Access::Strict => return Err(no_such_key(&display_key(&key))),
            None => None,
        },
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
        (Value::Int(x), Value::Int(y)) | (Value::Duration(x), Value::Duration(y)) => x == y,
        (
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
        ) => numeric_order(lhs, rhs) == Some(Ordering::Equal),
        (Value::Type(x), Value::Type(y)) | (Value::Format(x), Value::Format(y)) => x == y,
        (Value::Ip(x), Value::Ip(y)) => x == y,
        (Value::Cidr(x), Value::Cidr(y)) => x == y,
        (Value::Url(x), Value::Url(y)) => x == y,
        (Value::Timestamp(x), Value::Timestamp(y)) => x == y,
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
            if map_len(left, cx)? != map_len(right, cx)? {
                return Ok(false);
            }
            for (key, p) in map_entries(left, cx)? {
                let q = match (&key, right) {
                    (_, MapRef::Literal(_)) => literal_get(right, &key, cx)?,
                    (Value::Str(k), _) => {
                        map_get(right, k.clone(), cx)?.filter(|_| map_contains(right, k, cx))
                    }
                    _ => None,
                };
                match q {
                    Some(q) if equal(&p, &q, cx)? => {}
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

/// Ordering for `< <= > >=`: numbers (across int, uint and double), strings (by code
/// point) and bools. `None` when a NaN makes every comparison false.
fn order(a: &Value<'_>, b: &Value<'_>, op: CmpOp) -> Result<Option<Ordering>, EvalError> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Ok(Some((**x).cmp(&**y))),
        (Value::Bool(x), Value::Bool(y)) => Ok(Some(x.cmp(y))),
        (Value::Duration(x), Value::Duration(y)) => Ok(Some(x.cmp(y))),
        (Value::Timestamp(x), Value::Timestamp(y)) => Ok(Some(x.cmp(y))),
        (
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
        ) => Ok(numeric_order(a, b)),
        _ => Err(overload(op.cel_name(), &[a, b])),
    }
}

/// The order of two numbers of any of CEL's numeric types, as cel-go compares them
/// (an int or uint against a double is compared as a double, after range checks).
#[allow(clippy::cast_precision_loss)] // as cel-go: float64(i)
fn numeric_order(a: &Value<'_>, b: &Value<'_>) -> Option<Ordering> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    let int_double = |i: i64, d: f64| {
        if d.is_nan() {
            None
        } else if d < -TWO_63 {
            Some(Ordering::Greater)
        } else if d >= TWO_63 {
            Some(Ordering::Less)
        } else {
            (i as f64).partial_cmp(&d)
        }
    };
    let uint_double = |u: u64, d: f64| {
        if d.is_nan() {
            None
        } else if d < 0.0 {
            Some(Ordering::Greater)
        } else if d >= TWO_64 {
            Some(Ordering::Less)
        } else {
            (u as f64).partial_cmp(&d)
        }
    };
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Uint(x), Value::Uint(y)) => Some(x.cmp(y)),
        (Value::Double(x), Value::Double(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Uint(y)) => Some(match u64::try_from(*x) {
            Ok(x) => x.cmp(y),
            Err(_) => Ordering::Less,
        }),
        (Value::Uint(_), Value::Int(_)) => numeric_order(b, a).map(Ordering::reverse),
        (Value::Int(x), Value::Double(y)) => int_double(*x, *y),
        (Value::Double(_), Value::Int(_) | Value::Uint(_)) => {
            numeric_order(b, a).map(Ordering::reverse)
        }
        (Value::Uint(x), Value::Double(y)) => uint_double(*x, *y),
        _ => None,
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
        (op, Value::Uint(x), Value::Uint(y)) => {
            let uoverflow = || EvalError::UnsignedOverflow {
                operation: op.cel_name(),
            };
            Value::Uint(match op {
                ArithOp::Add => x.checked_add(y).ok_or_else(uoverflow)?,
                ArithOp::Sub => x.checked_sub(y).ok_or_else(uoverflow)?,
                ArithOp::Mul => x.checked_mul(y).ok_or_else(uoverflow)?,
                ArithOp::Div => x.checked_div(y).ok_or(EvalError::DivisionByZero)?,
                ArithOp::Mod => x.checked_rem(y).ok_or(EvalError::ModulusByZero)?,
            })
        }
        (ArithOp::Add, Value::Duration(x), Value::Duration(y)) => Value::Duration(
            x.checked_add(y)
                .ok_or(EvalError::TimeOverflow { kind: "duration" })?,
        ),
        (ArithOp::Sub, Value::Duration(x), Value::Duration(y)) => Value::Duration(
            x.checked_sub(y)
                .ok_or(EvalError::TimeOverflow { kind: "duration" })?,
        ),
        (ArithOp::Add, Value::Timestamp(t), Value::Duration(d))
        | (ArithOp::Add, Value::Duration(d), Value::Timestamp(t)) => {
            timestamp_in_range(t + i128::from(d))?
        }
        (ArithOp::Sub, Value::Timestamp(t), Value::Duration(d)) => {
            timestamp_in_range(t - i128::from(d))?
        }
        (ArithOp::Sub, Value::Timestamp(a), Value::Timestamp(b)) => Value::Duration(
            i64::try_from(a - b).map_err(|_| EvalError::TimeOverflow { kind: "duration" })?,
        ),
        (ArithOp::Add, Value::Double(x), Value::Double(y)) => Value::Double(x + y),
        (ArithOp::Sub, Value::Double(x), Value::Double(y)) => Value::Double(x - y),
        (ArithOp::Mul, Value::Double(x), Value::Double(y)) => Value::Double(x * y),
        (ArithOp::Div, Value::Double(x), Value::Double(y)) => Value::Double(x / y),
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

fn timestamp_in_range<'a>(nanos: i128) -> Result<Value<'a>, EvalError> {
    if time::in_range(nanos) {
        Ok(Value::Timestamp(nanos))
    } else {
        Err(EvalError::TimeOverflow { kind: "timestamp" })
    }
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
        (Value::Map(m @ MapRef::Literal(_)), key) => Ok(literal_get(m, key, cx)?.is_some()),
        (Value::Map(m), Value::Str(key)) => Ok(map_contains(m, key, cx)),
        // Maps here have string keys only.
        (Value::Map(_), _) => Ok(false),
        _ => Err(overload("@in", &[item, container])),
    }
}

/// The slot of a comprehension's variable, and of its second variable if it has two.
type Slots = (usize, Option<usize>);

/// The items a comprehension iterates: a list's items or a map's keys; with `pairs`,
/// `(index, item)` of a list or `(key, value)` of a map.
fn range_items<'a>(
    range: &'a Expr,
    pairs: bool,
    cx: &mut Ctx<'a>,
) -> Result<Vec<(Value<'a>, Option<Value<'a>>)>, EvalError> {
    let index = |i: usize| Value::Int(len_i64(i));
    Ok(match eval(range, cx)? {
        Value::List(Shared::Borrowed(items)) => {
            cx.charge(items.len())?;
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    if pairs {
                        (index(i), Some(v.view()))
                    } else {
                        (v.view(), None)
                    }
                })
                .collect()
        }
        Value::List(Shared::Owned(items)) => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                if pairs {
                    (index(i), Some(v))
                } else {
                    (v, None)
                }
            })
            .collect(),
        Value::Map(m) => map_entries(&m, cx)?
            .into_iter()
            .map(|(k, v)| if pairs { (k, Some(v)) } else { (k, None) })
            .collect(),
        other => {
            return Err(EvalError::NotIterable {
                found: other.type_name(),
            });
        }
    })
}

/// Sets a comprehension's variables for one item.
fn set_vars<'a>(cx: &mut Ctx<'a>, slots: Slots, item: (Value<'a>, Option<Value<'a>>)) {
    set_slot(cx, slots.0, item.0);
    if let (Some(slot), Some(value)) = (slots.1, item.1) {
        set_slot(cx, slot, value);
    }
}

/// `range.map(x, [filter,] transform)` / `range.filter(x, filter)`.
fn comprehend<'a>(
    slots: Slots,
    range: &'a Expr,
    filter: Option<&'a Expr>,
    transform: Option<&'a Expr>,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let name = match (slots.1, transform) {
        (Some(_), _) => "transformList",
        (None, Some(_)) => "map",
        (None, None) => "filter",
    };
    let items = range_items(range, slots.1.is_some(), cx)?;
    let mut out = Vec::new();
    for pair in items {
        let item = pair.0.clone();
        set_vars(cx, slots, pair);
        if !kept(filter, name, cx)? {
            continue;
        }
        let value = match transform {
            Some(transform) => eval(transform, cx)?,
            None => item,
        };
        cx.charge(ITEM_COST)?;
        out.push(value);
    }
    Ok(list(out))
}

/// Whether a comprehension's item passes its filter (every item when there is none); a
/// filter that is not a bool is the error "no such overload" of the macro `name`.
fn kept<'a>(
    filter: Option<&'a Expr>,
    name: &'static str,
    cx: &mut Ctx<'a>,
) -> Result<bool, EvalError> {
    match filter.map(|f| eval(f, cx)).transpose()? {
        None | Some(Value::Bool(true)) => Ok(true),
        Some(Value::Bool(false)) => Ok(false),
        Some(other) => Err(overload(name, &[&other])),
    }
}

/// `range.transformMap(k, v, [filter,] value)` / `range.transformMapEntry(k, v,
/// [filter,] map)`.
fn transform_map<'a>(
    slots: Slots,
    range: &'a Expr,
    filter: Option<&'a Expr>,
    transform: &'a Expr,
    entries: bool,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let name = if entries {
        "transformMapEntry"
    } else {
        "transformMap"
    };
    let items = range_items(range, true, cx)?;
    let mut out = Vec::new();
    for pair in items {
        let key = pair.0.clone();
        set_vars(cx, slots, pair);
        if !kept(filter, name, cx)? {
            continue;
        }
        let value = eval(transform, cx)?;
        if !entries {
            insert_entry(&mut out, key, value, cx)?;
            continue;
        }
        let Value::Map(m) = value else {
            return Err(overload(name, &[&value]));
        };
        for (k, v) in map_entries(&m, cx)? {
            insert_entry(&mut out, k, v, cx)?;
        }
    }
    Ok(Value::Map(MapRef::Literal(Shared::Owned(out))))
}

fn fold<'a>(
    kind: FoldKind,
    slots: Slots,
    range: &'a Expr,
    pred: &'a Expr,
    cx: &mut Ctx<'a>,
) -> Result<Value<'a>, EvalError> {
    let items = range_items(range, slots.1.is_some(), cx)?;
    let (name, decisive) = match kind {
        FoldKind::All => ("all", false),
        FoldKind::Exists => ("exists", true),
        FoldKind::ExistsOne => ("exists_one", true),
    };
    let mut first_error = None;
    let mut count = 0usize;
    for item in items {
        set_vars(cx, slots, item);
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

/// A quantity's value as the nearest double (upstream `AsApproximateFloat64`).
#[allow(clippy::cast_precision_loss)] // approximate by definition
fn quantity_as_float(q: Quantity) -> f64 {
    q.as_nano() as f64 / 1e9
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
        (B::Size, [V::Map(m)]) => V::Int(len_i64(map_len(m, cx)?)),
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
        (B::AsApproximateFloat, [V::Quantity(q)]) => V::Double(quantity_as_float(*q)),
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
        (B::OfNonZeroValue, [value]) => {
            if is_zero_value(value, cx)? {
                V::Optional(None)
            } else {
                V::Optional(args.pop().map(Box::new))
            }
        }
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
        (B::IndexOf, [V::List(items), needle]) => {
            V::Int(lists::index_of(items, needle, false, cx)?)
        }
        (B::LastIndexOf, [V::List(items), needle]) => {
            V::Int(lists::index_of(items, needle, true, cx)?)
        }
        (B::Matches, [V::Str(s), pattern]) => {
            let found = with_regex(f.name(), pattern, cx, |re, cx| {
                cx.charge(s.len())?;
                Ok(regex::Searcher::new(re).is_match(s))
            })?;
            V::Bool(found)
        }
        (B::Find, [V::Str(s), pattern]) => {
            let found = with_regex(f.name(), pattern, cx, |re, cx| {
                cx.charge(s.len())?;
                Ok(regex::Searcher::new(re)
                    .find_all(s, Some(1))
                    .first()
                    .map(|r| String::from(&s[r.clone()]))
                    .unwrap_or_default())
            })?;
            V::Str(Shared::Owned(found))
        }
        (B::FindAll, [V::Str(s), pattern, rest @ ..]) => {
            let limit = match rest {
                [] => None,
                [V::Int(n)] => usize::try_from(*n).ok(),
                _ => {
                    let refs: Vec<&Value<'_>> = args.iter().collect();
                    return Err(overload(f.name(), &refs));
                }
            };
            let found = with_regex(f.name(), pattern, cx, |re, cx| {
                cx.charge(s.len())?;
                let ranges = regex::Searcher::new(re).find_all(s, limit);
                cx.charge(ranges.len() * ITEM_COST)?;
                Ok(ranges
                    .into_iter()
                    .map(|r| V::Str(Shared::Owned(String::from(&s[r]))))
                    .collect())
            })?;
            list(found)
        }
        (B::Format, [V::Str(template), V::List(items)]) => {
            let out = format::format(template, items, cx)?;
            cx.charge_text(out.len())?;
            V::Str(Shared::Owned(out))
        }
        (B::Quote, [V::Str(s)]) => V::Str(Shared::Owned(format::quote(s))),
        (B::IsSorted, [V::List(items)]) => V::Bool(lists::is_sorted(items, cx)?),
        (B::Sum, [V::List(items)]) => lists::sum(items, cx)?,
        (B::Min, [V::List(items)]) => lists::extreme(items, "min", Ordering::Less, cx)?,
        (B::Max, [V::List(items)]) => lists::extreme(items, "max", Ordering::Greater, cx)?,
        (B::SetsContains, [V::List(a), V::List(b)]) => V::Bool(lists::contains_all(a, b, cx)?),
        (B::SetsEquivalent, [V::List(a), V::List(b)]) => {
            V::Bool(lists::contains_all(a, b, cx)? && lists::contains_all(b, a, cx)?)
        }
        (B::SetsIntersects, [V::List(a), V::List(b)]) => V::Bool(lists::intersects(a, b, cx)?),
        (
            B::ToInt
            | B::ToUint
            | B::ToDouble
            | B::ToString
            | B::ToBool
            | B::ToDuration
            | B::ToTimestamp,
            [value],
        ) => match conv::convert(f, value) {
            Some(converted) => converted?,
            None => return Err(overload(f.name(), &[value])),
        },
        (B::TypeOf, [value]) => V::Type(value.type_name()),
        (B::Ip, [V::Str(s)]) => V::Ip(parse_ip(s)?),
        (B::IsIp, [V::Str(s)]) => V::Bool(net::parse_ip(s).is_ok()),
        (B::IpIsCanonical, [V::Str(s)]) => {
            V::Bool(net::is_canonical(s).map_err(|reason| EvalError::InvalidIp {
                value: String::from(&**s),
                reason,
            })?)
        }
        (B::Family, [V::Ip(ip)]) => V::Int(net::family(*ip)),
        (B::IsUnspecified, [V::Ip(ip)]) => V::Bool(net::is_unspecified(*ip)),
        (B::IsLoopback, [V::Ip(ip)]) => V::Bool(net::is_loopback(*ip)),
        (B::IsLinkLocalMulticast, [V::Ip(ip)]) => V::Bool(net::is_link_local_multicast(*ip)),
        (B::IsLinkLocalUnicast, [V::Ip(ip)]) => V::Bool(net::is_link_local_unicast(*ip)),
        (B::IsGlobalUnicast, [V::Ip(ip)]) => V::Bool(net::is_global_unicast(*ip)),
        (B::Cidr, [V::Str(s)]) => V::Cidr(parse_cidr(s)?),
        (B::IsCidr, [V::Str(s)]) => V::Bool(net::parse_cidr(s).is_ok()),
        (B::ContainsIp, [V::Cidr(c), V::Ip(ip)]) => V::Bool(c.contains_ip(*ip)),
        (B::ContainsIp, [V::Cidr(c), V::Str(s)]) => V::Bool(c.contains_ip(parse_ip(s)?)),
        (B::ContainsCidr, [V::Cidr(c), V::Cidr(other)]) => V::Bool(c.contains_cidr(*other)),
        (B::ContainsCidr, [V::Cidr(c), V::Str(s)]) => V::Bool(c.contains_cidr(parse_cidr(s)?)),
        (B::CidrIp, [V::Cidr(c)]) => V::Ip(c.addr),
        (B::Masked, [V::Cidr(c)]) => V::Cidr(c.masked()),
        (B::PrefixLength, [V::Cidr(c)]) => V::Int(i64::from(c.bits)),
        (B::Url, [V::Str(s)]) => V::Url(Box::new(url::parse(s).map_err(|reason| {
            EvalError::InvalidUrl {
                value: String::from(&**s),
                reason,
            }
        })?)),
        (B::IsUrl, [V::Str(s)]) => V::Bool(url::is_url(s)),
        (
            B::GetFullYear
            | B::GetMonth
            | B::GetDate
            | B::GetDayOfMonth
            | B::GetDayOfWeek
            | B::GetDayOfYear
            | B::GetHours
            | B::GetMinutes
            | B::GetSeconds
            | B::GetMilliseconds,
            [V::Timestamp(t), rest @ ..],
        ) if rest.len() <= 1 => {
            let offset = match rest {
                [V::Str(tz)] => {
                    time::zone_offset(tz).map_err(|reason| EvalError::InvalidTime { reason })?
                }
                [] => 0,
                _ => {
                    let refs: Vec<&Value<'_>> = args.iter().collect();
                    return Err(overload(f.name(), &refs));
                }
            };
            V::Int(time::timestamp_field(f.name(), *t, offset))
        }
        (B::GetHours | B::GetMinutes | B::GetSeconds | B::GetMilliseconds, [V::Duration(d)]) => {
            V::Int(time::duration_field(f.name(), *d))
        }
        (B::FormatNamed, [V::Str(s)]) => {
            V::Optional(formats::named(s).map(|f| Box::new(V::Format(f))))
        }
        (B::Validate, [V::Format(format), V::Str(s)]) => {
            let errors = formats::validate(format, s);
            cx.charge(errors.len() * ITEM_COST)?;
            if errors.is_empty() {
                V::Optional(None)
            } else {
                let items = errors
                    .into_iter()
                    .map(|e| V::Str(Shared::Owned(e)))
                    .collect();
                V::Optional(Some(Box::new(list(items))))
            }
        }
        (B::GetScheme, [V::Url(u)]) => V::Str(Shared::Owned(String::from(u.scheme()))),
        (B::GetHost, [V::Url(u)]) => V::Str(Shared::Owned(String::from(u.host()))),
        (B::GetHostname, [V::Url(u)]) => V::Str(Shared::Owned(String::from(u.hostname()))),
        (B::GetPort, [V::Url(u)]) => V::Str(Shared::Owned(String::from(u.port()))),
        (B::GetEscapedPath, [V::Url(u)]) => V::Str(Shared::Owned(u.escaped_path())),
        (B::GetQuery, [V::Url(u)]) => {
            let query = u.query();
            cx.charge(query.iter().map(|(_, v)| v.len() + 1).sum::<usize>() * ITEM_COST)?;
            let entries = query
                .into_iter()
                .map(|(k, values)| {
                    let values = values
                        .into_iter()
                        .map(|v| V::Str(Shared::Owned(v)))
                        .collect();
                    (V::Str(Shared::Owned(k)), list(values))
                })
                .collect();
            V::Map(MapRef::Literal(Shared::Owned(entries)))
        }
        _ => {
            let refs: Vec<&Value<'_>> = args.iter().collect();
            return Err(overload(f.name(), &refs));
        }
    };
    Ok(result)
}

/// Whether `v` is its type's zero value, for `optional.ofNonZeroValue`.
fn is_zero_value(v: &Value<'_>, cx: &Ctx<'_>) -> Result<bool, EvalError> {
    Ok(match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Double(d) => *d == 0.0,
        Value::Str(s) => s.is_empty(),
        Value::List(items) => items.is_empty(),
        Value::Map(m) => map_len(m, cx)? == 0,
        Value::Optional(o) => o.is_none(),
        _ => false,
    })
}

fn parse_ip(s: &str) -> Result<core::net::IpAddr, EvalError> {
    net::parse_ip(s).map_err(|reason| EvalError::InvalidIp {
        value: String::from(s),
        reason,
    })
}

fn parse_cidr(s: &str) -> Result<net::Cidr, EvalError> {
    net::parse_cidr(s).map_err(|reason| EvalError::InvalidCidr {
        value: String::from(s),
        reason,
    })
}

/// Runs `search` with the compiled pattern: the constant compiled at compile time, or
/// a computed pattern compiled now (its length charged; an invalid one is an error).
fn with_regex<'a, T>(
    function: &'static str,
    pattern: &Value<'a>,
    cx: &Ctx<'a>,
    search: impl FnOnce(&Regex, &Ctx<'a>) -> Result<T, EvalError>,
) -> Result<T, EvalError> {
    match pattern {
        Value::Regex(re) => search(re, cx),
        Value::Str(p) => {
            // Compiling is linear in the pattern, within the compiled size limit.
            cx.charge(p.len())?;
            let re = regex::compile(p).map_err(|reason| EvalError::InvalidRegex {
                function,
                pattern: String::from(&**p),
                reason,
            })?;
            search(&re, cx)
        }
        other => Err(overload(function, &[other])),
    }
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

mod format;

/// The Kubernetes lists library and cel-go's sets extension.
mod lists {
    use core::cmp::Ordering;

    use super::{Ctx, EvalError, Value, arith_values, equal, len_i64, order};
    use crate::cel::ir::{ArithOp, CmpOp};

    /// `list.indexOf(x)` / `list.lastIndexOf(x)`: the first / last index of an item
    /// equal to `x`, or -1.
    pub(super) fn index_of(
        items: &[Value<'_>],
        needle: &Value<'_>,
        last: bool,
        cx: &Ctx<'_>,
    ) -> Result<i64, EvalError> {
        cx.charge(items.len())?;
        let mut found = None;
        for (i, item) in items.iter().enumerate() {
            if equal(item, needle, cx)? {
                found = Some(i);
                if !last {
                    break;
                }
            }
        }
        Ok(found.map_or(-1, len_i64))
    }

    /// `list.isSorted()`: every item no greater than the next.
    pub(super) fn is_sorted(items: &[Value<'_>], cx: &Ctx<'_>) -> Result<bool, EvalError> {
        cx.charge(items.len())?;
        for pair in items.windows(2) {
            if order(&pair[0], &pair[1], CmpOp::Gt)? == Some(Ordering::Greater) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// `list.sum()`: 0 for an empty list, else the items added in order.
    pub(super) fn sum<'a>(items: &[Value<'a>], cx: &Ctx<'a>) -> Result<Value<'a>, EvalError> {
        cx.charge(items.len())?;
        let mut iter = items.iter();
        let Some(first) = iter.next() else {
            return Ok(Value::Int(0));
        };
        let mut acc = first.clone();
        for item in iter {
            acc = arith_values(ArithOp::Add, acc, item.clone(), cx)?;
        }
        if !matches!(
            acc,
            Value::Int(_) | Value::Uint(_) | Value::Double(_) | Value::Duration(_)
        ) {
            return Err(super::overload("sum", &[&acc]));
        }
        Ok(acc)
    }

    /// `list.min()` (`prefer == Less`) / `list.max()`: the first extreme item; an
    /// error for an empty list.
    pub(super) fn extreme<'a>(
        items: &[Value<'a>],
        function: &'static str,
        prefer: Ordering,
        cx: &Ctx<'a>,
    ) -> Result<Value<'a>, EvalError> {
        cx.charge(items.len())?;
        let mut best: Option<&Value<'a>> = None;
        for item in items {
            best = Some(match best {
                None => {
                    // A single item must still be comparable.
                    order(item, item, CmpOp::Lt)?;
                    item
                }
                Some(b) if order(item, b, CmpOp::Lt)? == Some(prefer) => item,
                Some(b) => b,
            });
        }
        best.cloned().ok_or(EvalError::EmptyList { function })
    }

    /// `sets.contains(a, b)`: every item of `b` is in `a`.
    pub(super) fn contains_all(
        a: &[Value<'_>],
        b: &[Value<'_>],
        cx: &Ctx<'_>,
    ) -> Result<bool, EvalError> {
        cx.charge(a.len().saturating_mul(b.len()))?;
        for y in b {
            let mut found = false;
            for x in a {
                if equal(x, y, cx)? {
                    found = true;
                    break;
                }
            }
            if !found {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// `sets.intersects(a, b)`: some item is in both.
    pub(super) fn intersects(
        a: &[Value<'_>],
        b: &[Value<'_>],
        cx: &Ctx<'_>,
    ) -> Result<bool, EvalError> {
        cx.charge(a.len().saturating_mul(b.len()))?;
        for x in a {
            for y in b {
                if equal(x, y, cx)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

/// The standard type conversions `int()`, `uint()`, `double()`, `string()`, `bool()`.
mod conv {
    use super::{EvalError, Shared, Value};
    use crate::alloc_prelude::*;
    use crate::cel::ir::Builtin;

    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;

    /// `f(value)`, or `None` when there is no such overload.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_precision_loss,
        clippy::cast_sign_loss
    )] // range-checked first; int → double rounds as cel-go's float64(i)
    pub(super) fn convert<'a>(
        f: Builtin,
        value: &Value<'a>,
    ) -> Option<Result<Value<'a>, EvalError>> {
        use Value as V;
        let range = |to| Err(EvalError::ConversionRange { to });
        let invalid = |s: &str, to| {
            Err(EvalError::InvalidConversion {
                value: String::from(s),
                to,
            })
        };
        Some(match (f, value) {
            (Builtin::ToInt, V::Int(i)) => Ok(V::Int(*i)),
            (Builtin::ToInt, V::Uint(u)) => i64::try_from(*u).map(V::Int).or_else(|_| range("int")),
            (Builtin::ToInt, V::Double(d)) => {
                if d.is_finite() && *d >= -TWO_63 && *d < TWO_63 {
                    Ok(V::Int(*d as i64))
                } else {
                    range("int")
                }
            }
            (Builtin::ToInt, V::Str(s)) => s.parse().map(V::Int).or_else(|_| invalid(s, "int")),
            (Builtin::ToUint, V::Uint(u)) => Ok(V::Uint(*u)),
            (Builtin::ToUint, V::Int(i)) => {
                u64::try_from(*i).map(V::Uint).or_else(|_| range("uint"))
            }
            (Builtin::ToUint, V::Double(d)) => {
                if d.is_finite() && *d >= 0.0 && *d < TWO_64 {
                    Ok(V::Uint(*d as u64))
                } else {
                    range("uint")
                }
            }
            (Builtin::ToUint, V::Str(s)) => s.parse().map(V::Uint).or_else(|_| invalid(s, "uint")),
            (Builtin::ToDouble, V::Double(d)) => Ok(V::Double(*d)),
            (Builtin::ToDouble, V::Int(i)) => Ok(V::Double(*i as f64)),
            (Builtin::ToDouble, V::Uint(u)) => Ok(V::Double(*u as f64)),
            (Builtin::ToDouble, V::Str(s)) => {
                s.parse().map(V::Double).or_else(|_| invalid(s, "double"))
            }
            (Builtin::ToString, V::Str(s)) => Ok(V::Str(s.clone())),
            (Builtin::ToString, other) => {
                super::format::scalar_string(other).map(|s| V::Str(Shared::Owned(s)))
            }
            (Builtin::ToInt, V::Duration(d)) => Ok(V::Int(*d)),
            (Builtin::ToInt, V::Timestamp(t)) => Ok(V::Int(
                i64::try_from(t.div_euclid(1_000_000_000)).unwrap_or(i64::MAX),
            )),
            (Builtin::ToDuration, V::Duration(d)) => Ok(V::Duration(*d)),
            (Builtin::ToDuration, V::Str(s)) => crate::cel::time::parse_duration(s)
                .map(V::Duration)
                .map_err(|reason| EvalError::InvalidTime { reason }),
            (Builtin::ToTimestamp, V::Timestamp(t)) => Ok(V::Timestamp(*t)),
            (Builtin::ToTimestamp, V::Str(s)) => crate::cel::time::parse_timestamp(s)
                .map(V::Timestamp)
                .map_err(|reason| EvalError::InvalidTime { reason }),
            (Builtin::ToTimestamp, V::Int(secs)) => {
                let nanos = i128::from(*secs) * 1_000_000_000;
                if crate::cel::time::in_range(nanos) {
                    Ok(V::Timestamp(nanos))
                } else {
                    Err(EvalError::InvalidTime {
                        reason: String::from("timestamp out of range"),
                    })
                }
            }
            (Builtin::ToBool, V::Bool(b)) => Ok(V::Bool(*b)),
            (Builtin::ToBool, V::Str(s)) => match &**s {
                "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(V::Bool(true)),
                "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(V::Bool(false)),
                _ => invalid(s, "bool"),
            },
            _ => return None,
        })
    }
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
