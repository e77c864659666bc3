//! The `casbin/` keyspaces: `casbin/models/{model_id}`,
//! `casbin/rules/{model_id}/{rule_index}` and
//! `casbin/rules_by_sub/{model_id}/{subject}`.
//!
//! This file fixes the interface that the policy and access-decision code
//! calls ([`model_owner`], [`enforce`]). The keyspace, its actions, the
//! adapter and the bounded evaluator live behind it.

use crate::store::{StateRead, StoreError};

/// One access request, as the access decision asks it. A model's
/// `request_definition` names which of these fields it reads
/// (`r = sub, obj, act` or `r = sub, obj, act, territory`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CasbinRequest<'a> {
    /// Lowercase hex of the consumer's ed25519 key.
    pub sub: &'a str,
    /// Lowercase hex of the content id.
    pub obj: &'a str,
    /// The action asked for, e.g. `"access"`.
    pub act: &'a str,
    /// ISO 3166-1 alpha-2 territory of the request.
    pub territory: &'a str,
}

/// The outcome of evaluating a model. Deterministic on every node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CasbinDecision {
    Allow,
    /// The model evaluated and denied; the reason names the model.
    Deny(String),
    /// Evaluation could not complete (unknown model, a bound hit, a caught
    /// panic). The access decision treats this as a deny with its own code.
    Failed(String),
}

/// The owner of a model, if the model exists.
pub fn model_owner<S: StateRead + ?Sized>(
    state: &S,
    model_id: &str,
) -> Result<Option<[u8; 32]>, StoreError> {
    let _ = (state, model_id);
    Ok(None)
}

/// Evaluates `model_id`'s model and rules against `req`, reading `state`.
/// Never panics and never runs unbounded.
pub fn enforce<S: StateRead + ?Sized>(
    state: &S,
    model_id: &str,
    req: &CasbinRequest<'_>,
) -> Result<CasbinDecision, StoreError> {
    let _ = (state, req);
    Ok(CasbinDecision::Failed(format!(
        "casbin model {model_id:?} cannot be evaluated yet"
    )))
}
