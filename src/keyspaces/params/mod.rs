//! The `params/` keyspace: consensus parameters, set at genesis from
//! `app_state.params`. Everything that changes what a tx does lives here,
//! never in `stave.toml`.

mod keys;
mod state;

pub use keys::params_key;
pub use state::{ParamsRead, ParamsWrite};

use serde::{Deserialize, Serialize};

use crate::proto::genesis as pb;

/// Consensus parameters (domain type of `stave.genesis.v1.Params`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    pub max_tx_bytes: u64,
    pub max_actions_per_tx: u32,
    pub max_memo_bytes: u32,
    pub max_kv_key_bytes: u32,
    pub max_kv_value_bytes: u32,
    pub max_stored_bytes_per_account: u64,
    /// Caps of the content and rights keyspaces.
    #[serde(default)]
    pub rights: crate::keyspaces::rights::RightsParams,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            max_tx_bytes: 128 * 1024,
            max_actions_per_tx: 64,
            max_memo_bytes: 256,
            max_kv_key_bytes: 256,
            max_kv_value_bytes: 64 * 1024,
            max_stored_bytes_per_account: 64 * 1024 * 1024,
            rights: Default::default(),
        }
    }
}

impl Params {
    /// Rejects parameters no network could run with.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_tx_bytes == 0 || self.max_actions_per_tx == 0 {
            return Err("max_tx_bytes and max_actions_per_tx must be positive".into());
        }
        if self.max_kv_key_bytes == 0 {
            return Err("max_kv_key_bytes must be positive".into());
        }
        self.rights.validate()?;
        Ok(())
    }
}

impl From<&Params> for pb::Params {
    fn from(p: &Params) -> Self {
        pb::Params {
            max_tx_bytes: p.max_tx_bytes,
            max_actions_per_tx: p.max_actions_per_tx,
            max_memo_bytes: p.max_memo_bytes,
            max_kv_key_bytes: p.max_kv_key_bytes,
            max_kv_value_bytes: p.max_kv_value_bytes,
            max_stored_bytes_per_account: p.max_stored_bytes_per_account,
            rights: Some((&p.rights).into()),
        }
    }
}

impl TryFrom<pb::Params> for Params {
    type Error = String;
    fn try_from(p: pb::Params) -> Result<Self, String> {
        let params = Params {
            max_tx_bytes: p.max_tx_bytes,
            max_actions_per_tx: p.max_actions_per_tx,
            max_memo_bytes: p.max_memo_bytes,
            max_kv_key_bytes: p.max_kv_key_bytes,
            max_kv_value_bytes: p.max_kv_value_bytes,
            max_stored_bytes_per_account: p.max_stored_bytes_per_account,
            rights: p.rights.ok_or("params.rights is missing")?.try_into()?,
        };
        params.validate()?;
        Ok(params)
    }
}
