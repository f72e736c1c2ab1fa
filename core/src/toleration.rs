//! toleration
