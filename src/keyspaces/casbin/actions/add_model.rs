//! `AddCasbinModel { model_id, perm_model }`: stores a model under
//! `casbin/models/{model_id}`, owned by the signer.

use super::{charge, check_model_weight, initial_digest, parse_id};
use crate::keyspaces::casbin::model::parse_model;
use crate::keyspaces::casbin::{model_key, CasbinModel, CasbinRead, CasbinWrite};
use crate::keyspaces::params::Params;
use crate::keyspaces::{Event, TxContext};
use crate::proto::casbin as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Adds a model. The id is `{signer_hex}/{name}`; models are immutable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddCasbinModel {
    pub model_id: String,
    pub perm_model: String,
}

impl From<pb::AddCasbinModel> for AddCasbinModel {
    fn from(p: pb::AddCasbinModel) -> Self {
        AddCasbinModel {
            model_id: p.model_id,
            perm_model: p.perm_model,
        }
    }
}

impl From<AddCasbinModel> for pb::AddCasbinModel {
    fn from(a: AddCasbinModel) -> Self {
        pb::AddCasbinModel {
            model_id: a.model_id,
            perm_model: a.perm_model,
        }
    }
}

impl AddCasbinModel {
    /// The id's shape, the text's size and the whole model against the subset.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        parse_id(&self.model_id)?;
        parse_model(&self.perm_model, &params.casbin, false)?;
        Ok(())
    }

    /// # Errors
    /// `CasbinNotOwner` when the id names another owner (no squatting),
    /// `Conflict` when the id exists, `QuotaExceeded` past the quota.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let id = parse_id(&self.model_id)?;
        if id.owner() != &ctx.signer {
            return Err(super::not_owner(&ctx.signer, &id));
        }
        if state.casbin_model(&id)?.is_some() {
            return Err(TxError::Conflict(format!(
                "casbin model {id} already exists"
            )));
        }
        // Parsing the model is compilation, charged by its text's length
        // as AddCasbinRule charges it.
        state.charge_gas(crate::gas::Work::Compile(self.perm_model.len() as u64))?;
        let def = parse_model(&self.perm_model, &ctx.params.casbin, false)?;
        check_model_weight(def.weight, &ctx.params.casbin)?;
        let size = (model_key(&id).len() + self.perm_model.len()) as u64;
        charge(state, ctx, size, 0)?;
        state.put_casbin_model(&CasbinModel {
            content_digest: initial_digest(&id, &self.perm_model),
            owner: ctx.signer,
            perm_model: self.perm_model.clone(),
            rule_indices: Vec::new(),
            created_height: ctx.height,
            pattern_weight: def.weight,
            model_id: id.clone(),
        });
        ctx.emit(
            Event::new("casbin.add_model")
                .indexed("model_id", id.to_string())
                .indexed("owner", hex::encode(ctx.signer)),
        );
        Ok(())
    }
}
