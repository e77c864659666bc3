//! Rule checks: stateless (sizes, characters) and against the model (count,
//! and every value against each function that will read it).

use super::model::ModelDef;
use super::params::CasbinParams;
use super::term::{Kinds, Term};
use super::{CasbinError, PType, Rule};

/// Sizes and characters, against the caps only.
///
/// # Errors
/// `CapExceeded` for too many or too long values; `InvalidRule` for an
/// empty value or a control character.
pub fn check_shape(rule: &Rule, params: &CasbinParams) -> Result<(), CasbinError> {
    let n = rule.values.len();
    if n > params.max_values_per_rule as usize {
        return Err(CasbinError::cap(
            "rule values",
            n,
            params.max_values_per_rule,
        ));
    }
    if n == 0 {
        return Err(CasbinError::InvalidRule(
            "a rule needs at least one value".into(),
        ));
    }
    for v in &rule.values {
        if v.len() > params.max_value_bytes as usize {
            return Err(CasbinError::cap(
                "rule value bytes",
                v.len(),
                params.max_value_bytes,
            ));
        }
        if v.is_empty() || v.chars().any(char::is_control) {
            return Err(CasbinError::InvalidRule(format!(
                "value {v:?} is empty or has a control character"
            )));
        }
    }
    Ok(())
}

/// Compiles a `p` rule's values for the ways the matcher reads them.
///
/// # Errors
/// `InvalidRule` naming the field and the reason.
pub fn compile_policy(
    def: &ModelDef,
    values: &[String],
    regex_limit: u32,
) -> Result<Vec<Term>, CasbinError> {
    if values.len() != def.policy.len() {
        return Err(CasbinError::InvalidRule(format!(
            "p rule has {} values; the model's p has {} fields {:?}",
            values.len(),
            def.policy.len(),
            def.policy
        )));
    }
    let mut out = Vec::with_capacity(values.len());
    for (i, (v, field)) in values.iter().zip(&def.policy).enumerate() {
        if def.eft == Some(i) && v != "allow" && v != "deny" {
            return Err(CasbinError::InvalidRule(format!(
                "p.eft is {v:?}, not allow or deny"
            )));
        }
        let kinds = def.kinds.get(i).copied().unwrap_or_default();
        let term = Term::compile(v, kinds, regex_limit)
            .map_err(|e| CasbinError::InvalidRule(format!("p.{field}: {e}")))?;
        out.push(term);
    }
    Ok(out)
}

/// Checks a rule against its model before it is stored.
///
/// # Errors
/// `InvalidRule` when the model has no such ptype, the value count differs
/// from the definition, or a value fails a function that reads it.
pub fn check_against(
    def: &ModelDef,
    rule: &Rule,
    params: &CasbinParams,
) -> Result<(), CasbinError> {
    match rule.ptype {
        PType::G if !def.has_roles => Err(CasbinError::InvalidRule(
            "the model has no [role_definition] g".into(),
        )),
        PType::G if rule.values.len() != 2 => Err(CasbinError::InvalidRule(format!(
            "g rule has {} values; g = _, _ takes 2",
            rule.values.len()
        ))),
        PType::G => Ok(()),
        PType::P => compile_policy(def, &rule.values, params.max_regex_bytes).map(|_| ()),
    }
}

/// The policy row casbin evaluates when a model has no `p` rules: every
/// field empty.
pub fn empty_row(def: &ModelDef, regex_limit: u32) -> Vec<Term> {
    def.kinds
        .iter()
        .map(|k: &Kinds| Term::lenient("", *k, regex_limit))
        .collect()
}
