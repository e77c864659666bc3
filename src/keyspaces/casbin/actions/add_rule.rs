//! `AddCasbinRule { model_id, rule_index, ptype, values }`: stores a rule in
//! an empty slot of a model the signer owns, and indexes it by subject.

use super::{charge, check_index, check_model_weight, owned_model, parse_id, record_change};
use crate::keyspaces::casbin::model::parse_model;
use crate::keyspaces::casbin::rules::{check_against, check_shape};
use crate::keyspaces::casbin::{rule_key, CasbinModel, CasbinRead, CasbinWrite, PType, Rule};
use crate::keyspaces::params::Params;
use crate::keyspaces::TxContext;
use crate::proto::casbin as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddCasbinRule {
    pub model_id: String,
    pub rule_index: u32,
    pub ptype: String,
    pub values: Vec<String>,
}

impl From<pb::AddCasbinRule> for AddCasbinRule {
    fn from(p: pb::AddCasbinRule) -> Self {
        AddCasbinRule {
            model_id: p.model_id,
            rule_index: p.rule_index,
            ptype: p.ptype,
            values: p.values,
        }
    }
}

impl From<AddCasbinRule> for pb::AddCasbinRule {
    fn from(a: AddCasbinRule) -> Self {
        pb::AddCasbinRule {
            model_id: a.model_id,
            rule_index: a.rule_index,
            ptype: a.ptype,
            values: a.values,
        }
    }
}

impl AddCasbinRule {
    fn rule(&self) -> Result<Rule, TxError> {
        let ptype = PType::parse(&self.ptype)
            .map_err(crate::keyspaces::casbin::CasbinError::InvalidRule)?;
        Ok(Rule {
            ptype,
            values: self.values.clone(),
        })
    }

    /// The id, the slot range, the ptype, and value counts and sizes.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        parse_id(&self.model_id)?;
        check_index(self.rule_index, params.casbin.max_rules_per_model)?;
        check_shape(&self.rule()?, &params.casbin)?;
        Ok(())
    }

    /// The cheap checks (slot range, shape, owner, slot taken, duplicate)
    /// come first; then the rule is checked against the model by the
    /// measure alone: nothing is compiled here (review M1).
    ///
    /// # Errors
    /// `NotFound` for an unknown model, `CasbinNotOwner` for another's,
    /// `Conflict` for a taken slot or a rule the model already has,
    /// `CasbinInvalidRule` for a value the model's functions would refuse,
    /// `CasbinCapExceeded` for a pattern over `max_pattern_weight` or a
    /// model total over `max_model_pattern_weight`.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let id = parse_id(&self.model_id)?;
        let p = &ctx.params.casbin;
        check_index(self.rule_index, p.max_rules_per_model)?;
        let rule = self.rule()?;
        check_shape(&rule, p)?;
        let mut model = owned_model(state, &id, &ctx.signer)?;
        self.check_free(state, &model, &rule)?;
        // Parsing the stored model text is work the tx's bytes do not pay for.
        state.charge_gas(crate::gas::Work::Compile(model.perm_model.len() as u64))?;
        let def = parse_model(&model.perm_model, p, false)?;
        let weight = check_against(&def, &rule, p)?;
        model.pattern_weight = model.pattern_weight.saturating_add(weight);
        check_model_weight(model.pattern_weight, p)?;
        let size = rule_key(&id, self.rule_index).len() as u64 + rule.stored_size();
        charge(state, ctx, size, 0)?;
        state.put_casbin_rule(&id, self.rule_index, &rule);
        state.index_casbin_rule(&id, self.rule_index, &rule);
        record_change(state, ctx, model, self.rule_index, Some(&rule));
        Ok(())
    }

    /// `Conflict` when the slot is taken or the model has this rule.
    fn check_free<S: StateWrite>(
        &self,
        state: &S,
        model: &CasbinModel,
        rule: &Rule,
    ) -> Result<(), TxError> {
        let id = &model.model_id;
        if state.casbin_rule(id, self.rule_index)?.is_some() {
            return Err(TxError::Conflict(format!(
                "casbin rule slot {} of {id} is taken",
                self.rule_index
            )));
        }
        // duplicates are found in verifiable state (the model's slot list,
        // at most max_rules_per_model reads), never in the index space
        if let Some((i, _)) = state
            .casbin_rules(model)?
            .into_iter()
            .find(|(_, r)| r == rule)
        {
            return Err(TxError::Conflict(format!(
                "model {id} has this rule in slot {i}"
            )));
        }
        Ok(())
    }
}
