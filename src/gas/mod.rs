//! Gas: deterministic metering of the work a tx causes, with no fee token.
//!
//! A tx declares `gas_limit` in its body. Its gas is
//! - **intrinsic** (known before any state is read): `tx_base`, its bytes,
//!   its signatures and the curve points its keys decompress
//!   ([`intrinsic`]); checked statelessly, so a tx whose limit is below it
//!   never enters a block;
//! - **execution**: every state read and write its actions make (charged by
//!   [`Metered`] around the tx overlay), the Casbin evaluator's operations
//!   and pattern compilation, and any signature or key checked while
//!   executing (counted by [`work`]).
//!
//! Gas is consensus data (CometBFT hashes `gas_wanted` and `gas_used` into
//! `LastResultsHash`), so it is a pure function of (tx bytes, state,
//! params): never of a cache hit, a thread count, or whether a read was
//! served from the overlay or from disk. Cached work is charged as if done.
//!
//! Blocks are bounded by declared gas: the summed `gas_limit` of a block's
//! txs is at most `max_block_gas` ([`peek`] reads the limits of a proposal
//! without decoding it).

mod meter;
mod params;
pub mod peek;
pub mod work;

pub use meter::{GasMeter, Metered};
pub use params::{GasParams, MAX_BLOCK_GAS_CEILING};

/// Work charged explicitly by the code that does it (everything but state
/// access, which [`Metered`] charges itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Casbin evaluator operations (regex calls weigh haystack and pattern).
    EvalOps(u64),
    /// Units of the syntactic pattern measure compiled.
    Compile(u64),
    /// Signatures checked and points decompressed while executing.
    Crypto(work::Tally),
}

impl Work {
    /// The gas of this work under `g`.
    pub fn gas(self, g: &GasParams) -> u64 {
        match self {
            Work::EvalOps(n) => n.saturating_mul(g.eval_op),
            Work::Compile(w) => w.saturating_mul(g.compile_weight),
            Work::Crypto(t) => crypto_gas(t, g),
        }
    }
}

fn crypto_gas(t: work::Tally, g: &GasParams) -> u64 {
    t.signatures
        .saturating_mul(g.signature)
        .saturating_add(t.points.saturating_mul(g.point))
}

/// A tx's intrinsic gas: `tx_base`, `tx_byte` per byte of the encoded tx,
/// and the signatures and curve points decoding it checks (`crypto`, the
/// tx's own signature included).
pub fn intrinsic(g: &GasParams, tx_bytes: usize, crypto: work::Tally) -> u64 {
    g.tx_base
        .saturating_add((tx_bytes as u64).saturating_mul(g.tx_byte))
        .saturating_add(crypto_gas(crypto, g))
}
