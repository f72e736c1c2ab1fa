//! String interning: every name the index keys on becomes a dense `Symbol`.

use crate::alloc_prelude::*;

/// An interned string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Symbol(pub(crate) u32);

/// Interns strings. Symbols are never freed: the set of distinct names in a cluster
/// (drivers, pools, attribute names and values, taint keys) is small and stable.
///
/// The lookup is a hash table of symbols whose strings live once, in `strings`: on a
/// cluster of 12,500 nodes an ordered map's lookups were string compares along a
/// path of 14 keys sharing long prefixes (`node-0…`), the placer's largest cost.
/// The hash is fixed (no random state), so the table, and everything, is the same on
/// every run and platform; only `get`/`intern` see it, never an iteration.
#[derive(Clone, Debug, Default)]
pub(crate) struct Interner {
    strings: Vec<Box<str>>,
    lookup: hashbrown::HashTable<u32>,
    /// The symbols of `cpu` and `memory` once interned: the scoring policies read
    /// both on every node they rescore or rank, so they skip the lookup.
    cpu_mem: (Option<Symbol>, Option<Symbol>),
}

/// FNV-1a over the bytes, eight at a time folded by a multiply (FxHash's step): fast
/// on short names, fixed across runs.
fn hash(s: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ s.len() as u64;
    let mut chunks = s.as_bytes().chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("eight bytes"));
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    let rest = chunks.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    // The table takes its control bits from the top: mix the low bits up.
    h ^ (h >> 29)
}

impl Interner {
    /// The symbol of `s`, interning it if needed.
    pub(crate) fn intern(&mut self, s: &str) -> Symbol {
        if let Some(sym) = self.get(s) {
            return sym;
        }
        let i = u32::try_from(self.strings.len()).expect("fewer than 2^32 strings");
        self.strings.push(s.into());
        let strings = &self.strings;
        self.lookup
            .insert_unique(hash(s), i, |&j| hash(&strings[j as usize]));
        match s {
            "cpu" => self.cpu_mem.0 = Some(Symbol(i)),
            "memory" => self.cpu_mem.1 = Some(Symbol(i)),
            _ => {}
        }
        Symbol(i)
    }

    /// The symbols of `cpu` and `memory`, if interned (the same as `get` of each).
    pub(crate) fn cpu_mem(&self) -> (Option<Symbol>, Option<Symbol>) {
        self.cpu_mem
    }

    /// The symbol of `s` if it was interned.
    pub(crate) fn get(&self, s: &str) -> Option<Symbol> {
        self.lookup
            .find(hash(s), |&i| &*self.strings[i as usize] == s)
            .map(|&i| Symbol(i))
    }

    /// The string of a symbol.
    pub(crate) fn resolve(&self, sym: Symbol) -> &str {
        &self.strings[sym.0 as usize]
    }

    /// Bytes held by the interner (for memory reports).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.strings.iter().map(|s| s.len() + 16).sum::<usize>() + self.lookup.allocation_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_idempotent_and_dense() {
        let mut i = Interner::default();
        let a = i.intern("gpu.example.com");
        let b = i.intern("rack");
        assert_eq!(i.intern("gpu.example.com"), a);
        assert_eq!((a.0, b.0), (0, 1));
        assert_eq!(i.resolve(b), "rack");
        assert_eq!(i.get("absent"), None);
    }

    #[test]
    fn cpu_and_memory_symbols_are_kept_as_interned() {
        let mut i = Interner::default();
        assert_eq!(i.cpu_mem(), (None, None));
        i.intern("nvidia.com/gpu");
        let m = i.intern("memory");
        assert_eq!(i.cpu_mem(), (None, Some(m)));
        let c = i.intern("cpu");
        i.intern("cpu");
        assert_eq!(i.cpu_mem(), (i.get("cpu"), i.get("memory")));
        assert_eq!(i.cpu_mem(), (Some(c), Some(m)));
    }

    #[test]
    fn many_strings_keep_their_symbols_through_growth() {
        let mut i = Interner::default();
        let names: Vec<String> = (0..5_000).map(|n| format!("node-{n:05}")).collect();
        for (n, s) in names.iter().enumerate() {
            assert_eq!(i.intern(s).0 as usize, n);
        }
        for (n, s) in names.iter().enumerate() {
            assert_eq!(i.get(s), Some(Symbol(n as u32)));
            assert_eq!(i.resolve(Symbol(n as u32)), s);
        }
        // Every length around the 8-byte steps, and the empty string.
        for len in 0..20 {
            let s = "x".repeat(len);
            let sym = i.intern(&s);
            assert_eq!(i.get(&s), Some(sym));
        }
        assert_eq!(i.get("node-99999"), None);
    }
}
