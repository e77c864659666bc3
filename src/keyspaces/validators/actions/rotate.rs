//! `RotateConsensusKey { consensus_key, consensus_key_signature }`: the
//! operator of an ACTIVE validator replaces its CometBFT consensus key. The
//! new key is queued to the record's power and the old key to 0; the
//! planner takes both in steps within the power-change rule, so for a few
//! blocks the validator's power is split between the keys. The node signs
//! with whichever key its CometBFT holds: the operator installs the new
//! `priv_validator_key.json` once the new key has the record's power.
//!
//! Only a validator with under 1/3 of the power may rotate, counting the
//! others that are leaving or rotating at 0: the others then hold over 2/3
//! whichever key the node signs with (unless more of them leave before it
//! signs with the new key). The planner's increases-first mode, which could
//! raise the new key before the old one falls, runs only when the staying
//! members hold under 4, which this rule rules out at the time of the tx. One rotation runs at a time per validator: a second waits
//! until CometBFT no longer knows the retiring key, and then frees it. The
//! retiring key stays indexed to the operator until then, so no other
//! record can take a key CometBFT still knows.

use super::apply::check_pop;
use super::{check_point, key32, key_and_proof};
use crate::keyspaces::params::Params;
use crate::keyspaces::validators::lifecycle::known_to_comet;
use crate::keyspaces::validators::{
    validator_key, GovError, ValidatorStatus, ValidatorsRead, ValidatorsWrite,
};
use crate::keyspaces::{Event, TxContext};
use crate::proto::governance as pb;
use crate::store::{StateWrite, StoreError};
use crate::tx::TxError;

/// A new consensus key with its proof of possession.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotateConsensusKey {
    pub consensus_key: [u8; 32],
    pub consensus_key_signature: [u8; 64],
}

impl TryFrom<pb::RotateConsensusKey> for RotateConsensusKey {
    type Error = String;
    fn try_from(p: pb::RotateConsensusKey) -> Result<Self, String> {
        let (consensus_key, consensus_key_signature) = key_and_proof(
            "consensus_key",
            &p.consensus_key,
            &p.consensus_key_signature,
        )?;
        Ok(RotateConsensusKey {
            consensus_key,
            consensus_key_signature,
        })
    }
}

impl From<RotateConsensusKey> for pb::RotateConsensusKey {
    fn from(r: RotateConsensusKey) -> Self {
        pb::RotateConsensusKey {
            consensus_key: r.consensus_key.to_vec(),
            consensus_key_signature: r.consensus_key_signature.to_vec(),
        }
    }
}

impl RotateConsensusKey {
    pub fn check_stateless(&self, _: &Params) -> Result<(), TxError> {
        check_point("consensus key", &self.consensus_key)
    }

    /// The signer's ACTIVE record.
    fn active_record<S: StateWrite>(
        state: &S,
        op: &[u8; 32],
    ) -> Result<crate::proto::genesis::ValidatorRecord, TxError> {
        let status = state.validator_status(op)?;
        match (status, state.validator(op)?) {
            (Some(ValidatorStatus::Active), Some(r)) => Ok(r),
            (Some(s), Some(_)) if s != ValidatorStatus::Removed => {
                Err(GovError::InvalidTransition {
                    subject: hex::encode(op),
                    from: s.name(),
                    action: "RotateConsensusKey",
                }
                .into())
            }
            _ => Err(GovError::NotOperator {
                signer: hex::encode(op),
                status: status.map_or("absent", ValidatorStatus::name),
            }
            .into()),
        }
    }

    /// # Errors
    /// `NotOperator` (no record, or a REMOVED one), `InvalidTransition`
    /// (not ACTIVE), `BadProofOfPossession`, `ConsensusKeyInUse` (any
    /// record's current key, or its retiring one), `Conflict` (the previous
    /// rotation's key is still known to CometBFT, or the validator holds a
    /// third of the power or more).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let op = ctx.signer;
        let mut record = Self::active_record(state, &op)?;
        check_pop(
            &self.consensus_key,
            &self.consensus_key_signature,
            &ctx.chain_id,
            &op,
        )?;
        if let Some(holder) = state.validator_by_consensus(&self.consensus_key)? {
            return Err(GovError::ConsensusKeyInUse {
                consensus_key: hex::encode(self.consensus_key),
                holder: hex::encode(holder),
            }
            .into());
        }
        let corrupt = || StoreError::corrupt(&validator_key(&op), "validator record without keys");
        let keys = record.validator.as_mut().ok_or_else(corrupt)?;
        let old = key32("consensus key", &keys.consensus_key)?;
        let power = keys.power;
        check_share(state, &op, power)?;
        let gov = record.governance.get_or_insert_with(Default::default);
        release_retired(state, &op, &gov.retiring_consensus_key)?;
        gov.retiring_consensus_key = old.to_vec();
        if let Some(keys) = record.validator.as_mut() {
            keys.consensus_key = self.consensus_key.to_vec();
        }
        state.put_validator(&op, &record);
        state.put_validator_by_consensus(&self.consensus_key, &op);
        state.enqueue_update(&self.consensus_key, power, ctx.height)?;
        state.enqueue_update(&old, 0, ctx.height)?;
        ctx.emit(
            Event::new("validator.consensus_key_rotated")
                .indexed("operator", hex::encode(op))
                .indexed("consensus_key", hex::encode(self.consensus_key))
                .plain("old_consensus_key", hex::encode(old))
                .plain("power", power.to_string()),
        );
        Ok(())
    }
}

/// `Conflict` while the previous rotation's key is still in CometBFT's set
/// or queue; otherwise frees it (its index entry), so that an operator
/// holds at most two keys: the current one and the one being retired.
pub(super) fn release_retired<S: StateWrite>(
    state: &mut S,
    op: &[u8; 32],
    retiring: &[u8],
) -> Result<(), TxError> {
    if retiring.is_empty() {
        return Ok(());
    }
    let retiring = key32("retiring consensus key", retiring)?;
    if known_to_comet(state, &retiring)? {
        return Err(TxError::Conflict(format!(
            "the previous rotation's key {} is still in CometBFT's set or queued; try again once it left",
            hex::encode(retiring)
        )));
    }
    if state.validator_by_consensus(&retiring)? == Some(*op) {
        state.delete_validator_by_consensus(&retiring);
    }
    Ok(())
}

/// `Conflict` unless the other members hold over 2/3 of the power while
/// this validator's is split between two keys (CometBFT signs with one):
/// 3 × its power must stay under the total. Counted conservatively: each
/// other member at the lower of its set power and any power queued for it,
/// and at 0 if its operator is not ACTIVE (leaving) or is itself mid-
/// rotation (its node may sign with either key); this validator at the
/// higher of `power` and what its keys hold in the set.
fn check_share<S: StateWrite>(state: &S, op: &[u8; 32], power: u64) -> Result<(), TxError> {
    let set = state.comet_set()?;
    let queue = state.update_queue()?;
    let (mut others, mut held) = (0u64, 0u64);
    for m in set.members.iter().filter(|m| m.power > 0) {
        let Ok(key) = <[u8; 32]>::try_from(m.consensus_key.as_slice()) else {
            continue;
        };
        let holder = state.validator_by_consensus(&key)?;
        if holder == Some(*op) {
            held = held.saturating_add(m.power);
            continue;
        }
        if !counts_as_steady(state, holder)? {
            continue;
        }
        let queued = queue
            .updates
            .iter()
            .filter(|q| q.consensus_key == m.consensus_key)
            .map(|q| q.power)
            .min();
        others = others.saturating_add(queued.map_or(m.power, |q| q.min(m.power)));
    }
    let mine = power.max(held);
    let total = others.saturating_add(mine);
    if mine.saturating_mul(3) >= total {
        return Err(TxError::Conflict(format!(
            "this validator holds {mine} of {total} power (counting validators that are leaving \
             or rotating at 0): split between two keys while CometBFT signs with one, the rest \
             would not hold over 2/3 and the chain could stop. A rotation needs a share under 1/3"
        )));
    }
    Ok(())
}

/// Whether a set member's power can be counted on while another validator
/// rotates: its operator is ACTIVE and not itself rotating.
fn counts_as_steady<S: StateWrite>(state: &S, holder: Option<[u8; 32]>) -> Result<bool, TxError> {
    let Some(op) = holder else {
        return Ok(false);
    };
    let Some(record) = state.validator(&op)? else {
        return Ok(false);
    };
    if record.status != ValidatorStatus::Active as u32 {
        return Ok(false);
    }
    let retiring = record
        .governance
        .as_ref()
        .map_or(&[][..], |g| g.retiring_consensus_key.as_slice());
    match <[u8; 32]>::try_from(retiring) {
        Ok(k) => Ok(!known_to_comet(state, &k)?),
        Err(_) => Ok(true),
    }
}
