//! A client-side CometBFT light client: a *verified* block header at any
//! height, starting from a trust root, so that a client can check an ICS23
//! proof for the state after block `H` against `app_hash` in the header at
//! `H + 1`.
//!
//! # Trust model
//!
//! - **Trusted**: the [`TrustRoot`], i.e. the chain id and the hash of the
//!   header at one height. It comes from out of band (a validator operator,
//!   a block explorer you trust, your own node) or, by *trust on first use*,
//!   from [`init_from_node`], which is only as good as the node it asks.
//!   Also trusted: the local clock (`now`), within the clock drift.
//! - **Untrusted**: the RPC node. Everything it returns is checked:
//!   - the root block must hash to the root hash, carry the root's chain
//!     id, and its validator sets must hash to the header's
//!     `validators_hash` / `next_validators_hash`;
//!   - above the root, *skipping verification* (tendermint-rs's
//!     `ProdVerifier::verify_update_header`): the target's commit must be
//!     signed by more than 2/3 of its own validator set, and validators
//!     holding more than the trust level (2/3 by default) of the trusted block's
//!     next validator set must have signed it too; when they have not
//!     ([`LightError::NotEnoughTrust`]), bisect at the midpoint, like the
//!     tendermint light client, within [`MAX_FORWARD_FETCHES`] fetches;
//!   - below the root, the *hash chain*: the header at `h - 1` must hash to
//!     the `last_block_id.hash` of the (already verified) header at `h`,
//!     for at most [`MAX_BACKWARD_STEPS`] steps.
//! - **Trusting period**: a root is only usable while `root header time +
//!   trusting period > now` (default 24 h). On a chain with stake it must
//!   be shorter than the unbonding period, so that validators who signed
//!   the root are still accountable. Stave has no stake to slash and
//!   unbonds in `unbonding_blocks` (10 by default), so nothing makes a past
//!   validator accountable: hence the short default period and the 2/3
//!   trust level, under which a fork must be signed by more than 2/3 of a
//!   validator set this client trusted (CometBFT's default is 1/3 over
//!   168 h, which assumes slashing). Refresh the trust file before it expires.
//!
//! The node could still withhold data (fail requests); it cannot make this
//! client accept a header that the trusted validators did not sign, short
//! of more than 2/3 of them (by power) signing a fork.
//!
//! Only `http://` RPC URLs work: reqwest is built without a TLS backend.

mod client;
mod error;
mod rpc;
mod trust;
mod verify;

#[cfg(test)]
mod tests;

use std::time::Duration;

pub use client::LightClient;
pub use error::LightError;
pub use tendermint_light_client_verifier::types::{LightBlock, TrustThreshold};
pub use trust::{init_from_node, TrustFile, TrustRoot};
pub use verify::{bisect, check_hash_link, check_root, verify_forward, walk_back};

/// At most this many light blocks are fetched to verify one header above the
/// root (bisection included).
pub const MAX_FORWARD_FETCHES: usize = 64;

/// At most this many headers are walked back below the root.
pub const MAX_BACKWARD_STEPS: u64 = 10_000;

/// Timeout of one RPC request.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Default trusting period: 24 h (see the module doc for why not 168 h).
pub const DEFAULT_TRUSTING_PERIOD: Duration = Duration::from_secs(24 * 3600);

/// Default tolerated clock drift between this machine and block times.
pub const DEFAULT_CLOCK_DRIFT: Duration = Duration::from_secs(10);

/// Verification options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LightOptions {
    /// How long a trusted header stays usable as a starting point.
    pub trusting_period: Duration,
    /// Share of the trusted validator set's power that must sign a skipped-to
    /// header (default 2/3).
    pub trust_level: TrustThreshold,
    /// How far in the future a header's time may be, relative to `now`.
    pub clock_drift: Duration,
}

impl Default for LightOptions {
    fn default() -> Self {
        Self {
            trusting_period: DEFAULT_TRUSTING_PERIOD,
            trust_level: TrustThreshold::TWO_THIRDS,
            clock_drift: DEFAULT_CLOCK_DRIFT,
        }
    }
}

impl LightOptions {
    /// The default options with another trusting period.
    pub fn with_trusting_period(trusting_period: Duration) -> Self {
        Self {
            trusting_period,
            ..Self::default()
        }
    }

    /// The verifier crate's options.
    pub fn verifier_options(&self) -> tendermint_light_client_verifier::options::Options {
        tendermint_light_client_verifier::options::Options {
            trust_threshold: self.trust_level,
            trusting_period: self.trusting_period,
            clock_drift: self.clock_drift,
        }
    }
}
