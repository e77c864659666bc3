//! Unit tests of the casbin keyspaces: the model subset, rule checks, the
//! evaluator, the adapter, and a fuzz property test.

mod chain_adapter;
mod fuzz;
mod subset;

use super::*;
use crate::app::dispatch;
use crate::keyspaces::params::{Params, ParamsWrite};
use crate::keyspaces::TxContext;
use crate::store::{MemState, Overlay};
use crate::tx::{Action, TxError};

pub const RBAC: &str = model::EXAMPLE_RBAC;

pub fn owner(seed: u8) -> [u8; 32] {
    [seed; 32]
}

pub fn id(seed: u8, name: &str) -> String {
    format!("{}/{name}", hex::encode(owner(seed)))
}

/// A state with default params written, as after genesis.
pub fn genesis() -> MemState {
    let mut s = MemState::default();
    let mut ov = Overlay::new(&s);
    ov.put_params(&Params::default());
    let changes = ov.into_changes();
    apply(&mut s, changes);
    s
}

pub fn apply(s: &mut MemState, c: crate::store::Changes) {
    s.apply_changes(c);
}

/// Runs one action as a tx would: stateless checks, then execution in an
/// overlay that is applied only on success.
pub fn run(s: &mut MemState, signer: [u8; 32], action: Action) -> Result<(), TxError> {
    let params = Params::default();
    action.check_stateless(&params)?;
    let mut ctx = TxContext {
        height: 1,
        time_ns: 0,
        signer,
        signing_key: signer,
        tx_id: [0; 32],
        chain_id: "stave-test".into(),
        signature: [0; 64],
        action_index: 0,
        params,
        events: Vec::new(),
        unsponsored_others: std::cell::Cell::new(0),
    };
    let mut ov = Overlay::new(&*s);
    dispatch(&action, &mut ov, &mut ctx)?;
    let changes = ov.into_changes();
    apply(s, changes);
    Ok(())
}

pub fn add_model(model_id: &str, text: &str) -> Action {
    Action::AddCasbinModel(AddCasbinModel {
        model_id: model_id.into(),
        perm_model: text.into(),
    })
}

pub fn add_rule(model_id: &str, index: u32, ptype: &str, values: &[&str]) -> Action {
    Action::AddCasbinRule(AddCasbinRule {
        model_id: model_id.into(),
        rule_index: index,
        ptype: ptype.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    })
}

pub fn remove_rule(model_id: &str, index: u32) -> Action {
    Action::RemoveCasbinRule(RemoveCasbinRule {
        model_id: model_id.into(),
        rule_index: index,
    })
}

pub fn req<'a>(sub: &'a str, obj: &'a str, act: &'a str) -> CasbinRequest<'a> {
    CasbinRequest {
        sub,
        obj,
        act,
        territory: "US",
    }
}

pub fn code(r: Result<(), TxError>) -> crate::tx::Code {
    r.expect_err("expected a refusal").code()
}
