//! Action handlers of the casbin/ keyspaces, one file each, and what they share.

mod add_model;
mod add_rule;
mod remove_rule;

pub use add_model::AddCasbinModel;
pub use add_rule::AddCasbinRule;
pub use remove_rule::RemoveCasbinRule;

use sha2::{Digest, Sha256};

use super::{CasbinError, CasbinModel, CasbinParams, CasbinRead, CasbinWrite, ModelId, Rule};
use crate::keyspaces::{Event, TxContext};
use crate::store::StateWrite;
use crate::tx::TxError;

fn parse_id(id: &str) -> Result<ModelId, TxError> {
    ModelId::parse(id).map_err(TxError::InvalidArgument)
}

/// A model's total pattern weight against `max_model_pattern_weight`.
fn check_model_weight(total: u64, params: &CasbinParams) -> Result<(), TxError> {
    if total > params.max_model_pattern_weight {
        return Err(CasbinError::CapExceeded {
            what: "model pattern weight",
            got: total,
            max: params.max_model_pattern_weight,
        }
        .into());
    }
    Ok(())
}

fn check_index(index: u32, max: u32) -> Result<(), TxError> {
    if index >= max {
        return Err(CasbinError::IndexOutOfRange { index, max }.into());
    }
    Ok(())
}

/// The model `id`, which the signer must own.
fn owned_model<S: StateWrite>(
    state: &S,
    id: &ModelId,
    signer: &[u8; 32],
) -> Result<CasbinModel, TxError> {
    let model = state
        .casbin_model(id)?
        .ok_or_else(|| TxError::NotFound(format!("casbin model {id}")))?;
    if &model.owner != signer {
        return Err(not_owner(signer, id));
    }
    Ok(model)
}

fn not_owner(signer: &[u8; 32], id: &ModelId) -> TxError {
    CasbinError::NotOwner {
        signer: hex::encode(signer),
        model_id: id.to_string(),
    }
    .into()
}

/// Files a rule change in the model record (slot list and content digest)
/// and emits its event. `rule` is `None` for a removal.
fn record_change<S: StateWrite>(
    state: &mut S,
    ctx: &mut TxContext,
    mut model: CasbinModel,
    index: u32,
    rule: Option<&Rule>,
) {
    match (rule, model.rule_indices.binary_search(&index)) {
        (Some(_), Err(at)) => model.rule_indices.insert(at, index),
        (None, Ok(at)) => {
            model.rule_indices.remove(at);
        }
        _ => {}
    }
    model.content_digest = next_digest(&model.content_digest, index, rule);
    state.put_casbin_model(&model);
    let kind = match rule {
        Some(_) => "casbin.add_rule",
        None => "casbin.remove_rule",
    };
    ctx.emit(
        Event::new(kind)
            .indexed("model_id", model.model_id.to_string())
            .plain("rule_index", index.to_string()),
    );
}

/// The digest a new model starts from.
fn initial_digest(id: &ModelId, perm_model: &str) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"stave/casbin/v1/model\0")
        .chain_update(id.as_str().as_bytes())
        .chain_update([0])
        .chain_update(perm_model.as_bytes())
        .finalize()
        .into()
}

/// The digest after a rule change (`rule` is `None` for a removal).
fn next_digest(prev: &[u8; 32], index: u32, rule: Option<&Rule>) -> [u8; 32] {
    let mut h = Sha256::new()
        .chain_update(b"stave/casbin/v1/rule\0")
        .chain_update(prev)
        .chain_update(index.to_be_bytes());
    if let Some(r) = rule {
        h.update(r.ptype.as_str().as_bytes());
        for v in &r.values {
            h.update((v.len() as u32).to_be_bytes());
            h.update(v.as_bytes());
        }
    }
    h.finalize().into()
}

/// Adds `adding` and releases `releasing` stored bytes of the signer.
///
/// # Errors
/// As [`crate::keyspaces::accounts::storage::charge`].
fn charge<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    adding: u64,
    releasing: u64,
) -> Result<(), TxError> {
    let signer = ctx.signer;
    crate::keyspaces::accounts::storage::charge(state, ctx, &signer, adding, releasing)
}
