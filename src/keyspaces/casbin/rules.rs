//! Rule checks: stateless (sizes, characters) and against the model (count,
//! and every value against each function that will read it).

use super::model::ModelDef;
use super::params::CasbinParams;
use super::term::{self, Kinds, Term};
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
/// `InvalidRule` naming the field and the reason; `CapExceeded` for a
/// pattern over `max_pattern_weight`.
pub fn compile_policy(
    def: &ModelDef,
    values: &[String],
    max_weight: u32,
) -> Result<Vec<Term>, CasbinError> {
    check_count(def, values)?;
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        check_value(def, i, v, max_weight)?;
        let kinds = def.kinds.get(i).copied().unwrap_or_default();
        out.push(Term::build(v, kinds).map_err(|e| in_field(def, i, e))?);
    }
    Ok(out)
}

/// The measure's weight of a `p` rule's patterns, checking every value
/// against the functions that read it; compiles nothing.
///
/// # Errors
/// As [`compile_policy`].
pub fn policy_weight(
    def: &ModelDef,
    values: &[String],
    max_weight: u32,
) -> Result<u64, CasbinError> {
    check_count(def, values)?;
    let mut total = 0u64;
    for (i, v) in values.iter().enumerate() {
        total = total.saturating_add(check_value(def, i, v, max_weight)?);
    }
    Ok(total)
}

/// Names the policy field in a value's error.
fn in_field(def: &ModelDef, i: usize, e: CasbinError) -> CasbinError {
    let field = def.policy.get(i).map_or("?", String::as_str);
    match e {
        CasbinError::InvalidRule(m) => CasbinError::InvalidRule(format!("p.{field}: {m}")),
        other => other,
    }
}

/// One value: `eft` is allow/deny, and every reading accepts it. Returns
/// its patterns' weight.
fn check_value(def: &ModelDef, i: usize, v: &str, max_weight: u32) -> Result<u64, CasbinError> {
    if def.eft == Some(i) && v != "allow" && v != "deny" {
        return Err(CasbinError::InvalidRule(format!(
            "p.eft is {v:?}, not allow or deny"
        )));
    }
    let kinds = def.kinds.get(i).copied().unwrap_or_default();
    term::check(v, kinds, max_weight).map_err(|e| in_field(def, i, e))
}

fn check_count(def: &ModelDef, values: &[String]) -> Result<(), CasbinError> {
    if values.len() != def.policy.len() {
        return Err(CasbinError::InvalidRule(format!(
            "p rule has {} values; the model's p has {} fields {:?}",
            values.len(),
            def.policy.len(),
            def.policy
        )));
    }
    Ok(())
}

/// Checks a rule against its model before it is stored, compiling
/// nothing; returns the weight of its patterns under the measure.
///
/// # Errors
/// `InvalidRule` when the model has no such ptype, the value count differs
/// from the definition, or a value fails a function that reads it;
/// `CapExceeded` for a pattern over `max_pattern_weight`.
pub fn check_against(
    def: &ModelDef,
    rule: &Rule,
    params: &CasbinParams,
) -> Result<u64, CasbinError> {
    match rule.ptype {
        PType::G if !def.has_roles => Err(CasbinError::InvalidRule(
            "the model has no [role_definition] g".into(),
        )),
        PType::G if rule.values.len() != 2 => Err(CasbinError::InvalidRule(format!(
            "g rule has {} values; g = _, _ takes 2",
            rule.values.len()
        ))),
        PType::G => Ok(0),
        PType::P => policy_weight(def, &rule.values, params.max_pattern_weight),
    }
}

/// The policy row casbin evaluates when a model has no `p` rules: every
/// field empty.
pub fn empty_row(def: &ModelDef) -> Vec<Term> {
    def.kinds
        .iter()
        .map(|k: &Kinds| Term::lenient("", *k))
        .collect()
}
