//! Typed access to the casbin/ keyspaces. Handlers and the evaluator read
//! and write through these traits, never through raw keys.

use prost::Message;

use super::keys::{model_key, rule_key, rules_by_sub_key};
use super::{CasbinModel, ModelId, Rule};
use crate::proto::casbin as pb;
use crate::store::{StateRead, StateWrite, StoreError};

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

    /// The slots whose rule has `subject` as v0 (the rules_by_sub index).
    fn casbin_rules_by_sub(&self, id: &ModelId, subject: &str) -> Result<Vec<u32>, StoreError> {
        let key = rules_by_sub_key(id, subject);
        match self.get_index_raw(&key)? {
            None => Ok(Vec::new()),
            Some(raw) => pb::RuleIndexList::decode(raw.as_slice())
                .map(|l| l.rule_indices)
                .map_err(|e| StoreError::corrupt(&key, e)),
        }
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

    /// Writes the subject's slot list; an empty list removes the entry.
    fn put_casbin_rules_by_sub(&mut self, id: &ModelId, subject: &str, indices: Vec<u32>) {
        let key = rules_by_sub_key(id, subject);
        if indices.is_empty() {
            self.delete_index_raw(key);
        } else {
            let list = pb::RuleIndexList {
                rule_indices: indices,
            };
            self.put_index_raw(key, list.encode_to_vec());
        }
    }
}
impl<T: StateWrite + ?Sized> CasbinWrite for T {}
