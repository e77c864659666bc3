//! `GasParams`: the gas schedule and the block gas limit, from genesis.

use serde::{Deserialize, Serialize};

use crate::proto::genesis as pb;

/// The gas schedule (domain type of `stave.genesis.v1.GasParams`). A block
/// at `max_block_gas` of the most expensive valid txs should finalise and
/// commit within 1 s on the reference machine, on an empty store and on one
/// of 1M keys; `write` is priced towards the 1M-key cost of a tree write.
/// The defaults and their figures come from `benches/gas_calibration/`
/// (BENCHMARKS.md (g)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GasParams {
    pub max_block_gas: u64,
    pub tx_base: u64,
    pub tx_byte: u64,
    pub signature: u64,
    pub point: u64,
    pub read: u64,
    pub read_byte: u64,
    pub iter_row: u64,
    pub write: u64,
    pub write_byte: u64,
    pub eval_op: u64,
    pub compile_weight: u64,
}

impl Default for GasParams {
    fn default() -> Self {
        GasParams {
            max_block_gas: 1_200_000_000,
            tx_base: 20_000,
            tx_byte: 20,
            signature: 60_000,
            point: 20_000,
            read: 5_000,
            read_byte: 5,
            iter_row: 1_000,
            write: 65_000,
            write_byte: 30,
            eval_op: 20,
            compile_weight: 800,
        }
    }
}

/// The largest `max_block_gas` accepted: CometBFT takes `max_gas` as an i64.
pub const MAX_BLOCK_GAS_CEILING: u64 = i64::MAX as u64;

impl GasParams {
    /// Rejects a schedule that would leave some work free, or a block limit
    /// CometBFT cannot carry.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("max_block_gas", self.max_block_gas),
            ("tx_base", self.tx_base),
            ("tx_byte", self.tx_byte),
            ("signature", self.signature),
            ("point", self.point),
            ("read", self.read),
            ("iter_row", self.iter_row),
            ("write", self.write),
            ("eval_op", self.eval_op),
            ("compile_weight", self.compile_weight),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("params.gas.{name} must be positive"));
        }
        if self.max_block_gas > MAX_BLOCK_GAS_CEILING {
            return Err(format!(
                "params.gas.max_block_gas {} is over {MAX_BLOCK_GAS_CEILING}",
                self.max_block_gas
            ));
        }
        if self.max_block_gas < self.tx_base.saturating_add(self.signature) {
            return Err(format!(
                "params.gas.max_block_gas {} cannot hold one tx (tx_base + signature = {})",
                self.max_block_gas,
                self.tx_base.saturating_add(self.signature)
            ));
        }
        Ok(())
    }
}

impl From<&GasParams> for pb::GasParams {
    fn from(g: &GasParams) -> Self {
        pb::GasParams {
            max_block_gas: g.max_block_gas,
            tx_base: g.tx_base,
            tx_byte: g.tx_byte,
            signature: g.signature,
            point: g.point,
            read: g.read,
            read_byte: g.read_byte,
            iter_row: g.iter_row,
            write: g.write,
            write_byte: g.write_byte,
            eval_op: g.eval_op,
            compile_weight: g.compile_weight,
        }
    }
}

impl From<pb::GasParams> for GasParams {
    fn from(g: pb::GasParams) -> Self {
        GasParams {
            max_block_gas: g.max_block_gas,
            tx_base: g.tx_base,
            tx_byte: g.tx_byte,
            signature: g.signature,
            point: g.point,
            read: g.read,
            read_byte: g.read_byte,
            iter_row: g.iter_row,
            write: g.write,
            write_byte: g.write_byte,
            eval_op: g.eval_op,
            compile_weight: g.compile_weight,
        }
    }
}
