//! `chain/`: what the app otherwise learns only from InitChain, kept in
//! verifiable state so that a node restored from a snapshot (which never
//! sees InitChain) knows it and can prove it: the chain id and CometBFT's
//! evidence max age. (The block gas limit is `params/current`'s
//! `gas.max_block_gas`; the last block time is not state, see
//! `store::CommitInfo::block_time_ns`.)

use crate::store::{StateRead, StateWrite, StoreError};

/// The chain id's key.
pub fn chain_id_key() -> Vec<u8> {
    b"chain/id".to_vec()
}

/// The key of CometBFT's evidence `max_age_num_blocks`, as genesis set it.
pub fn evidence_age_key() -> Vec<u8> {
    b"chain/evidence_max_age_blocks".to_vec()
}

/// The key of CometBFT's consensus params as InitChain returned them and
/// upgrades changed them (protobuf `tendermint.types.ConsensusParams`): an
/// upgrade sends them back with the new `version.app`, and CometBFT replaces
/// every param the update carries.
pub fn consensus_params_key() -> Vec<u8> {
    b"chain/consensus_params".to_vec()
}

/// `params` (protobuf `ConsensusParams`) with `version.app = app_version`,
/// and `block.max_gas = max_gas` when given (Stave's `max_block_gas`).
pub fn with_app_version(
    params: &[u8],
    app_version: u64,
    max_gas: Option<u64>,
) -> Result<Vec<u8>, StoreError> {
    use prost::Message;
    use tendermint_proto::v0_38::types::{ConsensusParams, VersionParams};
    let mut p = ConsensusParams::decode(params)
        .map_err(|e| StoreError::corrupt(&consensus_params_key(), e))?;
    p.version = Some(VersionParams { app: app_version });
    if let (Some(gas), Some(block)) = (max_gas, p.block.as_mut()) {
        block.max_gas = i64::try_from(gas).unwrap_or(i64::MAX);
    }
    Ok(p.encode_to_vec())
}

/// What a restored node reads back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainFacts {
    pub chain_id: String,
    pub evidence_max_age_blocks: u64,
    /// CometBFT's consensus params as InitChain returned them (protobuf;
    /// empty: not recorded).
    pub consensus_params: Vec<u8>,
}

pub trait ChainRead: StateRead {
    /// The chain id and evidence age genesis recorded (`None` before genesis).
    fn chain_facts(&self) -> Result<Option<ChainFacts>, StoreError> {
        let Some(id) = self.get_raw(&chain_id_key())? else {
            return Ok(None);
        };
        let chain_id = String::from_utf8(id)
            .map_err(|e| StoreError::corrupt(&chain_id_key(), e.to_string()))?;
        let age = match self.get_raw(&evidence_age_key())? {
            Some(raw) => u64::from_be_bytes(
                raw.as_slice()
                    .try_into()
                    .map_err(|_| StoreError::corrupt(&evidence_age_key(), "not 8 bytes"))?,
            ),
            None => 0,
        };
        Ok(Some(ChainFacts {
            chain_id,
            evidence_max_age_blocks: age,
            consensus_params: self.consensus_params()?.unwrap_or_default(),
        }))
    }

    /// CometBFT's consensus params in force (`None`: not recorded).
    fn consensus_params(&self) -> Result<Option<Vec<u8>>, StoreError> {
        self.get_raw(&consensus_params_key())
    }
}
impl<T: StateRead + ?Sized> ChainRead for T {}

/// The state rows of `f` (genesis writes them with its other changes).
pub fn facts_rows(f: &ChainFacts) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut rows = vec![
        (chain_id_key(), f.chain_id.as_bytes().to_vec()),
        (
            evidence_age_key(),
            f.evidence_max_age_blocks.to_be_bytes().to_vec(),
        ),
    ];
    if !f.consensus_params.is_empty() {
        rows.push((consensus_params_key(), f.consensus_params.clone()));
    }
    rows
}

pub trait ChainWrite: StateWrite {
    fn put_chain_facts(&mut self, f: &ChainFacts) {
        for (k, v) in facts_rows(f) {
            self.put_raw(k, v);
        }
    }
    fn put_consensus_params(&mut self, params: &[u8]) {
        self.put_raw(consensus_params_key(), params.to_vec());
    }
}
impl<T: StateWrite + ?Sized> ChainWrite for T {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemState, Overlay};

    #[test]
    fn chain_facts_round_trip_and_are_absent_before_genesis() {
        let base = MemState::default();
        let mut s = Overlay::new(&base);
        assert_eq!(s.chain_facts().unwrap(), None);
        let f = ChainFacts {
            chain_id: "stave-test".into(),
            evidence_max_age_blocks: 100_000,
            consensus_params: vec![1, 2, 3],
        };
        s.put_chain_facts(&f);
        assert_eq!(s.chain_facts().unwrap(), Some(f));
    }
}
