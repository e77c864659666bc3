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

/// What a restored node reads back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainFacts {
    pub chain_id: String,
    pub evidence_max_age_blocks: u64,
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
        }))
    }
}
impl<T: StateRead + ?Sized> ChainRead for T {}

/// The state rows of `f` (genesis writes them with its other changes).
pub fn facts_rows(f: &ChainFacts) -> [(Vec<u8>, Vec<u8>); 2] {
    [
        (chain_id_key(), f.chain_id.as_bytes().to_vec()),
        (
            evidence_age_key(),
            f.evidence_max_age_blocks.to_be_bytes().to_vec(),
        ),
    ]
}

pub trait ChainWrite: StateWrite {
    fn put_chain_facts(&mut self, f: &ChainFacts) {
        for (k, v) in facts_rows(f) {
            self.put_raw(k, v);
        }
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
        };
        s.put_chain_facts(&f);
        assert_eq!(s.chain_facts().unwrap(), Some(f));
    }
}
