//! Kubernetes resource quantities.
/// placeholder
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantity;
/// placeholder
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QuantityError {}
impl core::fmt::Display for QuantityError { fn fmt(&self, _: &mut core::fmt::Formatter<'_>) -> core::fmt::Result { Ok(()) } }
