//! The node measures of the Stranding and FGD scoring policies: how much of a node's
//! free GPU capacity the typical workload shapes ([`ShapeMix`](crate::ShapeMix)) could
//! not use, as pure functions of one node's free CPU, memory and per-device free share.
//!
//! Units are integers where the engine's are: CPU in milli-cores, memory in MiB, a
//! device's free share in milli-devices (`0..=1000`). Only the frequencies, the
//! measures and the weighted sums are `f64`; the crate is `no_std` without a maths
//! library, so FGD's logistic function goes through a table of thresholds instead of
//! `exp`. Summation follows the shapes' order, so a mix listed in the simulator's order
//! gives its values exactly.
//!
//! # Stranding (after `sim/src/stranding.rs`)
//!
//! Per shape `s` of frequency `f`, on a node with `free` milli-devices free:
//!
//! - `copies` is how many pods of `s` the node hosts at once: over the devices `s` may
//!   use, `Σ ⌊free_d / share⌋ / count`, capped by the node's free CPU and memory;
//! - the **filling** term is `free − copies · count · share`, what is left after those
//!   copies;
//! - FGD's term is, when a copy fits, the free share `s` cannot use (devices it may not
//!   use, and devices with less than `share` free), else all of `free`;
//! - the measure is `Σ f · (fill · filling + fgd)`.
//!
//! A placement is scored by the change of the measure, plus a packing tie-break on the
//! free share left, the change of the node's CPU and memory **deficit** (free share its
//! free CPU and memory cannot feed at the mix's ratio), and, for a pod without
//! selectors, the **scarcity** of the devices it takes (how much of them the shapes with
//! selectors need).
//!
//! # FGD (after `sim/src/fgd.rs`; Weng et al., USENIX ATC'23)
//!
//! Per shape: when enough devices it may use have `share` free and the node has its
//! CPU, the free share it cannot use; otherwise all of `free`. Memory is not part of
//! FGD's node state. A placement scores `⌊100 · σ((before − after) / 1000)⌋`.
//!
//! # Where the engine generalises the simulator
//!
//! The simulator decides per node whether a shape may run (its GPU model). Here each
//! shape has a set of devices it may use (its class and selectors), so nodes with mixed
//! devices are measured device by device; on a node whose devices all agree the result
//! is the simulator's. A request for `count` shares takes the first `count` devices with
//! room, in allocation order (the simulator's shares are always single-device).

use smallvec::SmallVec;

use crate::Quantity;
use crate::alloc_prelude::*;

use super::bits::DeviceSet;
use super::ids::DeviceId;

/// Milli-devices in a wholly free device.
pub(crate) const WHOLE: u32 = 1000;

/// One device of a node as the measures see it: its id and its free share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeviceFree {
    pub(crate) id: DeviceId,
    /// Free milli-devices, `0..=WHOLE`, of the device's own capacity value.
    pub(crate) milli: u32,
    /// The device's share unit: which of a shape's `shares` it takes (see
    /// [`ScoredShape::share_on`]).
    pub(crate) unit: u16,
}

/// What the measures read of one node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeFree<'a> {
    /// Free CPU, milli-cores.
    pub(crate) cpu_milli: u64,
    /// Free memory, MiB.
    pub(crate) memory_mib: u64,
    /// The node's devices of the mix's set, in allocation order.
    pub(crate) devices: &'a [DeviceFree],
}

impl NodeFree<'_> {
    /// The node's free milli-devices.
    pub(crate) fn free(&self) -> u64 {
        self.devices.iter().map(|d| u64::from(d.milli)).sum()
    }
}

/// One typical shape, resolved to the engine's units and devices.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ScoredShape {
    /// The shape's weight (pods counted, or any scale).
    pub(crate) weight: u32,
    /// `weight` over the mix's total weight (see [`set_frequencies`]).
    pub(crate) frequency: f64,
    /// CPU per pod, milli-cores.
    pub(crate) cpu_milli: u64,
    /// Memory per pod, MiB.
    pub(crate) memory_mib: u64,
    /// Devices per pod.
    pub(crate) count: u32,
    /// Milli-devices taken of each device (`WHOLE` for a whole device), against the
    /// mix's reference capacity value: only the mix-wide totals (the CPU and memory
    /// ratio, pressure) read it.
    pub(crate) share: u32,
    /// Milli-devices taken of a device of each share unit, against that unit's own
    /// capacity value (index 0: devices that declare no share capacity, `WHOLE`).
    /// A unit past the end takes `share`.
    pub(crate) shares: SmallVec<[u32; 2]>,
    /// The devices the shape may use (its class's, narrowed by its selectors).
    pub(crate) allowed: DeviceSet,
    /// Whether selectors narrow `allowed` (the shapes that cause scarcity).
    pub(crate) restricted: bool,
}

impl ScoredShape {
    /// Milli-devices one pod takes: `count · share`.
    pub(crate) fn demand(&self) -> u64 {
        u64::from(self.count) * u64::from(self.share)
    }

    /// The milli-devices this shape takes of device `d`, in `d`'s own unit, with 0
    /// read as 1 (a resolved shape never has 0).
    pub(crate) fn share_on(&self, d: &DeviceFree) -> u32 {
        self.shares
            .get(usize::from(d.unit))
            .copied()
            .unwrap_or(self.share)
            .max(1)
    }

    /// Pods of this shape the node's devices alone could host at once.
    fn device_copies(&self, devices: &[DeviceFree]) -> u64 {
        let slots: u64 = devices
            .iter()
            .filter(|d| self.allowed.contains(d.id))
            .map(|d| u64::from(d.milli / self.share_on(d)))
            .sum();
        slots / u64::from(self.count.max(1))
    }

    /// The milli-devices `copies` pods take, their devices filled in allocation
    /// order (`copies · count · share` when every device has one unit).
    fn taken_by(&self, copies: u64, devices: &[DeviceFree]) -> u64 {
        let mut left = copies.saturating_mul(u64::from(self.count.max(1)));
        let mut taken = 0u64;
        for d in devices.iter().filter(|d| self.allowed.contains(d.id)) {
            if left == 0 {
                break;
            }
            let share = self.share_on(d);
            let k = u64::from(d.milli / share).min(left);
            taken += k * u64::from(share);
            left -= k;
        }
        taken
    }

    /// The free milli-devices a pod of this shape cannot use: on devices it may not
    /// use, and on devices with less than its share free.
    fn unusable(&self, devices: &[DeviceFree]) -> u64 {
        devices
            .iter()
            .filter(|d| d.milli < self.share_on(d) || !self.allowed.contains(d.id))
            .map(|d| u64::from(d.milli))
            .sum()
    }
}

/// Sets each shape's frequency to its weight over the total, as the simulator computes
/// a shape's share of its GPU tasks (`n / total`, one division).
#[allow(clippy::cast_precision_loss)] // at most 1024 × u32: exact below 2^53
pub(crate) fn set_frequencies(shapes: &mut [ScoredShape]) {
    let total: u64 = shapes.iter().map(|s| u64::from(s.weight)).sum();
    for s in shapes {
        s.frequency = if total == 0 {
            0.0
        } else {
            f64::from(s.weight) / total as f64
        };
    }
}

/// `have / need` copies, unbounded when nothing is needed.
fn per(have: u64, need: u64) -> u64 {
    have.checked_div(need).unwrap_or(u64::MAX)
}

/// The Stranding measure of a node (see the module docs), `fill` the filling term's
/// weight.
#[allow(clippy::cast_precision_loss)] // milli-devices of one node: exact in f64
pub(crate) fn stranding(shapes: &[ScoredShape], fill: f64, node: &NodeFree<'_>) -> f64 {
    let free = node.free();
    if free == 0 {
        return 0.0;
    }
    let mut sum = 0.0;
    for s in shapes {
        let copies = s
            .device_copies(node.devices)
            .min(per(node.cpu_milli, s.cpu_milli))
            .min(per(node.memory_mib, s.memory_mib));
        let filled = free.saturating_sub(s.taken_by(copies, node.devices));
        let fgd = if copies > 0 {
            s.unusable(node.devices)
        } else {
            free
        };
        sum += s.frequency * (fill * filled as f64 + fgd as f64);
    }
    sum
}

/// The FGD measure of a node (see the module docs). Memory is not read.
#[allow(clippy::cast_precision_loss)] // milli-devices of one node: exact in f64
pub(crate) fn fgd(shapes: &[ScoredShape], node: &NodeFree<'_>) -> f64 {
    let free = node.free();
    if free == 0 {
        return 0.0;
    }
    let mut sum = 0.0;
    for s in shapes {
        let roomy = node
            .devices
            .iter()
            .filter(|d| d.milli >= s.share_on(d) && s.allowed.contains(d.id))
            .count();
        let fits = roomy >= s.count.max(1) as usize && node.cpu_milli >= s.cpu_milli;
        let part = if fits { s.unusable(node.devices) } else { free };
        sum += s.frequency * part as f64;
    }
    sum
}

/// The mix's CPU (milli) and memory (MiB) per milli-device requested, from the shapes'
/// weighted totals; `None` when the shapes request no device share.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Ratio {
    pub(crate) cpu_per_milli: f64,
    pub(crate) memory_per_milli: f64,
}

impl Ratio {
    /// The ratio of `shapes`. Totals are exact integers converted once, as the
    /// simulator's sums over its pods are (below 2^53).
    #[allow(clippy::cast_precision_loss)]
    pub(crate) fn of(shapes: &[ScoredShape]) -> Option<Ratio> {
        let total = |f: &dyn Fn(&ScoredShape) -> u64| -> u128 {
            shapes
                .iter()
                .map(|s| u128::from(s.weight) * u128::from(f(s)))
                .sum()
        };
        let demand = total(&ScoredShape::demand);
        (demand > 0).then(|| Ratio {
            cpu_per_milli: total(&|s| s.cpu_milli) as f64 / demand as f64,
            memory_per_milli: total(&|s| s.memory_mib) as f64 / demand as f64,
        })
    }
}

/// The free milli-devices a node's free CPU and memory cannot feed at `ratio`:
/// `max(0, free − min(cpu / cpu per milli, memory / memory per milli))`; 0 without a
/// ratio.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn deficit(ratio: Option<Ratio>, node: &NodeFree<'_>) -> f64 {
    let Some(r) = ratio else {
        return 0.0;
    };
    let free: f64 = node.devices.iter().map(|d| f64::from(d.milli)).sum();
    let fed = |have: u64, per: f64| {
        if per > 0.0 {
            have as f64 / per
        } else {
            f64::INFINITY
        }
    };
    (free - fed(node.cpu_milli, r.cpu_per_milli).min(fed(node.memory_mib, r.memory_per_milli)))
        .max(0.0)
}

/// The devices of a pod of shape `s`, as the allocator's first fit picks them: the
/// first `s.count` devices of `devices` (allocation order) that `s` may use with at
/// least its share (in each device's unit) free. Takes the share of each and returns
/// their positions; `None`, with `devices` untouched, when fewer have room.
pub(crate) fn first_fit(
    devices: &mut [DeviceFree],
    s: &ScoredShape,
) -> Option<SmallVec<[usize; 8]>> {
    let want = s.count as usize;
    let taken: SmallVec<[usize; 8]> = devices
        .iter()
        .enumerate()
        .filter(|(_, d)| d.milli >= s.share_on(d) && s.allowed.contains(d.id))
        .map(|(i, _)| i)
        .take(want)
        .collect();
    if taken.len() < want {
        return None;
    }
    for &i in &taken {
        devices[i].milli -= s.share_on(&devices[i]);
    }
    Some(taken)
}

/// Each device's pressure, indexed by device id (length `universe`): what the shapes
/// with selectors need of it. A restricted shape of weight `w` spreads its demand
/// `w · count · share` evenly over the milli-devices it may use, `1000 · |allowed|`.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn pressure(shapes: &[ScoredShape], universe: usize) -> Vec<f64> {
    let mut out = vec![0.0; universe];
    for s in shapes.iter().filter(|s| s.restricted) {
        let capacity = s.allowed.len() as u64 * u64::from(WHOLE);
        if capacity == 0 {
            continue;
        }
        let p = (u64::from(s.weight) * s.demand()) as f64 / capacity as f64;
        for d in s.allowed.iter() {
            if let Some(slot) = out.get_mut(d.index()) {
                *slot += p;
            }
        }
    }
    out
}

/// The scarcity a pod pays for taking `taken`: for a pod without selectors, its demand
/// times the mean pressure of the devices it takes; 0 for a pod with selectors (it is
/// the one the pressure protects) or one that takes no device.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn scarcity(demand: u64, restricted: bool, taken: &[DeviceId], pressure: &[f64]) -> f64 {
    if restricted || taken.is_empty() {
        return 0.0;
    }
    let sum: f64 = taken
        .iter()
        .map(|d| pressure.get(d.index()).copied().unwrap_or(0.0))
        .sum();
    demand as f64 * (sum / taken.len() as f64)
}

/// The Stranding term weights as `f64` ([`StrandingWeights::as_f64`](crate::StrandingWeights::as_f64)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Weights {
    pub(crate) fill: f64,
    pub(crate) pack: f64,
    pub(crate) balance: f64,
    pub(crate) scarcity: f64,
}

impl From<crate::StrandingWeights> for Weights {
    fn from(w: crate::StrandingWeights) -> Weights {
        let (fill, pack, balance, scarcity) = w.as_f64();
        Weights {
            fill,
            pack,
            balance,
            scarcity,
        }
    }
}

/// A node's measure and deficit, before or after a placement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Measured {
    pub(crate) measure: f64,
    pub(crate) deficit: f64,
}

/// The Stranding score of placing a pod (lower is better): the change of the measure,
/// plus `pack` per free milli-device left, `balance` per milli-device of deficit added,
/// and `scarcity` times the pod's [`scarcity`]. The simulator's `choose`, term by term.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn stranding_score(
    w: &Weights,
    before: Measured,
    after: Measured,
    free_after: u64,
    scarcity: f64,
) -> f64 {
    let balance = after.deficit - before.deficit;
    after.measure - before.measure
        + w.pack * free_after as f64
        + w.balance * balance
        + w.scarcity * scarcity
}

/// `ln(k / (100 − k))` for `k` in 51..=99, correctly rounded: `σ(x) ≥ k / 100` exactly
/// when `x` is at least the `k`th value, and by symmetry `σ(x) ≥ (100 − k) / 100` when
/// `x` is at least its negation. Computed with 50-digit decimals.
const LOGIT: [f64; 49] = [
    0.040_005_334_613_699_164,
    0.080_042_707_673_536_43,
    0.120_144_311_842_063_24,
    0.160_342_650_075_179_4,
    0.200_670_695_462_151_16,
    0.241_162_056_816_888_07,
    0.281_851_152_140_987_7,
    0.322_773_392_263_051,
    0.363_965_377_201_411_64,
    0.405_465_108_108_164_4,
    0.447_312_218_043_664_83,
    0.489_548_225_318_705_8,
    0.532_216_813_747_308_2,
    0.575_364_144_903_561_8,
    0.619_039_208_406_223_4,
    0.663_294_217_410_264_2,
    0.708_185_057_924_485_8,
    0.753_771_802_376_380_2,
    0.800_119_300_112_113_2,
    0.847_297_860_387_203_6,
    0.895_384_047_054_841_4,
    0.944_461_608_840_851_4,
    0.994_622_575_144_062,
    1.045_968_555_182_687_6,
    1.098_612_288_668_109_8,
    1.152_679_509_938_385_5,
    1.208_311_205_924_534_2,
    1.265_666_373_331_275_9,
    1.324_925_414_743_598_5,
    1.386_294_361_119_890_6,
    1.450_010_175_505_998_2,
    1.516_347_489_368_088_4,
    1.585_627_263_740_381_9,
    1.658_228_076_603_532_4,
    1.734_601_055_388_106_4,
    1.815_289_966_638_249_2,
    1.900_958_761_193_047,
    1.992_430_164_690_206,
    2.090_741_096_933_769_4,
    2.197_224_577_336_219_6,
    2.313_634_929_180_630_6,
    2.442_347_035_369_204_3,
    2.586_689_344_097_943,
    2.751_535_313_041_949,
    2.944_438_979_166_440_3,
    3.178_053_830_347_945_8,
    3.476_098_689_835_273_3,
    3.891_820_298_110_626_5,
    4.595_119_850_134_59,
];

/// FGD's score of a placement that takes a node's measure from `before` to `after`:
/// `⌊100 · σ((before − after) / 1000)⌋`, `0..=99`, 50 for no change, higher for a fall.
///
/// Counts the thresholds `ln(k / (100 − k))` that `x = (before − after) / 1000` reaches,
/// so it agrees with the simulator's `exp` formula except within rounding of a
/// threshold, and where that formula rounds `σ` up to 1 (`x` above about 36.7, where it
/// gives 100 and this 99).
pub(crate) fn fgd_score(before: f64, after: f64) -> u8 {
    let x = (before - after) / 1000.0;
    if x >= 0.0 {
        50 + LOGIT.partition_point(|&t| t <= x) as u8
    } else if x < 0.0 {
        // σ(x) ≥ k/100 for k < 50 ⟺ x ≥ −LOGIT[49 − k]: the thresholds above −x.
        49 - LOGIT.partition_point(|&t| t < -x) as u8
    } else {
        // NaN: no threshold is reached.
        0
    }
}

/// Nano-units in one milli-unit, and in one MiB.
const NANO_PER_MILLI: i128 = 1_000_000;
const NANO_PER_MIB: i128 = 1_000_000_000 * (1 << 20);

/// `q` in units of `per` nano, rounded down (`up: false`) or up, clamped to
/// `0..=u64::MAX`.
fn units(q: Quantity, per: i128, up: bool) -> u64 {
    let nano = q.as_nano();
    if nano <= 0 {
        return 0;
    }
    let n = if up {
        nano.div_euclid(per) + i128::from(nano.rem_euclid(per) != 0)
    } else {
        nano.div_euclid(per)
    };
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// A free amount of CPU in milli-cores (rounded down; negative reads as 0).
pub(crate) fn free_cpu_milli(q: Quantity) -> u64 {
    units(q, NANO_PER_MILLI, false)
}

/// A requested amount of CPU in milli-cores (rounded up).
pub(crate) fn cpu_milli_needed(q: Quantity) -> u64 {
    units(q, NANO_PER_MILLI, true)
}

/// A free amount of memory (bytes) in MiB (rounded down).
pub(crate) fn free_mib(q: Quantity) -> u64 {
    units(q, NANO_PER_MIB, false)
}

/// A requested amount of memory (bytes) in MiB (rounded up).
pub(crate) fn mib_needed(q: Quantity) -> u64 {
    units(q, NANO_PER_MIB, true)
}

/// The free share of a device whose capacity `value` has `left` free, in
/// milli-devices: `⌊1000 · left / value⌋` in `0..=1000` (0 for a value of 0).
pub(crate) fn free_share(left: Quantity, value: Quantity) -> u32 {
    let (left, value) = (left.as_nano().max(0), value.as_nano());
    if value <= 0 {
        return 0;
    }
    let milli = left.min(value).saturating_mul(i128::from(WHOLE)) / value;
    u32::try_from(milli).unwrap_or(WHOLE)
}

/// The share of a device whose capacity is `value` that a pod taking `amount` of it
/// takes, in milli-devices: `⌈1000 · amount / value⌉` in `1..=1000` (a whole device
/// for a value of 0).
pub(crate) fn share_taken(amount: Quantity, value: Quantity) -> u32 {
    let (amount, value) = (amount.as_nano().max(0), value.as_nano());
    if value <= 0 || amount >= value {
        return WHOLE;
    }
    let scaled = amount.saturating_mul(i128::from(WHOLE));
    let milli = scaled / value + i128::from(scaled % value != 0);
    u32::try_from(milli).unwrap_or(WHOLE).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Devices `0..n` with these free shares.
    fn devices(free: &[u32]) -> Vec<DeviceFree> {
        free.iter()
            .enumerate()
            .map(|(i, &milli)| DeviceFree {
                id: DeviceId(i as u32),
                milli,
                unit: 0,
            })
            .collect()
    }

    fn set(ids: impl IntoIterator<Item = u32>) -> DeviceSet {
        ids.into_iter().map(DeviceId).collect()
    }

    /// A shape of weight 1 that may use devices `0..64`.
    fn shape(cpu: u64, count: u32, share: u32) -> ScoredShape {
        ScoredShape {
            weight: 1,
            frequency: 1.0,
            cpu_milli: cpu,
            memory_mib: 0,
            count,
            share,
            shares: SmallVec::new(),
            allowed: set(0..64),
            restricted: false,
        }
    }

    /// A shape of `count` devices of `share` each that may use `allowed`.
    fn fit(allowed: &DeviceSet, count: u32, share: u32) -> ScoredShape {
        ScoredShape {
            allowed: allowed.clone(),
            ..shape(0, count, share)
        }
    }

    fn node(cpu: u64, mem: u64, devices: &[DeviceFree]) -> NodeFree<'_> {
        NodeFree {
            cpu_milli: cpu,
            memory_mib: mem,
            devices,
        }
    }

    const FILL: f64 = 2.0;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    // ----------------------------------------------- sim/src/stranding.rs, ported

    #[test]
    fn cpu_caps_the_copies_a_node_can_host() {
        // 8 free GPUs, 10 cores: a 4-core 1-GPU shape fits twice, stranding 6 GPUs
        // (filling term 6000, weighted), while FGD's term sees no fragment (it fits).
        let s = [shape(4000, 1, WHOLE)];
        let d = devices(&[WHOLE; 8]);
        let v = stranding(&s, FILL, &node(10_000, 0, &d));
        assert!(close(v, FILL * 6000.0), "{v}");
        // With 40 cores all 8 copies fit: nothing stranded.
        assert!(close(stranding(&s, FILL, &node(40_000, 0, &d)), 0.0));
    }

    #[test]
    fn shares_count_what_each_gpu_can_still_take() {
        // GPUs with 600 and 300 free, a 500-milli shape: one copy on the first GPU;
        // left over 100 + 300 = 400; FGD's term: the 300 GPU is too small.
        let s = [shape(0, 1, 500)];
        let v = stranding(&s, FILL, &node(1000, 0, &devices(&[600, 300])));
        assert!(close(v, FILL * 400.0 + 300.0), "{v}");
    }

    #[test]
    fn a_disallowed_model_strands_everything_free() {
        let mut s = shape(0, 1, WHOLE);
        s.allowed = set([10, 11]);
        s.restricted = true;
        let v = stranding(&[s], FILL, &node(1000, 0, &devices(&[WHOLE, 400])));
        assert!(close(v, (FILL + 1.0) * 1400.0), "{v}");
    }

    #[test]
    fn the_deficit_is_free_gpu_the_free_cpu_and_memory_cannot_feed() {
        // Typical ratio: 8 cores and 32 GiB per GPU (two tasks, 1 GPU each).
        let mut s = shape(8000, 1, WHOLE);
        s.memory_mib = 32_768;
        s.weight = 2;
        let ratio = Ratio::of(&[s]);
        let d = devices(&[WHOLE; 8]);
        // 8 free GPUs, 16 cores (feed 2 GPUs), plenty of memory: 6 GPUs unfed.
        assert!(close(deficit(ratio, &node(16_000, 1 << 20, &d)), 6000.0));
        // Memory short instead: 64 GiB feeds 2 GPUs.
        assert!(close(deficit(ratio, &node(1 << 20, 65_536, &d)), 6000.0));
        // Enough of both: no deficit.
        assert!(close(deficit(ratio, &node(64_000, 262_144, &d)), 0.0));
        // No GPU demand, no ratio, no deficit.
        assert_eq!(Ratio::of(&[]), None);
        assert!(close(deficit(None, &node(0, 0, &d)), 0.0));
    }

    #[test]
    fn unrestricted_tasks_pay_for_the_models_restricted_tasks_need() {
        // Devices 0-1 are model A, 2-3 B, 4-5 C. One task restricted to A, one to A or
        // B (4000 milli between them), one free.
        let mut to_a = shape(1000, 1, WHOLE);
        to_a.allowed = set([0, 1]);
        to_a.restricted = true;
        let mut to_ab = to_a.clone();
        to_ab.allowed = set(0..4);
        let free = shape(1000, 1, WHOLE);
        let p = pressure(&[to_a, to_ab, free], 6);
        // A: 1000/2000 + 1000/4000; B: 1000/4000; C: nothing asks for it.
        for (d, want) in [0.75, 0.75, 0.25, 0.25, 0.0, 0.0].into_iter().enumerate() {
            assert!(close(p[d], want), "{p:?}");
        }
        // An unrestricted 1-GPU pod on A pays 1000 × 0.75; a restricted one nothing;
        // a 2-GPU pod over A and B pays its demand times the mean.
        assert!(close(scarcity(1000, false, &[DeviceId(0)], &p), 750.0));
        assert!(close(scarcity(1000, true, &[DeviceId(0)], &p), 0.0));
        assert!(close(
            scarcity(2000, false, &[DeviceId(1), DeviceId(2)], &p),
            1000.0
        ));
        assert!(close(scarcity(0, false, &[], &p), 0.0));
    }

    #[test]
    fn first_fit_matches_the_engine_choice() {
        let all = set(0..8);
        let mut d = devices(&[300, WHOLE, 500]);
        assert_eq!(
            first_fit(&mut d, &fit(&all, 1, 400)).as_deref(),
            Some(&[1][..])
        );
        assert_eq!(
            d.iter().map(|d| d.milli).collect::<Vec<_>>(),
            [300, 600, 500]
        );
        let mut d = devices(&[300, WHOLE, WHOLE, WHOLE]);
        assert_eq!(
            first_fit(&mut d, &fit(&all, 2, WHOLE)).as_deref(),
            Some(&[1, 2][..])
        );
        assert_eq!(
            d.iter().map(|d| d.milli).collect::<Vec<_>>(),
            [300, 0, 0, WHOLE]
        );
        // Only allowed devices, and nothing taken when the pod does not fit.
        let mut d = devices(&[WHOLE, WHOLE, WHOLE]);
        assert_eq!(
            first_fit(&mut d, &fit(&set([1, 2]), 1, WHOLE)).as_deref(),
            Some(&[1][..])
        );
        assert_eq!(first_fit(&mut d, &fit(&set([1, 2]), 2, WHOLE)), None);
        assert_eq!(
            d.iter().map(|d| d.milli).collect::<Vec<_>>(),
            [WHOLE, 0, WHOLE]
        );
    }

    #[test]
    fn each_device_is_measured_in_its_own_unit() {
        // Two devices of capacity 1000 (unit 1) and two of 2000 (unit 2), all free;
        // a share of 500 takes 500 of the first kind and 250 of the second.
        let mut s = shape(0, 1, 500);
        s.shares = SmallVec::from_slice(&[WHOLE, 500, 250]);
        let mut d = devices(&[WHOLE, WHOLE, WHOLE, 600]);
        for (i, x) in d.iter_mut().enumerate() {
            x.unit = if i < 2 { 1 } else { 2 };
        }
        // Copies: 2 + 2 + 4 + 2 = 10, taking 3500 of the 3600 free (100 left on the
        // last device, under its 250); every device has room, so nothing is unusable.
        let n = node(1_000_000, 1_000_000, &d);
        assert_eq!(s.device_copies(&d), 10);
        assert_eq!(s.taken_by(10, &d), 1000 + 1000 + 1000 + 500);
        assert!(close(stranding(&[s.clone()], FILL, &n), FILL * 100.0));
        assert!(close(fgd(&[s.clone()], &n), 0.0));
        // First fit takes 250 of a unit-2 device.
        let mut d2 = devices(&[400, 300]);
        d2[1].unit = 2;
        assert_eq!(first_fit(&mut d2, &s).as_deref(), Some(&[1][..]));
        assert_eq!(d2[1].milli, 50);
    }

    // ----------------------------------------------------- sim/src/fgd.rs, ported

    #[test]
    fn fragmentation_follows_the_paper() {
        let mut s = [shape(4000, 1, 500), shape(4000, 2, WHOLE)];
        set_frequencies(&mut s);
        assert!(s.iter().all(|s| s.frequency.to_bits() == 0.5f64.to_bits()));
        let d = devices(&[WHOLE, 600, 300]);
        // GPUs with 1000, 600 and 300 free, 8 cores: the share fits (300 too small for
        // it); two whole GPUs do not (one is wholly free): all 1900 count.
        let v = fgd(&s, &node(8000, 0, &d));
        assert!(close(v, 0.5 * 300.0 + 0.5 * 1900.0), "{v}");
        // Too little CPU: everything free counts for both.
        let v = fgd(&s, &node(1000, 0, &d));
        assert!(close(v, 1900.0), "{v}");
    }

    #[test]
    fn the_score_is_the_simulators_integer_sigmoid() {
        assert_eq!(fgd_score(0.0, 0.0), 50);
        assert_eq!(fgd_score(3000.0, 0.0), 95);
        assert_eq!(fgd_score(0.0, 3000.0), 4);
    }

    // ------------------------------------------------------------ the engine's own

    /// The simulator's formula, with `std`'s `exp`.
    #[allow(clippy::cast_possible_truncation)]
    fn sim_score(before: f64, after: f64) -> i64 {
        let x = (before - after) / 1000.0;
        (100.0 / (1.0 + (-x).exp())) as i64
    }

    #[test]
    fn the_logit_table_agrees_with_exp() {
        // Every threshold is ln(k / (100 − k)) to the last bit.
        for (i, &t) in LOGIT.iter().enumerate() {
            let k = f64::from(i as u32 + 51);
            assert!((t - (k / (100.0 - k)).ln()).abs() <= 2.0 * f64::EPSILON * t.max(1.0));
        }
        let near_threshold = |x: f64| {
            LOGIT
                .iter()
                .any(|&t| (x.abs() - t).abs() < 1e-9 * t.max(1.0))
        };
        let mut checked = 0;
        // Δ from −36 to 36 GPUs in steps of 0.13 milli, and the integer deltas.
        let mut delta: f64 = -36_000.0;
        while delta <= 36_000.0 {
            for d in [delta, delta.round()] {
                if near_threshold(d / 1000.0) {
                    continue;
                }
                assert_eq!(i64::from(fgd_score(d, 0.0)), sim_score(d, 0.0), "Δ = {d}");
                checked += 1;
            }
            delta += 0.13;
        }
        assert!(checked > 1_000_000);
        // Where exp rounds σ up to 1 the simulator says 100; ⌊100σ⌋ is 99.
        assert_eq!(sim_score(40_000.0, 0.0), 100);
        assert_eq!(fgd_score(40_000.0, 0.0), 99);
        assert_eq!(fgd_score(f64::INFINITY, 0.0), 99);
        assert_eq!(fgd_score(0.0, f64::INFINITY), 0);
        assert_eq!(fgd_score(f64::NAN, 0.0), 0);
    }

    #[test]
    fn the_measures_do_not_depend_on_device_order() {
        let mut s = [
            shape(2000, 1, 300),
            shape(4000, 2, WHOLE),
            shape(1000, 1, 700),
        ];
        s[1].memory_mib = 10_000;
        set_frequencies(&mut s);
        let mut d = devices(&[WHOLE, 250, 700, 0, WHOLE, 450]);
        let a = (
            stranding(&s, FILL, &node(9000, 30_000, &d)),
            fgd(&s, &node(9000, 30_000, &d)),
        );
        d.reverse();
        let b = (
            stranding(&s, FILL, &node(9000, 30_000, &d)),
            fgd(&s, &node(9000, 30_000, &d)),
        );
        assert!(close(a.0, b.0) && close(a.1, b.1), "{a:?} {b:?}");
        assert!(a.0 > 0.0 && a.1 > 0.0);
    }

    #[test]
    fn mixed_nodes_are_measured_device_by_device() {
        // Devices 0-1 allowed, 2-3 not (another model on the same node). The shape
        // fits once on the allowed pair (count 2), leaving the other pair stranded
        // for both terms.
        let mut s = shape(0, 2, WHOLE);
        s.allowed = set([0, 1]);
        s.restricted = true;
        let d = devices(&[WHOLE; 4]);
        let v = stranding(core::slice::from_ref(&s), FILL, &node(1000, 0, &d));
        assert!(close(v, FILL * 2000.0 + 2000.0), "{v}");
        let v = fgd(core::slice::from_ref(&s), &node(1000, 0, &d));
        assert!(close(v, 2000.0), "{v}");
        // With one allowed device taken, it fits nowhere: all of the free counts.
        let d = devices(&[0, WHOLE, WHOLE, WHOLE]);
        let v = fgd(&[s], &node(1000, 0, &d));
        assert!(close(v, 3000.0), "{v}");
    }

    #[test]
    fn memory_caps_copies_and_empty_nodes_measure_zero() {
        let mut s = shape(0, 1, WHOLE);
        s.memory_mib = 1000;
        let d = devices(&[WHOLE; 4]);
        // Memory for one copy: 3 GPUs left over, FGD's term sees none (it fits).
        let v = stranding(core::slice::from_ref(&s), FILL, &node(0, 1999, &d));
        assert!(close(v, FILL * 3000.0), "{v}");
        // No memory: no copy, everything strands twice over.
        let v = stranding(core::slice::from_ref(&s), FILL, &node(0, 999, &d));
        assert!(close(v, (FILL + 1.0) * 4000.0), "{v}");
        let none = devices(&[0, 0]);
        assert!(close(
            stranding(&[s.clone()], FILL, &node(0, 0, &none)),
            0.0
        ));
        assert!(close(fgd(&[s], &node(0, 0, &none)), 0.0));
    }

    #[test]
    fn the_score_is_the_sims_choose_term_by_term() {
        let w = Weights::from(crate::StrandingWeights::default());
        let before = Measured {
            measure: 5000.0,
            deficit: 1000.0,
        };
        let after = Measured {
            measure: 4000.0,
            deficit: 1500.0,
        };
        let v = stranding_score(&w, before, after, 3000, 250.0);
        assert!(
            close(v, -1000.0 + 0.001 * 3000.0 + 20.0 * 500.0 + 250.0),
            "{v}"
        );
    }

    #[test]
    fn units_round_toward_the_safe_side() {
        let q = |s: &str| Quantity::parse(s).unwrap();
        assert_eq!(free_cpu_milli(q("1.5")), 1500);
        assert_eq!(free_cpu_milli(q("1500500n")), 1);
        assert_eq!(cpu_milli_needed(q("1500500n")), 2);
        assert_eq!(free_cpu_milli(q("-3")), 0);
        assert_eq!(free_mib(q("16Gi")), 16_384);
        assert_eq!(free_mib(q("1048575")), 0);
        assert_eq!(mib_needed(q("1048577")), 2);
        assert_eq!(mib_needed(q("0")), 0);
        assert_eq!(free_mib(q("1e20")), 95_367_431_640_625);
        assert_eq!(free_share(q("1000"), q("1000")), WHOLE);
        assert_eq!(free_share(q("40Gi"), q("80Gi")), 500);
        assert_eq!(free_share(q("1"), q("3")), 333);
        assert_eq!(free_share(q("5"), q("3")), WHOLE);
        assert_eq!(free_share(q("1"), q("0")), 0);
        assert_eq!(free_share(q("-1"), q("3")), 0);
        assert_eq!(share_taken(q("500"), q("1000")), 500);
        assert_eq!(share_taken(q("1"), q("3")), 334);
        assert_eq!(share_taken(q("1n"), q("1000")), 1);
        assert_eq!(share_taken(q("0"), q("1000")), 1);
        assert_eq!(share_taken(q("2000"), q("1000")), WHOLE);
        assert_eq!(share_taken(q("1"), q("0")), WHOLE);
    }
}
