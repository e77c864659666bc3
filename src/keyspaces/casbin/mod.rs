//! The `casbin/` keyspaces: `casbin/models/{model_id}`,
//! `casbin/rules/{model_id}/{rule_index}` and
//! `casbin/rules_by_sub/{model_id}/{subject_len:2}{subject}{rule_index:4}`
//! (index space, one row per rule, written blind: no state transition
//! reads it).
//!
//! The policy and access-decision code calls [`model_owner`] and
//! [`enforce`]. Behind them:
//! - [`model`] and [`matcher`] accept only a documented subset of casbin's
//!   PERM models (`docs/casbin.md`), checked when a model is added;
//! - [`rules`] checks each rule value against every function that will read
//!   it (regexes compiled under a size limit, IPs and CIDRs parsed);
//! - [`eval`] is a bounded evaluator of that subset (operation budget, no
//!   panicking paths, a `catch_unwind` backstop), cached by content digest;
//! - [`adapter`] implements casbin-rs's `Adapter` (with the filtered load)
//!   over these keyspaces, and a test checks that casbin-rs and [`eval`]
//!   decide alike on the subset.
//!
//! casbin-rs itself never runs in the consensus path: it evaluates matchers
//! with Rhai built `unchecked` (no operation limits exist; `1/0` panics),
//! and its `regexMatch`/`keyMatch2` unwrap on bad patterns.

pub mod actions;
pub mod adapter;
pub mod cache;
mod error;
pub mod eval;
mod keys;
pub mod matcher;
pub mod measure;
pub mod model;
mod params;
pub mod query;
mod rebuild;
pub mod rules;
mod state;
pub mod term;
mod types;

use std::sync::Arc;

pub use actions::{AddCasbinModel, AddCasbinRule, RemoveCasbinRule};
pub use cache::Use as CacheUse;
pub use error::CasbinError;
pub use keys::{model_key, rule_key, rules_by_sub_key, rules_prefix, split_rule_key};
pub use params::{CasbinParams, HARD_MODEL_PATTERN_WEIGHT, HARD_PATTERN_WEIGHT, MAX_VALUES};
pub use rebuild::rebuild_index;
pub use state::{CasbinRead, CasbinWrite};
pub use types::{CasbinModel, ModelId, PType, Rule, MAX_NAME_BYTES};

use crate::gas::Work;
use crate::keyspaces::params::ParamsRead;
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
    /// panic). The access decision treats this as a deny with its own code
    /// ([`crate::tx::Code::CasbinEvaluationFailed`]).
    Failed(String),
}

/// The owner of a model, if the model exists.
pub fn model_owner<S: StateRead + ?Sized>(
    state: &S,
    model_id: &str,
) -> Result<Option<[u8; 32]>, StoreError> {
    let Ok(id) = ModelId::parse(model_id) else {
        return Ok(None);
    };
    Ok(state.casbin_model(&id)?.map(|m| m.owner))
}

/// The units of compilation a model is charged on every consensus
/// evaluation: its text plus the measured weight of its patterns.
pub fn compile_units(model: &CasbinModel) -> u64 {
    (model.perm_model.len() as u64).saturating_add(model.pattern_weight)
}

/// The compiled form of a stored model, from `which` cache or built now.
fn compiled<S: StateRead + ?Sized>(
    state: &S,
    model: &CasbinModel,
    params: &CasbinParams,
    which: CacheUse,
) -> Result<Result<Arc<eval::Compiled>, String>, StoreError> {
    let id = model.model_id.as_str();
    // On the consensus path the rules are read (and charged) hit or miss,
    // so a tx's gas never depends on what the cache holds.
    let read_first = match which {
        CacheUse::Consensus => Some(state.casbin_rules(model)?),
        CacheUse::Query => None,
    };
    if let Some(hit) = cache::get(which, id, &model.content_digest) {
        return Ok(Ok(hit));
    }
    let rules = match read_first {
        Some(rules) => rules,
        None => state.casbin_rules(model)?,
    };
    let built = eval::guarded(|| eval::Compiled::build(&model.perm_model, &rules, params))
        .and_then(|r| r)
        .map(Arc::new);
    if let Ok(c) = &built {
        cache::put(which, id, &model.content_digest, c.clone());
    }
    Ok(built)
}

/// Evaluates `model_id`'s model and rules against `req`, reading `state`,
/// on the consensus path (the consensus cache). Never panics and never runs
/// unbounded: evaluation is limited by `params.casbin.max_eval_ops`, and a
/// panic becomes [`CasbinDecision::Failed`].
///
/// # Errors
/// Only a store fault; every problem with the model is a `Failed` decision.
pub fn enforce<S: StateRead + ?Sized>(
    state: &S,
    model_id: &str,
    req: &CasbinRequest<'_>,
) -> Result<CasbinDecision, StoreError> {
    enforce_with(state, model_id, req, CacheUse::Consensus)
}

/// [`enforce`] through `which` cache: a public query passes
/// [`CacheUse::Query`], so it never reads or fills the consensus cache.
///
/// # Errors
/// As [`enforce`].
pub fn enforce_with<S: StateRead + ?Sized>(
    state: &S,
    model_id: &str,
    req: &CasbinRequest<'_>,
    which: CacheUse,
) -> Result<CasbinDecision, StoreError> {
    let id = match ModelId::parse(model_id) {
        Ok(id) => id,
        Err(e) => return Ok(CasbinDecision::Failed(e)),
    };
    let Some(model) = state.casbin_model(&id)? else {
        return Ok(CasbinDecision::Failed(format!(
            "casbin model {model_id:?} does not exist"
        )));
    };
    let params = state.params()?.unwrap_or_default().casbin;
    // Compilation is charged whether or not the cache saves it, by the
    // syntactic measure stored with the model (never the compiled size).
    state.charge_gas(Work::Compile(compile_units(&model)))?;
    let compiled = match compiled(state, &model, &params, which)? {
        Ok(c) => c,
        Err(e) => {
            return Ok(CasbinDecision::Failed(format!(
                "casbin model {model_id:?}: {e}"
            )))
        }
    };
    let budget = params.max_eval_ops;
    let (outcome, ops) = match eval::guarded(|| compiled.decide_counted(req, budget)) {
        Ok((result, ops)) => (Ok(result), ops),
        // A panic is deterministic; it is charged the whole budget.
        Err(panic) => (Err(panic), budget),
    };
    state.charge_gas(Work::EvalOps(ops))?;
    Ok(match outcome {
        Ok(Ok(true)) => CasbinDecision::Allow,
        Ok(Ok(false)) => CasbinDecision::Deny(format!(
            "casbin model {model_id:?} denies sub {:?} obj {:?} act {:?} territory {:?}",
            req.sub, req.obj, req.act, req.territory
        )),
        Ok(Err(e)) => CasbinDecision::Failed(format!("casbin model {model_id:?}: {e}")),
        Err(panic) => CasbinDecision::Failed(format!("casbin model {model_id:?}: {panic}")),
    })
}

#[cfg(test)]
mod tests;
