//! Lookups of keys that mostly come in increasing order, close together.
//!
//! The scheduler's maps are keyed by `namespace/name`, and its lookups often come in
//! runs of neighbouring keys: a PodGroup's members in key order (pods of one job are
//! usually named alike, so they sit next to each other in the pods map), then each
//! member's claims (named after the pod, so they follow each other too). A
//! `BTreeMap` lookup compares the key with a dozen or more others from the root
//! down; with keys that share a long prefix each compare is a `memcmp` call. A
//! [`Finger`] remembers where its last lookup ended and first steps forward from
//! there, a few entries at most, before it searches from the root.
//!
//! Its answers are `BTreeMap::get_key_value`'s for every key in every order; only the
//! cost differs.

use core::cmp::Ordering;
use core::ops::Bound;

use crate::alloc_prelude::*;
use alloc::collections::btree_map;

/// Entries a lookup steps over before it searches from the root instead.
const STEPS: usize = 4;

/// Looks keys up in `map`, stepping forward from the previous lookup first.
pub(super) struct Finger<'a, V> {
    map: &'a BTreeMap<String, V>,
    /// The entries with keys above `last`, when known.
    after: Option<(&'a str, btree_map::Range<'a, String, V>)>,
}

impl<'a, V> Finger<'a, V> {
    pub(super) fn new(map: &'a BTreeMap<String, V>) -> Self {
        Finger { map, after: None }
    }

    /// `map.get_key_value(key)`.
    pub(super) fn get(&mut self, key: &str) -> Option<(&'a String, &'a V)> {
        if let Some((last, after)) = self.after.as_mut()
            && key > *last
        {
            for _ in 0..STEPS {
                let mut ahead = after.clone();
                let Some(e) = ahead.next() else {
                    // No key above `last` is in the map.
                    return None;
                };
                match e.0.as_str().cmp(key) {
                    Ordering::Less => {
                        (*last, *after) = (e.0.as_str(), ahead);
                    }
                    Ordering::Equal => {
                        (*last, *after) = (e.0.as_str(), ahead);
                        return Some(e);
                    }
                    // The first key above `last` is beyond `key`: `key` is absent.
                    Ordering::Greater => return None,
                }
            }
        }
        let mut from = self
            .map
            .range::<str, _>((Bound::Included(key), Bound::Unbounded));
        match from.clone().next() {
            Some(e) if e.0 == key => {
                from.next();
                self.after = Some((e.0.as_str(), from));
                Some(e)
            }
            // Absent: the next lookup searches from the root again (the entries
            // after `key` are known, but not by a key that lives as long as they).
            _ => {
                self.after = None;
                None
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Keys alike but for a few characters: long shared prefixes, as scheduler keys.
    fn key() -> impl Strategy<Value = String> {
        (0u32..40).prop_map(|i| format!("ns/job-{:02}-{}", i / 4, i % 4))
    }

    proptest! {
        /// A finger answers as the map does, for runs of increasing keys, repeats,
        /// keys going back, and keys absent from the map. (Oracle:
        /// `BTreeMap::get_key_value`.) Planted bugs it catches: answering an absent
        /// key with the next entry (`Greater` treated as found), or stepping from a
        /// key below the last one.
        #[test]
        fn a_finger_answers_as_the_map(
            present in proptest::collection::btree_set(key(), 0..30),
            runs in proptest::collection::vec(proptest::collection::vec(key(), 0..12), 0..6),
        ) {
            let map: BTreeMap<String, usize> =
                present.into_iter().enumerate().map(|(i, k)| (k, i)).collect();
            let mut finger = Finger::new(&map);
            for mut run in runs {
                // Mostly increasing runs, each starting anywhere.
                run.sort();
                for k in &run {
                    prop_assert_eq!(finger.get(k), map.get_key_value(k.as_str()), "{}", k);
                }
                for k in run.iter().rev() {
                    prop_assert_eq!(finger.get(k), map.get_key_value(k.as_str()), "{}", k);
                }
            }
        }
    }
}
