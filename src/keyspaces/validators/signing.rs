//! Which validator a key signs for. A validator is named by its operator
//! key for life: its record, account, nonce, votes, assignments and upload
//! sets keep that name. `RotateOperatorKey` hands the signing to a new key
//! (`operator_keys/{new}` → the operator) and retires the key that signed
//! before (`operator_keys/{old}`, `retired`). Authentication resolves every
//! tx's signer through [`ValidatorSigningRead::acting`], so a tx signed by
//! the new key acts as the validator, and one signed by a retired key is
//! refused before its nonce. Peer requests resolve their requester the
//! same way.

use prost::Message;

use super::keys::operator_key_key;
use crate::proto::genesis as pb;
use crate::proto::governance as gpb;
use crate::store::decode_row as decode;
use crate::store::{StateRead, StateWrite, StoreError};
use crate::tx::TxError;

/// The domain of the new key's proof of possession.
pub const OPERATOR_KEY_DOMAIN: &[u8] = b"stave/operator-key/v1";

/// Whom a signing key acts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acting {
    /// Itself: the key has no `operator_keys/` row (every key that never
    /// took part in a rotation).
    Own,
    /// The validator named by this operator key, which it signs for now.
    For([u8; 32]),
    /// The validator named by this operator key, for which it signed
    /// before a rotation: refused.
    Retired([u8; 32]),
}

impl Acting {
    /// The name the key's txs act under: `key` itself, or its validator
    /// (retired keys included: the node of a retired key is still that
    /// validator).
    pub fn name(self, key: &[u8; 32]) -> [u8; 32] {
        match self {
            Acting::Own => *key,
            Acting::For(op) | Acting::Retired(op) => op,
        }
    }

    /// The name `key` signs under, unless a rotation retired it.
    ///
    /// # Errors
    /// `OperatorKeyRetired`.
    pub fn signing_name(self, key: &[u8; 32]) -> Result<[u8; 32], TxError> {
        match self {
            Acting::Retired(op) => Err(TxError::OperatorKeyRetired {
                signer: hex::encode(key),
                operator: hex::encode(op),
            }),
            other => Ok(other.name(key)),
        }
    }
}

pub trait ValidatorSigningRead: StateRead {
    /// The `operator_keys/` row of `key`.
    fn operator_key(&self, key: &[u8; 32]) -> Result<Option<gpb::OperatorKey>, StoreError> {
        let k = operator_key_key(key);
        decode(&k, self.get_raw(&k)?)
    }

    /// Whom `key` signs for; a row naming no 32-byte operator is corruption.
    fn acting(&self, key: &[u8; 32]) -> Result<Acting, StoreError> {
        let Some(row) = self.operator_key(key)? else {
            return Ok(Acting::Own);
        };
        let op = <[u8; 32]>::try_from(row.operator.as_slice()).map_err(|_| {
            StoreError::corrupt(&operator_key_key(key), "operator of another length")
        })?;
        Ok(if row.retired {
            Acting::Retired(op)
        } else {
            Acting::For(op)
        })
    }
}
impl<T: StateRead + ?Sized> ValidatorSigningRead for T {}

/// `OperatorKeyRetired` when a rotation retired `key`: it signs nothing
/// any more, neither txs nor what a tx carries signed by it (an upload
/// manifest, a KV token) nor an access request.
///
/// # Errors
/// `OperatorKeyRetired`; a store fault.
pub fn refuse_retired<S: StateRead + ?Sized>(state: &S, key: &[u8; 32]) -> Result<(), TxError> {
    state.acting(key)?.signing_name(key).map(|_| ())
}

pub trait ValidatorSigningWrite: StateWrite {
    fn put_operator_key(&mut self, key: &[u8; 32], row: &gpb::OperatorKey) {
        self.put_raw(operator_key_key(key), row.encode_to_vec());
    }
}
impl<T: StateWrite + ?Sized> ValidatorSigningWrite for T {}

/// The key that signs for the validator `operator` whose record is
/// `record`: its `operator_signing_key`, or the operator key itself.
pub fn signing_key(operator: &[u8; 32], record: &pb::ValidatorRecord) -> [u8; 32] {
    <[u8; 32]>::try_from(record.operator_signing_key.as_slice()).unwrap_or(*operator)
}

/// What the new key signs to show it is held by the validator's operator:
/// `"stave/operator-key/v1" ‖ u32be(len) ‖ chain_id ‖ operator ‖ new_key`.
pub fn operator_key_pop_message(
    chain_id: &str,
    operator: &[u8; 32],
    new_key: &[u8; 32],
) -> Vec<u8> {
    let mut m = OPERATOR_KEY_DOMAIN.to_vec();
    m.extend_from_slice(&(chain_id.len() as u32).to_be_bytes());
    m.extend_from_slice(chain_id.as_bytes());
    m.extend_from_slice(operator);
    m.extend_from_slice(new_key);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retired_key_still_names_its_validator_and_an_own_key_itself() {
        let (k, op) = ([1u8; 32], [2u8; 32]);
        assert_eq!(Acting::Own.name(&k), k);
        assert_eq!(Acting::For(op).name(&k), op);
        assert_eq!(Acting::Retired(op).name(&k), op);
    }

    #[test]
    fn the_record_names_its_signing_key_or_signs_itself() {
        let op = [3u8; 32];
        let mut r = pb::ValidatorRecord::default();
        assert_eq!(signing_key(&op, &r), op);
        r.operator_signing_key = vec![4; 32];
        assert_eq!(signing_key(&op, &r), [4; 32]);
    }

    #[test]
    fn the_proof_message_binds_chain_operator_and_key() {
        let m = operator_key_pop_message("c", &[5; 32], &[6; 32]);
        assert!(m.starts_with(OPERATOR_KEY_DOMAIN));
        assert_ne!(m, operator_key_pop_message("d", &[5; 32], &[6; 32]));
        assert_ne!(m, operator_key_pop_message("c", &[6; 32], &[5; 32]));
    }
}
