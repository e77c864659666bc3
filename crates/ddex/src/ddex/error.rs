//! Why an ERN message was refused, by the importer or by consensus.

use thiserror::Error;

/// One refusal, with the offending values. The keyspace maps each kind to a
/// stable rights code (`InvalidErn`, `MalformedIsrc`, `InvalidTerritory`,
/// `RightsCapExceeded`, `OverlappingDeals`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DdexError {
    /// A missing required element, a bad identifier, a dangling reference,
    /// an unsupported profile: anything not listed below.
    #[error("invalid ERN: {0}")]
    Invalid(String),
    #[error("malformed ISRC {isrc:?}: {reason}")]
    Isrc { isrc: String, reason: String },
    #[error("invalid territory {0:?}")]
    Territory(String),
    #[error("{what} is {got}, over the genesis cap of {max}")]
    Cap { what: String, got: usize, max: u32 },
    #[error("deals overlap: {0}")]
    OverlappingDeals(String),
}

/// Shorthand for [`DdexError::Invalid`].
pub fn invalid(msg: impl Into<String>) -> DdexError {
    DdexError::Invalid(msg.into())
}

/// Fails with [`DdexError::Cap`] when `got > max`.
pub fn cap(what: &str, got: usize, max: u32) -> Result<(), DdexError> {
    if got > max as usize {
        return Err(DdexError::Cap {
            what: what.to_string(),
            got,
            max,
        });
    }
    Ok(())
}
