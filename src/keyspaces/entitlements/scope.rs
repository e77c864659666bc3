//! Entitlement scope: territories, a time window against block time, and
//! custom conditions as key/value pairs.

use crate::keyspaces::rights::check_unique_territories;
use crate::keyspaces::rights::{cap, RightsError, RightsParams};
use crate::proto::rights as pb;

/// Formats and caps of a scope.
///
/// # Errors
/// `InvalidTerritory`, `RightsCapExceeded`, `InvalidScope` (an empty window,
/// an empty condition key, condition keys not strictly ascending).
pub fn validate(s: &pb::Scope, p: &RightsParams) -> Result<(), RightsError> {
    cap(
        "scope territories",
        s.territories.len(),
        p.max_scope_territories,
    )?;
    check_unique_territories(&s.territories)?;
    if s.not_after != 0 && s.not_after <= s.not_before {
        return Err(RightsError::InvalidScope(format!(
            "window [{}, {}) is empty",
            s.not_before, s.not_after
        )));
    }
    check_conditions("scope conditions", &s.conditions, p)
}

/// Caps and canonical form of a list of conditions (a scope's, or a
/// request's context): non-empty keys, strictly ascending, bounded sizes.
///
/// # Errors
/// `RightsCapExceeded`, `InvalidScope`.
pub fn check_conditions(
    what: &'static str,
    list: &[pb::Condition],
    p: &RightsParams,
) -> Result<(), RightsError> {
    cap(what, list.len(), p.max_scope_conditions)?;
    for c in list {
        if c.key.is_empty() {
            return Err(RightsError::InvalidScope(format!("{what}: a key is empty")));
        }
        cap("condition key length", c.key.len(), p.max_condition_bytes)?;
        cap(
            "condition value length",
            c.value.len(),
            p.max_condition_bytes,
        )?;
    }
    if list.windows(2).any(|w| w[0].key >= w[1].key) {
        return Err(RightsError::InvalidScope(format!(
            "{what}: keys must be strictly ascending"
        )));
    }
    Ok(())
}

/// Why a scope does not cover a request from `territory` at `now` (unix
/// seconds) with `context`, or `None` when it does. An absent scope covers
/// everything; each custom condition must appear in the context with the
/// same value.
pub fn mismatch(
    scope: Option<&pb::Scope>,
    territory: &str,
    now: u64,
    context: &[pb::Condition],
) -> Option<String> {
    let s = scope?;
    if !s.territories.is_empty() && !s.territories.iter().any(|t| t == territory) {
        return Some(format!(
            "territory {territory} is outside the scope {:?}",
            s.territories
        ));
    }
    if now < s.not_before {
        return Some(format!(
            "scope starts at {}, block time is {now}",
            s.not_before
        ));
    }
    if s.not_after != 0 && now >= s.not_after {
        return Some(format!(
            "scope ended at {}, block time is {now}",
            s.not_after
        ));
    }
    s.conditions
        .iter()
        .find(|c| !context.iter().any(|r| r.key == c.key && r.value == c.value))
        .map(|c| {
            format!(
                "the request's context does not meet the scope condition {}={}",
                c.key, c.value
            )
        })
}
