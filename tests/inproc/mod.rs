//! In-process harness: drives Stave's real tower-abci services (consensus
//! actor, mempool, info) over a real RocksDB in a temp dir, with the
//! request types CometBFT sends. No CometBFT here; that is `e2e_*`.

#![allow(dead_code)]

pub mod governance;
pub mod governance_content;
pub mod kv;
pub mod rights;

use std::path::{Path, PathBuf};

use bytes::Bytes;
use ed25519_dalek::SigningKey;
use stave::abci::{consensus::Consensus, info::InfoService, mempool::MempoolService};
use stave::app::{App, AppConfig};
use stave::keyspaces::kv::{KvDelete, KvSet};
use stave::store::ChainStore;
use stave::tx::{build::sign_tx, Action};
use tendermint::abci::{request, response, types::CommitInfo};
use tendermint::v0_38::abci::{
    ConsensusRequest, ConsensusResponse, InfoRequest, InfoResponse, MempoolRequest, MempoolResponse,
};
use tower::{Service, ServiceExt};

pub mod casbin;

pub const CHAIN: &str = "stave-test";
/// The evidence max age (blocks) the harness's InitChain declares.
pub const EVIDENCE_AGE: u64 = 5;

/// Block time of `height`, deterministic: 1 s per block from a fixed epoch.
pub fn block_time(height: u64) -> tendermint::Time {
    tendermint::Time::from_unix_timestamp(1_700_000_000 + height as i64, 0).unwrap()
}

pub fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

pub fn set(k: &str, v: &str) -> Action {
    Action::KvSet(KvSet {
        key: k.as_bytes().to_vec(),
        value: v.as_bytes().to_vec(),
    })
}

pub fn del(k: &str) -> Action {
    Action::KvDelete(KvDelete {
        key: k.as_bytes().to_vec(),
    })
}

pub fn signed(seed: u8, nonce: u64, actions: Vec<Action>) -> Bytes {
    Bytes::from(sign_tx(&key(seed), CHAIN, nonce, actions, ""))
}

/// The gas a tx that is alone in its block declares: room for a tx of many
/// writes (the default, 5M, holds about 70).
pub const LARGE_TX_GAS: u64 = 20_000_000;

/// Like [`signed`], declaring `gas`.
pub fn signed_with_gas(seed: u8, nonce: u64, actions: Vec<Action>, gas: u64) -> Bytes {
    let raw = stave::tx::build::sign_tx_with_gas(&key(seed), CHAIN, nonce, actions, "", gas);
    Bytes::from(raw)
}

/// Like [`signed`], declaring [`LARGE_TX_GAS`].
pub fn signed_large(seed: u8, nonce: u64, actions: Vec<Action>) -> Bytes {
    signed_with_gas(seed, nonce, actions, LARGE_TX_GAS)
}

/// The storage params scenarios run under unless they set their own: proof
/// of work off (divisor 1) and a practically unlimited unsponsored block
/// budget, so fresh test keys act without sponsors. The paid-for-state
/// scenarios set `params.storage` themselves.
pub fn open_storage() -> serde_json::Value {
    serde_json::json!({
        "pow_base": 1,
        "pow_retention": 0,
        "unsponsored_block_bytes": 1u64 << 40,
    })
}

fn with_open_storage(mut app_state: serde_json::Value) -> serde_json::Value {
    if let Some(obj) = app_state.as_object_mut() {
        let params = obj.entry("params").or_insert_with(|| serde_json::json!({}));
        if let Some(p) = params.as_object_mut() {
            p.entry("storage").or_insert_with(open_storage);
        }
    }
    app_state
}

/// The InitChain request the harness sends: chain [`CHAIN`], block time 0,
/// the given app state and CometBFT genesis validators (ed25519 key, power).
pub fn init_chain_request(
    app_state: serde_json::Value,
    validators: Vec<([u8; 32], u64)>,
) -> request::InitChain {
    let validators = validators
        .into_iter()
        .map(|(k, power)| tendermint::validator::Update {
            pub_key: tendermint::PublicKey::from_raw_ed25519(&k).unwrap(),
            power: power.try_into().unwrap(),
        })
        .collect();
    let app_state = with_open_storage(app_state);
    request::InitChain {
        time: block_time(0),
        chain_id: CHAIN.into(),
        consensus_params: tendermint::consensus::Params {
            block: tendermint::block::Size {
                max_bytes: 4_194_304,
                max_gas: -1,
                time_iota_ms: 1000,
            },
            evidence: tendermint::evidence::Params {
                max_age_num_blocks: EVIDENCE_AGE,
                max_age_duration: tendermint::evidence::Duration(std::time::Duration::from_secs(
                    172_800,
                )),
                max_bytes: 1_048_576,
            },
            validator: tendermint::consensus::params::ValidatorParams {
                pub_key_types: vec![tendermint::public_key::Algorithm::Ed25519],
            },
            version: None,
            abci: Default::default(),
        },
        validators,
        app_state_bytes: Bytes::from(serde_json::to_vec(&app_state).unwrap()),
        initial_height: 1u32.into(),
    }
}

/// One node: the consensus actor, mempool and info services over a store.
pub struct Node {
    pub path: PathBuf,
    pub store: ChainStore,
    consensus: Option<Consensus>,
    actor: Option<std::thread::JoinHandle<()>>,
    checker: Option<std::thread::JoinHandle<()>>,
    mempool: Option<MempoolService>,
    info: InfoService,
    snapshot: stave::abci::snapshot::SnapshotService,
}

/// Closes the services and joins their threads, so the store is closed
/// before the next open and before the process exits (RocksDB must not
/// outlive `main`).
impl Drop for Node {
    fn drop(&mut self) {
        self.consensus.take();
        self.mempool.take();
        for h in [self.actor.take(), self.checker.take()]
            .into_iter()
            .flatten()
        {
            let _ = h.join();
        }
    }
}

impl Node {
    pub fn open(path: &Path) -> Node {
        Self::open_with(path, AppConfig::default())
    }

    pub fn open_with(path: &Path, config: AppConfig) -> Node {
        let store = ChainStore::open(path).expect("open store");
        let app = App::load(store.clone(), config).expect("load app");
        let (mempool, checker) = MempoolService::spawn_with_handle(app.mempool());
        let info = InfoService {
            store: store.clone(),
        };
        let snapshot = stave::abci::snapshot::SnapshotService::new(
            None,
            stave::snapshot::Restorer::new(store.clone(), Some(app.mempool())),
        );
        let (consensus, actor) = Consensus::spawn_with_handle(app);
        Node {
            path: path.to_path_buf(),
            info,
            snapshot,
            store,
            consensus: Some(consensus),
            actor: Some(actor),
            checker: Some(checker),
            mempool: Some(mempool),
        }
    }

    /// Stops the node as a crash would: whatever was not committed is gone.
    pub fn shutdown(self) -> PathBuf {
        self.path.clone() // Drop closes the services and joins their threads
    }

    async fn consensus(&mut self, req: ConsensusRequest) -> ConsensusResponse {
        let svc = self.consensus.as_mut().expect("running");
        svc.ready()
            .await
            .expect("ready")
            .call(req)
            .await
            .expect("consensus never errs")
    }

    pub async fn init_chain(&mut self, app_state: serde_json::Value) -> Vec<u8> {
        self.init_chain_with_validators(app_state, vec![]).await
    }

    /// InitChain with CometBFT's genesis validators (ed25519 consensus key, power).
    pub async fn init_chain_with_validators(
        &mut self,
        app_state: serde_json::Value,
        validators: Vec<([u8; 32], u64)>,
    ) -> Vec<u8> {
        let req = init_chain_request(app_state, validators);
        match self.consensus(ConsensusRequest::InitChain(req)).await {
            ConsensusResponse::InitChain(r) => r.app_hash.as_bytes().to_vec(),
            other => panic!("unexpected {other:?}"),
        }
    }

    pub async fn finalize(&mut self, height: u64, txs: Vec<Bytes>) -> response::FinalizeBlock {
        let req = request::FinalizeBlock {
            txs,
            decided_last_commit: CommitInfo {
                round: 0u16.into(),
                votes: vec![],
            },
            misbehavior: vec![],
            hash: tendermint::Hash::None,
            height: height.try_into().unwrap(),
            time: block_time(height),
            next_validators_hash: tendermint::Hash::None,
            proposer_address: tendermint::account::Id::new([0; 20]),
        };
        match self.consensus(ConsensusRequest::FinalizeBlock(req)).await {
            ConsensusResponse::FinalizeBlock(r) => r,
            other => panic!("unexpected {other:?}"),
        }
    }

    pub async fn commit(&mut self) -> response::Commit {
        match self.consensus(ConsensusRequest::Commit).await {
            ConsensusResponse::Commit(r) => r,
            other => panic!("unexpected {other:?}"),
        }
    }

    /// FinalizeBlock then Commit; returns the block's app hash.
    pub async fn block(
        &mut self,
        height: u64,
        txs: Vec<Bytes>,
    ) -> (Vec<u8>, response::FinalizeBlock) {
        let r = self.finalize(height, txs).await;
        self.commit().await;
        (r.app_hash.as_bytes().to_vec(), r)
    }

    pub async fn process_proposal(
        &mut self,
        height: u64,
        txs: Vec<Bytes>,
    ) -> response::ProcessProposal {
        let req = request::ProcessProposal {
            txs,
            proposed_last_commit: Some(CommitInfo {
                round: 0u16.into(),
                votes: vec![],
            }),
            misbehavior: vec![],
            hash: tendermint::Hash::None,
            height: height.try_into().unwrap(),
            time: block_time(height),
            next_validators_hash: tendermint::Hash::None,
            proposer_address: tendermint::account::Id::new([0; 20]),
        };
        match self.consensus(ConsensusRequest::ProcessProposal(req)).await {
            ConsensusResponse::ProcessProposal(r) => r,
            other => panic!("unexpected {other:?}"),
        }
    }

    pub async fn prepare_proposal(
        &mut self,
        height: u64,
        txs: Vec<Bytes>,
        max_tx_bytes: i64,
    ) -> Vec<Bytes> {
        let req = request::PrepareProposal {
            max_tx_bytes,
            txs,
            local_last_commit: None,
            misbehavior: vec![],
            height: height.try_into().unwrap(),
            time: block_time(height),
            next_validators_hash: tendermint::Hash::None,
            proposer_address: tendermint::account::Id::new([0; 20]),
        };
        match self.consensus(ConsensusRequest::PrepareProposal(req)).await {
            ConsensusResponse::PrepareProposal(r) => r.txs,
            other => panic!("unexpected {other:?}"),
        }
    }

    pub async fn check_tx(&mut self, tx: Bytes, recheck: bool) -> response::CheckTx {
        let kind = if recheck {
            request::CheckTxKind::Recheck
        } else {
            request::CheckTxKind::New
        };
        let svc = self.mempool.as_mut().expect("running");
        match svc
            .ready()
            .await
            .unwrap()
            .call(MempoolRequest::CheckTx(request::CheckTx { tx, kind }))
            .await
            .unwrap()
        {
            MempoolResponse::CheckTx(r) => r,
        }
    }

    /// A request on the snapshot connection.
    pub async fn snapshot(
        &mut self,
        req: tendermint::v0_38::abci::SnapshotRequest,
    ) -> tendermint::v0_38::abci::SnapshotResponse {
        self.snapshot
            .ready()
            .await
            .unwrap()
            .call(req)
            .await
            .expect("the snapshot service never errs")
    }

    pub async fn info(&mut self) -> response::Info {
        let req = InfoRequest::Info(request::Info {
            version: "0.38.26".into(),
            block_version: 11,
            p2p_version: 8,
            abci_version: "2.0.0".into(),
        });
        match self.info.ready().await.unwrap().call(req).await.unwrap() {
            InfoResponse::Info(r) => r,
            other => panic!("unexpected {other:?}"),
        }
    }

    pub async fn query(
        &mut self,
        path: &str,
        data: &[u8],
        height: u64,
        prove: bool,
    ) -> response::Query {
        let req = InfoRequest::Query(request::Query {
            data: Bytes::copy_from_slice(data),
            path: path.into(),
            height: height.try_into().unwrap(),
            prove,
        });
        match self.info.ready().await.unwrap().call(req).await.unwrap() {
            InfoResponse::Query(r) => r,
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// Genesis with default params and no accounts.
pub fn default_genesis() -> serde_json::Value {
    serde_json::json!({})
}

/// A whole-store fingerprint of the verifiable state (flat values), for
/// "nothing changed" assertions.
pub fn state_dump(store: &ChainStore) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut all = Vec::new();
    for prefix in [
        &b"accounts/"[..],
        b"kv",
        b"params/",
        b"validators/",
        b"validator_meta/",
        b"operator_keys/",
        b"groups/",
        b"group_applications/",
        b"group_meta/",
        b"takedowns/",
        b"flags/",
        b"uploads/",
        b"deks/",
        b"releases/",
        b"entitlements/",
        b"entitlement_owners/",
        b"policies/",
        b"grants/",
    ] {
        all.extend(store.prefix_list(prefix, None, usize::MAX).unwrap());
    }
    all
}

/// [`state_dump`] without `accounts/` (which a refused tx's nonce changes).
pub fn state_dump_but_accounts(store: &ChainStore) -> Vec<(Vec<u8>, Vec<u8>)> {
    state_dump(store)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(b"accounts/"))
        .collect()
}

/// Deletes every row of the index column family under `prefix` (empty:
/// all) in the closed store at `path`, behind the node's back, as a lost
/// or partly rebuilt index would be; returns how many there were.
pub fn wipe_index(path: &Path, prefix: &[u8]) -> usize {
    use stave::store::cf;
    let db = rocksdb::DB::open_cf(&rocksdb::Options::default(), path, cf::ALL).unwrap();
    let index = db.cf_handle(cf::INDEX).unwrap();
    let keys: Vec<Box<[u8]>> = db
        .prefix_iterator_cf(index, prefix)
        .map(|r| r.unwrap().0)
        .take_while(|k| k.starts_with(prefix))
        .collect();
    for k in &keys {
        db.delete_cf(index, k).unwrap();
    }
    db.flush_cf(index).unwrap();
    keys.len()
}
