//! Action handlers of the `validators/` keyspace, one file each.

mod apply;
mod endpoints;
mod leave;
mod rotate;
mod vote;
mod x25519;

pub use apply::{pop_message, ApplyValidator};
pub use endpoints::UpdateValidatorEndpoints;
pub use leave::LeaveValidator;
pub use rotate::RotateConsensusKey;
pub use vote::VoteValidator;
pub use x25519::RotateX25519Key;

use crate::keyspaces::validators::{
    validator_key, GovError, ValidatorStatus, ValidatorsRead, ValidatorsWrite,
};
use crate::proto::genesis::GenesisValidator;
use crate::store::{StateWrite, StoreError};
use crate::tx::TxError;

/// Lets `edit` change the published keys and endpoints of the signer's own
/// record, and stores it.
///
/// # Errors
/// `NotOperator` when `op` has no record or a REMOVED one; `edit`'s error
/// (then nothing is stored).
pub(crate) fn edit_own_record<S: StateWrite, R>(
    state: &mut S,
    op: &[u8; 32],
    edit: impl FnOnce(&mut GenesisValidator) -> Result<R, TxError>,
) -> Result<R, TxError> {
    let status = state.validator_status(op)?;
    let mut record = match (status, state.validator(op)?) {
        (Some(s), Some(r)) if s != ValidatorStatus::Removed => r,
        _ => {
            return Err(GovError::NotOperator {
                signer: hex::encode(op),
                status: status.map_or("absent", ValidatorStatus::name),
            }
            .into())
        }
    };
    let keys = record
        .validator
        .as_mut()
        .ok_or_else(|| StoreError::corrupt(&validator_key(op), "validator record without keys"))?;
    let r = edit(keys)?;
    state.put_validator(op, &record);
    Ok(r)
}

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
