//! The `validators/` keyspace: validators named by their operator key, each
//! with its consensus key, X25519 key, peer address, jurisdictions and
//! identity. Genesis validators start `ACTIVE`; others apply
//! (`ApplyValidator` → `CANDIDATE`), are admitted or removed by election
//! (`VoteValidator`), and leave (`LeaveValidator` → `UNBONDING` → `REMOVED`).
//! A record also publishes the node's public `client_endpoint`; its operator
//! replaces both endpoints with `UpdateValidatorEndpoints` ([`endpoint`]),
//! its consensus key with `RotateConsensusKey`, its X25519 key with
//! `RotateX25519Key`, and the key that signs for it with `RotateOperatorKey`
//! ([`signing`]).
//! End of block turns status changes into CometBFT validator updates
//! ([`end_block`], [`updates::plan`]).

pub mod actions;
pub mod election;
mod end_block;
pub mod endpoint;
mod error;
pub mod expiry;
mod jurisdiction;
mod keys;
mod lifecycle;
mod params;
pub mod query;
pub mod signing;
mod state;
mod status;
pub mod updates;

pub use actions::{
    pop_message, ApplyValidator, LeaveValidator, RotateConsensusKey, RotateOperatorKey,
    RotateX25519Key, UpdateValidatorEndpoints, VoteValidator,
};
pub use end_block::{end_block, EndBlock};
pub use error::GovError;
pub use jurisdiction::is_jurisdiction;
pub use keys::{
    by_consensus_key, comet_set_key, queue_key, totals_key, validator_key, validator_meta_prefix,
    validators_prefix,
};
pub use params::GovernanceParams;
pub use signing::{Acting, ValidatorSigningRead, ValidatorSigningWrite};
pub use state::{ValidatorsRead, ValidatorsWrite};
pub use status::{next_status, transition, ValidatorEvent, ValidatorStatus};

use serde::{Deserialize, Serialize};

use crate::keyspaces::TxContext;
use crate::proto::genesis as pb;
use crate::proto::governance as gpb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// `ValidatorRecord.status` of an active validator.
pub const STATUS_ACTIVE: u32 = 1;

/// Moves a record to `next` inside a tx (see `lifecycle::enter`).
pub(crate) fn apply_status<S: StateWrite>(
    state: &mut S,
    ctx: &mut TxContext,
    op: &[u8; 32],
    record: &mut pb::ValidatorRecord,
    next: ValidatorStatus,
) -> Result<(), TxError> {
    let params = ctx.params.governance.clone();
    let at = lifecycle::At {
        height: ctx.height,
        params: &params,
        events: &mut ctx.events,
    };
    lifecycle::enter(state, at, op, record, next)
}

/// Writes the genesis bookkeeping for the genesis validator records: the
/// totals, CometBFT's set (in force from height 1) and the consensus-key
/// index. Consensus keys must be unique, every power at least
/// [`params::MIN_VALIDATOR_POWER`], the
/// validators no more than `max_active_validators`, and their total power
/// within half of CometBFT's limit (the other half is room for elected ones).
pub fn genesis_bookkeeping<S: StateWrite>(
    state: &mut S,
    records: &[([u8; 32], pb::ValidatorRecord)],
    params: &GovernanceParams,
) -> Result<(), String> {
    if records.is_empty() {
        return Ok(());
    }
    if records.len() > params.max_active_validators as usize {
        return Err(format!(
            "{} genesis validators; max_active_validators is {}",
            records.len(),
            params.max_active_validators
        ));
    }
    let mut totals = gpb::ValidatorTotals::default();
    let mut set = std::collections::BTreeMap::new();
    for (op, r) in records {
        let v = r
            .validator
            .as_ref()
            .ok_or("validator record without keys")?;
        let ck = <[u8; 32]>::try_from(v.consensus_key.as_slice())
            .map_err(|_| format!("consensus key of {} is not 32 bytes", hex::encode(op)))?;
        if set.insert(ck, v.power).is_some() {
            return Err(format!("consensus key {} named twice", hex::encode(ck)));
        }
        if v.power < params::MIN_VALIDATOR_POWER {
            return Err(format!(
                "genesis validator {} has power {}; the least is {}",
                hex::encode(op),
                v.power,
                params::MIN_VALIDATOR_POWER
            ));
        }
        state.put_validator_by_consensus(&ck, op);
        totals.records += 1;
        totals.active_count += 1;
        totals.active_power = totals.active_power.saturating_add(v.power);
    }
    if totals.active_power > params::MAX_TOTAL_POWER / 2 {
        return Err(format!(
            "genesis validators' total power {} exceeds {} (half of CometBFT's limit)",
            totals.active_power,
            params::MAX_TOTAL_POWER / 2
        ));
    }
    state.put_validator_totals(&totals);
    state.put_comet_set(&gpb::CometSet {
        members: set
            .into_iter()
            .map(|(k, power)| gpb::CometMember {
                consensus_key: k.to_vec(),
                power,
                effective_height: 1,
            })
            .collect(),
    });
    Ok(())
}

/// A validator as genesis names it (hex fields in JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenesisValidator {
    /// ed25519 operator key, hex.
    pub operator_key: String,
    /// CometBFT ed25519 consensus key, hex.
    pub consensus_key: String,
    /// X25519 key, hex.
    pub x25519_key: String,
    /// host:port of the peer gRPC service.
    pub address: String,
    pub power: u64,
    #[serde(default)]
    pub moniker: String,
    /// host:port of the public client gRPC API; empty (the default)
    /// publishes none.
    #[serde(default)]
    pub client_endpoint: String,
}

/// Whether a Diffie-Hellman with `public` yields a contributory secret.
/// Every clamped scalar is a multiple of the cofactor, so any fixed secret
/// maps all low-order points to zero.
pub(crate) fn x25519_contributory(public: &[u8; 32]) -> bool {
    // A scalar multiplication: charged as a point (issue 19).
    crate::gas::work::count(crate::gas::work::Kind::Point);
    let probe = x25519_dalek::StaticSecret::from([0x5a; 32]);
    probe
        .diffie_hellman(&x25519_dalek::PublicKey::from(*public))
        .was_contributory()
}

fn key32(field: &str, hex_str: &str) -> Result<[u8; 32], String> {
    let bytes = hex::decode(hex_str).map_err(|e| format!("{field} {hex_str:?}: {e}"))?;
    bytes
        .as_slice()
        .try_into()
        .map_err(|_| format!("{field} {hex_str:?}: not 32 bytes"))
}

impl GenesisValidator {
    /// Checks the keys, the address (`host:port` within `max_address_bytes`)
    /// and the client endpoint (empty, or the same) and returns the wire
    /// record.
    pub fn to_record(
        &self,
        params: &GovernanceParams,
    ) -> Result<([u8; 32], pb::ValidatorRecord), String> {
        let (operator, _) = crate::tx::identity_key(&key32("operator_key", &self.operator_key)?)
            .map_err(|e| e.to_string())?;
        let consensus = key32("consensus_key", &self.consensus_key)?;
        crate::tx::identity_key(&consensus)
            .map_err(|e| format!("consensus_key {}: {e}", self.consensus_key))?;
        let x25519 = key32("x25519_key", &self.x25519_key)?;
        if !x25519_contributory(&x25519) {
            return Err(format!(
                "x25519_key {} is a low-order point",
                self.x25519_key
            ));
        }
        if self.power == 0 {
            return Err(format!("validator {} has power 0", self.operator_key));
        }
        endpoint::check_endpoints(
            &self.address,
            &self.client_endpoint,
            params.max_address_bytes,
        )
        .map_err(|e| format!("validator {}: {e}", self.operator_key))?;
        let record = pb::ValidatorRecord {
            validator: Some(pb::GenesisValidator {
                operator_key: operator.to_vec(),
                consensus_key: consensus.to_vec(),
                x25519_key: x25519.to_vec(),
                address: self.address.clone(),
                power: self.power,
                moniker: self.moniker.clone(),
                client_endpoint: self.client_endpoint.clone(),
            }),
            status: STATUS_ACTIVE,
            admitted_height: 0,
            operator_signing_key: Vec::new(),
            governance: None,
        };
        Ok((operator, record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> GenesisValidator {
        let op = ed25519_dalek::SigningKey::from_bytes(&[1; 32])
            .verifying_key()
            .to_bytes();
        let cons = ed25519_dalek::SigningKey::from_bytes(&[2; 32])
            .verifying_key()
            .to_bytes();
        let x = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([3; 32]));
        GenesisValidator {
            operator_key: hex::encode(op),
            consensus_key: hex::encode(cons),
            x25519_key: hex::encode(x.as_bytes()),
            address: "127.0.0.1:26600".into(),
            power: 10,
            moniker: "n".into(),
            client_endpoint: "127.0.0.1:26601".into(),
        }
    }

    #[test]
    fn genesis_validator_keys_are_checked() {
        let p = GovernanceParams::default();
        assert!(valid().to_record(&p).is_ok());
        let mut v = valid();
        v.x25519_key = hex::encode([0u8; 32]);
        assert!(v.to_record(&p).unwrap_err().contains("low-order"));
        let mut v = valid();
        v.x25519_key = hex::encode([0u8; 31]);
        assert!(v.to_record(&p).is_err());
        let mut v = valid();
        let mut identity = [0u8; 32];
        identity[0] = 1;
        v.consensus_key = hex::encode(identity);
        assert!(v.to_record(&p).is_err(), "a weak consensus key is refused");
        let mut v = valid();
        v.power = 0;
        assert!(v.to_record(&p).is_err());
        let mut v = valid();
        v.client_endpoint = String::new();
        let (_, r) = v.to_record(&p).unwrap();
        assert_eq!(
            r.validator.unwrap().client_endpoint,
            "",
            "empty: none published"
        );
        for bad in ["127.0.0.1", "127.0.0.1:0", "a host:1"] {
            let mut v = valid();
            v.client_endpoint = bad.into();
            let e = v.to_record(&p).unwrap_err();
            assert!(e.contains("client_endpoint"), "{bad}: {e}");
        }
        let mut v = valid();
        v.client_endpoint = format!("{}:1", "h".repeat(30));
        let short = GovernanceParams {
            max_address_bytes: 16,
            ..Default::default()
        };
        assert!(v.to_record(&short).is_err(), "over max_address_bytes");
    }

    fn records(n: u8, power: u64) -> Vec<([u8; 32], pb::ValidatorRecord)> {
        (0..n)
            .map(|i| {
                let sk = |s: u8| ed25519_dalek::SigningKey::from_bytes(&[s; 32]);
                let mut v = valid();
                v.operator_key = hex::encode(sk(10 + i).verifying_key().to_bytes());
                v.consensus_key = hex::encode(sk(40 + i).verifying_key().to_bytes());
                v.power = power;
                v.to_record(&GovernanceParams::default()).unwrap()
            })
            .collect()
    }

    #[test]
    fn genesis_sets_are_bounded_by_the_caps_and_cometbfts_power_limit() {
        use crate::store::{MemState, Overlay};
        let base = MemState::default();
        let run = |recs: &[([u8; 32], pb::ValidatorRecord)], p: &GovernanceParams| {
            genesis_bookkeeping(&mut Overlay::new(&base), recs, p)
        };
        let p = GovernanceParams {
            max_active_validators: 3,
            ..Default::default()
        };
        assert!(run(&records(3, 10), &p).is_ok());
        assert!(run(&records(4, 10), &p)
            .unwrap_err()
            .contains("max_active_validators"));
        let huge = params::MAX_TOTAL_POWER / 4;
        assert!(run(&records(2, huge), &p).is_ok());
        assert!(run(&records(3, huge), &p)
            .unwrap_err()
            .contains("total power"));
    }
}
