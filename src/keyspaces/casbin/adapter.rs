//! A casbin-rs [`Adapter`] over the casbin/ keyspaces, with the filtered
//! load (`load_filtered_policy`, `is_filtered`: casbin-rs folds the
//! `FilteredAdapter` interface into `Adapter`). It reads the state it is
//! given and never writes: rules change only through `AddCasbinRule` and
//! `RemoveCasbinRule` transactions. Its methods are async only because the
//! trait is; they never await, so `futures::executor::block_on` drives them
//! on any thread.

use async_trait::async_trait;
use casbin::error::AdapterError;
use casbin::{Adapter, CoreApi, DefaultModel, Enforcer, Filter, Model};

use super::{CasbinRead, ModelId, PType, Rule};
use crate::store::StateRead;

/// Why the adapter refused.
#[derive(Debug, thiserror::Error)]
pub enum ChainAdapterError {
    #[error("the chain adapter is read-only: {0} changes only through casbin transactions")]
    ReadOnly(&'static str),
    #[error("casbin model {0:?} does not exist")]
    UnknownModel(String),
    #[error("reading casbin state: {0}")]
    Store(#[from] crate::store::StoreError),
}

fn err(e: ChainAdapterError) -> casbin::Error {
    casbin::Error::AdapterError(AdapterError(Box::new(e)))
}

/// Reads one model's rules from `state`.
pub struct ChainAdapter<S> {
    state: S,
    model_id: ModelId,
    filtered: bool,
}

impl<S: StateRead> ChainAdapter<S> {
    pub fn new(state: S, model_id: ModelId) -> Self {
        ChainAdapter {
            state,
            model_id,
            filtered: false,
        }
    }

    /// All rules, in slot order.
    fn all(&self) -> Result<Vec<(u32, Rule)>, ChainAdapterError> {
        let model = self
            .state
            .casbin_model(&self.model_id)?
            .ok_or_else(|| ChainAdapterError::UnknownModel(self.model_id.to_string()))?;
        Ok(self.state.casbin_rules(&model)?)
    }

    /// The rules whose subject is one of `subjects`, through the index.
    fn by_subjects(&self, subjects: &[&str]) -> Result<Vec<(u32, Rule)>, ChainAdapterError> {
        let mut slots: Vec<u32> = Vec::new();
        for s in subjects {
            // A model holds at most 4,096 rules (the cap on `max_rules_per_model`).
            slots.extend(
                self.state
                    .casbin_rules_by_sub(&self.model_id, s, None, usize::MAX)?,
            );
        }
        slots.sort_unstable();
        slots.dedup();
        let mut out = Vec::with_capacity(slots.len());
        for i in slots {
            if let Some(r) = self.state.casbin_rule(&self.model_id, i)? {
                out.push((i, r));
            }
        }
        Ok(out)
    }
}

fn add(m: &mut dyn Model, rule: Rule) {
    let sec = rule.ptype.as_str();
    m.add_policy(sec, sec, rule.values);
}

/// Whether `values` pass one section's filter (empty filter fields match all).
fn passes(filter: &[&str], values: &[String]) -> bool {
    filter
        .iter()
        .enumerate()
        .all(|(i, f)| f.is_empty() || values.get(i).is_some_and(|v| v == f))
}

#[async_trait]
impl<S: StateRead + Send + Sync> Adapter for ChainAdapter<S> {
    async fn load_policy(&mut self, m: &mut dyn Model) -> casbin::Result<()> {
        self.filtered = false;
        for (_, rule) in self.all().map_err(err)? {
            add(m, rule);
        }
        Ok(())
    }

    async fn load_filtered_policy<'a>(
        &mut self,
        m: &mut dyn Model,
        f: Filter<'a>,
    ) -> casbin::Result<()> {
        let subject = |v: &[&'a str]| v.first().copied().filter(|s| !s.is_empty());
        let rules = match (subject(&f.p), subject(&f.g)) {
            (Some(p), Some(g)) => self.by_subjects(&[p, g]),
            _ => self.all(),
        }
        .map_err(err)?;
        for (_, rule) in rules {
            let filter = match rule.ptype {
                PType::P => &f.p,
                PType::G => &f.g,
            };
            if passes(filter, &rule.values) {
                add(m, rule);
            }
        }
        self.filtered = true;
        Ok(())
    }

    async fn save_policy(&mut self, _: &mut dyn Model) -> casbin::Result<()> {
        Err(err(ChainAdapterError::ReadOnly("save_policy")))
    }

    async fn clear_policy(&mut self) -> casbin::Result<()> {
        Err(err(ChainAdapterError::ReadOnly("clear_policy")))
    }

    fn is_filtered(&self) -> bool {
        self.filtered
    }

    async fn add_policy(&mut self, _: &str, _: &str, _: Vec<String>) -> casbin::Result<bool> {
        Err(err(ChainAdapterError::ReadOnly("add_policy")))
    }

    async fn add_policies(
        &mut self,
        _: &str,
        _: &str,
        _: Vec<Vec<String>>,
    ) -> casbin::Result<bool> {
        Err(err(ChainAdapterError::ReadOnly("add_policies")))
    }

    async fn remove_policy(&mut self, _: &str, _: &str, _: Vec<String>) -> casbin::Result<bool> {
        Err(err(ChainAdapterError::ReadOnly("remove_policy")))
    }

    async fn remove_policies(
        &mut self,
        _: &str,
        _: &str,
        _: Vec<Vec<String>>,
    ) -> casbin::Result<bool> {
        Err(err(ChainAdapterError::ReadOnly("remove_policies")))
    }

    async fn remove_filtered_policy(
        &mut self,
        _: &str,
        _: &str,
        _: usize,
        _: Vec<String>,
    ) -> casbin::Result<bool> {
        Err(err(ChainAdapterError::ReadOnly("remove_filtered_policy")))
    }
}

/// A casbin-rs `Enforcer` over a stored model and its rules (for tools and
/// for comparing with [`super::eval`]; never used in the consensus path).
///
/// # Errors
/// An unknown model, a store fault, or casbin-rs refusing the model.
pub fn enforcer<S: StateRead + Send + Sync + 'static>(
    state: S,
    model_id: &ModelId,
) -> casbin::Result<Enforcer> {
    let model = state
        .casbin_model(model_id)
        .map_err(|e| err(e.into()))?
        .ok_or_else(|| err(ChainAdapterError::UnknownModel(model_id.to_string())))?;
    let adapter = ChainAdapter::new(state, model_id.clone());
    futures::executor::block_on(async move {
        let m = DefaultModel::from_str(&model.perm_model).await?;
        Enforcer::new(m, adapter).await
    })
}
