//! taint
