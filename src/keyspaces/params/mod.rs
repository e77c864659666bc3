//! The `params/` keyspace: consensus parameters, set at genesis from
//! `app_state.params`. Everything that changes what a tx does lives here,
//! never in `stave.toml`.

mod keys;
mod state;

pub use keys::params_key;
pub use state::{ParamsRead, ParamsWrite};

use serde::{Deserialize, Serialize};

use crate::keyspaces::casbin::CasbinParams;
pub use crate::keyspaces::validators::GovernanceParams;
use crate::proto::genesis as pb;

/// Consensus parameters (domain type of `stave.genesis.v1.Params`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    pub max_tx_bytes: u64,
    pub max_actions_per_tx: u32,
    /// Keys (curve points) decoding one tx may parse, the signer's included.
    pub max_keys_per_tx: u32,
    pub max_memo_bytes: u32,
    pub max_kv_key_bytes: u32,
    pub max_kv_value_bytes: u32,
    pub max_stored_bytes_per_account: u64,
    /// Governance: elections, unbonding, validator caps.
    #[serde(default)]
    pub governance: GovernanceParams,
    /// Caps of the casbin/ keyspaces.
    #[serde(default)]
    pub casbin: CasbinParams,
    /// Caps of the content and rights keyspaces.
    #[serde(default)]
    pub rights: crate::keyspaces::rights::RightsParams,
    /// Caps of KV tokens and kvdb.
    #[serde(default)]
    pub kv_tokens: crate::keyspaces::kv::KvTokenParams,
    /// The gas schedule and the block gas limit.
    #[serde(default)]
    pub gas: crate::gas::GasParams,
    /// Sponsor pools, the unsponsored block budget and proof of work.
    #[serde(default)]
    pub storage: crate::keyspaces::accounts::StorageParams,
    /// The replicated databases' proof-of-work base and horizon.
    #[serde(default)]
    pub replica: crate::replica::params::ReplicaParams,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            max_tx_bytes: 128 * 1024,
            max_actions_per_tx: 64,
            max_keys_per_tx: 256,
            max_memo_bytes: 256,
            max_kv_key_bytes: 256,
            max_kv_value_bytes: 64 * 1024,
            max_stored_bytes_per_account: 64 * 1024 * 1024,
            governance: GovernanceParams::default(),
            casbin: CasbinParams::default(),
            rights: Default::default(),
            kv_tokens: Default::default(),
            gas: Default::default(),
            storage: Default::default(),
            replica: Default::default(),
        }
    }
}

/// The largest `max_tx_bytes`: a state value is at most a tx's size, and
/// one must fit in a state-sync chunk with its proof
/// ([`crate::snapshot::CHUNK_BYTES`]).
pub const MAX_TX_BYTES_CEILING: u64 = crate::snapshot::CHUNK_BYTES as u64;

impl Params {
    /// Rejects parameters no network could run with.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_tx_bytes == 0 || self.max_actions_per_tx == 0 {
            return Err("max_tx_bytes and max_actions_per_tx must be positive".into());
        }
        if self.max_tx_bytes > MAX_TX_BYTES_CEILING {
            return Err(format!(
                "max_tx_bytes {} is over {MAX_TX_BYTES_CEILING}: a value that large could not \
                 fit in one state-sync chunk",
                self.max_tx_bytes
            ));
        }
        if self.max_keys_per_tx <= self.governance.max_keys_per_action {
            return Err(format!(
                "max_keys_per_tx ({}) must exceed governance.max_keys_per_action ({}): a tx's signer is a key too",
                self.max_keys_per_tx, self.governance.max_keys_per_action
            ));
        }
        if self.max_kv_key_bytes == 0 {
            return Err("max_kv_key_bytes must be positive".into());
        }
        self.casbin.validate()?;
        self.rights.validate()?;
        // the tx around a release: signature, signer, chain id, nonce, gas,
        // field tags, a proof-of-work nonce, and the memo
        const ENVELOPE: u64 = 1024;
        let room = self
            .max_tx_bytes
            .saturating_sub(ENVELOPE)
            .saturating_sub(u64::from(self.max_memo_bytes));
        if self.rights.max_release_bytes > room {
            return Err(format!(
                "rights.max_release_bytes ({}) must leave room in max_tx_bytes ({}) for max_memo_bytes ({}) and {ENVELOPE} bytes of envelope: the largest release must fit in one tx",
                self.rights.max_release_bytes, self.max_tx_bytes, self.max_memo_bytes
            ));
        }
        self.governance.validate()?;
        self.kv_tokens.validate()?;
        self.gas.validate()?;
        self.replica.validate()?;
        self.storage.validate()
    }
}

impl From<&Params> for pb::Params {
    fn from(p: &Params) -> Self {
        pb::Params {
            max_tx_bytes: p.max_tx_bytes,
            max_actions_per_tx: p.max_actions_per_tx,
            max_keys_per_tx: p.max_keys_per_tx,
            max_memo_bytes: p.max_memo_bytes,
            max_kv_key_bytes: p.max_kv_key_bytes,
            max_kv_value_bytes: p.max_kv_value_bytes,
            max_stored_bytes_per_account: p.max_stored_bytes_per_account,
            governance: Some((&p.governance).into()),
            casbin: Some((&p.casbin).into()),
            rights: Some((&p.rights).into()),
            kv_tokens: Some((&p.kv_tokens).into()),
            gas: Some((&p.gas).into()),
            storage: Some((&p.storage).into()),
            // absent at the defaults: a params record from before the
            // replica params stays byte for byte what it was
            replica: (p.replica != Default::default()).then(|| (&p.replica).into()),
        }
    }
}

impl TryFrom<pb::Params> for Params {
    type Error = String;
    fn try_from(p: pb::Params) -> Result<Self, String> {
        let params = Params {
            max_tx_bytes: p.max_tx_bytes,
            max_actions_per_tx: p.max_actions_per_tx,
            max_keys_per_tx: p.max_keys_per_tx,
            max_memo_bytes: p.max_memo_bytes,
            max_kv_key_bytes: p.max_kv_key_bytes,
            max_kv_value_bytes: p.max_kv_value_bytes,
            max_stored_bytes_per_account: p.max_stored_bytes_per_account,
            governance: p
                .governance
                .ok_or("params have no governance section")?
                .into(),
            casbin: p.casbin.ok_or("params.casbin is missing")?.try_into()?,
            rights: p.rights.ok_or("params.rights is missing")?.try_into()?,
            kv_tokens: p.kv_tokens.ok_or("params.kv_tokens is missing")?.into(),
            gas: p.gas.ok_or("params.gas is missing")?.into(),
            storage: p.storage.ok_or("params.storage is missing")?.into(),
            replica: p.replica.map(Into::into).unwrap_or_default(),
        };
        params.validate()?;
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Replica params at their defaults are not written, so a params
    /// record from before them keeps its bytes (and the app hash); others
    /// round-trip, and bad ones are refused.
    #[test]
    fn replica_params_are_written_only_off_their_defaults() {
        let d = Params::default();
        assert!(pb::Params::from(&d).replica.is_none());
        let mut p = d.clone();
        p.replica.pow_base = 1;
        let wire = pb::Params::from(&p);
        assert_eq!(wire.replica.as_ref().map(|r| r.pow_base), Some(1));
        assert_eq!(Params::try_from(wire), Ok(p.clone()));
        p.replica.horizon_hours = 0;
        assert!(Params::try_from(pb::Params::from(&p)).is_err());
    }

    #[test]
    fn max_tx_bytes_must_leave_every_value_room_in_a_chunk() {
        let mut p = Params {
            max_tx_bytes: MAX_TX_BYTES_CEILING,
            ..Params::default()
        };
        assert_eq!(p.validate(), Ok(()));
        p.max_tx_bytes += 1;
        let e = p.validate().unwrap_err();
        assert!(
            e.contains(&format!("max_tx_bytes {}", MAX_TX_BYTES_CEILING + 1)),
            "{e}"
        );
    }
}
