//! The seeded chain the store-backed targets share: a real [`App`] over a
//! real RocksDB in a scratch directory (on `/dev/shm` where there is one,
//! so in memory), with genesis validators, accounts that have written kv,
//! kvdb, token and Casbin state, over [`SETUP_BLOCKS`] committed heights.
//! Cases never commit, so every input meets the same state.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};

use ed25519_dalek::{Signer, SigningKey};
use prost::Message;

use crate::app::{App, AppConfig};
use crate::keyspaces::casbin::{model::EXAMPLE_RBAC, AddCasbinModel, AddCasbinRule};
use crate::keyspaces::kv::{token::client, KvSet, KvdbAction, KvdbOp};
use crate::proto::tx as pb;
use crate::store::ChainStore;
use crate::tx::{sign_bytes, Action};

/// The chain id of the seeded chain.
pub const CHAIN: &str = "stave-fuzz";
/// Heights committed by the setup; the cases run at the next one.
pub const SETUP_BLOCKS: u64 = 3;
/// Seeds of ordinary users' keys.
pub const USERS: [u8; 4] = [1, 2, 3, 4];
/// Operator key seeds of the four genesis validators.
pub const VALIDATORS: [u8; 4] = [100, 101, 102, 103];
/// The token protocol id the setup writes under.
pub const PID: &str = "[1,\"profile data\"]";

/// Block time of `height`: 1 s a block from a fixed epoch.
pub fn time_ns(height: u64) -> i64 {
    (1_700_000_000 + height as i64) * 1_000_000_000
}

pub fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

pub fn pubkey(seed: u8) -> [u8; 32] {
    key(seed).verifying_key().to_bytes()
}

/// The model id `{owner hex}/{name}` of user `seed`'s model.
pub fn model_id(seed: u8) -> String {
    format!("{}/roles", hex::encode(pubkey(seed)))
}

/// Encodes and signs a tx body of wire actions (which need not convert to
/// domain actions: that is the point of fuzzing them).
pub fn sign_wire(seed: u8, nonce: u64, actions: Vec<pb::Action>, gas_limit: u64) -> Vec<u8> {
    let k = key(seed);
    let body = pb::TxBody {
        chain_id: CHAIN.into(),
        signer: pubkey(seed).to_vec(),
        nonce,
        actions,
        memo: String::new(),
        gas_limit,
    };
    let body_bytes = body.encode_to_vec();
    let signature = k.sign(&sign_bytes(&body_bytes)).to_bytes().to_vec();
    pb::Tx {
        body_bytes,
        signature,
        pow_nonce: 0,
    }
    .encode_to_vec()
}

/// The shared chain.
pub struct World {
    pub app: App,
    pub store: ChainStore,
    /// Committed next nonce of every key the setup used, by seed.
    pub nonces: Vec<(u8, u64)>,
}

impl World {
    /// The committed next nonce of `seed` (0 for a key the setup never used).
    pub fn nonce(&self, seed: u8) -> u64 {
        self.nonces
            .iter()
            .find(|(s, _)| *s == seed)
            .map_or(0, |(_, n)| *n)
    }

    /// A fresh app over the same store: every cache cold.
    pub fn reload(&mut self) {
        self.app = App::load(self.store.clone(), AppConfig::default())
            .expect("the seeded store loads again");
    }
}

/// The shared world, built on first use.
pub fn world() -> MutexGuard<'static, World> {
    static W: OnceLock<Mutex<World>> = OnceLock::new();
    W.get_or_init(|| Mutex::new(build()))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

fn scratch_dir() -> PathBuf {
    let base = PathBuf::from("/dev/shm");
    let base = if base.is_dir() {
        base
    } else {
        std::env::temp_dir()
    };
    // Directories of earlier processes that are gone are removed first.
    if let Ok(entries) = std::fs::read_dir(&base) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("stave-fuzz-world-") {
                if !PathBuf::from(format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }
    let dir = base.join(format!("stave-fuzz-world-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn genesis() -> (serde_json::Value, Vec<(Vec<u8>, u64)>) {
    let mut vals = Vec::new();
    let mut comet = Vec::new();
    for (i, op) in VALIDATORS.iter().enumerate() {
        let cons = pubkey(op.wrapping_add(100));
        let x = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([*op; 32]));
        vals.push(serde_json::json!({
            "operator_key": hex::encode(pubkey(*op)),
            "consensus_key": hex::encode(cons),
            "x25519_key": hex::encode(x.as_bytes()),
            "address": format!("127.0.0.1:{}", 26000 + i),
            "power": 10,
        }));
        comet.push((cons.to_vec(), 10));
    }
    let state = serde_json::json!({
        "params": { "storage": {
            "pow_base": 1,
            "pow_retention": 0,
            "unsponsored_block_bytes": 1u64 << 40,
        } },
        "validators": vals,
    });
    (state, comet)
}

/// The setup's actions by `seed` in block `b`.
fn setup_actions(seed: u8, b: u64) -> Vec<Action> {
    let kvdb = |k: &str, op| {
        Action::Kvdb(KvdbAction {
            db: "db".into(),
            key: k.as_bytes().to_vec(),
            op,
        })
    };
    let mut a = vec![
        Action::KvSet(KvSet {
            key: format!("k{b}").into_bytes(),
            value: vec![seed; 8],
        }),
        kvdb(
            "set",
            KvdbOp::SAdd(vec![vec![seed, b as u8], b"m".to_vec()]),
        ),
        kvdb("n", KvdbOp::IncrBy(i64::from(seed))),
        kvdb(
            "z",
            KvdbOp::ZAdd {
                member: vec![seed],
                score: format!("{b}.5"),
            },
        ),
    ];
    match b {
        1 => a.push(Action::AddCasbinModel(AddCasbinModel {
            model_id: model_id(seed),
            perm_model: EXAMPLE_RBAC.into(),
        })),
        2 => {
            let rule = |i, p: &str, v: [&str; 3]| {
                Action::AddCasbinRule(AddCasbinRule {
                    model_id: model_id(seed),
                    rule_index: i,
                    ptype: p.into(),
                    values: v
                        .iter()
                        .map(|s| s.to_string())
                        .filter(|s| !s.is_empty())
                        .collect(),
                })
            };
            a.push(rule(0, "p", ["listener", "song", "access"]));
            a.push(rule(
                1,
                "g",
                [&hex::encode(pubkey(USERS[0])), "listener", ""],
            ));
        }
        _ => a.push(Action::KvTokenCreate(client::create(
            &key(seed),
            CHAIN,
            PID,
            "name",
            &[seed; 4],
            &client::tags_json(&["a", "b"]),
            1,
        ))),
    }
    a
}

fn build() -> World {
    let dir = scratch_dir();
    let store = ChainStore::open(&dir).expect("a scratch chain store opens");
    let mut app = App::load(store.clone(), AppConfig::default()).expect("an empty store loads");
    let (state, comet) = genesis();
    let state = serde_json::to_vec(&state).expect("genesis encodes");
    app.init_chain(CHAIN, time_ns(0), &state, &comet)
        .expect("the fuzz genesis is valid");
    let mut nonces: Vec<(u8, u64)> = USERS.iter().map(|s| (*s, 0)).collect();
    for b in 1..=SETUP_BLOCKS {
        let txs: Vec<Vec<u8>> = nonces
            .iter_mut()
            .map(|(seed, n)| {
                let acts = setup_actions(*seed, b).into_iter().map(pb::Action::from);
                let tx = sign_wire(*seed, *n, acts.collect(), 50_000_000);
                *n += 1;
                tx
            })
            .collect();
        let out = app
            .finalize_block(b, time_ns(b), &txs)
            .expect("the setup block runs");
        for t in &out.txs {
            assert_eq!(t.code, crate::tx::Code::Ok, "setup tx failed: {}", t.log);
        }
        app.commit().expect("the setup block commits");
    }
    World { app, store, nonces }
}
