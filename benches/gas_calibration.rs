//! Gas calibration (issue 19): for each kind of expensive valid tx, fills
//! blocks up to the default `max_block_gas` with txs whose `gas_limit` is
//! their simulated gas (plus 1% and 2,000: simulation runs at the last
//! block's time), runs FinalizeBlock + Commit, and prints the time per
//! block and nanoseconds per gas used. The worst kind's block time is the
//! worst-case block at the limit; it must stay within 1 s on the reference
//! machine. Signatures are not in the node's verified cache (as in block
//! sync), so every block pays full verification.
//!
//! Run: `cargo bench --bench gas_calibration` (every kind, each in its own
//! process), or `cargo bench --bench gas_calibration -- <kind> [blocks]`.

/// The node's allocator (see `src/main.rs`), so the figures are the node's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

use ed25519_dalek::SigningKey;
use stave::app::{simulate, App, AppConfig};
use stave::keyspaces::casbin::{AddCasbinModel, AddCasbinRule};
use stave::keyspaces::kv::token::client;
use stave::keyspaces::kv::{KvSet, KvdbAction, KvdbOp};
use stave::store::ChainStore;
use stave::tx::{build::sign_tx_with_gas, Action};

const CHAIN: &str = "calibration";
const KINDS: [&str; 7] = [
    "kv_set_1",
    "kv_set_64x32",
    "kv_set_64k",
    "kv_token_create",
    "kvdb_sadd_64",
    "kvdb_zadd_64",
    "casbin_rules_30",
];

fn key(block: usize, i: usize) -> SigningKey {
    let mut seed = [0x5Au8; 32];
    seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
    seed[8..16].copy_from_slice(&(block as u64).to_le_bytes());
    SigningKey::from_bytes(&seed)
}

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

/// Signs tx `i` with its simulated gas as the limit.
fn signed(app: &App, kind: &str, block: usize, i: usize) -> (Vec<u8>, u64) {
    let sk = key(block, i);
    let acts = actions(kind, &sk, i);
    let probe = sign_tx_with_gas(&sk, CHAIN, 0, acts.clone(), "", 1_000_000_000);
    let sim = simulate(app.store(), &probe).expect("simulate");
    assert!(sim.outcome.is_ok(), "{kind}: {}", sim.outcome.log);
    // Simulation runs at the last block's time; the block's own time can
    // change a few bytes of what is written.
    let gas = sim.outcome.gas_used + sim.outcome.gas_used / 100 + 2_000;
    (sign_tx_with_gas(&sk, CHAIN, 0, acts, "", gas), gas)
}

fn scenario(kind: &str, blocks: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ChainStore::open(dir.path()).expect("open");
    let mut app = App::load(store, AppConfig::default()).expect("load");
    app.init_chain(CHAIN, 0, br#"{"params":{"storage":{"pow_base":1,"pow_retention":0,"unsponsored_block_bytes":1099511627776}}}"#, &[]).expect("genesis");
    let max = stave::gas::GasParams::default().max_block_gas;
    let mut worst = (0.0f64, 0usize, 0u64, 0.0f64, 0.0f64);
    for b in 0..blocks {
        let (mut txs, mut gas) = (Vec::new(), 0u64);
        let mut i = 0;
        loop {
            let (raw, g) = signed(&app, kind, b, i);
            if gas + g > max {
                break;
            }
            gas += g;
            txs.push(raw);
            i += 1;
        }
        let height = b as u64 + 1;
        let t = Instant::now();
        let out = app
            .finalize_block(height, height as i64 * 1_000_000_000, &txs)
            .expect("finalize");
        let fin = t.elapsed().as_secs_f64() * 1e3;
        if let Some(bad) = out.txs.iter().find(|t| !t.is_ok()) {
            panic!("{kind}: a tx failed: {:?} {}", bad.code, bad.log);
        }
        let used: u64 = out.txs.iter().map(|t| t.gas_used).sum();
        assert!(used <= gas, "{kind}: more gas used than declared");
        let t = Instant::now();
        app.commit().expect("commit");
        let com = t.elapsed().as_secs_f64() * 1e3;
        if fin + com > worst.0 {
            worst = (fin + com, txs.len(), used, fin, com);
        }
    }
    let (ms, n, gas, fin, com) = worst;
    println!(
        "| {kind} | {n} | {} | {:.1} | {fin:.1} | {com:.1} | {:.3} |",
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
