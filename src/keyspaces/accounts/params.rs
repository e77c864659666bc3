//! `StorageParams`: sponsor pools, the unsponsored block budget and the
//! proof-of-work target, from genesis.

use serde::{Deserialize, Serialize};

use crate::proto::genesis as pb;

/// Who pays for state (domain type of `stave.genesis.v1.StorageParams`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageParams {
    /// Pool of each ACTIVE validator, in bytes.
    pub validator_budget: u64,
    /// Pool of each ACTIVE group, in bytes.
    pub group_budget: u64,
    /// Bytes all unsponsored accounts together may add in one block.
    pub unsponsored_block_bytes: u64,
    /// The proof-of-work divisor is `pow_base + tx bytes * pow_retention`.
    pub pow_base: u64,
    pub pow_retention: u64,
}

impl Default for StorageParams {
    fn default() -> Self {
        StorageParams {
            validator_budget: 1 << 30,
            group_budget: 256 << 20,
            unsponsored_block_bytes: 16 * 1024,
            // UEP-20's base; a 300-byte tx needs about 1.3 M hashes.
            pow_base: 1_000_000,
            pow_retention: 1_024,
        }
    }
}

impl StorageParams {
    pub fn validate(&self) -> Result<(), String> {
        if self.pow_base == 0 {
            return Err("params.storage.pow_base must be positive".into());
        }
        Ok(())
    }
}

impl From<&StorageParams> for pb::StorageParams {
    fn from(s: &StorageParams) -> Self {
        pb::StorageParams {
            validator_budget: s.validator_budget,
            group_budget: s.group_budget,
            unsponsored_block_bytes: s.unsponsored_block_bytes,
            pow_base: s.pow_base,
            pow_retention: s.pow_retention,
        }
    }
}

impl From<pb::StorageParams> for StorageParams {
    fn from(s: pb::StorageParams) -> Self {
        StorageParams {
            validator_budget: s.validator_budget,
            group_budget: s.group_budget,
            unsponsored_block_bytes: s.unsponsored_block_bytes,
            pow_base: s.pow_base,
            pow_retention: s.pow_retention,
        }
    }
}
