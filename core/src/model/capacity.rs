//! Consumable capacity (spec dra.md 1.7 and 3.9): how much of a device's capacity one
//! allocation consumes, and whether it still fits next to what is already consumed. The
//! rules and the arithmetic are documented on [`consumed_amount`].

use core::fmt;

use crate::alloc_prelude::*;
use crate::model::names::qualify;
use crate::{Device, DeviceCapacity, Quantity};

/// Why a device cannot serve a capacity request. Closed: these are all the reasons.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all_fields = "camelCase"))]
pub enum CapacityRejection {
    /// The request names a capacity the device does not have.
    Missing {
        /// The requested capacity name, as the request spells it.
        capacity: String,
    },
    /// A negative amount was requested (claim validation refuses these).
    Negative {
        /// The capacity.
        capacity: String,
        /// The amount requested.
        requested: Quantity,
    },
    /// The request is above the largest of the policy's `validValues`.
    AboveValidValues {
        /// The capacity.
        capacity: String,
        /// The amount requested.
        requested: Quantity,
        /// The largest valid value.
        largest: Quantity,
    },
    /// The request, rounded up to the policy's range, is above `validRange.max`.
    AboveRangeMax {
        /// The capacity.
        capacity: String,
        /// The amount requested.
        requested: Quantity,
        /// The amount after rounding up to `min + n·step`.
        rounded: Quantity,
        /// `validRange.max`.
        max: Quantity,
    },
    /// The amount to consume is more than the capacity's total value.
    ExceedsValue {
        /// The capacity.
        capacity: String,
        /// The amount one allocation would consume (saturated at the largest quantity
        /// when rounding overflows).
        amount: Quantity,
        /// The capacity's value.
        value: Quantity,
    },
}

impl CapacityRejection {
    /// The capacity the rejection is about. [`consumed_amount`] does not know the
    /// capacity's name and leaves it empty; [`consumed_capacity`] fills it in with the
    /// name the device declares (or, for [`CapacityRejection::Missing`], the requested
    /// name).
    pub fn capacity(&self) -> &str {
        match self {
            CapacityRejection::Missing { capacity }
            | CapacityRejection::Negative { capacity, .. }
            | CapacityRejection::AboveValidValues { capacity, .. }
            | CapacityRejection::AboveRangeMax { capacity, .. }
            | CapacityRejection::ExceedsValue { capacity, .. } => capacity,
        }
    }

    /// The same rejection about capacity `name`.
    #[must_use]
    pub fn for_capacity(mut self, name: &str) -> CapacityRejection {
        let (CapacityRejection::Missing { capacity }
        | CapacityRejection::Negative { capacity, .. }
        | CapacityRejection::AboveValidValues { capacity, .. }
        | CapacityRejection::AboveRangeMax { capacity, .. }
        | CapacityRejection::ExceedsValue { capacity, .. }) = &mut self;
        name.clone_into(capacity);
        self
    }
}

impl fmt::Display for CapacityRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapacityRejection::Missing { capacity } => {
                write!(f, "the device has no capacity \"{capacity}\"")
            }
            CapacityRejection::Negative {
                capacity,
                requested,
            } => write!(f, "capacity \"{capacity}\": negative request {requested}"),
            CapacityRejection::AboveValidValues {
                capacity,
                requested,
                largest,
            } => write!(
                f,
                "capacity \"{capacity}\": request {requested} is above the largest valid value {largest}"
            ),
            CapacityRejection::AboveRangeMax {
                capacity,
                requested,
                rounded,
                max,
            } => write!(
                f,
                "capacity \"{capacity}\": request {requested} (rounded up to {rounded}) is above the maximum {max}"
            ),
            CapacityRejection::ExceedsValue {
                capacity,
                amount,
                value,
            } => write!(
                f,
                "capacity \"{capacity}\": {amount} is more than the device's {value}"
            ),
        }
    }
}

impl core::error::Error for CapacityRejection {}

/// How much of one capacity an allocation consumes, given the amount requested (`None`
/// when the request does not mention the capacity). Rejections carry an empty capacity
/// name (see [`CapacityRejection::capacity`]).
///
/// A request names some capacities with amounts (`capacity.requests`). For each capacity
/// of the device the consumed amount is:
///
/// * requested, no `requestPolicy`: the request as it is;
/// * requested, `validValues`: the smallest valid value ≥ the request; above the largest
///   valid value the device is ineligible;
/// * requested, `validRange {min, max, step}`: below `min` → `min`; with a `step`, rounded
///   up to the next `min + n·step`; above `max` (after rounding) the device is ineligible;
/// * not requested: the policy's `default`, else the capacity's full value.
///
/// Whatever the rule, an amount above the capacity's value makes the device ineligible.
/// On a device that allows multiple allocations the amounts are recorded in the result
/// (`consumedCapacity`, every capacity listed) and add up across allocations; on any
/// other device the requests are only a filter.
///
/// # Arithmetic
///
/// Everything is exact integer arithmetic on [`Quantity::as_nano`] (10⁻⁹ units). Upstream
/// rounds with `Quantity.Value()` (whole units, rounded up) unless the alpha
/// `DRAFractionalCapacityRange` gate is on and a range bound is fractional, when it uses
/// milli-units. The results agree whenever the range's `min` and `step` are whole numbers
/// (whatever the request: rounding the request up first does not change
/// `⌈(request − min) / step⌉` for a whole step), and, with the gate, whenever they are
/// multiples of `1m`. They differ only where upstream's rounding of the inputs would change
/// the answer: gangpack handles fractional ranges exactly, at nano precision, gate or no
/// gate, and rounds a request finer than `1m` up instead of refusing it.
///
/// A policy with both `validValues` and `validRange` (which validation refuses) uses the
/// range, as upstream does; a `step` that is not positive (also refused) is ignored.
///
/// ```
/// use gangpack::{CapacityRequestPolicy, DeviceCapacity, Quantity, consumed_amount};
///
/// let q = |s: &str| Quantity::parse(s).unwrap();
/// let cap = DeviceCapacity {
///     value: q("8"),
///     request_policy: Some(CapacityRequestPolicy {
///         default: Some(q("2")),
///         valid_values: vec![q("2"), q("4"), q("8")],
///         valid_range: None,
///     }),
/// };
/// assert_eq!(consumed_amount(&cap, Some(q("3"))), Ok(q("4")));
/// assert_eq!(consumed_amount(&cap, None), Ok(q("2")));
/// assert!(consumed_amount(&cap, Some(q("9"))).is_err());
/// ```
pub fn consumed_amount(
    capacity: &DeviceCapacity,
    requested: Option<Quantity>,
) -> Result<Quantity, CapacityRejection> {
    let name = String::new;
    let value = capacity.value;
    let policy = capacity.request_policy.as_ref();
    let amount = match requested {
        None => policy.and_then(|p| p.default).unwrap_or(value),
        Some(req) if req.is_negative() => {
            return Err(CapacityRejection::Negative {
                capacity: name(),
                requested: req,
            });
        }
        Some(req) => match policy {
            None => req,
            Some(p) => {
                if let Some(range) = &p.valid_range {
                    let rounded = if req < range.min {
                        range.min
                    } else {
                        match range.step.filter(|s| s.is_positive()) {
                            Some(step) => match round_up(req, range.min, step) {
                                Some(r) => r,
                                None => {
                                    return Err(CapacityRejection::ExceedsValue {
                                        capacity: name(),
                                        amount: Quantity::from_nano(i128::MAX),
                                        value,
                                    });
                                }
                            },
                            None => req,
                        }
                    };
                    if let Some(max) = range.max.filter(|m| rounded > *m) {
                        return Err(CapacityRejection::AboveRangeMax {
                            capacity: name(),
                            requested: req,
                            rounded,
                            max,
                        });
                    }
                    rounded
                } else if let Some(&largest) = p.valid_values.iter().max() {
                    match p.valid_values.iter().filter(|v| **v >= req).min() {
                        Some(&v) => v,
                        None => {
                            return Err(CapacityRejection::AboveValidValues {
                                capacity: name(),
                                requested: req,
                                largest,
                            });
                        }
                    }
                } else {
                    req
                }
            }
        },
    };
    if amount > value {
        return Err(CapacityRejection::ExceedsValue {
            capacity: name(),
            amount,
            value,
        });
    }
    Ok(amount)
}

/// `min + ⌈(req − min) / step⌉ · step` in nano units, printed in the step's format as
/// upstream does; `None` on overflow. Requires `req ≥ min` and `step > 0`.
fn round_up(req: Quantity, min: Quantity, step: Quantity) -> Option<Quantity> {
    let (req, min_n, step_n) = (req.as_nano(), min.as_nano(), step.as_nano());
    let offset = req.checked_sub(min_n)?;
    let n = offset / step_n + i128::from(offset % step_n != 0);
    let nano = min_n.checked_add(n.checked_mul(step_n)?)?;
    Some(Quantity::from_nano(nano).with_format(step.format()))
}

/// The device's capacity that a requested capacity name refers to: the same key, or, when
/// the device declares none, the key that names the same `(domain, id)` once bare names
/// are put in the driver's domain (`memory` and `gpu.example.com/memory` for driver
/// `gpu.example.com`). Among several such keys the first in key order wins.
pub(crate) fn resolve_capacity<'d>(
    device: &'d Device,
    requested: &str,
    driver: &str,
) -> Option<&'d str> {
    if let Some((key, _)) = device.capacity.get_key_value(requested) {
        return Some(key);
    }
    let want = qualify(requested, driver);
    device
        .capacity
        .keys()
        .find(|k| qualify(k, driver) == want)
        .map(String::as_str)
}

/// What one allocation of `device` with capacity `requests` consumes: **every** capacity
/// of the device, keyed as the device declares it (requested ones rounded by their
/// policy, the others at their policy default or full value). This is the
/// `consumedCapacity` of a multi-allocatable device's allocation result; for any other
/// device only the `Ok`/`Err` matters (capacity requests are then a filter).
///
/// Requested names may be qualified or bare: a name without a domain is in the driver's
/// domain, on both sides. A requested name matches the device key spelled the same, else
/// the key naming the same `(domain, id)` (the first in key order). If two requested names resolve to the same capacity, the larger
/// amount is used, since both must be satisfied. A requested name the device does not
/// have is [`CapacityRejection::Missing`]; the first failing capacity (in requested-name
/// order for missing ones, then in the device's key order) is reported.
///
/// Upstream matches requested names against the device's keys exactly, so it refuses
/// `gpu.example.com/memory` on a device of driver `gpu.example.com` that declares
/// `memory`; gangpack follows the documented equivalence with the CEL selector
/// `device.capacity["gpu.example.com"].memory` instead.
///
/// ```
/// use std::collections::BTreeMap;
/// use gangpack::{
///     CapacityRequestPolicy, CapacityRequestPolicyRange, Device, DeviceCapacity, Quantity,
///     consumed_capacity, fits,
/// };
///
/// let q = |s: &str| Quantity::parse(s).unwrap();
/// let mut gpu = Device::new("gpu-0").with_capacity("cores", q("100"));
/// gpu.allow_multiple_allocations = true;
/// gpu.capacity.insert(
///     "memory".into(),
///     DeviceCapacity {
///         value: q("80Gi"),
///         request_policy: Some(CapacityRequestPolicy {
///             default: Some(q("10Gi")),
///             valid_values: vec![],
///             valid_range: Some(CapacityRequestPolicyRange {
///                 min: q("10Gi"),
///                 max: None,
///                 step: Some(q("10Gi")),
///             }),
///         }),
///     },
/// );
///
/// // 15Gi rounds up to 20Gi; unrequested `cores` consumes the whole value.
/// let request = BTreeMap::from([("gpu.example.com/memory".to_string(), q("15Gi"))]);
/// let share = consumed_capacity(&gpu, &request, "gpu.example.com")?;
/// assert_eq!(share["memory"], q("20Gi"));
/// assert_eq!(share["cores"], q("100"));
/// assert!(fits(&gpu, &BTreeMap::new(), &share));
/// assert!(!fits(&gpu, &share, &share)); // the cores are gone
/// # Ok::<(), gangpack::CapacityRejection>(())
/// ```
pub fn consumed_capacity(
    device: &Device,
    requests: &BTreeMap<String, Quantity>,
    driver: &str,
) -> Result<BTreeMap<String, Quantity>, CapacityRejection> {
    let mut wanted: BTreeMap<&str, Quantity> = BTreeMap::new();
    for (name, &amount) in requests {
        let Some(key) = resolve_capacity(device, name, driver) else {
            return Err(CapacityRejection::Missing {
                capacity: name.clone(),
            });
        };
        wanted
            .entry(key)
            .and_modify(|q| *q = (*q).max(amount))
            .or_insert(amount);
    }
    let mut out = BTreeMap::new();
    for (key, cap) in &device.capacity {
        let amount = consumed_amount(cap, wanted.get(key.as_str()).copied())
            .map_err(|e| e.for_capacity(key))?;
        out.insert(key.clone(), amount);
    }
    Ok(out)
}

/// Whether `amount` still fits on `device` next to `already_consumed` (both keyed as the
/// device declares its capacities): for every capacity in `amount`, consumed + amount ≤
/// the capacity's value. A capacity in `amount` that the device lacks never fits;
/// capacities only in `already_consumed` are not looked at.
pub fn fits(
    device: &Device,
    already_consumed: &BTreeMap<String, Quantity>,
    amount: &BTreeMap<String, Quantity>,
) -> bool {
    amount.iter().all(|(name, &add)| {
        let Some(cap) = device.capacity.get(name) else {
            return false;
        };
        let used = already_consumed
            .get(name)
            .copied()
            .unwrap_or(Quantity::ZERO);
        used.checked_add(add)
            .is_some_and(|total| total <= cap.value)
    })
}
