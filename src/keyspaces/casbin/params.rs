//! `CasbinParams`: the consensus caps of the casbin/ keyspaces, set in
//! genesis `app_state.params.casbin`.

use serde::{Deserialize, Serialize};

use crate::proto::casbin as pb;

/// At most this many values per rule (`v0..v5`, as the storage document has it).
pub const MAX_VALUES: u32 = 6;
/// Hard ceiling of `max_regex_bytes`. Cached evaluators compile stored
/// patterns with this limit, so a pattern accepted under any valid params
/// always compiles again.
pub const HARD_REGEX_BYTES: u32 = 1 << 20;

/// Caps of the casbin/ keyspaces (domain type of `stave.casbin.v1.CasbinParams`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CasbinParams {
    pub max_model_bytes: u32,
    pub max_rules_per_model: u32,
    pub max_values_per_rule: u32,
    pub max_value_bytes: u32,
    pub max_regex_bytes: u32,
    pub max_matcher_nodes: u32,
    pub max_eval_ops: u64,
}

impl Default for CasbinParams {
    fn default() -> Self {
        CasbinParams {
            max_model_bytes: 4096,
            max_rules_per_model: 256,
            max_values_per_rule: MAX_VALUES,
            max_value_bytes: 256,
            max_regex_bytes: 64 * 1024,
            max_matcher_nodes: 64,
            max_eval_ops: 1_000_000,
        }
    }
}

impl CasbinParams {
    /// Rejects caps no network could run with, or that would unbound evaluation.
    pub fn validate(&self) -> Result<(), String> {
        let checks: [(&str, u64, u64, u64); 7] = [
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
                "max_regex_bytes",
                self.max_regex_bytes.into(),
                1024,
                HARD_REGEX_BYTES.into(),
            ),
            ("max_matcher_nodes", self.max_matcher_nodes.into(), 1, 512),
            ("max_eval_ops", self.max_eval_ops, 1, 100_000_000),
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
            max_regex_bytes: p.max_regex_bytes,
            max_matcher_nodes: p.max_matcher_nodes,
            max_eval_ops: p.max_eval_ops,
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
            max_regex_bytes: p.max_regex_bytes,
            max_matcher_nodes: p.max_matcher_nodes,
            max_eval_ops: p.max_eval_ops,
        };
        params.validate()?;
        Ok(params)
    }
}
