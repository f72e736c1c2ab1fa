//! Semantic versions.
/// placeholder
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version;
/// placeholder
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VersionError {}
impl core::fmt::Display for VersionError { fn fmt(&self, _: &mut core::fmt::Formatter<'_>) -> core::fmt::Result { Ok(()) } }
