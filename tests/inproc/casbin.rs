//! Helpers for the casbin scenario tests: a one-node chain that sends one
//! tx per block and tracks nonces, and the casbin actions.

use std::collections::BTreeMap;

use stave::keyspaces::accounts::AccountsRead;
use stave::keyspaces::casbin::{AddCasbinModel, AddCasbinRule, RemoveCasbinRule};
use stave::tx::{Action, Code};

use super::{default_genesis, key, signed, Node, CHAIN};
use stave::tx::build::sign_tx_with_gas;

/// The gas a [`Chain::send_all`] tx declares.
pub const MANY_ACTIONS_GAS: u64 = 50_000_000;

pub const RBAC: &str = stave::keyspaces::casbin::model::EXAMPLE_RBAC;

/// Lowercase hex of the public key of `key(seed)`.
pub fn pubhex(seed: u8) -> String {
    hex::encode(key(seed).verifying_key().to_bytes())
}

/// `{owner_hex}/{name}` for the key of `seed`.
pub fn model_id(seed: u8, name: &str) -> String {
    format!("{}/{name}", pubhex(seed))
}

pub fn add_model(id: &str, text: &str) -> Action {
    Action::AddCasbinModel(AddCasbinModel {
        model_id: id.into(),
        perm_model: text.into(),
    })
}

pub fn add_rule(id: &str, index: u32, ptype: &str, values: &[&str]) -> Action {
    Action::AddCasbinRule(AddCasbinRule {
        model_id: id.into(),
        rule_index: index,
        ptype: ptype.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    })
}

pub fn remove_rule(id: &str, index: u32) -> Action {
    Action::RemoveCasbinRule(RemoveCasbinRule {
        model_id: id.into(),
        rule_index: index,
    })
}

/// One node; each `send` is one tx in its own block.
pub struct Chain {
    pub node: Node,
    pub height: u64,
    nonces: BTreeMap<u8, u64>,
    _dir: tempfile::TempDir,
}

impl Chain {
    pub async fn new() -> Chain {
        let dir = tempfile::tempdir().unwrap();
        let mut node = Node::open(dir.path());
        node.init_chain(default_genesis()).await;
        Chain {
            node,
            height: 0,
            nonces: BTreeMap::new(),
            _dir: dir,
        }
    }

    /// CheckTx's code for `action` signed by `seed` (nothing is committed).
    pub async fn check(&mut self, seed: u8, action: Action) -> (u32, String) {
        let nonce = self.nonces.get(&seed).copied().unwrap_or(0);
        let r = self
            .node
            .check_tx(signed(seed, nonce, vec![action]), false)
            .await;
        (r.code.value(), r.log)
    }

    /// Commits `action` signed by `seed` in a block; returns its code and
    /// log. Whether the nonce was consumed (a failed action) or not (a
    /// stateless refusal) is read back from the account.
    pub async fn send(&mut self, seed: u8, action: Action) -> (u32, String) {
        self.send_all(seed, vec![action]).await
    }

    /// Like [`Chain::send`], with several actions in one tx, declaring
    /// [`MANY_ACTIONS_GAS`] (a tx of dozens of heavy rules needs more than
    /// the default).
    pub async fn send_all(&mut self, seed: u8, actions: Vec<Action>) -> (u32, String) {
        let nonce = self.nonces.get(&seed).copied().unwrap_or(0);
        let raw = sign_tx_with_gas(&key(seed), CHAIN, nonce, actions, "", MANY_ACTIONS_GAS);
        let tx = bytes::Bytes::from(raw);
        self.height += 1;
        let (_, r) = self.node.block(self.height, vec![tx]).await;
        let res = &r.tx_results[0];
        let signer = key(seed).verifying_key().to_bytes();
        let account = self.node.store.view().account(&signer).unwrap();
        self.nonces.insert(seed, account.map_or(0, |a| a.nonce));
        (res.code.value(), res.log.clone())
    }

    /// Sends and asserts success.
    pub async fn ok(&mut self, seed: u8, action: Action) {
        let (code, log) = self.send(seed, action).await;
        assert_eq!(code, 0, "{log}");
    }

    /// Sends, asserts `code`, and asserts no casbin state changed.
    pub async fn refused(&mut self, seed: u8, action: Action, code: Code) -> String {
        let before = self.casbin_dump();
        let (got, log) = self.send(seed, action).await;
        assert_eq!(got, code.value(), "expected {}: {log}", code.name());
        assert_eq!(
            self.casbin_dump(),
            before,
            "a refused tx changed casbin state"
        );
        log
    }

    /// Every casbin/ state value.
    pub fn casbin_dump(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.node
            .store
            .prefix_list(b"casbin/", None, usize::MAX)
            .unwrap()
    }
}
