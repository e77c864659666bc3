//! `CasbinParams`: the consensus caps of the casbin/ keyspaces, set in
//! genesis `app_state.params.casbin`.

use serde::{Deserialize, Serialize};

use crate::proto::casbin as pb;

/// At most this many values per rule (`v0..v5`, as the storage document has it).
pub const MAX_VALUES: u32 = 6;
/// Hard ceiling of `max_pattern_weight` (the syntactic measure of one
/// pattern, [`super::measure`]). A pattern of this weight compiles to an
/// NFA of under 3 MiB, far under the compiler's safety cap.
pub const HARD_PATTERN_WEIGHT: u32 = 1 << 16;
/// Hard ceiling of `max_model_pattern_weight`: bounds the memory one model
/// takes to compile (at most about 50 bytes compiled per unit with the
/// one-pass DFA off, so about 200 MiB; `measure::tests`).
pub const HARD_MODEL_PATTERN_WEIGHT: u64 = 1 << 22;

/// Caps of the casbin/ keyspaces (domain type of `stave.casbin.v1.CasbinParams`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CasbinParams {
    pub max_model_bytes: u32,
    pub max_rules_per_model: u32,
    pub max_values_per_rule: u32,
    pub max_value_bytes: u32,
    pub max_pattern_weight: u32,
    pub max_matcher_nodes: u32,
    pub max_eval_ops: u64,
    pub max_model_pattern_weight: u64,
}

impl Default for CasbinParams {
    fn default() -> Self {
        CasbinParams {
            max_model_bytes: 4096,
            max_rules_per_model: 256,
            max_values_per_rule: MAX_VALUES,
            max_value_bytes: 256,
            max_pattern_weight: 8192,
            max_matcher_nodes: 64,
            max_eval_ops: 1_000_000,
            max_model_pattern_weight: 1 << 18,
        }
    }
}

impl CasbinParams {
    /// Rejects caps no network could run with, or that would unbound evaluation.
    pub fn validate(&self) -> Result<(), String> {
        let checks: [(&str, u64, u64, u64); 8] = [
            ("max_model_bytes", self.max_model_bytes.into(), 64, 65_536),
            (
                "max_rules_per_model",
                self.max_rules_per_model.into(),
                1,
                4096,
            ),
            (
                "max_values_per_rule",
                self.max_values_per_rule.into(),
                2,
                MAX_VALUES.into(),
            ),
            ("max_value_bytes", self.max_value_bytes.into(), 1, 4096),
            (
                "max_pattern_weight",
                self.max_pattern_weight.into(),
                256,
                HARD_PATTERN_WEIGHT.into(),
            ),
            ("max_matcher_nodes", self.max_matcher_nodes.into(), 1, 512),
            ("max_eval_ops", self.max_eval_ops, 1, 100_000_000),
            (
                "max_model_pattern_weight",
                self.max_model_pattern_weight,
                self.max_pattern_weight.into(),
                HARD_MODEL_PATTERN_WEIGHT,
            ),
        ];
        for (name, got, lo, hi) in checks {
            if !(lo..=hi).contains(&got) {
                return Err(format!("casbin.{name} is {got}; allowed {lo}..={hi}"));
            }
        }
        Ok(())
    }
}

impl From<&CasbinParams> for pb::CasbinParams {
    fn from(p: &CasbinParams) -> Self {
        pb::CasbinParams {
            max_model_bytes: p.max_model_bytes,
            max_rules_per_model: p.max_rules_per_model,
            max_values_per_rule: p.max_values_per_rule,
            max_value_bytes: p.max_value_bytes,
            max_pattern_weight: p.max_pattern_weight,
            max_matcher_nodes: p.max_matcher_nodes,
            max_eval_ops: p.max_eval_ops,
            max_model_pattern_weight: p.max_model_pattern_weight,
        }
    }
}

impl TryFrom<pb::CasbinParams> for CasbinParams {
    type Error = String;
    fn try_from(p: pb::CasbinParams) -> Result<Self, String> {
        let params = CasbinParams {
            max_model_bytes: p.max_model_bytes,
            max_rules_per_model: p.max_rules_per_model,
            max_values_per_rule: p.max_values_per_rule,
            max_value_bytes: p.max_value_bytes,
            max_pattern_weight: p.max_pattern_weight,
            max_matcher_nodes: p.max_matcher_nodes,
            max_eval_ops: p.max_eval_ops,
            max_model_pattern_weight: p.max_model_pattern_weight,
        };
        params.validate()?;
        Ok(params)
    }
}
