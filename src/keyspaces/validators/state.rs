//! Typed access to validator records and the validator bookkeeping.

use prost::Message;

use super::keys::{by_consensus_key, comet_set_key, queue_key, totals_key, validator_key};
use super::status::ValidatorStatus;
use crate::proto::genesis as pb;
use crate::proto::governance as gpb;
use crate::store::decode_row as decode;
use crate::store::{StateRead, StateWrite, StoreError};

pub trait ValidatorsRead: StateRead {
    fn validator(&self, operator: &[u8; 32]) -> Result<Option<pb::ValidatorRecord>, StoreError> {
        let key = validator_key(operator);
        decode(&key, self.get_raw(&key)?)
    }

    /// The record's status; a stored number outside the enum is corruption.
    fn validator_status(&self, operator: &[u8; 32]) -> Result<Option<ValidatorStatus>, StoreError> {
        match self.validator(operator)? {
            None => Ok(None),
            Some(r) => ValidatorStatus::try_from(r.status)
                .map(Some)
                .map_err(|v| StoreError::corrupt(&validator_key(operator), format!("status {v}"))),
        }
    }

    /// The voting power of `operator` if it is ACTIVE, else 0.
    fn active_power(&self, operator: &[u8]) -> Result<u64, StoreError> {
        let Ok(op) = <[u8; 32]>::try_from(operator) else {
            return Ok(0);
        };
        Ok(match self.validator(&op)? {
            Some(r) if r.status == ValidatorStatus::Active as u32 => {
                r.validator.map_or(0, |v| v.power)
            }
            _ => 0,
        })
    }

    /// The operator whose record holds `consensus`.
    fn validator_by_consensus(&self, consensus: &[u8; 32]) -> Result<Option<[u8; 32]>, StoreError> {
        Ok(self
            .get_raw(&by_consensus_key(consensus))?
            .and_then(|v| <[u8; 32]>::try_from(v.as_slice()).ok()))
    }

    fn validator_totals(&self) -> Result<gpb::ValidatorTotals, StoreError> {
        let key = totals_key();
        Ok(decode(&key, self.get_raw(&key)?)?.unwrap_or_default())
    }

    fn comet_set(&self) -> Result<gpb::CometSet, StoreError> {
        let key = comet_set_key();
        Ok(decode(&key, self.get_raw(&key)?)?.unwrap_or_default())
    }

    fn update_queue(&self) -> Result<gpb::UpdateQueue, StoreError> {
        let key = queue_key();
        Ok(decode(&key, self.get_raw(&key)?)?.unwrap_or_default())
    }

    /// Whether `operator` names a validator whose record is `ACTIVE`.
    fn is_active_validator(&self, operator: &[u8; 32]) -> Result<bool, StoreError> {
        Ok(self
            .validator(operator)?
            .is_some_and(|r| r.status == super::STATUS_ACTIVE))
    }
}
impl<T: StateRead + ?Sized> ValidatorsRead for T {}

pub trait ValidatorsWrite: StateWrite {
    fn put_validator(&mut self, operator: &[u8; 32], record: &pb::ValidatorRecord) {
        self.put_raw(validator_key(operator), record.encode_to_vec());
    }
    fn delete_validator(&mut self, operator: &[u8; 32]) {
        self.delete_raw(validator_key(operator));
    }
    fn put_validator_by_consensus(&mut self, consensus: &[u8; 32], operator: &[u8; 32]) {
        self.put_raw(by_consensus_key(consensus), operator.to_vec());
    }
    fn delete_validator_by_consensus(&mut self, consensus: &[u8; 32]) {
        self.delete_raw(by_consensus_key(consensus));
    }
    fn put_validator_totals(&mut self, t: &gpb::ValidatorTotals) {
        self.put_raw(totals_key(), t.encode_to_vec());
    }
    fn put_comet_set(&mut self, s: &gpb::CometSet) {
        self.put_raw(comet_set_key(), s.encode_to_vec());
    }
    fn put_update_queue(&mut self, q: &gpb::UpdateQueue) {
        self.put_raw(queue_key(), q.encode_to_vec());
    }
    /// Appends a wanted power for `consensus` to the update queue.
    fn enqueue_update(
        &mut self,
        consensus: &[u8; 32],
        power: u64,
        height: u64,
    ) -> Result<(), StoreError> {
        debug_assert!(
            power == 0 || power >= super::params::MIN_VALIDATOR_POWER,
            "the planner drains only powers of 0 or at least MIN_VALIDATOR_POWER"
        );
        let mut q = self.update_queue()?;
        // the newest wanted power supersedes any still queued for the key
        q.updates
            .retain(|u| u.consensus_key.as_slice() != consensus);
        q.updates.push(gpb::QueuedUpdate {
            consensus_key: consensus.to_vec(),
            power,
            queued_at: height,
        });
        self.put_update_queue(&q);
        Ok(())
    }
}
impl<T: StateWrite + ?Sized> ValidatorsWrite for T {}
