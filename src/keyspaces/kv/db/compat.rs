//! `kv.Set` and `kv.Delete`: kvdb SET (no TTL) and DEL on the signer's
//! `default` database. One KV path, two spellings.

use super::ops::{KvdbAction, KvdbOp};
use crate::keyspaces::kv::keys::DEFAULT_DB;
use crate::keyspaces::params::Params;
use crate::keyspaces::TxContext;
use crate::proto::kv as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Sets one of the signer's keys in the default database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvSet {
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

/// Deletes one of the signer's keys in the default database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvDelete {
    pub key: Vec<u8>,
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

impl KvSet {
    /// The kvdb action this is.
    pub fn as_kvdb(&self) -> KvdbAction {
        KvdbAction {
            db: DEFAULT_DB.to_string(),
            key: self.key.clone(),
            op: KvdbOp::Set {
                value: self.value.clone(),
                ttl_ms: 0,
            },
        }
    }
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        self.as_kvdb().check_stateless(params)
    }
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        self.as_kvdb().execute(state, ctx)
    }
}

impl KvDelete {
    pub fn as_kvdb(&self) -> KvdbAction {
        KvdbAction {
            db: DEFAULT_DB.to_string(),
            key: self.key.clone(),
            op: KvdbOp::Del,
        }
    }
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        self.as_kvdb().check_stateless(params)
    }
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        self.as_kvdb().execute(state, ctx)
    }
}
