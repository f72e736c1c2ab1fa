//! An example of a downstream crate: another scheduler property-testing its own
//! placement decisions with gangpack's test kit (`gangpack::testing`, feature
//! `testing`) and its independent validator (`gangpack::validate_placement`).
//!
//! Everything is in `tests/naive_placer.rs`; see `README.md`.
