//! Device sets: a dense bitset over all device ids (word-wise AND / ANDNOT / popcount)
//! and a sparse block set for small groups (one node's or one pool's devices).

use bitvec::order::Lsb0;
use bitvec::vec::BitVec;
use smallvec::SmallVec;

use crate::DeviceId;
#[cfg(test)]
use crate::alloc_prelude::*;

/// The machine word the sets are made of: `usize`, the word `bitvec` stores natively on
/// every target (64 bits natively, 32 on wasm32). Set semantics do not depend on it.
type Word = usize;
const WORD: usize = Word::BITS as usize;

/// A set of devices as a dense bitset, one bit per device id.
///
/// Storage is a `bitvec` vector whose length is always a whole number of machine
/// words, so every bulk operation runs word by word over the raw words: "which devices
/// can this request use" is a few AND / ANDNOT passes and a popcount.
///
/// Equality compares members only: the [universe](DeviceSet::universe) (how many ids the
/// set has room for) does not matter.
#[derive(Clone, Default)]
pub struct DeviceSet {
    bits: BitVec<Word, Lsb0>,
}

impl PartialEq for DeviceSet {
    /// Same members, whatever the universes: the words beyond the shorter set must be 0.
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.words(), other.words());
        let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        long[..short.len()] == *short && long[short.len()..].iter().all(|&w| w == 0)
    }
}

impl Eq for DeviceSet {}

impl core::fmt::Debug for DeviceSet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_set().entries(self.iter().map(|d| d.0)).finish()
    }
}

impl DeviceSet {
    /// An empty set.
    #[must_use]
    pub fn new() -> DeviceSet {
        DeviceSet::default()
    }

    /// An empty set with room for ids below `universe` (rounded up to whole words).
    #[must_use]
    pub fn with_universe(universe: usize) -> DeviceSet {
        let mut s = DeviceSet::new();
        s.grow(universe);
        s
    }

    /// Number of ids the set can hold without growing.
    #[must_use]
    pub fn universe(&self) -> usize {
        self.bits.len()
    }

    /// Makes room for ids below `universe`.
    pub fn grow(&mut self, universe: usize) {
        let words = universe.div_ceil(WORD);
        if words * WORD > self.bits.len() {
            self.bits.resize(words * WORD, false);
        }
    }

    /// Adds a device, growing the set if needed.
    pub fn insert(&mut self, d: DeviceId) {
        self.grow(d.index() + 1);
        self.bits.set(d.index(), true);
    }

    /// Removes a device.
    pub fn remove(&mut self, d: DeviceId) {
        if d.index() < self.bits.len() {
            self.bits.set(d.index(), false);
        }
    }

    /// Sets membership of a device.
    pub fn set(&mut self, d: DeviceId, member: bool) {
        if member {
            self.insert(d);
        } else {
            self.remove(d);
        }
    }

    /// Whether the device is in the set.
    #[must_use]
    pub fn contains(&self, d: DeviceId) -> bool {
        self.bits.get(d.index()).is_some_and(|b| *b)
    }

    /// The raw words (bit `i` of word `w` is device `usize::BITS * w + i`).
    #[must_use]
    pub fn words(&self) -> &[Word] {
        self.bits.as_raw_slice()
    }

    fn words_mut(&mut self) -> &mut [Word] {
        self.bits.as_raw_mut_slice()
    }

    /// Number of devices in the set.
    #[must_use]
    #[inline]
    pub fn len(&self) -> usize {
        self.words().iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.words().iter().all(|&w| w == 0)
    }

    /// Removes every device.
    pub fn clear(&mut self) {
        self.words_mut().fill(0);
    }

    /// `self &= other` (ids beyond `other`'s universe are removed).
    #[inline]
    pub fn intersect_with(&mut self, other: &DeviceSet) {
        let o = other.words();
        for (i, w) in self.words_mut().iter_mut().enumerate() {
            *w &= o.get(i).copied().unwrap_or(0);
        }
    }

    /// `self &= a & b & !not`, in one pass over the words (what `intersect_with(a)`,
    /// `intersect_with(b)` and `difference_with(not)` do in three).
    #[inline]
    pub(crate) fn intersect_both_without(&mut self, a: &DeviceSet, b: &DeviceSet, not: &DeviceSet) {
        let (a, b, not) = (a.words(), b.words(), not.words());
        let at = |s: &[Word], i: usize| s.get(i).copied().unwrap_or(0);
        for (i, w) in self.words_mut().iter_mut().enumerate() {
            *w &= at(a, i) & at(b, i) & !at(not, i);
        }
    }

    /// `self |= other`.
    #[inline]
    pub fn union_with(&mut self, other: &DeviceSet) {
        self.grow(other.universe());
        for (w, o) in self.words_mut().iter_mut().zip(other.words()) {
            *w |= *o;
        }
    }

    /// `self &= !other`.
    #[inline]
    pub fn difference_with(&mut self, other: &DeviceSet) {
        for (w, o) in self.words_mut().iter_mut().zip(other.words()) {
            *w &= !*o;
        }
    }

    /// Whether every device of `self` is in `other`.
    #[must_use]
    pub fn is_subset(&self, other: &DeviceSet) -> bool {
        let o = other.words();
        self.words()
            .iter()
            .enumerate()
            .all(|(i, w)| w & !o.get(i).copied().unwrap_or(0) == 0)
    }

    /// Whether `self` and `other` have a device in common.
    #[must_use]
    pub fn intersects(&self, other: &DeviceSet) -> bool {
        self.words()
            .iter()
            .zip(other.words())
            .any(|(x, y)| x & y != 0)
    }

    /// The smallest device in the set.
    #[must_use]
    pub fn first(&self) -> Option<DeviceId> {
        self.words()
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| DeviceId((i * WORD) as u32 + w.trailing_zeros()))
    }

    /// The devices in increasing id order.
    pub fn iter(&self) -> impl Iterator<Item = DeviceId> + '_ {
        self.words()
            .iter()
            .enumerate()
            .flat_map(|(i, &w)| WordBits {
                base: i * WORD,
                word: w,
            })
    }

    /// Heap bytes used.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.bits.capacity() / 8
    }

    /// Drops trailing empty words and spare capacity.
    pub fn shrink_to_fit(&mut self) {
        let keep = self
            .words()
            .iter()
            .rposition(|w| *w != 0)
            .map_or(0, |i| i + 1);
        self.bits.truncate(keep * WORD);
        self.bits.shrink_to_fit();
    }
}

impl FromIterator<DeviceId> for DeviceSet {
    fn from_iter<I: IntoIterator<Item = DeviceId>>(iter: I) -> DeviceSet {
        let mut s = DeviceSet::new();
        for d in iter {
            s.insert(d);
        }
        s
    }
}

/// Iterates the set bits of one word, lowest first.
struct WordBits {
    base: usize,
    word: Word,
}

impl Iterator for WordBits {
    type Item = DeviceId;
    fn next(&mut self) -> Option<DeviceId> {
        if self.word == 0 {
            return None;
        }
        let bit = self.word.trailing_zeros() as usize;
        self.word &= self.word - 1;
        Some(DeviceId((self.base + bit) as u32))
    }
}

/// A small set of devices stored as sorted `(word index, word)` blocks.
///
/// The devices of one ResourceSlice get neighbouring ids, so one node's or one pool's
/// devices fit in one or two blocks: intersecting them with a [`DeviceSet`] touches
/// only those words, and memory stays proportional to the devices, not the universe.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct SparseDeviceSet {
    blocks: SmallVec<[(u32, Word); 2]>,
}

impl core::fmt::Debug for SparseDeviceSet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_set().entries(self.iter().map(|d| d.0)).finish()
    }
}

impl SparseDeviceSet {
    /// An empty set.
    #[must_use]
    pub fn new() -> SparseDeviceSet {
        SparseDeviceSet::default()
    }

    fn locate(d: DeviceId) -> (u32, Word) {
        let bit: Word = 1 << (d.index() % WORD);
        ((d.index() / WORD) as u32, bit)
    }

    /// Adds a device.
    pub fn insert(&mut self, d: DeviceId) {
        let (block, bit) = Self::locate(d);
        match self.blocks.binary_search_by_key(&block, |b| b.0) {
            Ok(i) => self.blocks[i].1 |= bit,
            Err(i) => self.blocks.insert(i, (block, bit)),
        }
    }

    /// Removes a device.
    pub fn remove(&mut self, d: DeviceId) {
        let (block, bit) = Self::locate(d);
        if let Ok(i) = self.blocks.binary_search_by_key(&block, |b| b.0) {
            self.blocks[i].1 &= !bit;
            if self.blocks[i].1 == 0 {
                self.blocks.remove(i);
            }
        }
    }

    /// Whether the device is in the set.
    #[must_use]
    pub fn contains(&self, d: DeviceId) -> bool {
        let (block, bit) = Self::locate(d);
        self.blocks
            .binary_search_by_key(&block, |b| b.0)
            .is_ok_and(|i| self.blocks[i].1 & bit != 0)
    }

    /// Number of devices.
    #[must_use]
    pub fn len(&self) -> usize {
        self.blocks.iter().map(|b| b.1.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The devices in increasing id order.
    pub fn iter(&self) -> impl Iterator<Item = DeviceId> + '_ {
        self.blocks.iter().flat_map(|&(b, w)| WordBits {
            base: b as usize * WORD,
            word: w,
        })
    }

    /// How many of these devices are also in `dense` (no allocation).
    #[must_use]
    pub fn count_in(&self, dense: &DeviceSet) -> usize {
        let words = dense.words();
        self.blocks
            .iter()
            .map(|&(b, w)| (w & words.get(b as usize).copied().unwrap_or(0)).count_ones() as usize)
            .sum()
    }

    /// These devices that are also in `dense`.
    #[must_use]
    pub fn intersection(&self, dense: &DeviceSet) -> SparseDeviceSet {
        let words = dense.words();
        SparseDeviceSet {
            blocks: self
                .blocks
                .iter()
                .filter_map(|&(b, w)| {
                    let x = w & words.get(b as usize).copied().unwrap_or(0);
                    (x != 0).then_some((b, x))
                })
                .collect(),
        }
    }

    /// Adds these devices to a dense set.
    pub fn add_to(&self, dense: &mut DeviceSet) {
        if let Some(&(last, _)) = self.blocks.last() {
            dense.grow((last as usize + 1) * WORD);
        }
        let words = dense.words_mut();
        for &(b, w) in &self.blocks {
            words[b as usize] |= w;
        }
    }

    /// Heap bytes used (zero while the blocks fit inline).
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        if self.blocks.spilled() {
            self.blocks.capacity() * core::mem::size_of::<(u32, Word)>()
        } else {
            0
        }
    }
}

impl FromIterator<DeviceId> for SparseDeviceSet {
    fn from_iter<I: IntoIterator<Item = DeviceId>>(iter: I) -> SparseDeviceSet {
        let mut s = SparseDeviceSet::new();
        for d in iter {
            s.insert(d);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u32]) -> Vec<DeviceId> {
        v.iter().map(|&i| DeviceId(i)).collect()
    }

    /// The one-pass restriction equals the three passes it replaces, over sets of
    /// other universes than the restricted one (shorter and longer).
    #[test]
    fn intersect_both_without_is_three_passes_in_one() {
        let mut seed = 11u64;
        let mut set = |n: u32| -> DeviceSet {
            (0..n)
                .filter(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    !(seed >> 40).is_multiple_of(3)
                })
                .map(DeviceId)
                .collect()
        };
        for (s, a, b, t) in [
            (300, 100, 400, 500),
            (300, 400, 70, 20),
            (64, 64, 64, 64),
            (1, 0, 0, 0),
        ] {
            let (s, a, b, t) = (set(s), set(a), set(b), set(t));
            let mut slow = s.clone();
            slow.intersect_with(&a);
            slow.intersect_with(&b);
            slow.difference_with(&t);
            let mut fast = s.clone();
            fast.intersect_both_without(&a, &b, &t);
            assert_eq!(fast, slow);
            assert_eq!(fast.universe(), s.universe());
        }
    }

    #[test]
    #[allow(clippy::many_single_char_names)]
    fn dense_set_ops_work_word_wise() {
        let a: DeviceSet = ids(&[0, 3, 64, 65, 130]).into_iter().collect();
        let b: DeviceSet = ids(&[3, 65, 200]).into_iter().collect();
        assert_eq!(a.universe(), 131usize.div_ceil(WORD) * WORD);
        assert_eq!(a.len(), 5);
        let mut x = a.clone();
        x.intersect_with(&b);
        assert_eq!(x.iter().collect::<Vec<_>>(), ids(&[3, 65]));
        let mut y = a.clone();
        y.difference_with(&b);
        assert_eq!(y.iter().collect::<Vec<_>>(), ids(&[0, 64, 130]));
        let mut z = a.clone();
        z.union_with(&b);
        assert_eq!(z.len(), 6);
        assert!(x.is_subset(&a) && x.is_subset(&b) && !a.is_subset(&b));
        assert_eq!(y.first(), Some(DeviceId(0)));
        assert!(DeviceSet::new().first().is_none());
        assert!(!a.contains(DeviceId(10_000)));
    }

    #[test]
    fn dense_set_equality_ignores_the_universe() {
        let small: DeviceSet = ids(&[1, 5]).into_iter().collect();
        let mut big = DeviceSet::with_universe(10 * WORD);
        big.insert(DeviceId(5));
        big.insert(DeviceId(1));
        assert_ne!(small.universe(), big.universe());
        assert_eq!(small, big);
        assert_eq!(big, small);
        big.insert(DeviceId(9 * WORD as u32));
        assert_ne!(small, big);
        assert_ne!(big, small);
        big.remove(DeviceId(9 * WORD as u32));
        big.remove(DeviceId(1));
        assert_ne!(small, big);
        assert_eq!(DeviceSet::new(), DeviceSet::with_universe(1000));
        let mut emptied = small.clone();
        emptied.clear();
        assert_eq!(emptied, DeviceSet::new());
    }

    #[test]
    fn sparse_set_tracks_blocks() {
        let mut s: SparseDeviceSet = ids(&[5, 70, 71, 1000]).into_iter().collect();
        assert_eq!(s.len(), 4);
        assert!(s.contains(DeviceId(71)) && !s.contains(DeviceId(72)));
        s.remove(DeviceId(1000));
        assert_eq!(s.blocks.len(), 2);
        let dense: DeviceSet = ids(&[5, 71, 999]).into_iter().collect();
        assert_eq!(s.count_in(&dense), 2);
        assert_eq!(
            s.intersection(&dense).iter().collect::<Vec<_>>(),
            ids(&[5, 71])
        );
        let mut d = DeviceSet::new();
        s.add_to(&mut d);
        assert_eq!(d.iter().collect::<Vec<_>>(), ids(&[5, 70, 71]));
    }
}
