//! Entitlement scope: territories, a time window against block time, and
//! custom conditions as key/value pairs.

use crate::keyspaces::rights::ern::check_unique_territories;
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
    cap(
        "scope conditions",
        s.conditions.len(),
        p.max_scope_conditions,
    )?;
    for c in &s.conditions {
        if c.key.is_empty() {
            return Err(RightsError::InvalidScope("a condition key is empty".into()));
        }
        cap("condition key length", c.key.len(), p.max_condition_bytes)?;
        cap(
            "condition value length",
            c.value.len(),
            p.max_condition_bytes,
        )?;
    }
    if s.conditions.windows(2).any(|w| w[0].key >= w[1].key) {
        return Err(RightsError::InvalidScope(
            "condition keys must be strictly ascending".into(),
        ));
    }
    Ok(())
}

/// Why a scope does not cover `territory` at `now` (unix seconds), or
/// `None` when it does. An absent scope covers everything.
pub fn mismatch(scope: Option<&pb::Scope>, territory: &str, now: u64) -> Option<String> {
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
    None
}
