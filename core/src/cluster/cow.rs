//! A vector whose clones share their elements and copy them on write, a chunk at a
//! time.

use alloc::sync::Arc;
use core::ops::{Index, IndexMut};

use crate::alloc_prelude::*;

/// Elements per chunk: a write after a clone copies at most this many.
const CHUNK: usize = 64;

/// A vector in chunks of [`CHUNK`] shared between clones: cloning costs one reference
/// count per chunk, and the first write to a chunk after a clone copies that chunk
/// only. For tables a cluster clone (a what-if snapshot) shares and then edits in a
/// few places.
#[derive(Clone, Debug)]
pub(crate) struct CowVec<T> {
    chunks: Vec<Arc<Vec<T>>>,
    len: usize,
}

impl<T> Default for CowVec<T> {
    fn default() -> Self {
        CowVec {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Clone> CowVec<T> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn push(&mut self, value: T) {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Arc::new(Vec::with_capacity(CHUNK)));
        }
        let last = self.chunks.last_mut().expect("a chunk with room");
        Arc::make_mut(last).push(value);
        self.len += 1;
    }

    /// The element at `i`, if there is one.
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self[i])
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.chunks.iter().flat_map(|c| c.iter())
    }
}

impl<T> Index<usize> for CowVec<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

impl<T: Clone> IndexMut<usize> for CowVec<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        assert!(i < self.len, "index {i} out of bounds ({})", self.len);
        &mut Arc::make_mut(&mut self.chunks[i / CHUNK])[i % CHUNK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_until_written() {
        let mut a: CowVec<u32> = CowVec::default();
        for i in 0..200 {
            a.push(i);
        }
        let mut b = a.clone();
        b[70] = 7000;
        b.push(200);
        assert_eq!(a.len(), 200);
        assert_eq!(b.len(), 201);
        assert_eq!(a[70], 70);
        assert_eq!(b[70], 7000);
        // Only the written chunk was copied.
        assert!(Arc::ptr_eq(&a.chunks[0], &b.chunks[0]));
        assert!(!Arc::ptr_eq(&a.chunks[1], &b.chunks[1]));
        assert_eq!(
            a.iter().copied().collect::<Vec<_>>(),
            (0..200).collect::<Vec<_>>()
        );
        assert_eq!(b.iter().filter(|&&x| x == 7000).count(), 1);
    }
}
