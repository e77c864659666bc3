//! Governance helpers: a chain of genesis validators driven one tx per
//! block, with the keys of every party derived from small seeds.

#![allow(dead_code)]

use std::collections::BTreeMap;

use ed25519_dalek::{Signer, SigningKey};
use stave::keyspaces::validators::{
    pop_message, query, ApplyValidator, LeaveValidator, RotateConsensusKey,
    UpdateValidatorEndpoints, VoteValidator,
};
use stave::proto::governance as pb;
use stave::tx::Action;
use tendermint::abci::response;

use super::{signed_large, Node, CHAIN};

/// Operator seed of genesis validator `i` (0-based).
pub fn op_seed(i: u8) -> u8 {
    100 + i
}

/// Consensus key seed belonging to operator seed `op`.
pub fn cons_seed(op: u8) -> u8 {
    op.wrapping_add(100)
}

pub fn pubkey(seed: u8) -> [u8; 32] {
    SigningKey::from_bytes(&[seed; 32])
        .verifying_key()
        .to_bytes()
}

pub fn x25519(seed: u8) -> [u8; 32] {
    *x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([seed; 32])).as_bytes()
}

/// The client endpoint genesis validator `i` publishes.
pub fn client_endpoint(i: u8) -> String {
    format!("127.0.0.1:{}", 25000 + u16::from(i))
}

/// Genesis with `n` validators of power 10 and the given governance params.
pub fn genesis(n: u8, governance: serde_json::Value) -> (serde_json::Value, Vec<([u8; 32], u64)>) {
    let mut vals = Vec::new();
    let mut comet = Vec::new();
    for i in 0..n {
        let op = op_seed(i);
        vals.push(serde_json::json!({
            "operator_key": hex::encode(pubkey(op)),
            "consensus_key": hex::encode(pubkey(cons_seed(op))),
            "x25519_key": hex::encode(x25519(op)),
            "address": format!("127.0.0.1:{}", 26000 + u16::from(i)),
            "client_endpoint": client_endpoint(i),
            "power": 10,
        }));
        comet.push((pubkey(cons_seed(op)), 10));
    }
    let state = serde_json::json!({
        "params": { "governance": governance },
        "validators": vals,
    });
    (state, comet)
}

/// A well-formed application by operator seed `op`.
pub fn application(op: u8) -> ApplyValidator {
    let cons = SigningKey::from_bytes(&[cons_seed(op); 32]);
    ApplyValidator {
        consensus_key: cons.verifying_key().to_bytes(),
        consensus_key_signature: cons.sign(&pop_message(CHAIN, &pubkey(op))).to_bytes(),
        x25519_key: x25519(op).to_vec(),
        address: "127.0.0.1:27000".into(),
        jurisdictions: vec!["DE".into(), "US".into()],
        identity: format!("operator {op}"),
        client_endpoint: format!("node{op}.example:9090"),
    }
}

pub fn apply(op: u8) -> Action {
    Action::ApplyValidator(application(op))
}

pub fn vote(subject: u8, kind: pb::ElectionKind, approve: bool) -> Action {
    Action::VoteValidator(VoteValidator {
        subject: pubkey(subject),
        kind,
        approve,
    })
}

pub fn admit(subject: u8) -> Action {
    vote(subject, pb::ElectionKind::Admit, true)
}

pub fn leave() -> Action {
    Action::LeaveValidator(LeaveValidator)
}

/// A `RotateConsensusKey` of the operator key of seed `op` to the key of
/// seed `seed`, its proof of possession signed by `signer`.
pub fn rotation_by(op: u8, seed: u8, signer: u8) -> Action {
    let key = pubkey(seed);
    let sig = SigningKey::from_bytes(&[signer; 32])
        .sign(&pop_message(CHAIN, &pubkey(op)))
        .to_bytes();
    Action::RotateConsensusKey(RotateConsensusKey {
        consensus_key: key,
        consensus_key_signature: sig,
    })
}

/// A well-formed rotation of `op` to the key of `seed`.
pub fn rotation(op: u8, seed: u8) -> Action {
    rotation_by(op, seed, seed)
}

/// A `RotateX25519Key` to the X25519 key of seed `seed`.
pub fn x25519_rotation(seed: u8) -> Action {
    Action::RotateX25519Key(stave::keyspaces::validators::RotateX25519Key {
        x25519_key: x25519(seed).to_vec(),
    })
}

/// A `RotateOperatorKey` of the validator `name` to the key of seed `new`,
/// its proof of possession signed by the key of seed `prover`.
pub fn operator_rotation(name: [u8; 32], new: u8, prover: u8) -> Action {
    let m =
        stave::keyspaces::validators::signing::operator_key_pop_message(CHAIN, &name, &pubkey(new));
    Action::RotateOperatorKey(stave::keyspaces::validators::RotateOperatorKey {
        operator_key: pubkey(new),
        operator_key_signature: SigningKey::from_bytes(&[prover; 32]).sign(&m).to_bytes(),
    })
}

pub fn endpoints(address: &str, client_endpoint: &str) -> Action {
    Action::UpdateValidatorEndpoints(UpdateValidatorEndpoints {
        address: address.into(),
        client_endpoint: client_endpoint.into(),
    })
}

/// A node at some height with per-seed nonces.
pub struct Chain {
    pub node: Node,
    pub height: u64,
    nonces: BTreeMap<u8, u64>,
}

impl Chain {
    pub async fn start(node: Node, n: u8, governance: serde_json::Value) -> Chain {
        let mut node = node;
        let (state, comet) = genesis(n, governance);
        node.init_chain_with_validators(state, comet).await;
        Chain {
            node,
            height: 0,
            nonces: BTreeMap::new(),
        }
    }

    /// A chain from an app state of the caller's (see [`genesis`]).
    pub async fn start_with(
        mut node: Node,
        state: serde_json::Value,
        comet: Vec<([u8; 32], u64)>,
    ) -> Chain {
        node.init_chain_with_validators(state, comet).await;
        Chain {
            node,
            height: 0,
            nonces: BTreeMap::new(),
        }
    }

    /// One block holding these encoded txs; returns the block's response.
    pub async fn raw(&mut self, txs: Vec<bytes::Bytes>) -> response::FinalizeBlock {
        self.height += 1;
        self.node.block(self.height, txs).await.1
    }

    /// One block holding one tx by `seed`; returns the block's response.
    pub async fn send(&mut self, seed: u8, actions: Vec<Action>) -> response::FinalizeBlock {
        let nonce = self.nonces.entry(seed).or_insert(0);
        let tx = signed_large(seed, *nonce, actions);
        *nonce += 1;
        self.height += 1;
        let (_, r) = self.node.block(self.height, vec![tx]).await;
        r
    }

    /// The nonce `seed`'s next tx carries.
    pub fn next_nonce(&self, seed: u8) -> u64 {
        self.nonces.get(&seed).copied().unwrap_or(0)
    }

    /// Sends and returns the tx's code.
    pub async fn code(&mut self, seed: u8, action: Action) -> u32 {
        let r = self.send(seed, vec![action]).await;
        r.tx_results[0].code.value()
    }

    /// An empty block; returns its response.
    pub async fn empty(&mut self) -> response::FinalizeBlock {
        self.height += 1;
        self.node.block(self.height, vec![]).await.1
    }

    pub fn view(&self, op: u8) -> Option<pb::ValidatorView> {
        query::get(&self.node.store.view(), &pubkey(op)).unwrap()
    }

    /// The latest election about `op`.
    pub fn election(&self, op: u8) -> pb::Election {
        let r = self.view(op).unwrap().record.unwrap();
        r.governance.unwrap().election.unwrap()
    }

    pub fn status(&self, op: u8) -> String {
        self.view(op).map(|v| v.status).unwrap_or_default()
    }
}

/// The (consensus key, power) pairs of a FinalizeBlock response.
pub fn updates(r: &response::FinalizeBlock) -> Vec<([u8; 32], u64)> {
    r.validator_updates
        .iter()
        .map(|u| (u.pub_key.to_bytes().try_into().unwrap(), u.power.value()))
        .collect()
}

/// Whether any event (tx or block) of `r` has this kind.
pub fn has_event(r: &response::FinalizeBlock, kind: &str) -> bool {
    r.events.iter().any(|e| e.kind == kind)
        || r.tx_results
            .iter()
            .any(|t| t.events.iter().any(|e| e.kind == kind))
}
