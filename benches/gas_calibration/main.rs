//! Gas calibration (issue 19): for each kind of expensive valid tx, fills
//! blocks up to the default `max_block_gas` with txs whose `gas_limit` is
//! their simulated gas (plus 1% and 2,000: simulation runs at the last
//! block's time), runs FinalizeBlock + Commit, and prints the time per
//! block and nanoseconds per gas used. The worst kind's block time is the
//! worst-case block at the limit; it must stay within 1 s on the reference
//! machine. Signatures are not in the node's verified cache (as in block
//! sync), so every block pays full verification.
//!
//! Kinds signed by fresh keys ([`actions`]) run on an empty store; a kind
//! with the suffix `@1m` runs the same txs on a store first filled with 1M
//! keys. `record_grant_2[_small]` and `upload_complete_16` ([`rights`]) are signed
//! by genesis validators, after the setup their actions need.
//!
//! Run: `cargo bench --bench gas_calibration` (every kind, each in its own
//! process), or `cargo bench --bench gas_calibration -- <kind> [blocks]`;
//! `-- compile` prints what compiling a pattern costs per unit of weight
//! ([`compile`]).

mod compile;
mod rights;
mod world;

/// The node's allocator (see `src/main.rs`), so the figures are the node's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use ed25519_dalek::SigningKey;
use stave::keyspaces::casbin::{AddCasbinModel, AddCasbinRule};
use stave::keyspaces::kv::token::client;
use stave::keyspaces::kv::{KvSet, KvdbAction, KvdbOp};
use stave::tx::Action;
use world::{fresh, World, CHAIN};

const KINDS: [&str; 17] = [
    "kv_set_1",
    "kv_set_64x32",
    "kv_set_64k",
    "kv_token_create",
    "kvdb_sadd_64",
    "kvdb_zadd_64",
    "casbin_rules_30",
    "record_grant_2",
    "record_grant_2_small",
    "upload_complete_16",
    "kv_set_1@1m",
    "kv_set_64x32@1m",
    "kvdb_sadd_64@1m",
    "kvdb_zadd_64@1m",
    "kv_token_create@1m",
    "upload_complete_16@1m",
    "kv_set_64k@1m",
];

/// Keys the `@1m` kinds find in the store.
const PREFILL: usize = 1_000_000;

fn kv_set(k: String, len: usize) -> Action {
    Action::KvSet(KvSet {
        key: k.into_bytes(),
        value: vec![0xA5; len],
    })
}

fn kvdb(key: &str, op: KvdbOp) -> Action {
    Action::Kvdb(KvdbAction {
        db: "cal".into(),
        key: key.as_bytes().to_vec(),
        op,
    })
}

/// A rule value of the heaviest kind Casbin accepts per byte: a bounded
/// repetition of a negated class.
fn heavy_rule(model: &str, slot: u32) -> Action {
    Action::AddCasbinRule(AddCasbinRule {
        model_id: model.into(),
        rule_index: slot,
        ptype: "p".into(),
        values: (0..3)
            .map(|k| format!("[^a]{{{}}}", 40 + slot + k))
            .collect(),
    })
}

/// The actions of tx `i` of a block, for `kind`.
fn actions(kind: &str, sk: &SigningKey, i: usize) -> Vec<Action> {
    match kind {
        "kv_set_1" => vec![kv_set(format!("k{i}"), 32)],
        "kv_set_64x32" => (0..64).map(|j| kv_set(format!("k{i}-{j}"), 32)).collect(),
        "kv_set_64k" => vec![kv_set(format!("k{i}"), 65_536)],
        "kv_token_create" => {
            let value = vec![b'v'; 1024];
            let tags = client::tags_json(&["a", "b", "c", "d"]);
            let t = client::create(sk, CHAIN, "[1,\"calibration\"]", "k", &value, &tags, 1);
            vec![Action::KvTokenCreate(t)]
        }
        "kvdb_sadd_64" => (0..64)
            .map(|j| {
                kvdb(
                    &format!("s{j}"),
                    KvdbOp::SAdd((0..16).map(|m| vec![m; 32]).collect()),
                )
            })
            .collect(),
        "kvdb_zadd_64" => (0..64)
            .map(|j| {
                kvdb(
                    "z",
                    KvdbOp::ZAdd {
                        member: format!("m{j}").into_bytes(),
                        score: format!("{j}.5"),
                    },
                )
            })
            .collect(),
        "casbin_rules_30" => {
            let model = format!("{}/cal", hex::encode(sk.verifying_key().to_bytes()));
            let text = stave::keyspaces::casbin::model::EXAMPLE_RBAC.replace(
                "m = ",
                "m = regexMatch(r.obj, p.obj) && keyMatch2(r.act, p.act) && ",
            );
            let mut a = vec![Action::AddCasbinModel(AddCasbinModel {
                model_id: model.clone(),
                perm_model: text,
            })];
            a.extend((0..30).map(|s| heavy_rule(&model, s)));
            a
        }
        other => panic!("unknown kind {other}"),
    }
}

/// Tx `i` of block `block` of `kind`: its signer and actions.
fn tx(kind: &str, block: usize, i: usize) -> (SigningKey, Vec<Action>) {
    match kind {
        "record_grant_2" | "record_grant_2_small" => rights::grants(block, i),
        "upload_complete_16" => rights::uploads(block, i),
        _ => {
            let sk = fresh(block, i, 0x5A);
            let acts = actions(kind, &sk, i);
            (sk, acts)
        }
    }
}

/// A store ready for `kind`'s blocks.
fn world(kind: &str, prefilled: bool, blocks: usize) -> World {
    let mut w = World::new();
    if prefilled {
        w.prefill(PREFILL);
    }
    if let Some(rest) = kind.strip_prefix("record_grant_2") {
        rights::setup_grants(&mut w, blocks, rest == "_small");
    }
    w
}

fn scenario(name: &str, blocks: usize) {
    let (kind, prefilled) = match name.split_once('@') {
        Some((k, "1m")) => (k, true),
        Some((_, other)) => panic!("unknown store size {other}"),
        None => (name, false),
    };
    let mut w = world(kind, prefilled, blocks);
    let max = stave::gas::GasParams::default().max_block_gas;
    let mut worst = (0.0f64, 0usize, 0u64, 0.0f64, 0.0f64);
    for b in 0..blocks {
        let (mut txs, mut gas) = (Vec::new(), 0u64);
        let mut i = 0;
        loop {
            let (sk, acts) = tx(kind, b, i);
            let (raw, g) = w.sign(&sk, acts);
            if gas + g > max {
                break;
            }
            w.take_nonce(&sk);
            gas += g;
            txs.push(raw);
            i += 1;
        }
        let t = w.block(&txs);
        assert!(t.gas_used <= gas, "{name}: more gas used than declared");
        let ms = t.finalize_ms + t.commit_ms;
        if ms > worst.0 {
            worst = (ms, txs.len(), t.gas_used, t.finalize_ms, t.commit_ms);
        }
    }
    let (ms, n, gas, fin, com) = worst;
    println!(
        "| {name} | {n} | {} | {:.1} | {fin:.1} | {com:.1} | {:.3} |",
        gas / n.max(1) as u64,
        gas as f64 / 1e6,
        ms * 1e6 / gas as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if args.first().map(String::as_str) == Some("compile") {
        compile::run();
        return;
    }
    if let Some(kind) = args.first() {
        let blocks = args.get(1).map_or(3, |b| b.parse().expect("blocks"));
        scenario(kind, blocks);
        return;
    }
    println!("| tx kind | txs in the worst block | gas used per tx | block Mgas used | finalize ms | commit ms | ns per gas used |");
    println!("|---|---|---|---|---|---|---|");
    let exe = std::env::current_exe().expect("current exe");
    for kind in KINDS {
        let status = std::process::Command::new(&exe)
            .arg(kind)
            .status()
            .expect("run scenario");
        assert!(status.success(), "scenario {kind} failed");
    }
}
