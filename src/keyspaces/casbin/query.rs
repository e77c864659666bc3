//! Reads of the casbin/ keyspaces: ABCI query paths and rule listings.
//!
//! | path | value |
//! | --- | --- |
//! | `/casbin/models/{owner_hex}/{name}` | `stave.casbin.v1.CasbinModel` |
//! | `/casbin/rules/{owner_hex}/{name}/{rule_index}` | `stave.casbin.v1.CasbinRule` |

use super::{model_key, rule_key, CasbinRead, ModelId, Rule};
use crate::store::{StateRead, StoreError};

/// One page of rules in slot order, and whether more follow.
/// One page of rules: the rules, whether more follow, and the last slot
/// examined (where the next page starts, even if that slot's rule is gone).
pub type RulePage = (Vec<(u32, Rule)>, bool, Option<u32>);

/// The largest page [`rules`] returns.
pub const MAX_PAGE: usize = 1000;

/// The state key of an ABCI query path below `/casbin/` (`parts` excludes "casbin").
pub fn state_key(parts: &[&str]) -> Result<Vec<u8>, String> {
    match parts {
        ["models", owner, name] => Ok(model_key(&ModelId::parse(&format!("{owner}/{name}"))?)),
        ["rules", owner, name, index] => {
            let id = ModelId::parse(&format!("{owner}/{name}"))?;
            let index: u32 = index
                .parse()
                .map_err(|_| format!("rule index {index:?} is not a u32"))?;
            Ok(rule_key(&id, index))
        }
        _ => Err(format!("unknown casbin query path {:?}", parts.join("/"))),
    }
}

/// One page of a model's rules in slot order, strictly after `start_after`,
/// optionally only those whose subject (v0) is `subject` (read through the
/// rules_by_sub index). Returns the rules and whether more follow.
pub fn rules<S: StateRead + ?Sized>(
    state: &S,
    id: &ModelId,
    subject: Option<&str>,
    start_after: Option<u32>,
    limit: usize,
) -> Result<Option<RulePage>, StoreError> {
    let Some(model) = state.casbin_model(id)? else {
        return Ok(None);
    };
    let limit = limit.clamp(1, MAX_PAGE);
    // One more than the page, to tell whether more follow.
    let slots = match subject {
        Some(s) => state.casbin_rules_by_sub(id, s, start_after, limit + 1)?,
        None => model
            .rule_indices
            .into_iter()
            .filter(|i| start_after.is_none_or(|a| *i > a))
            .take(limit + 1)
            .collect(),
    };
    let mut page = Vec::new();
    let mut last = None;
    let mut rest = slots.into_iter();
    for i in rest.by_ref().take(limit) {
        last = Some(i);
        if let Some(r) = state.casbin_rule(id, i)? {
            page.push((i, r));
        }
    }
    Ok(Some((page, rest.next().is_some(), last)))
}
