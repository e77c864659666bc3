//! Errors of the kv area (codes 300–399).

use thiserror::Error;

use crate::tx::Code;

/// Why a kv token or kvdb action failed. Each variant has its own code.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum KvError {
    #[error("token signature does not verify under controller {controller}")]
    TokenForged { controller: String },
    #[error("controller {controller:?} is not the lowercase hex of a valid ed25519 key: {reason}")]
    BadController { controller: String, reason: String },
    #[error(
        "replayed or out-of-order token: tuple's next generation is {expected}, token signs {got}"
    )]
    TokenReplayed { expected: u64, got: u64 },
    #[error("tuple already has the live token {live}")]
    TokenLiveExists { live: String },
    #[error("stale token id {named}: the live token is {live}")]
    TokenStale { named: String, live: String },
    #[error("tuple has no live token (named {named})")]
    TokenNoLive { named: String },
    #[error("key is {len} bytes; allowed 1..={max}")]
    BadKey { len: usize, max: u32 },
    #[error("value is {len} bytes, over the limit of {max}")]
    ValueTooLarge { len: usize, max: u32 },
    #[error("malformed protocol id {got:?}: {reason}")]
    BadProtocolId { got: String, reason: String },
    #[error("invalid tags {got:?}: {reason}")]
    BadTags { got: String, reason: String },
    #[error("controller {controller} has {live} live tokens, the cap is {max}")]
    TooManyTokens {
        controller: String,
        live: u64,
        max: u64,
    },
    #[error("WRONGTYPE: key {key} holds a {held}, not a {wanted}")]
    WrongType {
        key: String,
        held: &'static str,
        wanted: &'static str,
    },
    #[error("counter {key} overflows: {value} + {delta}")]
    Overflow { key: String, value: i64, delta: i64 },
    #[error("collection {key} would hold {len} members, the cap is {max}")]
    CollectionFull { key: String, len: u64, max: u64 },
    #[error("invalid score {got:?}: {reason}")]
    BadScore { got: String, reason: String },
    #[error("invalid database name {got:?}: {reason}")]
    BadDbName { got: String, reason: String },
    #[error("invalid kv token field: {0}")]
    BadField(String),
}

impl KvError {
    pub fn code(&self) -> Code {
        match self {
            KvError::TokenForged { .. } => Code::KvTokenForged,
            KvError::BadController { .. } => Code::KvBadController,
            KvError::TokenReplayed { .. } => Code::KvTokenReplayed,
            KvError::TokenLiveExists { .. } => Code::KvTokenLiveExists,
            KvError::TokenStale { .. } => Code::KvTokenStale,
            KvError::TokenNoLive { .. } => Code::KvTokenNoLive,
            KvError::BadKey { .. } => Code::KvBadKey,
            KvError::ValueTooLarge { .. } => Code::KvValueTooLarge,
            KvError::BadProtocolId { .. } => Code::KvBadProtocolId,
            KvError::BadTags { .. } => Code::KvBadTags,
            KvError::TooManyTokens { .. } => Code::KvTooManyTokens,
            KvError::WrongType { .. } => Code::KvWrongType,
            KvError::Overflow { .. } => Code::KvOverflow,
            KvError::CollectionFull { .. } => Code::KvCollectionFull,
            KvError::BadScore { .. } => Code::KvBadScore,
            KvError::BadDbName { .. } => Code::KvBadDbName,
            KvError::BadField(_) => Code::KvBadField,
        }
    }
}
