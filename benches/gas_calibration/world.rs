//! One in-process node for a calibration run: a fresh store with four
//! genesis validators, each signer's next nonce, and blocks timed through
//! FinalizeBlock and Commit.

use std::collections::BTreeMap;
use std::time::Instant;

use ed25519_dalek::SigningKey;
use stave::app::{simulate, App, AppConfig, BlockOutcome};
use stave::gas::GasParams;
use stave::keyspaces::kv::KvSet;
use stave::store::ChainStore;
use stave::tx::{build::sign_tx_with_gas, Action};

pub const CHAIN: &str = "calibration";
/// Declared gas of a prefill tx (64 `kv.Set`s use about 9.7M).
const PREFILL_TX_GAS: u64 = 11_000_000;

/// The genesis validators' key seeds.
pub const VALIDATORS: [u8; 4] = [201, 202, 203, 204];

/// Keys that prove no work: a PoW target of 1 and a block budget of
/// unsponsored bytes no run reaches, so every kind measures its own work.
const STORAGE: &str = r#"{"pow_base":1,"pow_retention":0,"unsponsored_block_bytes":1099511627776}"#;

pub fn seed_key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

pub fn pk(sk: &SigningKey) -> [u8; 32] {
    sk.verifying_key().to_bytes()
}

/// A key distinct for each (`block`, `i`, `salt`).
pub fn fresh(block: usize, i: usize, salt: u8) -> SigningKey {
    let mut seed = [salt; 32];
    seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
    seed[8..16].copy_from_slice(&(block as u64).to_le_bytes());
    SigningKey::from_bytes(&seed)
}

fn consensus_key(seed: u8) -> [u8; 32] {
    pk(&seed_key(seed.wrapping_add(17)))
}

fn genesis() -> (Vec<u8>, Vec<(Vec<u8>, u64)>) {
    let mut vals = Vec::new();
    let mut comet = Vec::new();
    for s in VALIDATORS {
        let x = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([s; 32]));
        vals.push(serde_json::json!({
            "operator_key": hex::encode(pk(&seed_key(s))),
            "consensus_key": hex::encode(consensus_key(s)),
            "x25519_key": hex::encode(x.as_bytes()),
            "address": format!("127.0.0.1:{}", 20000 + s as u32),
            "power": 10,
        }));
        comet.push((consensus_key(s).to_vec(), 10));
    }
    let storage: serde_json::Value = serde_json::from_str(STORAGE).expect("storage params");
    let state = serde_json::json!({"validators": vals, "params": {"storage": storage}});
    (state.to_string().into_bytes(), comet)
}

/// A block's timing: FinalizeBlock and Commit in ms, and the gas used.
pub struct Timed {
    pub finalize_ms: f64,
    pub commit_ms: f64,
    pub gas_used: u64,
}

pub struct World {
    pub app: App,
    height: u64,
    nonces: BTreeMap<[u8; 32], u64>,
    _dir: tempfile::TempDir,
}

impl World {
    pub fn new() -> World {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = ChainStore::open(dir.path()).expect("open");
        let mut app = App::load(store, AppConfig::default()).expect("load");
        let (state, comet) = genesis();
        app.init_chain(CHAIN, 0, &state, &comet).expect("genesis");
        World {
            app,
            height: 0,
            nonces: BTreeMap::new(),
            _dir: dir,
        }
    }

    fn nonce(&self, sk: &SigningKey) -> u64 {
        self.nonces.get(&pk(sk)).copied().unwrap_or(0)
    }

    /// `actions` signed by `sk` at its next nonce, declaring their simulated
    /// gas plus 1% and 2,000 (simulation runs at the last block's time, which
    /// can change a few bytes of what is written); the nonce is not taken.
    pub fn sign(&self, sk: &SigningKey, actions: Vec<Action>) -> (Vec<u8>, u64) {
        let nonce = self.nonce(sk);
        let probe = sign_tx_with_gas(sk, CHAIN, nonce, actions.clone(), "", 1_000_000_000);
        let sim = simulate(self.app.store(), &probe).expect("simulate");
        assert!(sim.outcome.is_ok(), "simulate: {}", sim.outcome.log);
        let gas = sim.outcome.gas_used + sim.outcome.gas_used / 100 + 2_000;
        (sign_tx_with_gas(sk, CHAIN, nonce, actions, "", gas), gas)
    }

    /// Takes `sk`'s nonce (its signed tx goes into the next block).
    pub fn take_nonce(&mut self, sk: &SigningKey) {
        *self.nonces.entry(pk(sk)).or_insert(0) += 1;
    }

    /// Runs `txs` as the next block, timed; every tx must succeed.
    pub fn block(&mut self, txs: &[Vec<u8>]) -> Timed {
        self.height += 1;
        let time = self.height as i64 * 1_000_000_000;
        // Simulation parsed the signers' keys: the block parses them again,
        // as in block sync.
        stave::tx::clear_identity_key_cache();
        let t = Instant::now();
        let out: BlockOutcome = self
            .app
            .finalize_block(self.height, time, txs)
            .expect("finalize");
        let finalize_ms = t.elapsed().as_secs_f64() * 1e3;
        if let Some(bad) = out.txs.iter().find(|t| !t.is_ok()) {
            panic!("a tx failed: {:?} {}", bad.code, bad.log);
        }
        let t = Instant::now();
        self.app.commit().expect("commit");
        Timed {
            finalize_ms,
            commit_ms: t.elapsed().as_secs_f64() * 1e3,
            gas_used: out.txs.iter().map(|t| t.gas_used).sum(),
        }
    }

    /// Setup txs, untimed, in as few blocks as `max_block_gas` allows.
    pub fn setup_blocks(&mut self, txs: Vec<(SigningKey, Vec<Action>)>) {
        let max = GasParams::default().max_block_gas;
        let (mut block, mut gas) = (Vec::new(), 0u64);
        for (sk, actions) in txs {
            let (raw, g) = self.sign(&sk, actions);
            if gas + g > max {
                self.block(&block);
                (block, gas) = (Vec::new(), 0);
            }
            self.take_nonce(&sk);
            block.push(raw);
            gas += g;
        }
        if !block.is_empty() {
            self.block(&block);
        }
    }

    /// Fills the store with `n` more keys (64 32-byte `kv.Set`s per tx, about
    /// 9.7M gas each, declaring `PREFILL_TX_GAS`; as many txs per block as
    /// `max_block_gas` holds), untimed.
    pub fn prefill(&mut self, n: usize) {
        let start = Instant::now();
        let mut written = 0usize;
        let per_block = (GasParams::default().max_block_gas / PREFILL_TX_GAS) as usize;
        while written < n {
            let mut txs = Vec::with_capacity(per_block);
            for i in 0..per_block {
                if written >= n {
                    break;
                }
                let sk = fresh(0, i, 0xAA);
                let actions = (written..written + 64)
                    .map(|k| {
                        Action::KvSet(KvSet {
                            key: format!("prefill-{k}").into_bytes(),
                            value: vec![7u8; 32],
                        })
                    })
                    .collect();
                let nonce = self.nonce(&sk);
                let raw = sign_tx_with_gas(&sk, CHAIN, nonce, actions, "", PREFILL_TX_GAS);
                self.take_nonce(&sk);
                txs.push(raw);
                written += 64;
            }
            self.block(&txs);
        }
        eprintln!(
            "prefilled {written} keys in {:.1}s",
            start.elapsed().as_secs_f64()
        );
    }
}
