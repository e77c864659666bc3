//! What the last block did (its header time, gas and app hash) and how
//! long CheckTx batches take: the signals an operator watches for a halted,
//! full or diverged chain.

use prometheus::{Histogram, HistogramOpts, IntCounter, IntGauge, Registry};

/// Per-block gauges and counters.
pub struct ChainMetrics {
    /// The first 6 bytes of the last committed app hash as an integer: nodes
    /// at the same height must show the same value.
    pub app_hash_prefix: IntGauge,
    /// Header time of the last finalized block, in Unix seconds.
    pub last_block_time: IntGauge,
    /// Gas the last finalized block used.
    pub block_gas_used: IntGauge,
    /// Gas the last finalized block's txs declared (what fills a block:
    /// proposals pack by declared gas).
    pub block_gas_wanted: IntGauge,
    /// The gas a block may use (`params.gas.max_block_gas`).
    pub block_max_gas: IntGauge,
    /// Gas used by every block this process finalized.
    pub gas_used: IntCounter,
    /// Seconds one CheckTx batch took.
    pub checktx_seconds: Histogram,
}

pub fn register(registry: &Registry) -> Result<ChainMetrics, prometheus::Error> {
    let gauge = |name: &str, help: &str| -> Result<IntGauge, prometheus::Error> {
        let g = IntGauge::new(name, help)?;
        registry.register(Box::new(g.clone()))?;
        Ok(g)
    };
    let gas_used = IntCounter::new(
        "gas_used_total",
        "Gas used by the blocks this process finalized",
    )?;
    registry.register(Box::new(gas_used.clone()))?;
    let checktx_seconds = Histogram::with_opts(
        HistogramOpts::new("checktx_seconds", "Seconds one CheckTx batch took").buckets(vec![
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
        ]),
    )?;
    registry.register(Box::new(checktx_seconds.clone()))?;
    Ok(ChainMetrics {
        app_hash_prefix: gauge(
            "app_hash_prefix",
            "First 6 bytes of the last committed app hash as an integer (equal on every node at the same height)",
        )?,
        last_block_time: gauge(
            "last_block_time_seconds",
            "Header time of the last finalized block, Unix seconds",
        )?,
        block_gas_used: gauge("block_gas_used", "Gas the last finalized block used")?,
        block_gas_wanted: gauge(
            "block_gas_wanted",
            "Gas the last finalized block's txs declared (proposals pack blocks by it)",
        )?,
        block_max_gas: gauge("block_max_gas", "Gas a block may use (params.gas.max_block_gas)")?,
        gas_used,
        checktx_seconds,
    })
}

impl ChainMetrics {
    /// Records a finalized block: its header time, the gas its txs used and
    /// declared, and the block gas limit in force.
    pub fn finalized(&self, time_ns: i64, gas: Gas, max_gas: Option<u64>) {
        self.last_block_time.set(time_ns.div_euclid(1_000_000_000));
        self.block_gas_used.set(clamp(gas.used));
        self.block_gas_wanted.set(clamp(gas.wanted));
        self.gas_used.inc_by(gas.used);
        if let Some(max) = max_gas {
            self.block_max_gas.set(clamp(max));
        }
    }

    /// Records a commit's app hash.
    pub fn committed(&self, app_hash: &[u8; 32]) {
        self.app_hash_prefix.set(hash_prefix(app_hash));
    }
}

/// A block's gas: used by its txs, and declared by them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gas {
    pub used: u64,
    pub wanted: u64,
}

impl Gas {
    /// The sum over a block's txs.
    pub fn of(txs: &[crate::app::TxOutcome]) -> Gas {
        txs.iter().fold(Gas::default(), |g, t| Gas {
            used: g.used.saturating_add(t.gas_used),
            wanted: g.wanted.saturating_add(t.gas_wanted),
        })
    }
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The first 6 bytes of `hash`, big-endian: below 2^48, so Prometheus's
/// floats hold it exactly.
pub fn hash_prefix(hash: &[u8; 32]) -> i64 {
    hash.iter()
        .take(6)
        .fold(0i64, |acc, b| (acc << 8) | i64::from(*b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_prefix_is_the_first_six_bytes_and_exact_as_a_float() {
        let mut h = [0u8; 32];
        h[..7].copy_from_slice(&[0xff, 0xfe, 0x01, 0x02, 0x03, 0x04, 0x99]);
        let p = hash_prefix(&h);
        assert_eq!(p, 0xfffe_0102_0304);
        assert_eq!(p as f64 as i64, p, "exact in an f64");
        h[6] = 0;
        assert_eq!(hash_prefix(&h), p, "the 7th byte does not count");
        h[5] = 0x05;
        assert_ne!(hash_prefix(&h), p, "the 6th does");
    }

    #[test]
    fn a_block_sets_its_time_gas_and_limit() {
        let m = register(&Registry::new()).unwrap();
        let gas = |used, wanted| Gas { used, wanted };
        m.finalized(1_700_000_000_999_999_999, gas(1_234, 2_000), Some(5_000));
        m.finalized(1_700_000_001_000_000_000, gas(66, 100), None);
        assert_eq!(m.last_block_time.get(), 1_700_000_001);
        assert_eq!(m.block_gas_used.get(), 66);
        assert_eq!(m.block_gas_wanted.get(), 100);
        assert_eq!(m.gas_used.get(), 1_300);
        assert_eq!(m.block_max_gas.get(), 5_000, "kept when unknown");
    }
}
