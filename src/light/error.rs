//! The light client's errors; each message carries the offending values.

use std::time::Duration;

use tendermint::Time;

/// Why a header could not be fetched or verified.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LightError {
    /// Transport, HTTP or JSON-RPC failure, or a response that did not decode.
    #[error("rpc {url}: {reason}")]
    Rpc { url: String, reason: String },

    /// The node answered for another height than the one asked for.
    #[error("rpc {url}: asked for height {expected}, got height {got}")]
    WrongHeight {
        url: String,
        expected: u64,
        got: u64,
    },

    /// The header at the trust root's height does not hash to the root hash.
    #[error(
        "trust root at height {height}: trusted hash {expected}, node's header hashes to {got}"
    )]
    TrustHashMismatch {
        height: u64,
        expected: String,
        got: String,
    },

    /// A header names another chain than the trusted one.
    #[error("chain id mismatch: expected {expected:?}, got {got:?}")]
    ChainIdMismatch { expected: String, got: String },

    /// The trusted header is too old: `root_time + period <= now`.
    #[error("trusted header time {root_time} is outside the trusting period {period:?} at {now}")]
    OutsideTrustingPeriod {
        root_time: Time,
        period: Duration,
        now: Time,
    },

    /// Validators with too little of the trusted set's power signed the
    /// target (bisection narrows the gap).
    #[error("height {height} from trusted height {trusted}: not enough trust: {tally}")]
    NotEnoughTrust {
        trusted: u64,
        height: u64,
        tally: String,
    },

    /// The target failed verification: commit not signed by more than 2/3,
    /// bad signature, validator set hash mismatch, time in the future, ...
    /// `reason` is the verifier's message.
    #[error("height {height} from trusted height {trusted}: invalid: {reason}")]
    Invalid {
        trusted: u64,
        height: u64,
        reason: String,
    },

    /// A validator set returned for a trusted header does not hash to the
    /// header's (next) validators hash.
    #[error("height {height}: {field} is {expected}, the node's validator set hashes to {got}")]
    ValidatorSetMismatch {
        height: u64,
        field: &'static str,
        expected: String,
        got: String,
    },

    /// Malformed data from the node (e.g. a voting power overflow).
    #[error("height {height}: malformed data from the node: {reason}")]
    Malformed { height: u64, reason: String },

    /// The header at `height` does not hash to the next header's
    /// `last_block_id.hash`.
    #[error("hash chain broken at height {height}: header hashes to {got}, header {height}+1 links to {expected}")]
    HashChainBroken {
        height: u64,
        expected: String,
        got: String,
    },

    /// The target is below what can be verified (0, or too far below the
    /// root for the backward walk).
    #[error("height {height} is below the lowest verifiable height {min}")]
    BelowBounds { height: u64, min: u64 },

    /// The target is above the node's latest committed height.
    #[error("height {height} is above the latest verifiable height {max}")]
    AboveBounds { height: u64, max: u64 },

    /// Bisection needed more light blocks than allowed.
    #[error(
        "verifying height {target} from height {trusted} needed more than {limit} light blocks"
    )]
    TooManyFetches {
        trusted: u64,
        target: u64,
        limit: usize,
    },

    /// The node did not reach the height in time.
    #[error(
        "waited {waited:?} for height {height}; latest seen {latest:?}; last error: {last_error:?}"
    )]
    WaitTimeout {
        height: u64,
        latest: Option<u64>,
        waited: Duration,
        last_error: Option<String>,
    },

    /// The trust file could not be read, parsed or written.
    #[error("trust file {path}: {reason}")]
    TrustFile { path: String, reason: String },
}
