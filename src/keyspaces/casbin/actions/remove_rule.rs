//! `RemoveCasbinRule { model_id, rule_index }`: removes a rule of a model the
//! signer owns, and its subject index entry.

use super::{charge, check_index, owned_model, parse_id, record_change};
use crate::keyspaces::casbin::model::parse_model;
use crate::keyspaces::casbin::rules::check_against;
use crate::keyspaces::casbin::{
    rule_key, CasbinModel, CasbinParams, CasbinRead, CasbinWrite, Rule,
};
use crate::keyspaces::params::Params;
use crate::keyspaces::TxContext;
use crate::proto::casbin as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoveCasbinRule {
    pub model_id: String,
    pub rule_index: u32,
}

impl From<pb::RemoveCasbinRule> for RemoveCasbinRule {
    fn from(p: pb::RemoveCasbinRule) -> Self {
        RemoveCasbinRule {
            model_id: p.model_id,
            rule_index: p.rule_index,
        }
    }
}

impl From<RemoveCasbinRule> for pb::RemoveCasbinRule {
    fn from(a: RemoveCasbinRule) -> Self {
        pb::RemoveCasbinRule {
            model_id: a.model_id,
            rule_index: a.rule_index,
        }
    }
}

/// The weight a stored rule added to its model (it passed these checks
/// under these params when added; 0 if it somehow no longer does).
fn stored_weight(model: &CasbinModel, rule: &Rule, params: &CasbinParams) -> u64 {
    parse_model(&model.perm_model, params, false)
        .and_then(|def| check_against(&def, rule, params))
        .unwrap_or(0)
}

impl RemoveCasbinRule {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        parse_id(&self.model_id)?;
        check_index(self.rule_index, params.casbin.max_rules_per_model)
    }

    /// # Errors
    /// `NotFound` for an unknown model or an empty slot, `CasbinNotOwner`
    /// for another's model.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let id = parse_id(&self.model_id)?;
        check_index(self.rule_index, ctx.params.casbin.max_rules_per_model)?;
        let mut model = owned_model(state, &id, &ctx.signer)?;
        let rule = state.casbin_rule(&id, self.rule_index)?.ok_or_else(|| {
            TxError::NotFound(format!("casbin rule slot {} of {id}", self.rule_index))
        })?;
        // Re-measuring the stored rule parses the stored model text.
        state.charge_gas(crate::gas::Work::Compile(model.perm_model.len() as u64))?;
        model.pattern_weight =
            model
                .pattern_weight
                .saturating_sub(stored_weight(&model, &rule, &ctx.params.casbin));
        let size = rule_key(&id, self.rule_index).len() as u64 + rule.stored_size();
        charge(state, ctx, 0, size)?;
        state.delete_casbin_rule(&id, self.rule_index);
        state.unindex_casbin_rule(&id, self.rule_index, &rule);
        record_change(state, ctx, model, self.rule_index, None);
        Ok(())
    }
}
