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
    /// The node is not ready: no genesis yet, or (CheckTx) two commits ran
    /// while the tx was checked; send it again.
    NotReady = 16,
    /// The tx's work needed more gas than its `gas_limit`; only its nonce changed.
    OutOfGas = 17,
    /// This tx's `gas_limit` would take the block's declared gas (the limits
    /// of every earlier tx that decoded, whatever its result) past
    /// `max_block_gas`. FinalizeBlock only: a proposal over the limit that
    /// arrives by block sync. Changes nothing.
    BlockGasExceeded = 18,
    /// `gas_limit` is below the tx's intrinsic gas or above `max_block_gas`.
    GasLimit = 19,
    /// The signer is unsponsored (no quota, not an ACTIVE validator) and
    /// the envelope's `pow_nonce` is not valid work for the tx. Changes
    /// nothing: no account, no nonce.
    PowRequired = 20,
    /// The block's `unsponsored_block_bytes` cannot cover what this tx
    /// writes for unsponsored accounts; only its nonce changed.
    UnsponsoredBudget = 21,
    /// SetAccountQuota: the signer is not a validator operator.
    NotSponsor = 22,
    /// SetAccountQuota: the pool is not ACTIVE or has no room for the increase.
    SponsorBudget = 23,
    /// The block's `unsponsored_block_bytes` has no room for a new
    /// unsponsored account's record (authentication): nothing changed, no
    /// account, no nonce; resend in a later block.
    NewAccountBudget = 24,
    /// Governance: the signer is not an ACTIVE validator (vote, resolve).
    NotValidator = 200,
    /// Governance: the voter already voted in this election.
    DoubleVote = 201,
    /// Governance: the election is decided, or there is none to vote in.
    ElectionClosed = 202,
    /// Governance: the signer is not a takedown authority of the owning group.
    NotTakedownAuthority = 203,
    /// Governance: the signer is not an OWNER of the content.
    NotContentOwner = 204,
    /// Governance: not an ISO 3166-1 alpha-2 country code.
    UnknownJurisdiction = 205,
    /// Governance: an X25519 key of the wrong length or of low order.
    BadX25519Key = 206,
    /// Governance: the consensus key's proof of possession does not verify.
    BadProofOfPossession = 207,
    /// Governance: the consensus key belongs to another validator record.
    ConsensusKeyInUse = 208,
    /// Governance: no such transition from the record's current status.
    InvalidTransition = 209,
    /// Governance: a cap from `params.governance` would be exceeded.
    GovernanceCap = 210,
    /// Governance: the uploader is not a member of the ACTIVE group it names.
    NotGroupMember = 211,
    /// Governance: the signer is not the operator key of a validator record
    /// that is ACTIVE, CANDIDATE or UNBONDING (`UpdateValidatorEndpoints`,
    /// `RotateX25519Key`, `RotateOperatorKey`).
    NotValidatorOperator = 212,
    /// Governance: a `ScheduleUpgrade` at or below the current height, to an
    /// app version not above the current one, for a migration that already
    /// ran, while another upgrade is scheduled, or on a chain whose genesis
    /// recorded no consensus params.
    UpgradeRefused = 213,
    /// Governance: the tx is signed by a key that a `RotateOperatorKey`
    /// retired; nothing changes, not even the nonce. (A peer request signed
    /// by one is refused as a non-validator's, `PEER_NOT_VALIDATOR`.)
    OperatorKeyRetired = 214,
    /// Casbin: the model text is outside the allowed subset.
    CasbinInvalidModel = 170,
    /// Casbin: a rule index outside `0..max_rules_per_model`.
    CasbinRuleIndexOutOfRange = 171,
    /// Casbin: a rule value fails the checks of the functions that read it.
    CasbinInvalidRule = 172,
    /// Casbin: a cap of `params.casbin` (model size, values per rule, value length).
    CasbinCapExceeded = 173,
    /// Casbin: the signer does not own the model or the model id.
    CasbinNotOwner = 174,
    /// Casbin: evaluation could not complete (unknown model, bound hit, caught
    /// panic): the access decision's deterministic deny.
    CasbinEvaluationFailed = 175,
    // Content and rights: 100-139 (140-159 are kept for the casbin keyspaces).
    /// The cid has no upload.
    UnknownCid = 100,
    /// The signer's role may not grant, replace or revoke this role (or set this policy).
    RoleNotGrantable = 101,
    /// The release id exists and the signer may not update it (the first
    /// publisher of an id wins).
    AlreadyPublished = 102,
    /// A track's ISRC is malformed or repeated.
    MalformedIsrc = 103,
    /// The access decision denies the consumer (RecordGrant).
    AccessDenied = 105,
    /// The last OWNER of a cid can be neither revoked nor demoted.
    LastOwner = 106,
    /// The uploader's manifest signature does not verify.
    ManifestSignature = 107,
    /// The signer is not the active processing validator the manifest names.
    NotProcessingValidator = 108,
    /// The ERN metadata is malformed (release id, date, missing fields).
    InvalidErn = 109,
    /// A territory is not an ISO 3166-1 alpha-2 code.
    InvalidTerritory = 110,
    /// An upload of this flac_cid already exists.
    UploadExists = 111,
    /// A content or rights collection is over its genesis cap.
    RightsCapExceeded = 112,
    /// Takedown policy states belong to the takedown flow.
    PolicyTypeReserved = 113,
    /// The policy names a Casbin model the setter does not own.
    ModelNotOwned = 114,
    /// The signer is not in the cid's DEK holder set.
    NotDekHolder = 115,
    /// The policy type (PROGRAMMABLE) is not evaluated yet.
    UnsupportedPolicyType = 116,
    /// A takedown of the cid is pending or confirmed (the access decision); the
    /// peer service answers it for the blob or DEK of an upload under a
    /// CONFIRMED takedown once its retention has ended.
    TakedownActive = 118,
    /// Only the uploader may publish the upload.
    NotUploader = 119,
    /// The upload manifest is malformed.
    InvalidManifest = 120,
    /// An entitlement scope is malformed (window, condition order).
    InvalidScope = 121,
    /// A policy's fields do not fit its type.
    InvalidPolicy = 122,
    /// No deal of the cid's releases covers the territory, use and time.
    NoDeal = 123,
    /// Two deals of a release cover the same territory, use, commercial
    /// model and time.
    OverlappingDeals = 124,
    /// A release update whose MessageCreatedDateTime is not later than the
    /// stored version's.
    StaleRelease = 125,
    /// A MessageCreatedDateTime further past the block time than
    /// `rights.max_message_clock_skew_secs`.
    FutureRelease = 126,
    /// The publisher signature over (chain id, recording cids, sha256 of
    /// the message) does not verify under the tx's signer.
    ReleaseSignature = 127,
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
    /// Peer service: the signed request does not decode.
    PeerDecode = 400,
    /// Peer service: the request signature does not verify.
    PeerSignature = 401,
    /// Peer service: the requester is not an active validator.
    PeerNotValidator = 402,
    /// Peer service: the request timestamp is outside the allowed window.
    PeerStale = 403,
    /// Peer service: the request names another chain or another responder.
    PeerWrongTarget = 404,
    /// Peer service: the requester is not in the cid's DEK holder set.
    PeerNotDekHolder = 405,
    /// Peer service: no upload names this cid, or this node does not hold it.
    NotHeld = 406,
    /// Local store: fetched content does not match its cid or size.
    ContentMismatch = 407,
    /// Local store: a wrapped DEK does not unwrap.
    DekUnwrap = 408,
    /// Local store: a local i/o or store failure (full disk, ...).
    LocalIo = 409,
    /// Local store: no peer could be reached or answered.
    PeerUnavailable = 410,
    /// Local store: a fetched DEK unwraps but does not match the manifest's
    /// `dek_commitment`.
    DekMismatch = 411,
    /// Peer service: too many content streams are open; retry later.
    PeerBusy = 412,
    /// Access service: the consumer's request is malformed (a field's length or form, its territory or context).
    AccessRequestInvalid = 500,
    /// Access service: the consumer's signature does not verify over the request.
    AccessSignature = 501,
    /// Access service: the request timestamp is outside the node's window.
    AccessStale = 502,
    /// Access service: this consumer's request nonce was answered before.
    AccessReplayed = 503,
    /// Access service: the request names another chain or another validator.
    AccessWrongTarget = 504,
    /// Access service: this validator is not in the cid's DEK holder set; the message lists the holders.
    NotAHolder = 505,
    /// Access service: the node has not committed a block since it started, so block time is unknown; retry.
    AccessUnavailable = 506,
    /// Access service: too many deliveries await recording, or too many downloads are open; retry later.
    AccessBusy = 507,
    /// Access service: a download range is outside the blob or not aligned to its STREAM chunks.
    RangeInvalid = 508,
    /// Access service: a download's reader took no data for the idle timeout, or fell under the minimum rate.
    StreamTooSlow = 509,
}

impl Code {
    pub fn value(self) -> u32 {
        self as u32
    }

    /// The code with number `v`, if there is one.
    pub fn from_value(v: u32) -> Option<Code> {
        Self::ALL.iter().copied().find(|c| c.value() == v)
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
            Code::OutOfGas => "OUT_OF_GAS",
            Code::BlockGasExceeded => "BLOCK_GAS_EXCEEDED",
            Code::GasLimit => "GAS_LIMIT",
            Code::PowRequired => "POW_REQUIRED",
            Code::UnsponsoredBudget => "UNSPONSORED_BUDGET",
            Code::NotSponsor => "NOT_SPONSOR",
            Code::SponsorBudget => "SPONSOR_BUDGET",
            Code::NewAccountBudget => "NEW_ACCOUNT_BUDGET",
            Code::NotValidator => "NOT_VALIDATOR",
            Code::DoubleVote => "DOUBLE_VOTE",
            Code::ElectionClosed => "ELECTION_CLOSED",
            Code::NotTakedownAuthority => "NOT_TAKEDOWN_AUTHORITY",
            Code::NotContentOwner => "NOT_CONTENT_OWNER",
            Code::UnknownJurisdiction => "UNKNOWN_JURISDICTION",
            Code::BadX25519Key => "BAD_X25519_KEY",
            Code::BadProofOfPossession => "BAD_PROOF_OF_POSSESSION",
            Code::ConsensusKeyInUse => "CONSENSUS_KEY_IN_USE",
            Code::InvalidTransition => "INVALID_TRANSITION",
            Code::GovernanceCap => "GOVERNANCE_CAP",
            Code::NotGroupMember => "NOT_GROUP_MEMBER",
            Code::NotValidatorOperator => "NOT_VALIDATOR_OPERATOR",
            Code::UpgradeRefused => "UPGRADE_REFUSED",
            Code::OperatorKeyRetired => "OPERATOR_KEY_RETIRED",
            Code::CasbinInvalidModel => "CASBIN_INVALID_MODEL",
            Code::CasbinRuleIndexOutOfRange => "CASBIN_RULE_INDEX_OUT_OF_RANGE",
            Code::CasbinInvalidRule => "CASBIN_INVALID_RULE",
            Code::CasbinCapExceeded => "CASBIN_CAP_EXCEEDED",
            Code::CasbinNotOwner => "CASBIN_NOT_OWNER",
            Code::CasbinEvaluationFailed => "CASBIN_EVALUATION_FAILED",
            Code::UnknownCid => "UNKNOWN_CID",
            Code::RoleNotGrantable => "ROLE_NOT_GRANTABLE",
            Code::AlreadyPublished => "ALREADY_PUBLISHED",
            Code::MalformedIsrc => "MALFORMED_ISRC",
            Code::AccessDenied => "ACCESS_DENIED",
            Code::LastOwner => "LAST_OWNER",
            Code::ManifestSignature => "MANIFEST_SIGNATURE",
            Code::NotProcessingValidator => "NOT_PROCESSING_VALIDATOR",
            Code::InvalidErn => "INVALID_ERN",
            Code::InvalidTerritory => "INVALID_TERRITORY",
            Code::UploadExists => "UPLOAD_EXISTS",
            Code::RightsCapExceeded => "RIGHTS_CAP_EXCEEDED",
            Code::PolicyTypeReserved => "POLICY_TYPE_RESERVED",
            Code::ModelNotOwned => "MODEL_NOT_OWNED",
            Code::NotDekHolder => "NOT_DEK_HOLDER",
            Code::UnsupportedPolicyType => "UNSUPPORTED_POLICY_TYPE",
            Code::TakedownActive => "TAKEDOWN_ACTIVE",
            Code::NotUploader => "NOT_UPLOADER",
            Code::InvalidManifest => "INVALID_MANIFEST",
            Code::InvalidScope => "INVALID_SCOPE",
            Code::InvalidPolicy => "INVALID_POLICY",
            Code::NoDeal => "NO_DEAL",
            Code::OverlappingDeals => "OVERLAPPING_DEALS",
            Code::StaleRelease => "STALE_RELEASE",
            Code::FutureRelease => "FUTURE_RELEASE",
            Code::ReleaseSignature => "RELEASE_SIGNATURE",
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
            Code::PeerDecode => "PEER_DECODE",
            Code::PeerSignature => "PEER_SIGNATURE",
            Code::PeerNotValidator => "PEER_NOT_VALIDATOR",
            Code::PeerStale => "PEER_STALE",
            Code::PeerWrongTarget => "PEER_WRONG_TARGET",
            Code::PeerNotDekHolder => "PEER_NOT_DEK_HOLDER",
            Code::NotHeld => "NOT_HELD",
            Code::ContentMismatch => "CONTENT_MISMATCH",
            Code::DekUnwrap => "DEK_UNWRAP",
            Code::LocalIo => "LOCAL_IO",
            Code::PeerUnavailable => "PEER_UNAVAILABLE",
            Code::DekMismatch => "DEK_MISMATCH",
            Code::PeerBusy => "PEER_BUSY",
            Code::AccessRequestInvalid => "ACCESS_REQUEST_INVALID",
            Code::AccessSignature => "ACCESS_SIGNATURE",
            Code::AccessStale => "ACCESS_STALE",
            Code::AccessReplayed => "ACCESS_REPLAYED",
            Code::AccessWrongTarget => "ACCESS_WRONG_TARGET",
            Code::NotAHolder => "NOT_A_HOLDER",
            Code::AccessUnavailable => "ACCESS_UNAVAILABLE",
            Code::AccessBusy => "ACCESS_BUSY",
            Code::RangeInvalid => "RANGE_INVALID",
            Code::StreamTooSlow => "STREAM_TOO_SLOW",
        }
    }

    /// Every code, for docs and tests.
    pub const ALL: [Code; 112] = [
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
        Code::OutOfGas,
        Code::BlockGasExceeded,
        Code::GasLimit,
        Code::PowRequired,
        Code::UnsponsoredBudget,
        Code::NotSponsor,
        Code::SponsorBudget,
        Code::NewAccountBudget,
        Code::NotValidator,
        Code::DoubleVote,
        Code::ElectionClosed,
        Code::NotTakedownAuthority,
        Code::NotContentOwner,
        Code::UnknownJurisdiction,
        Code::BadX25519Key,
        Code::BadProofOfPossession,
        Code::ConsensusKeyInUse,
        Code::InvalidTransition,
        Code::GovernanceCap,
        Code::NotGroupMember,
        Code::NotValidatorOperator,
        Code::UpgradeRefused,
        Code::OperatorKeyRetired,
        Code::CasbinInvalidModel,
        Code::CasbinRuleIndexOutOfRange,
        Code::CasbinInvalidRule,
        Code::CasbinCapExceeded,
        Code::CasbinNotOwner,
        Code::CasbinEvaluationFailed,
        Code::UnknownCid,
        Code::RoleNotGrantable,
        Code::AlreadyPublished,
        Code::MalformedIsrc,
        Code::AccessDenied,
        Code::LastOwner,
        Code::ManifestSignature,
        Code::NotProcessingValidator,
        Code::InvalidErn,
        Code::InvalidTerritory,
        Code::UploadExists,
        Code::RightsCapExceeded,
        Code::PolicyTypeReserved,
        Code::ModelNotOwned,
        Code::NotDekHolder,
        Code::UnsupportedPolicyType,
        Code::TakedownActive,
        Code::NotUploader,
        Code::InvalidManifest,
        Code::InvalidScope,
        Code::InvalidPolicy,
        Code::NoDeal,
        Code::OverlappingDeals,
        Code::StaleRelease,
        Code::FutureRelease,
        Code::ReleaseSignature,
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
        Code::PeerDecode,
        Code::PeerSignature,
        Code::PeerNotValidator,
        Code::PeerStale,
        Code::PeerWrongTarget,
        Code::PeerNotDekHolder,
        Code::NotHeld,
        Code::ContentMismatch,
        Code::DekUnwrap,
        Code::LocalIo,
        Code::PeerUnavailable,
        Code::DekMismatch,
        Code::PeerBusy,
        Code::AccessRequestInvalid,
        Code::AccessSignature,
        Code::AccessStale,
        Code::AccessReplayed,
        Code::AccessWrongTarget,
        Code::NotAHolder,
        Code::AccessUnavailable,
        Code::AccessBusy,
        Code::RangeInvalid,
        Code::StreamTooSlow,
    ];
}

#[cfg(test)]
mod tests;
