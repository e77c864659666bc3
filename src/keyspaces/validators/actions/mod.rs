//! Action handlers of the `validators/` keyspace, one file each.

mod apply;
mod endpoints;
mod leave;
mod rotate;
mod vote;

pub use apply::{pop_message, ApplyValidator};
pub use endpoints::UpdateValidatorEndpoints;
pub use leave::LeaveValidator;
pub use rotate::RotateConsensusKey;
pub use vote::VoteValidator;

use crate::tx::TxError;

/// Exactly 32 bytes, or `InvalidArgument` naming the field.
pub(crate) fn key32(field: &str, bytes: &[u8]) -> Result<[u8; 32], TxError> {
    <[u8; 32]>::try_from(bytes).map_err(|_| {
        TxError::InvalidArgument(format!(
            "{field} is {} bytes, expected 32: {}",
            bytes.len(),
            hex::encode(bytes)
        ))
    })
}
