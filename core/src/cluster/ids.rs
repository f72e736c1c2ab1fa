//! Dense `u32` ids for the entities of a [`Cluster`](crate::Cluster).
//!
//! Ids are indices into the cluster's arenas: they fit in a JavaScript number and make
//! the bitset index possible. An id stays valid until its object is removed; after that
//! the slot may be reused by a later object, so callers that keep ids across removals
//! should re-resolve them by name.

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "serde", serde(transparent))]
        pub struct $name(pub u32);

        impl $name {
            /// The id as a `usize` index.
            #[inline]
            #[must_use]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A node (or a node name that a ResourceSlice refers to before the Node exists).
    NodeId
);
id_type!(
    /// One device published in a ResourceSlice.
    DeviceId
);
id_type!(
    /// One ResourceSlice.
    SliceId
);
id_type!(
    /// One resource pool, identified by (driver, pool name).
    PoolId
);
