//! Why a casbin action was refused. Each variant has its own stable code
//! (170–174, the top of the content-and-rights range). 175,
//! `CASBIN_EVALUATION_FAILED`, is the access decision's deny when an
//! evaluation cannot complete (`RightsError::CasbinFailed`).

use thiserror::Error;

use crate::tx::Code;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CasbinError {
    /// The model text is outside the allowed subset (see `docs/casbin.md`).
    #[error("invalid casbin model text: {0}")]
    InvalidModel(String),
    /// A rule slot outside `0..max_rules_per_model`.
    #[error("casbin rule index {index} is out of range; slots are 0..{max}")]
    IndexOutOfRange { index: u32, max: u32 },
    /// A rule value that the functions reading it would not accept.
    #[error("invalid casbin rule: {0}")]
    InvalidRule(String),
    /// A size cap of `params.casbin`.
    #[error("casbin cap exceeded: {what} is {got}, over the limit of {max}")]
    CapExceeded {
        what: &'static str,
        got: u64,
        max: u64,
    },
    /// The signer does not own the model (or the model id it names).
    #[error("{signer} does not own casbin model {model_id:?}")]
    NotOwner { signer: String, model_id: String },
}

impl CasbinError {
    pub fn code(&self) -> Code {
        match self {
            CasbinError::InvalidModel(_) => Code::CasbinInvalidModel,
            CasbinError::IndexOutOfRange { .. } => Code::CasbinRuleIndexOutOfRange,
            CasbinError::InvalidRule(_) => Code::CasbinInvalidRule,
            CasbinError::CapExceeded { .. } => Code::CasbinCapExceeded,
            CasbinError::NotOwner { .. } => Code::CasbinNotOwner,
        }
    }

    pub(crate) fn cap(what: &'static str, got: usize, max: u32) -> Self {
        CasbinError::CapExceeded {
            what,
            got: got as u64,
            max: max.into(),
        }
    }
}
