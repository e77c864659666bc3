//! Mixed traffic: bounded loops, one per kind, each tx from a fresh
//! signer (nonce 0, so a tx lost in a fault never blocks the next) and
//! writing a unique key. A tx counts as committed only when
//! BroadcastAndWait said so with code 0; its effect is kept for the oracle.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use stave::client::StaveClient;
use stave::keyspaces::casbin::AddCasbinModel;
use stave::keyspaces::kv::token::client as token;
use stave::keyspaces::kv::{KvSet, KvdbAction, KvdbOp};
use stave::proto::tx::BroadcastAndWaitRequest;
use stave::tx::{build::sign_tx, Action};

use super::setup::NODES;
use crate::common::localnet::Localnet;

pub const TOKEN_PID: &str = "[1,\"chaos\"]";
pub const KVDB: &str = "chaos";
pub const KINDS: [&str; 5] = ["kv", "token", "kvdb", "rights", "governance"];

/// What a committed tx wrote, exactly.
#[derive(Debug, Clone, Serialize)]
pub enum Effect {
    Kv {
        signer: Vec<u8>,
        key: Vec<u8>,
        value: Vec<u8>,
    },
    Token {
        controller: String,
        key: String,
        value: Vec<u8>,
    },
    Kvdb {
        owner: Vec<u8>,
        key: Vec<u8>,
        field: Vec<u8>,
        value: Vec<u8>,
    },
    CasbinModel {
        model_id: String,
    },
    GroupApplied {
        group_id: String,
        applicant: Vec<u8>,
    },
    GroupVote {
        group_id: String,
        voter: Vec<u8>,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct Committed {
    pub kind: &'static str,
    pub node: usize,
    pub height: u64,
    pub effect: Effect,
}

/// Per kind: committed, refused with a code, and errors (timeouts, a node down).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Outcomes {
    pub committed: u64,
    pub refused: u64,
    pub errors: u64,
}

/// The shared state of every loop.
#[derive(Clone)]
pub struct Traffic {
    pub net: Arc<Localnet>,
    pub faulted: Arc<AtomicU32>,
    pub committed: Arc<Mutex<Vec<Committed>>>,
    pub outcomes: Arc<Mutex<BTreeMap<&'static str, Outcomes>>>,
    pub seed: u64,
}

/// Why a submission did not commit.
pub enum NotCommitted {
    Refused(u32),
    Error,
}

impl Traffic {
    /// Starts one loop per kind, each ending at `until`.
    pub fn start(&self, until: Instant) -> Vec<tokio::task::JoinHandle<()>> {
        KINDS
            .iter()
            .enumerate()
            .map(|(i, &kind)| {
                let t = self.clone();
                let rng = StdRng::seed_from_u64(self.seed.wrapping_mul(31).wrapping_add(i as u64));
                if kind == "governance" {
                    tokio::spawn(async move { t.governance_loop(rng, until).await })
                } else {
                    tokio::spawn(async move { t.simple_loop(kind, rng, until).await })
                }
            })
            .collect()
    }

    async fn simple_loop(self, kind: &'static str, mut rng: StdRng, until: Instant) {
        for n in 0..100_000u64 {
            if Instant::now() >= until {
                return;
            }
            let key = SigningKey::generate(&mut rng);
            let (actions, effect) = self.build(kind, n, &key);
            let node = self.pick(&mut rng);
            let tx = sign_tx(&key, &self.net.chain_id, 0, actions, "");
            let _ = self.send(kind, node, tx, effect).await;
            tokio::time::sleep(Duration::from_millis(rng.gen_range(50..300))).await;
        }
    }

    /// The actions of the `n`th tx of `kind` by `key`, and what it writes.
    fn build(&self, kind: &str, n: u64, key: &SigningKey) -> (Vec<Action>, Effect) {
        let pk = key.verifying_key().to_bytes().to_vec();
        let name = format!("chaos-{}-{kind}-{n}", self.seed);
        let value = format!("{name}-value").into_bytes();
        match kind {
            "kv" => (
                vec![Action::KvSet(KvSet {
                    key: name.clone().into_bytes(),
                    value: value.clone(),
                })],
                Effect::Kv {
                    signer: pk,
                    key: name.into_bytes(),
                    value,
                },
            ),
            "token" => {
                let tags = token::tags_json(&["chaos"]);
                let t = token::create(key, &self.net.chain_id, TOKEN_PID, &name, &value, &tags, 1);
                (
                    vec![Action::KvTokenCreate(t)],
                    Effect::Token {
                        controller: token::controller_hex(key),
                        key: name,
                        value,
                    },
                )
            }
            "kvdb" => {
                let field = b"f".to_vec();
                let op = KvdbOp::HSet {
                    field: field.clone(),
                    value: value.clone(),
                };
                let a = KvdbAction {
                    db: KVDB.into(),
                    key: name.clone().into_bytes(),
                    op,
                };
                (
                    vec![Action::Kvdb(a)],
                    Effect::Kvdb {
                        owner: pk,
                        key: name.into_bytes(),
                        field,
                        value,
                    },
                )
            }
            _ => {
                let model_id = format!("{}/{name}", hex::encode(&pk));
                let a = AddCasbinModel {
                    model_id: model_id.clone(),
                    perm_model: MODEL.into(),
                };
                (
                    vec![Action::AddCasbinModel(a)],
                    Effect::CasbinModel { model_id },
                )
            }
        }
    }

    /// A random node not under a fault (any node if all are).
    pub fn pick(&self, rng: &mut StdRng) -> usize {
        let faulted = self.faulted.load(Ordering::SeqCst);
        let live: Vec<usize> = (0..NODES).filter(|i| faulted & (1 << i) == 0).collect();
        if live.is_empty() {
            rng.gen_range(0..NODES)
        } else {
            live[rng.gen_range(0..live.len())]
        }
    }

    /// Submits `tx` through `node`; records it when it committed with code 0.
    pub async fn send(
        &self,
        kind: &'static str,
        node: usize,
        tx: Vec<u8>,
        effect: Effect,
    ) -> Result<u64, NotCommitted> {
        let r = submit(&self.net, node, tx).await;
        let mut o = self.outcomes.lock().expect("outcomes");
        let o = o.entry(kind).or_default();
        match r {
            Ok(height) => {
                o.committed += 1;
                let c = Committed {
                    kind,
                    node,
                    height,
                    effect,
                };
                self.committed.lock().expect("committed").push(c);
                Ok(height)
            }
            Err(NotCommitted::Refused(code)) => {
                o.refused += 1;
                Err(NotCommitted::Refused(code))
            }
            Err(e) => {
                o.errors += 1;
                Err(e)
            }
        }
    }
}

/// BroadcastAndWait through `node` (15 s, and 20 s in all).
async fn submit(net: &Localnet, node: usize, tx: Vec<u8>) -> Result<u64, NotCommitted> {
    let call = async {
        let mut c = StaveClient::connect(&net.grpc_url(node)).await.ok()?;
        let req = BroadcastAndWaitRequest {
            tx,
            timeout_ms: 15_000,
        };
        c.tx.broadcast_and_wait(req)
            .await
            .ok()
            .map(|r| r.into_inner())
    };
    match tokio::time::timeout(Duration::from_secs(20), call).await {
        Ok(Some(r)) if r.committed && r.code == 0 => Ok(r.height),
        Ok(Some(r)) if r.code != 0 => Err(NotCommitted::Refused(r.code)),
        _ => Err(NotCommitted::Error),
    }
}

const MODEL: &str =
    "[request_definition]\nr = sub, obj, act\n\n[policy_definition]\np = sub, obj, act\n\n\
     [policy_effect]\ne = some(where (p.eft == allow))\n\n\
     [matchers]\nm = r.sub == p.sub && r.obj == p.obj && r.act == p.act\n";
