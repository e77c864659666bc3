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
/// genesis records for upgrades).
pub fn consensus_params_bytes(p: &tendermint::consensus::Params) -> Vec<u8> {
    use prost::Message;
    tendermint_proto::v0_38::types::ConsensusParams::from(p.clone()).encode_to_vec()
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
