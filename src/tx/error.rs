use thiserror::Error;

use super::Code;
use crate::store::StoreError;

/// Why a transaction was refused. Each variant maps to one stable [`Code`];
/// the message carries the offending values.
#[derive(Debug, Error)]
pub enum TxError {
    #[error("tx does not decode: {0}")]
    Decode(String),
    #[error("tx body is not canonically encoded ({len} bytes re-encode to {reencoded})")]
    NonCanonical { len: usize, reencoded: usize },
    #[error("signature does not verify for signer {signer}")]
    Signature { signer: String },
    #[error("wrong chain id: expected {expected:?}, got {got:?}")]
    WrongChain { expected: String, got: String },
    #[error("wrong nonce for {signer}: expected {expected}, got {got}")]
    Nonce {
        signer: String,
        expected: u64,
        got: u64,
    },
    #[error("{signer} was rotated away as validator {operator}'s operator key: sign with the key that replaced it")]
    OperatorKeyRetired { signer: String, operator: String },
    #[error("tx is {size} bytes, over the limit of {max}")]
    TxTooLarge { size: usize, max: u64 },
    #[error("tx has {count} actions; allowed 1..={max}")]
    ActionCount { count: usize, max: u32 },
    #[error("invalid signer public key {key}: {reason}")]
    InvalidSigner { key: String, reason: String },
    #[error("unauthorised: {0}")]
    Unauthorized(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("quota exceeded for {account}: {used} + {adding} bytes > {quota}")]
    QuotaExceeded {
        account: String,
        used: u64,
        adding: u64,
        quota: u64,
    },
    #[error("memo is {size} bytes, over the limit of {max}")]
    MemoTooLarge { size: usize, max: u32 },
    #[error("mempool policy: {0}")]
    MempoolPolicy(String),
    #[error("node not ready: {0}")]
    NotReady(String),
    /// A governance rule refused the action (codes 200–299).
    #[error(transparent)]
    Governance(#[from] crate::keyspaces::validators::GovError),
    #[error(transparent)]
    Casbin(#[from] crate::keyspaces::casbin::CasbinError),
    /// A content or rights rule (codes 100-199).
    #[error(transparent)]
    Rights(#[from] crate::keyspaces::rights::RightsError),
    /// A kv token or kvdb rule (codes 300–399).
    #[error(transparent)]
    Kv(#[from] crate::keyspaces::kv::KvError),
    /// The tx's gas ran out; only its nonce is consumed.
    #[error("out of gas: the tx's work needs more than its gas_limit of {limit} (wanted {wanted} so far)")]
    OutOfGas { limit: u64, wanted: u64 },
    /// The tx's declared gas_limit does not fit the block's remaining gas.
    #[error("block gas limit exceeded: the block's earlier decoded txs declare {before} gas, this one {limit}, the block allows {max}")]
    BlockGasExceeded { before: u64, limit: u64, max: u64 },
    /// The declared gas_limit is below the tx's intrinsic cost or above the block limit.
    #[error("gas_limit {limit} is outside {intrinsic}..={max} (intrinsic cost ..= max_block_gas)")]
    GasLimit {
        limit: u64,
        intrinsic: u64,
        max: u64,
    },
    /// An unsponsored signer's tx lacks valid proof of work (authentication).
    #[error("signer {signer} is unsponsored and pow_nonce {pow_nonce} is not valid work: SHA-256(\"stave/pow/v1\" || tx id || nonce) must be below 2^256 / {divisor}")]
    PowRequired {
        signer: String,
        pow_nonce: u64,
        divisor: u64,
    },
    /// The block's unsponsored byte budget cannot cover this write.
    #[error("unsponsored block budget used up: adding {adding} bytes, {room} of {block} left in this block")]
    UnsponsoredBudget { adding: u64, room: u64, block: u64 },
    /// No room in the block's unsponsored budget for a new unsponsored
    /// account's record (authentication: nothing changes).
    #[error("no room for a new unsponsored account in this block: its record needs {adding} bytes, {room} of {block} left")]
    NewAccountBudget { adding: u64, room: u64, block: u64 },
    /// The signer may not move budget from the pool it names.
    #[error("not a sponsor: {0}")]
    NotSponsor(String),
    /// The sponsor pool has no room for the increase.
    #[error("{pool} pool exhausted: {allocated} + {adding} bytes > budget {budget}")]
    SponsorBudget {
        pool: String,
        allocated: u64,
        adding: u64,
        budget: u64,
    },
    /// A node fault while executing: never a tx result (see `StoreError`).
    #[error("store fault: {0}")]
    Store(StoreError),
}

impl From<StoreError> for TxError {
    /// A meter running out during a read is the tx's fault, not the node's.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::OutOfGas { limit, wanted } => TxError::OutOfGas { limit, wanted },
            fault => TxError::Store(fault),
        }
    }
}

impl TxError {
    pub fn code(&self) -> Code {
        match self {
            TxError::Decode(_) => Code::Decode,
            TxError::NonCanonical { .. } => Code::NonCanonical,
            TxError::Signature { .. } => Code::Signature,
            TxError::WrongChain { .. } => Code::WrongChain,
            TxError::Nonce { .. } => Code::Nonce,
            TxError::OperatorKeyRetired { .. } => Code::OperatorKeyRetired,
            TxError::TxTooLarge { .. } => Code::TxTooLarge,
            TxError::ActionCount { .. } => Code::ActionCount,
            TxError::InvalidSigner { .. } => Code::InvalidSigner,
            TxError::Unauthorized(_) => Code::Unauthorized,
            TxError::NotFound(_) => Code::NotFound,
            TxError::Conflict(_) => Code::Conflict,
            TxError::InvalidArgument(_) => Code::InvalidArgument,
            TxError::QuotaExceeded { .. } => Code::QuotaExceeded,
            TxError::MemoTooLarge { .. } => Code::MemoTooLarge,
            TxError::MempoolPolicy(_) => Code::MempoolPolicy,
            TxError::NotReady(_) => Code::NotReady,
            TxError::Governance(g) => g.code(),
            TxError::Casbin(e) => e.code(),
            TxError::Rights(e) => e.code(),
            TxError::Kv(e) => e.code(),
            TxError::OutOfGas { .. } => Code::OutOfGas,
            TxError::BlockGasExceeded { .. } => Code::BlockGasExceeded,
            TxError::GasLimit { .. } => Code::GasLimit,
            TxError::PowRequired { .. } => Code::PowRequired,
            TxError::UnsponsoredBudget { .. } => Code::UnsponsoredBudget,
            TxError::NewAccountBudget { .. } => Code::NewAccountBudget,
            TxError::NotSponsor(_) => Code::NotSponsor,
            TxError::SponsorBudget { .. } => Code::SponsorBudget,
            // Never reported as a tx result; the executor aborts instead.
            TxError::Store(_) => Code::NotReady,
        }
    }
}
