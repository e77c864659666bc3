//! `RotateOperatorKey { operator_key, operator_key_signature }`: the
//! operator of an ACTIVE or UNBONDING validator hands its signing to
//! a new ed25519 key, which proves possession by signing
//! [`operator_key_pop_message`]. The validator keeps its name (the operator
//! key its record is stored under) everywhere; from the next block the new
//! key signs for it and the key that signed before is retired
//! ([`super::super::signing`]). The new key must be unknown to the chain:
//! no account, no validator record, no `operator_keys/` row, so nothing it
//! signed before could be mistaken for the validator's and no key ever
//! signs for two names.

use super::{check_point, key_and_proof, own_record};
use crate::keyspaces::accounts::AccountsRead;
use crate::keyspaces::params::Params;
use crate::keyspaces::validators::signing::{
    operator_key_pop_message, signing_key, ValidatorSigningRead, ValidatorSigningWrite,
};
use crate::keyspaces::validators::{GovError, ValidatorStatus, ValidatorsRead, ValidatorsWrite};
use crate::keyspaces::{Event, TxContext};
use crate::proto::governance as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// The new operator key with its proof of possession.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotateOperatorKey {
    pub operator_key: [u8; 32],
    pub operator_key_signature: [u8; 64],
}

impl TryFrom<pb::RotateOperatorKey> for RotateOperatorKey {
    type Error = String;
    fn try_from(p: pb::RotateOperatorKey) -> Result<Self, String> {
        let (operator_key, operator_key_signature) =
            key_and_proof("operator_key", &p.operator_key, &p.operator_key_signature)?;
        Ok(RotateOperatorKey {
            operator_key,
            operator_key_signature,
        })
    }
}

impl From<RotateOperatorKey> for pb::RotateOperatorKey {
    fn from(r: RotateOperatorKey) -> Self {
        pb::RotateOperatorKey {
            operator_key: r.operator_key.to_vec(),
            operator_key_signature: r.operator_key_signature.to_vec(),
        }
    }
}

impl RotateOperatorKey {
    /// The new key is an ed25519 point.
    ///
    /// # Errors
    /// `InvalidArgument`.
    pub fn check_stateless(&self, _: &Params) -> Result<(), TxError> {
        check_point("operator key", &self.operator_key)
    }

    /// The new key's signature over the proof message for `operator`.
    fn check_pop(&self, chain_id: &str, operator: &[u8; 32]) -> Result<(), GovError> {
        let bad = |reason: String| GovError::BadOperatorKeyProof {
            key: hex::encode(self.operator_key),
            reason,
        };
        let (_, vk) =
            crate::tx::identity_key(&self.operator_key).map_err(|e| bad(e.to_string()))?;
        let sig = ed25519_consensus::Signature::from(self.operator_key_signature);
        crate::gas::work::count(crate::gas::work::Kind::Signature);
        let m = operator_key_pop_message(chain_id, operator, &self.operator_key);
        vk.verify(&sig, &m).map_err(|_| {
            bad(format!(
                "signature over chain {chain_id:?} and operator {} does not verify",
                hex::encode(operator)
            ))
        })
    }

    /// `Conflict` unless the chain has never seen `operator_key`.
    fn check_unused<S: StateWrite>(&self, state: &S) -> Result<(), TxError> {
        let k = &self.operator_key;
        let used = if state.operator_key(k)?.is_some() {
            Some("signs or signed for a validator")
        } else if state.validator(k)?.is_some() {
            Some("names a validator record")
        } else if state.account(k)?.is_some() {
            Some("has an account")
        } else {
            None
        };
        match used {
            Some(why) => Err(TxError::Conflict(format!(
                "operator key {} {why}: a new operator key must be unused",
                hex::encode(k)
            ))),
            None => Ok(()),
        }
    }

    /// # Errors
    /// `NotOperator` (no record, or a REMOVED one), `InvalidTransition`
    /// (a CANDIDATE), `BadProofOfPossession`,
    /// `Conflict` (a key the chain knows, or a second rotation in one
    /// block).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let op = ctx.signer;
        self.check_pop(&ctx.chain_id, &op)?;
        self.check_unused(state)?;
        let mut record = own_record(state, &op)?;
        // a CANDIDATE's record is deleted if its election fails: it
        // rotates once admitted
        if record.status == ValidatorStatus::Candidate as u32 {
            return Err(GovError::InvalidTransition {
                subject: hex::encode(op),
                from: ValidatorStatus::Candidate.name(),
                action: "RotateOperatorKey",
            }
            .into());
        }
        // the key that signed this tx signs for `op` in the block's base
        // state; a rotation earlier in this block has already moved on
        let (old, new) = (ctx.signing_key, self.operator_key);
        let recorded = signing_key(&op, &record);
        if recorded != old {
            return Err(TxError::Conflict(format!(
                "validator {} already handed signing from {} to {} in this block",
                hex::encode(op),
                hex::encode(old),
                hex::encode(recorded)
            )));
        }
        record.operator_signing_key = new.to_vec();
        state.put_validator(&op, &record);
        let row = |retired| pb::OperatorKey {
            operator: op.to_vec(),
            retired,
        };
        state.put_operator_key(&old, &row(true));
        state.put_operator_key(&new, &row(false));
        ctx.emit(
            Event::new("validator.operator_key_rotated")
                .indexed("operator", hex::encode(op))
                .indexed("operator_key", hex::encode(new))
                .plain("old_operator_key", hex::encode(old)),
        );
        Ok(())
    }
}
