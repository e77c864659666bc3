//! Action handlers of the `validators/` keyspace, one file each.

mod apply;
mod endpoints;
mod leave;
mod operator_key;
mod rotate;
mod vote;
mod x25519;

pub use apply::{pop_message, ApplyValidator};
pub use endpoints::UpdateValidatorEndpoints;
pub use leave::LeaveValidator;
pub use operator_key::RotateOperatorKey;
pub use rotate::RotateConsensusKey;
pub use vote::VoteValidator;
pub use x25519::RotateX25519Key;

use crate::keyspaces::validators::{
    validator_key, GovError, ValidatorStatus, ValidatorsRead, ValidatorsWrite,
};
use crate::proto::genesis::{GenesisValidator, ValidatorRecord};
use crate::store::{StateWrite, StoreError};
use crate::tx::TxError;

/// The signer's own record, if it is not REMOVED.
///
/// # Errors
/// `NotOperator` when `op` has no record or a REMOVED one.
pub(crate) fn own_record<S: StateWrite>(
    state: &S,
    op: &[u8; 32],
) -> Result<ValidatorRecord, TxError> {
    let status = state.validator_status(op)?;
    match (status, state.validator(op)?) {
        (Some(s), Some(r)) if s != ValidatorStatus::Removed => Ok(r),
        _ => Err(GovError::NotOperator {
            signer: hex::encode(op),
            status: status.map_or("absent", ValidatorStatus::name),
        }
        .into()),
    }
}

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
    let mut record = own_record(state, op)?;
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

/// A key and the signature proving possession of it, from the wire:
/// `"{field} is N bytes, expected 32"` (or 64 for `{field}_signature`).
pub(crate) fn key_and_proof(
    field: &str,
    key: &[u8],
    signature: &[u8],
) -> Result<([u8; 32], [u8; 64]), String> {
    let k = <[u8; 32]>::try_from(key)
        .map_err(|_| format!("{field} is {} bytes, expected 32", key.len()))?;
    let s = <[u8; 64]>::try_from(signature).map_err(|_| {
        format!(
            "{field}_signature is {} bytes, expected 64",
            signature.len()
        )
    })?;
    Ok((k, s))
}

/// `InvalidArgument` unless `key` is a valid, non-weak ed25519 point.
pub(crate) fn check_point(what: &str, key: &[u8; 32]) -> Result<(), TxError> {
    crate::tx::identity_key(key)
        .map_err(|e| TxError::InvalidArgument(format!("{what} {}: {e}", hex::encode(key))))?;
    Ok(())
}
