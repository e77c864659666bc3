//! Domain results to ABCI types, at the edge.

use tendermint::abci::{types::ExecTxResult, Event as AbciEvent};

use crate::app::TxOutcome;
use crate::keyspaces::Event;
use crate::tx::{Code, CODESPACE};

pub fn event(e: &Event) -> AbciEvent {
    AbciEvent::new(e.kind.clone(), e.attributes.iter().cloned())
}

pub fn codespace(code: Code) -> String {
    if code == Code::Ok {
        String::new()
    } else {
        CODESPACE.to_string()
    }
}

/// A tx's FinalizeBlock result: code, log and the handlers' events. Kept
/// lean, because CometBFT stores and indexes every byte of it: clients find
/// a tx by CometBFT's hash (`tx.hash`) or by the indexed handler attributes,
/// and learn Stave's tx id from `Broadcast`.
pub fn exec_result(o: &TxOutcome) -> ExecTxResult {
    ExecTxResult {
        code: o.code.value().into(),
        data: Default::default(),
        log: o.log.clone(),
        info: String::new(),
        gas_wanted: gas_i64(o.gas_wanted),
        gas_used: gas_i64(o.gas_used),
        events: o.events.iter().map(event).collect(),
        codespace: codespace(o.code),
    }
}

/// Gas as CometBFT's i64 (a limit is at most `max_block_gas`, which
/// `GasParams::validate` keeps within i64).
pub fn gas_i64(gas: u64) -> i64 {
    i64::try_from(gas).unwrap_or(i64::MAX)
}

/// Validator updates as CometBFT takes them. Keys and powers were checked
/// when they entered state; one that would not convert is a node fault
/// (`expect`), since dropping it silently would fork this node's view of
/// the set from the others'.
pub fn validator_updates(updates: &[([u8; 32], u64)]) -> Vec<tendermint::validator::Update> {
    updates
        .iter()
        .map(|(key, power)| tendermint::validator::Update {
            pub_key: tendermint::PublicKey::from_raw_ed25519(key)
                .expect("consensus keys are checked ed25519 keys when they enter state"),
            power: tendermint::vote::Power::try_from(*power)
                .expect("powers are capped below CometBFT's limit by the governance params"),
        })
        .collect()
}

/// CometBFT's consensus params as protobuf `ConsensusParams` bytes (what
/// genesis records for upgrades), built field by field here: the bytes are
/// in the genesis app hash, so they must not move with a tendermint-rs
/// conversion.
pub fn consensus_params_bytes(p: &tendermint::consensus::Params) -> Vec<u8> {
    use prost::Message;
    use tendermint_proto::google::protobuf::Duration;
    use tendermint_proto::v0_38::types as t;
    let age = p.evidence.max_age_duration.0;
    t::ConsensusParams {
        block: Some(t::BlockParams {
            max_bytes: i64::try_from(p.block.max_bytes).unwrap_or(i64::MAX),
            max_gas: p.block.max_gas,
        }),
        evidence: Some(t::EvidenceParams {
            max_age_num_blocks: i64::try_from(p.evidence.max_age_num_blocks).unwrap_or(i64::MAX),
            max_age_duration: Some(Duration {
                seconds: i64::try_from(age.as_secs()).unwrap_or(i64::MAX),
                nanos: i32::try_from(age.subsec_nanos()).unwrap_or(0),
            }),
            max_bytes: p.evidence.max_bytes,
        }),
        validator: Some(t::ValidatorParams {
            pub_key_types: p
                .validator
                .pub_key_types
                .iter()
                .map(|k| k.as_str().to_string())
                .collect(),
        }),
        version: p.version.as_ref().map(|v| t::VersionParams { app: v.app }),
        abci: Some(t::AbciParams {
            vote_extensions_enable_height: p
                .abci
                .vote_extensions_enable_height
                .map_or(0, |h| i64::try_from(h.value()).unwrap_or(i64::MAX)),
        }),
    }
    .encode_to_vec()
}

/// FinalizeBlock's `consensus_param_updates` for an upgrade applied in the
/// block: every param as recorded, with the new `version.app` (CometBFT
/// replaces each param an update carries). `None` without an upgrade, or
/// when genesis recorded no params (the version then shows only in Info).
pub fn consensus_param_updates(
    upgrade: Option<&(u64, Vec<u8>)>,
) -> Result<Option<tendermint::consensus::Params>, crate::app::AppError> {
    use prost::Message;
    let Some((version, raw)) = upgrade else {
        return Ok(None);
    };
    if raw.is_empty() {
        tracing::warn!(
            app_version = version,
            "no consensus params recorded at genesis: CometBFT's version.app stays as it was"
        );
        return Ok(None);
    }
    let bad = |e: String| crate::app::AppError::EndBlock(format!("recorded consensus params: {e}"));
    let proto = tendermint_proto::v0_38::types::ConsensusParams::decode(raw.as_slice())
        .map_err(|e| bad(e.to_string()))?;
    tendermint::consensus::Params::try_from(proto)
        .map(Some)
        .map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> tendermint::consensus::Params {
        tendermint::consensus::Params {
            block: tendermint::block::Size {
                max_bytes: 22_020_096,
                max_gas: 1_000_000_000,
                time_iota_ms: 1_000,
            },
            evidence: tendermint::evidence::Params {
                max_age_num_blocks: 100_000,
                max_age_duration: tendermint::evidence::Duration(std::time::Duration::new(
                    172_800, 5,
                )),
                max_bytes: 1_048_576,
            },
            validator: tendermint::consensus::params::ValidatorParams {
                pub_key_types: vec![tendermint::public_key::Algorithm::Ed25519],
            },
            version: Some(tendermint::consensus::params::VersionParams { app: 1 }),
            abci: Default::default(),
        }
    }

    /// The recorded bytes are in the genesis app hash: they are pinned here,
    /// so a dependency bump cannot move them unseen.
    #[test]
    fn recorded_consensus_params_are_pinned_bytes_and_round_trip() {
        let raw = consensus_params_bytes(&params());
        assert_eq!(
            hex::encode(&raw),
            // block {22020096, 1e9}, evidence {100000, 172800 s 5 ns,
            // 1 MiB}, validator {"ed25519"}, version {1}, abci {}
            "0a0b088080c00a108094ebdc03121008a08d0612060880c60a1005188080401a09\
             0a0765643235353139220208012a00"
        );
        let v2 = crate::keyspaces::chain::with_app_version(&raw, 2, Some(2_000_000_000)).unwrap();
        let back = consensus_param_updates(Some(&(2, v2))).unwrap().unwrap();
        let mut want = params();
        want.version = Some(tendermint::consensus::params::VersionParams { app: 2 });
        assert_eq!(back.block.max_bytes, want.block.max_bytes);
        assert_eq!(
            back.block.max_gas, 2_000_000_000,
            "a migrated max_block_gas"
        );
        assert_eq!(back.evidence, want.evidence);
        assert_eq!(back.validator, want.validator);
        assert_eq!(back.version, want.version);
        assert_eq!(back.abci, want.abci);
        assert_eq!(consensus_param_updates(None).unwrap(), None);
        assert_eq!(
            consensus_param_updates(Some(&(2, Vec::new()))).unwrap(),
            None
        );
    }
}
