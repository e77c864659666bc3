//! In-process validators for replication tests: each with its own chain
//! store (one genesis naming every validator's loopback address), local
//! store, `ReplicaService` on a real loopback socket, and a `Syncer`
//! driven by the test. No CometBFT.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use stave::local::LocalStore;
use stave::proto::peer::replica_service_server::{ReplicaService, ReplicaServiceServer};
use stave::replica::db::{DbOp, Op};
use stave::replica::sync::Syncer;
use stave::replica::{Replica, ReplicaConfig, Validators};

#[path = "local.rs"]
pub mod local;

pub struct Node {
    pub replica: Arc<Replica>,
    pub syncer: Syncer,
    pub addr: SocketAddr,
}

impl Node {
    pub fn ctx(&self) -> (String, Validators) {
        (
            self.replica.chain_id().unwrap(),
            self.replica.validators().unwrap(),
        )
    }

    /// One round with every peer.
    pub async fn round(&self) {
        let (c, v) = self.ctx();
        self.syncer.rounds(&c, &v).await;
    }

    /// Pushes queued UPDATEs and pulls the values of accepted ones.
    pub async fn step(&self) {
        let (c, v) = self.ctx();
        self.syncer.push(&c, &v).await;
        self.syncer.pull_wanted(&c, &v).await;
    }

    pub fn write(&self, ops: &[DbOp]) -> usize {
        self.replica.write(ops).unwrap().1
    }
}

pub fn op(db: &str, key: &str, op: Op) -> DbOp {
    DbOp {
        db: db.into(),
        key: key.as_bytes().to_vec(),
        op,
    }
}

pub fn config() -> ReplicaConfig {
    ReplicaConfig::default()
}

/// The horizon of the test chains (genesis `params.replica`, the default).
pub fn horizon_ms() -> u64 {
    stave::replica::params::ReplicaParams::default().horizon_ms()
}

/// Serves `svc` as `ReplicaService` on `listener` in the background.
pub fn serve<S: ReplicaService>(listener: std::net::TcpListener, svc: S) {
    listener.set_nonblocking(true).unwrap();
    let l = tokio::net::TcpListener::from_std(listener).unwrap();
    // TCP_NODELAY, as the node's own listeners set it: without it every
    // small answer waits out a delayed ACK (about 40 ms).
    let incoming =
        tokio_stream::StreamExt::map(tokio_stream::wrappers::TcpListenerStream::new(l), |s| {
            s.inspect(|s| {
                let _ = s.set_nodelay(true);
            })
        });
    tokio::spawn(async move {
        let _ = tonic::transport::Server::builder()
            .add_service(ReplicaServiceServer::new(svc))
            .serve_with_incoming(incoming)
            .await;
    });
}

/// `n` validators; `real(i)` false leaves validator i's listener to the
/// test (returned in `spare`). `cfg(i)` sets each node's config.
pub fn cluster_with(
    dir: &Path,
    n: usize,
    real: impl Fn(usize) -> bool,
    cfg: impl Fn(usize) -> ReplicaConfig,
) -> (Vec<Node>, Vec<(usize, std::net::TcpListener)>) {
    let listeners: Vec<_> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let addrs: Vec<SocketAddr> = listeners.iter().map(|l| l.local_addr().unwrap()).collect();
    let state = local::app_state(&addrs);
    let mut nodes = Vec::new();
    let mut spare = Vec::new();
    for (i, l) in listeners.into_iter().enumerate() {
        let d = dir.join(format!("node{i}"));
        let chain = local::chain_at_genesis(&d, &state, n);
        let store = LocalStore::open(&d.join("local")).unwrap();
        let replica = Replica::open(store, chain, local::operator(i), cfg(i)).unwrap();
        if real(i) {
            serve(
                l,
                stave::grpc::replica::ReplicaServiceImpl::new(replica.clone()),
            );
        } else {
            spare.push((i, l));
        }
        nodes.push(Node {
            syncer: Syncer::new(replica.clone()),
            replica,
            addr: addrs[i],
        });
    }
    (nodes, spare)
}

pub fn cluster(dir: &Path, n: usize) -> Vec<Node> {
    cluster_with(dir, n, |_| true, |_| config()).0
}

/// A record of `key`'s owner for (`db`, `k`) holding one SET at `ts`,
/// with work for `base` and, if `sign`, signed for `chain`: the wire form,
/// the value and the datakey. Tests spoil parts of it.
pub fn signed_record(
    key: &ed25519_dalek::SigningKey,
    chain: &str,
    (db, k): (&str, &[u8]),
    ts: u64,
    base: u64,
    sign: bool,
) -> (stave::proto::replica::RecordMeta, Vec<u8>, [u8; 32]) {
    let owner = key.verifying_key().to_bytes();
    let mut e = stave::crdt::Entry::default();
    e.set(stave::crdt::Stamp::new(ts, owner), b"forged".to_vec(), None);
    signed_entry(key, chain, (db, k), e, ts, base, sign)
}

/// A record of `entry` stamped `ts`, with work at `base`, signed by `key`
/// when `sign`.
pub fn signed_entry(
    key: &ed25519_dalek::SigningKey,
    chain: &str,
    (db, k): (&str, &[u8]),
    entry: stave::crdt::Entry,
    ts: u64,
    base: u64,
    sign: bool,
) -> (stave::proto::replica::RecordMeta, Vec<u8>, [u8; 32]) {
    use sha2::Digest;
    use stave::replica::md::{Metadata, FLAG_PLAIN};
    let owner = key.verifying_key().to_bytes();
    let v = stave::replica::codec::RecordValue {
        owner,
        db: db.into(),
        key: k.to_vec(),
        entry,
    };
    let value = v.encode();
    let dk = v.datakey();
    let mut md = Metadata {
        ts,
        flags: FLAG_PLAIN,
        size: value.len() as u32,
        hash: sha2::Sha256::digest(&value).into(),
        sig: [7; 64],
        ttl_begin: ts,
        ttl: 7,
        pow_nonce: 0,
    };
    assert!(stave::replica::pow::solve(&mut md, base, 0, 10_000_000));
    if sign {
        md.sign(key, chain, &dk);
    }
    let meta = stave::proto::replica::RecordMeta {
        owner: owner.to_vec(),
        datakey: dk.to_vec(),
        metadata: md.to_bytes().to_vec(),
    };
    (meta, value, dk)
}

/// A metric's value from the node's registry (0 when absent).
pub fn metric(name: &str, label: &str) -> u64 {
    let families = stave::metrics::metrics().registry.gather();
    families
        .iter()
        .filter(|f| f.get_name() == name)
        .flat_map(|f| f.get_metric())
        .filter(|m| label.is_empty() || m.get_label().iter().any(|l| l.get_value() == label))
        .map(|m| m.get_counter().get_value() as u64)
        .sum()
}
