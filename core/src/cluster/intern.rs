//! String interning: every name the index keys on becomes a dense `Symbol`.

use crate::alloc_prelude::*;

/// An interned string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Symbol(pub(crate) u32);

/// Interns strings. Symbols are never freed: the set of distinct names in a cluster
/// (drivers, pools, attribute names and values, taint keys) is small and stable.
#[derive(Clone, Debug, Default)]
pub(crate) struct Interner {
    strings: Vec<Box<str>>,
    lookup: BTreeMap<Box<str>, Symbol>,
}

impl Interner {
    /// The symbol of `s`, interning it if needed.
    pub(crate) fn intern(&mut self, s: &str) -> Symbol {
        if let Some(&sym) = self.lookup.get(s) {
            return sym;
        }
        let sym = Symbol(u32::try_from(self.strings.len()).expect("fewer than 2^32 strings"));
        self.strings.push(s.into());
        self.lookup.insert(s.into(), sym);
        sym
    }

    /// The symbol of `s` if it was interned.
    pub(crate) fn get(&self, s: &str) -> Option<Symbol> {
        self.lookup.get(s).copied()
    }

    /// The string of a symbol.
    pub(crate) fn resolve(&self, sym: Symbol) -> &str {
        &self.strings[sym.0 as usize]
    }

    /// Bytes held by the interner (for memory reports).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.strings.iter().map(|s| 2 * s.len() + 2 * 16 + 8).sum()
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
}
