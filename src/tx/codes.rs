//! Stable error codes, codespace `stave`. The numbers never change meaning;
//! new kinds get new numbers.

/// The codespace reported with every non-zero code.
pub const CODESPACE: &str = "stave";

/// One code per kind of failure. Ranges by area: 0–99 the envelope and
/// generic kinds; 100–199 content and rights; 200–299 governance; 300–399 KV
/// tokens and kvdb; 400–499 the local store and peer service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum Code {
    Ok = 0,
    /// The bytes are not a `Tx`, or its body is not a `TxBody`.
    Decode = 1,
    /// The body does not re-encode to the same bytes.
    NonCanonical = 2,
    /// The signature does not verify.
    Signature = 3,
    /// The body names another chain.
    WrongChain = 4,
    /// The nonce is not the account's next nonce.
    Nonce = 5,
    /// The encoded tx exceeds `max_tx_bytes`.
    TxTooLarge = 6,
    /// More actions than `max_actions_per_tx`, or none at all.
    ActionCount = 7,
    /// The signer is not a valid, non-weak ed25519 public key.
    InvalidSigner = 8,
    /// The signer may not do this.
    Unauthorized = 9,
    /// The thing acted on does not exist.
    NotFound = 10,
    /// The action conflicts with existing state.
    Conflict = 11,
    /// A field is malformed or out of its limits.
    InvalidArgument = 12,
    /// The account's stored-bytes quota would be exceeded.
    QuotaExceeded = 13,
    /// The memo exceeds `max_memo_bytes`.
    MemoTooLarge = 14,
    /// Node-local mempool policy refused the tx (not a consensus rule).
    MempoolPolicy = 15,
    /// The node is not ready (no genesis yet).
    NotReady = 16,
    /// The token signature does not verify under its controller.
    KvTokenForged = 300,
    /// The controller is not lowercase hex of a valid, non-weak ed25519 key.
    KvBadController = 301,
    /// The token signs a generation other than the tuple's next one (replay).
    KvTokenReplayed = 302,
    /// Create on a tuple that already has a live token.
    KvTokenLiveExists = 303,
    /// Update or delete naming a token id that is not the live one.
    KvTokenStale = 304,
    /// Update or delete on a tuple with no live token.
    KvTokenNoLive = 305,
    /// A kv key is empty or too long.
    KvBadKey = 306,
    /// A kv value is over its limit.
    KvValueTooLarge = 307,
    /// A protocol id is malformed or not canonical.
    KvBadProtocolId = 308,
    /// A tags JSON is invalid, not canonical, or out of limits.
    KvBadTags = 309,
    /// The controller's live-token cap would be exceeded.
    KvTooManyTokens = 310,
    /// A kvdb operation on a key holding another type.
    KvWrongType = 311,
    /// A kvdb counter would overflow.
    KvOverflow = 312,
    /// A kvdb collection would pass its member cap.
    KvCollectionFull = 313,
    /// A sorted-set score is not an exact decimal in range.
    KvBadScore = 314,
    /// A kvdb database name is invalid.
    KvBadDbName = 315,
    /// Another kv token field is malformed (token id, generation).
    KvBadField = 316,
}

impl Code {
    pub fn value(self) -> u32 {
        self as u32
    }

    /// The name used in logs and docs.
    pub fn name(self) -> &'static str {
        match self {
            Code::Ok => "OK",
            Code::Decode => "DECODE",
            Code::NonCanonical => "NON_CANONICAL",
            Code::Signature => "SIGNATURE",
            Code::WrongChain => "WRONG_CHAIN",
            Code::Nonce => "NONCE",
            Code::TxTooLarge => "TX_TOO_LARGE",
            Code::ActionCount => "ACTION_COUNT",
            Code::InvalidSigner => "INVALID_SIGNER",
            Code::Unauthorized => "UNAUTHORIZED",
            Code::NotFound => "NOT_FOUND",
            Code::Conflict => "CONFLICT",
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::QuotaExceeded => "QUOTA_EXCEEDED",
            Code::MemoTooLarge => "MEMO_TOO_LARGE",
            Code::MempoolPolicy => "MEMPOOL_POLICY",
            Code::NotReady => "NOT_READY",
            Code::KvTokenForged => "KV_TOKEN_FORGED",
            Code::KvBadController => "KV_BAD_CONTROLLER",
            Code::KvTokenReplayed => "KV_TOKEN_REPLAYED",
            Code::KvTokenLiveExists => "KV_TOKEN_LIVE_EXISTS",
            Code::KvTokenStale => "KV_TOKEN_STALE",
            Code::KvTokenNoLive => "KV_TOKEN_NO_LIVE",
            Code::KvBadKey => "KV_BAD_KEY",
            Code::KvValueTooLarge => "KV_VALUE_TOO_LARGE",
            Code::KvBadProtocolId => "KV_BAD_PROTOCOL_ID",
            Code::KvBadTags => "KV_BAD_TAGS",
            Code::KvTooManyTokens => "KV_TOO_MANY_TOKENS",
            Code::KvWrongType => "KV_WRONGTYPE",
            Code::KvOverflow => "KV_OVERFLOW",
            Code::KvCollectionFull => "KV_COLLECTION_FULL",
            Code::KvBadScore => "KV_BAD_SCORE",
            Code::KvBadDbName => "KV_BAD_DB_NAME",
            Code::KvBadField => "KV_BAD_FIELD",
        }
    }

    /// Every code, for docs and tests.
    pub const ALL: [Code; 34] = [
        Code::Ok,
        Code::Decode,
        Code::NonCanonical,
        Code::Signature,
        Code::WrongChain,
        Code::Nonce,
        Code::TxTooLarge,
        Code::ActionCount,
        Code::InvalidSigner,
        Code::Unauthorized,
        Code::NotFound,
        Code::Conflict,
        Code::InvalidArgument,
        Code::QuotaExceeded,
        Code::MemoTooLarge,
        Code::MempoolPolicy,
        Code::NotReady,
        Code::KvTokenForged,
        Code::KvBadController,
        Code::KvTokenReplayed,
        Code::KvTokenLiveExists,
        Code::KvTokenStale,
        Code::KvTokenNoLive,
        Code::KvBadKey,
        Code::KvValueTooLarge,
        Code::KvBadProtocolId,
        Code::KvBadTags,
        Code::KvTooManyTokens,
        Code::KvWrongType,
        Code::KvOverflow,
        Code::KvCollectionFull,
        Code::KvBadScore,
        Code::KvBadDbName,
        Code::KvBadField,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_stable() {
        let mut seen = std::collections::BTreeSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.value()), "duplicate code {}", c.value());
        }
        assert_eq!(Code::Signature.value(), 3);
        assert_eq!(Code::Nonce.value(), 5);
        assert_eq!(Code::TxTooLarge.value(), 6);
    }
}
