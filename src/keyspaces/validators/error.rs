//! Governance refusals, each with its stable code in 200–299 and the
//! offending values in its message.

use thiserror::Error;

use crate::tx::Code;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum GovError {
    #[error("{signer} is not an ACTIVE validator")]
    NotValidator { signer: String },
    #[error("{voter} already voted in {kind} election round {round} about {subject}")]
    DoubleVote {
        voter: String,
        subject: String,
        kind: &'static str,
        round: u64,
    },
    #[error("no open {kind} election about {subject} (its status is {status})")]
    ElectionClosed {
        subject: String,
        kind: &'static str,
        status: &'static str,
    },
    #[error("{signer} is not a takedown authority of group {group} that owns {cid}")]
    NotTakedownAuthority {
        signer: String,
        group: String,
        cid: String,
    },
    #[error("{signer} is not an OWNER of {cid}")]
    NotContentOwner { signer: String, cid: String },
    #[error("unknown jurisdiction {0:?}: not an ISO 3166-1 alpha-2 code")]
    UnknownJurisdiction(String),
    #[error("x25519 key {key}: {reason}")]
    BadX25519Key { key: String, reason: &'static str },
    #[error("proof of possession of consensus key {consensus_key}: {reason}")]
    BadProofOfPossession {
        consensus_key: String,
        reason: String,
    },
    #[error("proof of possession of operator key {key}: {reason}")]
    BadOperatorKeyProof { key: String, reason: String },
    #[error("consensus key {consensus_key} belongs to validator {holder}")]
    ConsensusKeyInUse {
        consensus_key: String,
        holder: String,
    },
    #[error("{subject} is {from}: {action} is not allowed from there")]
    InvalidTransition {
        subject: String,
        from: &'static str,
        action: &'static str,
    },
    #[error("{signer} is not the operator of a validator record that is ACTIVE, CANDIDATE or UNBONDING (its record: {status})")]
    NotOperator {
        signer: String,
        status: &'static str,
    },
    #[error("{member} is not a member of ACTIVE group {group:?}")]
    NotGroupMember { member: String, group: String },
    #[error("{what}: {got} would exceed the cap of {limit}")]
    Cap {
        what: &'static str,
        got: u64,
        limit: u64,
    },
    #[error("upgrade {name:?} refused: {reason}")]
    UpgradeRefused { name: String, reason: String },
}

impl GovError {
    /// `Cap` unless one more than `count` fits under `limit`.
    pub fn room(what: &'static str, count: u64, limit: u64) -> Result<(), GovError> {
        if count >= limit {
            return Err(GovError::Cap {
                what,
                got: count.saturating_add(1),
                limit,
            });
        }
        Ok(())
    }

    pub fn code(&self) -> Code {
        match self {
            GovError::NotValidator { .. } => Code::NotValidator,
            GovError::DoubleVote { .. } => Code::DoubleVote,
            GovError::ElectionClosed { .. } => Code::ElectionClosed,
            GovError::NotTakedownAuthority { .. } => Code::NotTakedownAuthority,
            GovError::NotContentOwner { .. } => Code::NotContentOwner,
            GovError::UnknownJurisdiction(_) => Code::UnknownJurisdiction,
            GovError::BadX25519Key { .. } => Code::BadX25519Key,
            GovError::BadProofOfPossession { .. } | GovError::BadOperatorKeyProof { .. } => {
                Code::BadProofOfPossession
            }
            GovError::ConsensusKeyInUse { .. } => Code::ConsensusKeyInUse,
            GovError::InvalidTransition { .. } => Code::InvalidTransition,
            GovError::Cap { .. } => Code::GovernanceCap,
            GovError::NotGroupMember { .. } => Code::NotGroupMember,
            GovError::NotOperator { .. } => Code::NotValidatorOperator,
            GovError::UpgradeRefused { .. } => Code::UpgradeRefused,
        }
    }
}
