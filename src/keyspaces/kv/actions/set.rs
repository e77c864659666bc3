//! `kv.Set { key, value }`: stores `value` under `kv/{signer}/{key}`.

use super::check_key;
use crate::keyspaces::accounts::{AccountsRead, AccountsWrite};
use crate::keyspaces::kv::{stored_size, KvEntry, KvRead, KvWrite};
use crate::keyspaces::params::Params;
use crate::keyspaces::{Event, TxContext};
use crate::proto::kv as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Sets one of the signer's keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvSet {
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

impl From<pb::KvSet> for KvSet {
    fn from(p: pb::KvSet) -> Self {
        KvSet {
            key: p.key,
            value: p.value,
        }
    }
}

impl From<KvSet> for pb::KvSet {
    fn from(d: KvSet) -> Self {
        pb::KvSet {
            key: d.key,
            value: d.value,
        }
    }
}

impl KvSet {
    /// Key length and value size against the params.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_key(&self.key, params)?;
        if self.value.len() > params.max_kv_value_bytes as usize {
            return Err(TxError::InvalidArgument(format!(
                "kv value is {} bytes, over the limit of {}",
                self.value.len(),
                params.max_kv_value_bytes
            )));
        }
        Ok(())
    }

    /// Writes the entry and charges the size difference to the signer's quota.
    ///
    /// # Errors
    /// `QuotaExceeded` when the signer's stored bytes would pass the quota.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let signer = ctx.signer;
        let old = state
            .kv_entry(&signer, &self.key)?
            .map(|e| stored_size(&self.key, &e.value))
            .unwrap_or(0);
        let new = stored_size(&self.key, &self.value);
        let mut account = state.account(&signer)?.unwrap_or_default();
        let used = account.stored_bytes.saturating_sub(old);
        let quota = ctx.params.max_stored_bytes_per_account;
        if used.saturating_add(new) > quota {
            return Err(TxError::QuotaExceeded {
                account: hex::encode(signer),
                used,
                adding: new,
                quota,
            });
        }
        account.stored_bytes = used + new;
        state.put_account(&signer, &account);
        state.put_kv_entry(
            &signer,
            &self.key,
            KvEntry {
                value: self.value.clone(),
                updated_height: ctx.height,
                updated_at: ctx.time_ns,
            },
        );
        ctx.emit(
            Event::new("kv.set")
                .indexed("signer", hex::encode(signer))
                .indexed("key", hex::encode(&self.key))
                .plain("size", self.value.len().to_string()),
        );
        Ok(())
    }
}
