//! Why an upload was refused or a job failed, each with a stable code.

/// An upload refused before anything was stored, or a call on a job
/// refused.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("bad upload intent: {0}")]
    BadIntent(String),
    #[error("the intent names chain {got:?}, this node is on {want:?}")]
    WrongChain { got: String, want: String },
    #[error("intent timestamp {timestamp_ms} ms is more than {window_ms} ms from this node's clock ({now_ms} ms)")]
    Stale {
        timestamp_ms: u64,
        now_ms: u64,
        window_ms: u64,
    },
    #[error("the intent's signature does not verify under uploader {0}")]
    BadSignature(String),
    #[error("this intent (uploader {uploader}, nonce {nonce}) was already used")]
    Replayed { uploader: String, nonce: String },
    #[error("this node takes uploads into a publisher group only (upload.allow_ungrouped = false): name the group")]
    GroupRequired,
    #[error("{0}")]
    Exists(String),
    #[error("uploader {uploader} is not a member of active group {group:?}")]
    NotMember { uploader: String, group: String },
    #[error("this validator cannot process the upload: {0}")]
    NotProcessor(String),
    #[error("set member {0} is not an active validator")]
    InactiveMember(String),
    #[error("{what} is {size} bytes, over the cap of {max} ({param})")]
    TooLarge {
        what: &'static str,
        size: u64,
        max: u64,
        param: &'static str,
    },
    #[error(
        "{who} has {used} of {max} bytes ({param}) used; this upload needs about {adding} more"
    )]
    Budget {
        who: String,
        used: u64,
        adding: u64,
        max: u64,
        param: &'static str,
    },
    #[error("the upload declares 0 bytes of audio")]
    Empty,
    #[error("disk: {0}")]
    Disk(String),
    #[error("{0}")]
    Busy(String),
    #[error("no data for {secs} s: the upload was dropped")]
    Idle { secs: u64 },
    #[error("the upload fell behind upload.min_upload_bytes_per_sec after {secs} s")]
    TooSlow { secs: u64 },
    #[error("the upload declared {declared} bytes of audio and sent {sent}")]
    SizeMismatch { declared: u64, sent: u64 },
    #[error("the stream's first message must be the signed intent, and only it")]
    Protocol,
    #[error("the upload stream broke: {0}")]
    Aborted(String),
    #[error("no job {0}")]
    NoJob(String),
    #[error("job {job} is {status}: {why}")]
    JobState {
        job: String,
        status: &'static str,
        why: String,
    },
    #[error("the manifest signature does not verify under uploader {0}")]
    ManifestSignature(String),
    #[error("node: {0}")]
    Internal(String),
}

impl IngestError {
    /// Every code [`IngestError::code`] returns.
    pub const CODES: &'static [&'static str] = &[
        "BAD_INTENT",
        "WRONG_CHAIN",
        "STALE_INTENT",
        "BAD_SIGNATURE",
        "REPLAYED",
        "GROUP_REQUIRED",
        "EXISTS",
        "NOT_MEMBER",
        "NOT_PROCESSOR",
        "INACTIVE_MEMBER",
        "TOO_LARGE",
        "BUDGET",
        "EMPTY",
        "DISK",
        "BUSY",
        "IDLE",
        "TOO_SLOW",
        "SIZE_MISMATCH",
        "PROTOCOL",
        "ABORTED",
        "NO_JOB",
        "JOB_STATE",
        "MANIFEST_SIGNATURE",
        "INTERNAL",
    ];

    /// The stable code.
    pub fn code(&self) -> &'static str {
        use IngestError::*;
        match self {
            BadIntent(_) => "BAD_INTENT",
            WrongChain { .. } => "WRONG_CHAIN",
            Stale { .. } => "STALE_INTENT",
            BadSignature(_) => "BAD_SIGNATURE",
            Replayed { .. } => "REPLAYED",
            GroupRequired => "GROUP_REQUIRED",
            Exists(_) => "EXISTS",
            NotMember { .. } => "NOT_MEMBER",
            NotProcessor(_) => "NOT_PROCESSOR",
            InactiveMember(_) => "INACTIVE_MEMBER",
            TooLarge { .. } => "TOO_LARGE",
            Budget { .. } => "BUDGET",
            Empty => "EMPTY",
            Disk(_) => "DISK",
            Busy(_) => "BUSY",
            Idle { .. } => "IDLE",
            TooSlow { .. } => "TOO_SLOW",
            SizeMismatch { .. } => "SIZE_MISMATCH",
            Protocol => "PROTOCOL",
            Aborted(_) => "ABORTED",
            NoJob(_) => "NO_JOB",
            JobState { .. } => "JOB_STATE",
            ManifestSignature(_) => "MANIFEST_SIGNATURE",
            Internal(_) => "INTERNAL",
        }
    }

    fn grpc_code(&self) -> tonic::Code {
        use tonic::Code as C;
        use IngestError::*;
        match self {
            BadIntent(_) | WrongChain { .. } | Stale { .. } | Empty | Protocol => {
                C::InvalidArgument
            }
            SizeMismatch { .. } => C::InvalidArgument,
            Aborted(_) => C::Aborted,
            BadSignature(_) | ManifestSignature(_) => C::Unauthenticated,
            NotMember { .. } | GroupRequired => C::PermissionDenied,
            Exists(_) => C::AlreadyExists,
            Replayed { .. } => C::AlreadyExists,
            NotProcessor(_) | InactiveMember(_) | JobState { .. } => C::FailedPrecondition,
            TooLarge { .. } | Budget { .. } | Disk(_) | Busy(_) => C::ResourceExhausted,
            Idle { .. } | TooSlow { .. } => C::DeadlineExceeded,
            NoJob(_) => C::NotFound,
            Internal(_) => C::Internal,
        }
    }
}

impl From<IngestError> for tonic::Status {
    /// The message starts with the stable code: `CODE: message`.
    fn from(e: IngestError) -> Self {
        tonic::Status::new(e.grpc_code(), format!("{}: {e}", e.code()))
    }
}

impl From<crate::local::LocalError> for IngestError {
    fn from(e: crate::local::LocalError) -> Self {
        IngestError::Internal(e.to_string())
    }
}

impl From<crate::store::StoreError> for IngestError {
    fn from(e: crate::store::StoreError) -> Self {
        IngestError::Internal(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::IngestError;

    #[test]
    fn codes_are_listed_and_distinct() {
        let mut seen = std::collections::BTreeSet::new();
        for c in IngestError::CODES {
            assert!(seen.insert(*c), "{c} twice");
        }
        let s = || String::from("x");
        let every = [
            IngestError::BadIntent(s()),
            IngestError::WrongChain {
                got: s(),
                want: s(),
            },
            IngestError::Stale {
                timestamp_ms: 0,
                now_ms: 0,
                window_ms: 0,
            },
            IngestError::BadSignature(s()),
            IngestError::Replayed {
                uploader: s(),
                nonce: s(),
            },
            IngestError::GroupRequired,
            IngestError::Exists(s()),
            IngestError::NotMember {
                uploader: s(),
                group: s(),
            },
            IngestError::NotProcessor(s()),
            IngestError::InactiveMember(s()),
            IngestError::TooLarge {
                what: "a",
                size: 0,
                max: 0,
                param: "p",
            },
            IngestError::Budget {
                who: s(),
                used: 0,
                adding: 0,
                max: 0,
                param: "p",
            },
            IngestError::Empty,
            IngestError::Disk(s()),
            IngestError::Busy(s()),
            IngestError::Idle { secs: 1 },
            IngestError::TooSlow { secs: 1 },
            IngestError::SizeMismatch {
                declared: 1,
                sent: 0,
            },
            IngestError::Protocol,
            IngestError::Aborted(s()),
            IngestError::NoJob(s()),
            IngestError::JobState {
                job: s(),
                status: "S",
                why: s(),
            },
            IngestError::ManifestSignature(s()),
            IngestError::Internal(s()),
        ];
        let codes: std::collections::BTreeSet<&str> = every.iter().map(|e| e.code()).collect();
        assert_eq!(
            codes, seen,
            "every variant has a listed code, and every code a variant"
        );
        for e in every {
            let code = e.code();
            let st = tonic::Status::from(e);
            assert!(st.message().starts_with(&format!("{code}: ")), "{st:?}");
        }
    }
}
