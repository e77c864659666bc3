//! `kv.Delete { key }`: removes `kv/{signer}/{key}`.

use super::check_key;
use crate::keyspaces::accounts::{AccountsRead, AccountsWrite};
use crate::keyspaces::kv::{stored_size, KvRead, KvWrite};
use crate::keyspaces::params::Params;
use crate::keyspaces::{Event, TxContext};
use crate::proto::kv as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Deletes one of the signer's keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvDelete {
    pub key: Vec<u8>,
}

impl From<pb::KvDelete> for KvDelete {
    fn from(p: pb::KvDelete) -> Self {
        KvDelete { key: p.key }
    }
}

impl From<KvDelete> for pb::KvDelete {
    fn from(d: KvDelete) -> Self {
        pb::KvDelete { key: d.key }
    }
}

impl KvDelete {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_key(&self.key, params)
    }

    /// # Errors
    /// `NotFound` when the signer has no such key.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let signer = ctx.signer;
        let entry = state.kv_entry(&signer, &self.key)?.ok_or_else(|| {
            TxError::NotFound(format!(
                "kv key {} of {}",
                hex::encode(&self.key),
                hex::encode(signer)
            ))
        })?;
        let mut account = state.account(&signer)?.unwrap_or_default();
        account.stored_bytes = account
            .stored_bytes
            .saturating_sub(stored_size(&self.key, &entry.value));
        state.put_account(&signer, &account);
        state.delete_kv_entry(&signer, &self.key);
        ctx.emit(
            Event::new("kv.delete")
                .indexed("signer", hex::encode(signer))
                .indexed("key", hex::encode(&self.key)),
        );
        Ok(())
    }
}
