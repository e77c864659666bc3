//! Typed access to the casbin/ keyspaces. Handlers and the evaluator read
//! and write through these traits, never through raw keys.

use prost::Message;

use super::keys::{
    model_key, rule_key, rules_by_sub_key, rules_by_sub_prefix, split_rules_by_sub_key,
};
use super::{CasbinModel, ModelId, Rule};
use crate::proto::casbin as pb;
use crate::store::{Space, StateRead, StateWrite, StoreError};

pub trait CasbinRead: StateRead {
    /// The model stored under `casbin/models/{model_id}`.
    fn casbin_model(&self, id: &ModelId) -> Result<Option<CasbinModel>, StoreError> {
        let key = model_key(id);
        let Some(raw) = self.get_raw(&key)? else {
            return Ok(None);
        };
        let m =
            pb::CasbinModel::decode(raw.as_slice()).map_err(|e| StoreError::corrupt(&key, e))?;
        CasbinModel::try_from(m)
            .map(Some)
            .map_err(|e| StoreError::corrupt(&key, e))
    }

    /// The rule in slot `index` of `id`.
    fn casbin_rule(&self, id: &ModelId, index: u32) -> Result<Option<Rule>, StoreError> {
        let key = rule_key(id, index);
        let Some(raw) = self.get_raw(&key)? else {
            return Ok(None);
        };
        let r = pb::CasbinRule::decode(raw.as_slice()).map_err(|e| StoreError::corrupt(&key, e))?;
        Rule::try_from(r)
            .map(Some)
            .map_err(|e| StoreError::corrupt(&key, e))
    }

    /// Every rule of a model, in slot order.
    fn casbin_rules(&self, model: &CasbinModel) -> Result<Vec<(u32, Rule)>, StoreError> {
        let mut out = Vec::with_capacity(model.rule_indices.len());
        for &i in &model.rule_indices {
            let rule = self.casbin_rule(&model.model_id, i)?.ok_or_else(|| {
                StoreError::corrupt(&rule_key(&model.model_id, i), "listed rule slot is empty")
            })?;
            out.push((i, rule));
        }
        Ok(out)
    }

    /// The slots whose rule has `subject` as v0, in slot order, strictly
    /// after `after`, at most `limit` (the rules_by_sub index). Queries
    /// only: no state transition reads the index space.
    fn casbin_rules_by_sub(
        &self,
        id: &ModelId,
        subject: &str,
        after: Option<u32>,
        limit: usize,
    ) -> Result<Vec<u32>, StoreError> {
        let prefix = rules_by_sub_prefix(id, subject);
        let after = after.map(|a| rules_by_sub_key(id, subject, a));
        self.prefix_raw(Space::Index, &prefix, after.as_deref(), limit)?
            .into_iter()
            .map(|(k, _)| {
                split_rules_by_sub_key(&prefix, &k)
                    .ok_or_else(|| StoreError::corrupt(&k, "not a rules_by_sub key"))
            })
            .collect()
    }
}
impl<T: StateRead + ?Sized> CasbinRead for T {}

pub trait CasbinWrite: StateWrite {
    fn put_casbin_model(&mut self, model: &CasbinModel) {
        self.put_raw(
            model_key(&model.model_id),
            pb::CasbinModel::from(model).encode_to_vec(),
        );
    }

    fn put_casbin_rule(&mut self, id: &ModelId, index: u32, rule: &Rule) {
        self.put_raw(rule_key(id, index), rule.to_proto(id).encode_to_vec());
    }

    fn delete_casbin_rule(&mut self, id: &ModelId, index: u32) {
        self.delete_raw(rule_key(id, index));
    }

    /// Files rule `index` under its subject, blind: the row is written
    /// without reading the index, so a node whose index was lost or rebuilt
    /// does the same work and charges the same gas.
    fn index_casbin_rule(&mut self, id: &ModelId, index: u32, rule: &Rule) {
        self.put_index_raw(rules_by_sub_key(id, rule.subject(), index), Vec::new());
    }

    /// Removes rule `index`'s row from its subject's (blind, as above).
    fn unindex_casbin_rule(&mut self, id: &ModelId, index: u32, rule: &Rule) {
        self.delete_index_raw(rules_by_sub_key(id, rule.subject(), index));
    }
}
impl<T: StateWrite + ?Sized> CasbinWrite for T {}
