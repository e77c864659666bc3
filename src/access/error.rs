//! Why a consumer's request was refused. Each maps to one stable [`Code`];
//! a refusal of the access decision keeps the decision's own code
//! (`ACCESS_DENIED`, `TAKEDOWN_ACTIVE`, `UNKNOWN_CID`, ...).

use thiserror::Error;

use crate::keyspaces::rights::RightsError;
use crate::tx::Code;

#[derive(Debug, Error)]
pub enum AccessError {
    #[error("malformed request: {0}")]
    Invalid(String),
    #[error("consumer X25519 key: {0}")]
    BadX25519(String),
    #[error("request signature does not verify for consumer {consumer}")]
    Signature { consumer: String },
    #[error("request timestamp {timestamp_ms} is more than {window_ms} ms from this node's clock ({now_ms})")]
    Stale {
        timestamp_ms: u64,
        now_ms: u64,
        window_ms: u64,
    },
    #[error("request nonce {nonce} of consumer {consumer} was answered before")]
    Replayed { consumer: String, nonce: String },
    #[error("request is for chain {chain_id:?} and validator {validator}; this is {expected_chain:?} / {me}")]
    WrongTarget {
        chain_id: String,
        validator: String,
        expected_chain: String,
        me: String,
    },
    #[error("this validator ({me}) is not a DEK holder of cid {cid}; its holders are [{}]", holders.join(", "))]
    NotAHolder {
        me: String,
        cid: String,
        holders: Vec<String>,
    },
    #[error("this validator ({me}) does not hold content {cid}; its replicas are [{}]", replicas.join(", "))]
    NotAReplica {
        me: String,
        cid: String,
        replicas: Vec<String>,
    },
    #[error("{0}")]
    Denied(RightsError),
    #[error("not ready: {0}")]
    Unavailable(String),
    #[error("busy: {0}")]
    Busy(String),
    #[error("range [{offset}, +{length}) of a blob of {total} bytes: {reason}")]
    Range {
        offset: u64,
        length: u64,
        total: u64,
        reason: String,
    },
    #[error("this validator's DEK for cid {cid} is unusable: {reason}")]
    Dek { cid: String, reason: String },
    #[error("this validator's DEK for cid {cid} does not match the manifest's dek_commitment")]
    DekMismatch { cid: String },
    #[error("download stream ended: {0}")]
    TooSlow(String),
    #[error("local failure: {0}")]
    Local(String),
}

impl AccessError {
    pub fn code(&self) -> Code {
        match self {
            AccessError::Invalid(_) => Code::AccessRequestInvalid,
            AccessError::BadX25519(_) => Code::BadX25519Key,
            AccessError::Signature { .. } => Code::AccessSignature,
            AccessError::Stale { .. } => Code::AccessStale,
            AccessError::Replayed { .. } => Code::AccessReplayed,
            AccessError::WrongTarget { .. } => Code::AccessWrongTarget,
            AccessError::NotAHolder { .. } => Code::NotAHolder,
            AccessError::NotAReplica { .. } => Code::NotHeld,
            AccessError::Denied(e) => e.code(),
            AccessError::Unavailable(_) => Code::AccessUnavailable,
            AccessError::Busy(_) => Code::AccessBusy,
            AccessError::Range { .. } => Code::RangeInvalid,
            AccessError::Dek { .. } => Code::DekUnwrap,
            AccessError::DekMismatch { .. } => Code::DekMismatch,
            AccessError::TooSlow(_) => Code::StreamTooSlow,
            AccessError::Local(_) => Code::LocalIo,
        }
    }

    /// The gRPC status: `code N NAME: message`, with the gRPC code that
    /// fits.
    pub fn to_status(&self) -> tonic::Status {
        let code = self.code();
        let msg = format!("code {} {}: {self}", code.value(), code.name());
        use tonic::Code as G;
        let grpc = match self {
            AccessError::Invalid(_)
            | AccessError::BadX25519(_)
            | AccessError::Range { .. }
            | AccessError::Stale { .. } => G::InvalidArgument,
            AccessError::Signature { .. } => G::Unauthenticated,
            AccessError::Replayed { .. } => G::AlreadyExists,
            AccessError::WrongTarget { .. }
            | AccessError::NotAHolder { .. }
            | AccessError::Denied(_) => G::PermissionDenied,
            AccessError::NotAReplica { .. } => G::NotFound,
            AccessError::Unavailable(_) => G::Unavailable,
            AccessError::Busy(_) | AccessError::TooSlow(_) => G::ResourceExhausted,
            AccessError::Dek { .. } | AccessError::DekMismatch { .. } | AccessError::Local(_) => {
                G::Internal
            }
        };
        tonic::Status::new(grpc, msg)
    }
}

impl AccessError {
    /// [`AccessError::to_status`], counted in
    /// `stave_access_refused_total` by code.
    pub fn refusal(&self) -> tonic::Status {
        crate::metrics::metrics()
            .access
            .refused
            .with_label_values(&[self.code().name()])
            .inc();
        self.to_status()
    }
}

impl From<crate::store::StoreError> for AccessError {
    fn from(e: crate::store::StoreError) -> Self {
        match e {
            // A restored node before its first block: retry, not a fault.
            crate::store::StoreError::NoBlockTime { .. } => AccessError::Unavailable(e.to_string()),
            e => AccessError::Local(e.to_string()),
        }
    }
}

impl From<crate::local::LocalError> for AccessError {
    fn from(e: crate::local::LocalError) -> Self {
        AccessError::Local(e.to_string())
    }
}

/// The code in a refusal's message (`code N NAME: …`), for clients.
pub fn code_of(status: &tonic::Status) -> Option<Code> {
    let rest = status.message().strip_prefix("code ")?;
    let n = rest.split(' ').next()?.parse().ok()?;
    Code::from_value(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_block_time_yet_is_unavailable_not_a_fault() {
        let e = AccessError::from(crate::store::StoreError::NoBlockTime { height: Some(5) });
        assert!(matches!(e, AccessError::Unavailable(_)), "{e:?}");
        assert_eq!(e.code(), Code::AccessUnavailable);
        let other = AccessError::from(crate::store::StoreError::Tree("x".into()));
        assert!(matches!(other, AccessError::Local(_)), "{other:?}");
    }

    #[test]
    fn a_refusal_carries_its_code_first_and_parses_back() {
        let e = AccessError::NotAHolder {
            me: "aa".into(),
            cid: "cc".into(),
            holders: vec!["01".into(), "02".into()],
        };
        let s = e.to_status();
        assert_eq!(s.code(), tonic::Code::PermissionDenied);
        assert!(
            s.message().starts_with("code 505 NOT_A_HOLDER: "),
            "{}",
            s.message()
        );
        assert!(s.message().ends_with("[01, 02]"), "{}", s.message());
        assert_eq!(code_of(&s), Some(Code::NotAHolder));
        let denied = AccessError::Denied(RightsError::TakedownActive {
            cid: "cc".into(),
            reason: "r".into(),
        });
        assert_eq!(code_of(&denied.to_status()), Some(Code::TakedownActive));
    }
}
