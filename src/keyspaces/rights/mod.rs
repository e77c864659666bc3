//! Shared pieces of the content and rights keyspaces (`uploads/`, `deks/`,
//! `releases/`, `entitlements/`, `policies/`, `grants/`): their genesis caps
//! ([`RightsParams`]), their error kinds ([`RightsError`], codes 100–199),
//! format validation (cids, keys, ISO 3166-1 territories; releases are
//! checked by [`crate::ddex::validate`]) and the access decision ([`access`]).

pub mod access;
mod params;
pub mod query;

pub use crate::ddex::territory::is_territory;
pub use params::RightsParams;

use thiserror::Error;

use crate::tx::{Code, TxError};

/// Why a content or rights action was refused. Each variant has one stable
/// code in the 100–199 range; messages carry the offending values.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RightsError {
    #[error("unknown cid {0}")]
    UnknownCid(String),
    #[error("{signer} may not {what}")]
    RoleNotGrantable { signer: String, what: String },
    #[error("release {0} exists: {1}")]
    AlreadyPublished(String, String),
    #[error("malformed ISRC {isrc:?}: {reason}")]
    MalformedIsrc { isrc: String, reason: String },
    #[error("access denied: {0}")]
    AccessDenied(String),
    #[error("{pubkey} is the last OWNER of cid {cid}; it can be neither revoked nor demoted")]
    LastOwner { cid: String, pubkey: String },
    #[error("upload manifest signature by {uploader} does not verify")]
    ManifestSignature { uploader: String },
    #[error("publisher signature on release {release_id} by {signer} does not verify over chain {chain_id}")]
    ReleaseSignature {
        release_id: String,
        signer: String,
        chain_id: String,
    },
    #[error("signer {signer} may not complete this upload: {reason}")]
    NotProcessingValidator { signer: String, reason: String },
    #[error("invalid ERN: {0}")]
    InvalidErn(String),
    #[error("invalid ISO 3166-1 alpha-2 territory {0:?}")]
    InvalidTerritory(String),
    #[error("upload {0} already exists")]
    UploadExists(String),
    #[error("{what} is {got}, over the genesis cap of {max}")]
    CapExceeded { what: String, got: usize, max: u32 },
    #[error(
        "{who} holds {used} bytes of content; {adding} more would exceed its {budget} of {max}"
    )]
    ContentBudget {
        who: String,
        budget: &'static str,
        used: u64,
        adding: u64,
        max: u64,
    },
    #[error("policy type {0} can only be set by the takedown flow")]
    PolicyTypeReserved(String),
    #[error("casbin model {model_id:?} is not owned by {signer}")]
    ModelNotOwned { model_id: String, signer: String },
    #[error("signer {signer} is not in the DEK holder set of cid {cid}")]
    NotDekHolder { cid: String, signer: String },
    #[error("unsupported policy type {0}: evaluated by a later script engine")]
    UnsupportedPolicyType(String),
    #[error("casbin evaluation failed: {0}")]
    CasbinFailed(String),
    #[error("cid {cid} is under takedown: {reason}")]
    TakedownActive { cid: String, reason: String },
    #[error("signer {signer} is not the uploader {uploader} of cid {cid}")]
    NotUploader {
        cid: String,
        signer: String,
        uploader: String,
    },
    #[error("invalid upload manifest: {0}")]
    InvalidManifest(String),
    #[error("invalid scope: {0}")]
    InvalidScope(String),
    #[error("invalid policy: {0}")]
    InvalidPolicy(String),
    #[error("no deal covers it: {0}")]
    NoDeal(String),
    #[error("deals overlap: {0}")]
    OverlappingDeals(String),
    #[error("release {id}: update created {got} is not later than the stored version's {stored}")]
    StaleRelease {
        id: String,
        got: String,
        stored: String,
    },
    #[error("release {id}: MessageCreatedDateTime {got} is more than {skew_secs} s past the block time {block}")]
    FutureRelease {
        id: String,
        got: String,
        block: u64,
        skew_secs: u64,
    },
}

impl From<crate::ddex::DdexError> for RightsError {
    fn from(e: crate::ddex::DdexError) -> Self {
        use crate::ddex::DdexError as D;
        match e {
            D::Invalid(m) => RightsError::InvalidErn(m),
            D::Isrc { isrc, reason } => RightsError::MalformedIsrc { isrc, reason },
            D::Territory(t) => RightsError::InvalidTerritory(t),
            D::Cap { what, got, max } => RightsError::CapExceeded { what, got, max },
            D::OverlappingDeals(m) => RightsError::OverlappingDeals(m),
        }
    }
}

impl RightsError {
    /// The stable code of this kind.
    pub fn code(&self) -> Code {
        match self {
            RightsError::UnknownCid(_) => Code::UnknownCid,
            RightsError::RoleNotGrantable { .. } => Code::RoleNotGrantable,
            RightsError::AlreadyPublished(..) => Code::AlreadyPublished,
            RightsError::MalformedIsrc { .. } => Code::MalformedIsrc,
            RightsError::AccessDenied(_) => Code::AccessDenied,
            RightsError::LastOwner { .. } => Code::LastOwner,
            RightsError::ManifestSignature { .. } => Code::ManifestSignature,
            RightsError::ReleaseSignature { .. } => Code::ReleaseSignature,
            RightsError::NotProcessingValidator { .. } => Code::NotProcessingValidator,
            RightsError::InvalidErn(_) => Code::InvalidErn,
            RightsError::InvalidTerritory(_) => Code::InvalidTerritory,
            RightsError::UploadExists(_) => Code::UploadExists,
            RightsError::CapExceeded { .. } => Code::RightsCapExceeded,
            RightsError::ContentBudget { .. } => Code::RightsCapExceeded,
            RightsError::PolicyTypeReserved(_) => Code::PolicyTypeReserved,
            RightsError::ModelNotOwned { .. } => Code::ModelNotOwned,
            RightsError::NotDekHolder { .. } => Code::NotDekHolder,
            RightsError::UnsupportedPolicyType(_) => Code::UnsupportedPolicyType,
            RightsError::CasbinFailed(_) => Code::CasbinEvaluationFailed,
            RightsError::TakedownActive { .. } => Code::TakedownActive,
            RightsError::NotUploader { .. } => Code::NotUploader,
            RightsError::InvalidManifest(_) => Code::InvalidManifest,
            RightsError::InvalidScope(_) => Code::InvalidScope,
            RightsError::InvalidPolicy(_) => Code::InvalidPolicy,
            RightsError::NoDeal(_) => Code::NoDeal,
            RightsError::OverlappingDeals(_) => Code::OverlappingDeals,
            RightsError::StaleRelease { .. } => Code::StaleRelease,
            RightsError::FutureRelease { .. } => Code::FutureRelease,
        }
    }
}

/// Fails with `InvalidTerritory` unless `code` is a listed territory code.
pub fn check_territory(code: &str) -> Result<(), RightsError> {
    if is_territory(code) {
        Ok(())
    } else {
        Err(RightsError::InvalidTerritory(code.to_string()))
    }
}

/// Each territory is a listed code and appears once.
pub fn check_unique_territories(territories: &[String]) -> Result<(), RightsError> {
    let mut seen = std::collections::BTreeSet::new();
    for t in territories {
        check_territory(t)?;
        if !seen.insert(t.as_str()) {
            return Err(RightsError::InvalidTerritory(format!("{t} (repeated)")));
        }
    }
    Ok(())
}

/// Fails with `CapExceeded` when `got > max`.
pub fn cap(what: &str, got: usize, max: u32) -> Result<(), RightsError> {
    if got > max as usize {
        return Err(RightsError::CapExceeded {
            what: what.to_string(),
            got,
            max,
        });
    }
    Ok(())
}

/// A cid: 1..=`max_cid_bytes` bytes.
pub fn check_cid(what: &str, cid: &[u8], params: &RightsParams) -> Result<(), RightsError> {
    if cid.is_empty() {
        return Err(RightsError::InvalidManifest(format!("{what} is empty")));
    }
    cap(&format!("{what} length"), cid.len(), params.max_cid_bytes)
}

/// An identity key: a valid, non-weak ed25519 public key.
pub fn identity(what: &str, bytes: &[u8]) -> Result<[u8; 32], TxError> {
    crate::tx::identity_key(bytes)
        .map(|(k, _)| k)
        .map_err(|e| TxError::InvalidArgument(format!("{what}: {e}")))
}

/// Block time in unix seconds (negative times count as 0).
pub fn block_secs(time_ns: i64) -> u64 {
    u64::try_from(time_ns / 1_000_000_000).unwrap_or(0)
}

/// Lowercase hex, for messages and events.
pub fn hx(b: &[u8]) -> String {
    hex::encode(b)
}

/// The `{cid}` segment of a multi-segment key: one length byte, then the
/// cid. The length prefix keeps `{cid}/{pubkey}` keys of different cids
/// from colliding; cids are capped well under 256 bytes by
/// [`RightsParams::validate`].
pub fn cid_segment(cid: &[u8]) -> Vec<u8> {
    let len = u8::try_from(cid.len()).unwrap_or(u8::MAX);
    let mut out = Vec::with_capacity(cid.len() + 1);
    out.push(len);
    out.extend_from_slice(&cid[..usize::from(len).min(cid.len())]);
    out
}
