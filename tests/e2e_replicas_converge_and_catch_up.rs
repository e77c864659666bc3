//! Issue 26 on a real 4-validator localnet (real `stave` and `cometbft`,
//! the real admin socket and peer listeners):
//!
//! 1. Each node writes to its replica; all four converge within a bounded
//!    time (same records, same root CRC, same merged reads).
//! 2. Node 2 is stopped while the others write 10,000 entries; started,
//!    it catches up through CRC_DIFF/SYNC. Bytes it exchanged ÷ bytes of
//!    the entries it took must be ≤ 3×; the ratio to a full copy of its
//!    records is printed too.
//! 3. A forged record sent to node 1 (a bad signature, and a record of a
//!    non-validator) is refused, counted, and spreads nowhere.
//!
//! The localnet uses the low proof-of-work base (genesis
//! `params.replica`, testnet/params.json) and 2 s rounds (testnet/testnet). Base port 24000. Adds about 20 s to CI (16 s in session 32).

mod common;
#[path = "common/replica.rs"]
mod replica;

use std::time::{Duration, Instant};

use common::localnet::{binaries, sample, Localnet, LocalnetConfig};
use stave::local::peer_auth::now_ms;
use stave::local::peer_client::{signed_request, PeerTarget};
use stave::proto::peer::peer_request::Body;
use stave::proto::peer::replica_service_client::ReplicaServiceClient;
use stave::proto::replica as pb;
use tonic::transport::Endpoint;

const WAIT: Duration = Duration::from_secs(120);
const BASE_PORT: u16 = 24000;
const ENTRIES: usize = 10_000;

async fn db(
    net: &Localnet,
    i: usize,
) -> pb::local_db_service_client::LocalDbServiceClient<tonic::transport::Channel> {
    stave::client::admin_db_client(&net.admin_socket(i))
        .await
        .unwrap()
}

fn op(db: &str, key: String, op: pb::db_op::Op) -> pb::DbOp {
    pb::DbOp {
        db: db.into(),
        key: key.into_bytes(),
        op: Some(op),
    }
}

async fn write(net: &Localnet, i: usize, ops: Vec<pb::DbOp>) {
    let n = ops.len();
    let r = db(net, i)
        .await
        .write(pb::DbWriteRequest { ops })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.results.len(), n);
    assert!(
        r.results.iter().all(|x| x.error.is_empty()),
        "{:?}",
        r.results
    );
}

async fn replicas(net: &Localnet, i: usize) -> Result<pb::ReplicasResponse, String> {
    let mut c = stave::client::admin_db_client(&net.admin_socket(i))
        .await
        .map_err(|e| e.to_string())?;
    c.replicas(pb::ReplicasRequest {})
        .await
        .map(|r| r.into_inner())
        .map_err(|e| e.to_string())
}

async fn get(net: &Localnet, i: usize, d: &str, key: &str) -> pb::DbGetResponse {
    db(net, i)
        .await
        .get(pb::DbGetRequest {
            db: d.into(),
            key: key.as_bytes().to_vec(),
        })
        .await
        .unwrap()
        .into_inner()
}

/// Waits until `nodes` hold the same records (count and root CRC), with at
/// least `min` of them; returns the count.
async fn converged(net: &Localnet, nodes: &[usize], min: u64) -> u64 {
    net.wait_for(&format!("nodes {nodes:?} to converge"), WAIT, || async {
        let (mut seen, mut peers) = (Vec::new(), Vec::new());
        for i in nodes {
            let r = replicas(net, *i).await?;
            seen.push((r.records, r.root_crc));
            // for a failure report: each peer's rounds, records kept, refusals, last error
            peers.push(
                r.peers
                    .iter()
                    .map(|p| {
                        let who = hex::encode(p.peer.get(..4).unwrap_or_default());
                        (
                            who,
                            p.rounds,
                            p.records_accepted,
                            p.refused,
                            p.last_error.clone(),
                        )
                    })
                    .collect::<Vec<_>>(),
            );
        }
        let same = seen.windows(2).all(|w| w[0] == w[1]);
        match seen.first() {
            Some((n, _)) if same && *n >= min => Ok(*n),
            _ => Err(format!(
                "{seen:?}; peers (rounds, kept, refused, last error): {peers:?}"
            )),
        }
    })
    .await
}

async fn each_node_writes_and_all_converge(net: &Localnet) {
    use pb::db_op::Op;
    let started = Instant::now();
    for i in 0..4 {
        write(
            net,
            i,
            vec![
                op(
                    "notes",
                    format!("hello/{i}"),
                    Op::Set(pb::DbSet {
                        value: format!("from node {i}").into_bytes(),
                        expire_at_ms: 0,
                    }),
                ),
                op(
                    "notes",
                    "members".into(),
                    Op::Sadd(pb::DbMembers {
                        members: vec![format!("node{i}").into_bytes()],
                    }),
                ),
                op(
                    "notes",
                    "visits".into(),
                    Op::Incr(pb::DbIncr {
                        amount: i as i64 + 1,
                    }),
                ),
            ],
        )
        .await;
    }
    converged(net, &[0, 1, 2, 3], 12).await;
    eprintln!(
        "four replicas converged in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    for i in 0..4 {
        let m = get(net, i, "notes", "members").await;
        let Some(pb::db_value::Kind::Set(s)) = m.value.and_then(|v| v.kind) else {
            panic!("members on node{i}")
        };
        assert_eq!(s.members.len(), 4, "node{i} sees every member");
        let c = get(net, i, "notes", "visits").await;
        assert_eq!(
            c.value.and_then(|v| v.kind),
            Some(pb::db_value::Kind::Counter("10".into())),
            "node{i}"
        );
        assert_eq!(c.owners.len(), 4, "node{i} merges every owner's counter");
    }
}

async fn a_stopped_node_catches_up(net: &Localnet) {
    use pb::db_op::Op;
    net.stop(2);
    let before = replicas(net, 0).await.unwrap().records;
    let writers = [(0usize, 4_000usize), (1, 3_000), (3, 3_000)];
    let mut k = 0;
    for (i, n) in writers {
        for chunk in 0..n / 1_000 {
            let ops = (0..1_000)
                .map(|j| {
                    let key = format!("bulk/{i}/{chunk}/{j:04}");
                    let value = format!("entry {k} {:>64}", j).into_bytes();
                    k += 1;
                    op(
                        "bulk",
                        key,
                        Op::Set(pb::DbSet {
                            value,
                            expire_at_ms: 0,
                        }),
                    )
                })
                .collect();
            write(net, i, ops).await;
        }
    }
    assert_eq!(k, ENTRIES);
    let total = converged(net, &[0, 1, 3], before + ENTRIES as u64).await;
    net.restart(2);
    let started = Instant::now();
    net.wait_for("node2's admin socket", WAIT, || async {
        replicas(net, 2).await
    })
    .await;
    converged(net, &[0, 2], total).await;
    let secs = started.elapsed().as_secs_f64();
    let r = replicas(net, 2).await.unwrap();
    let exchanged: u64 = r
        .peers
        .iter()
        .map(|p| p.bytes_sent + p.bytes_received)
        .sum();
    let changed: u64 = r.peers.iter().map(|p| p.bytes_accepted).sum();
    let taken: u64 = r.peers.iter().map(|p| p.records_accepted).sum();
    let ratio = exchanged as f64 / changed as f64;
    let to_full = exchanged as f64 / r.stored_bytes as f64;
    eprintln!(
        "node2 caught up in {secs:.1}s: took {taken} records ({changed} bytes), exchanged {exchanged} bytes: \
         {ratio:.2}x the changed entries, {to_full:.2}x a full copy ({} bytes, {} records)",
        r.stored_bytes, r.records
    );
    assert!(taken >= ENTRIES as u64, "{taken} records taken");
    assert!(ratio <= 3.0, "{ratio:.2}x the changed entries");
    let g = get(net, 2, "bulk", "bulk/3/2/0999").await;
    assert!(g.found, "node2 reads an entry written while it was down");
}

/// A record of `key`'s owner for ("ops", "forged"), signed (or not).
fn forged(key: &ed25519_dalek::SigningKey, chain: &str, sign: bool) -> pb::RecordMeta {
    replica::signed_record(key, chain, ("ops", b"forged"), now_ms(), 1, sign).0
}

async fn forged_records_spread_nowhere(net: &Localnet) {
    let v0 =
        stave::keyfile::load_ed25519(&stave::config::Home::new(net.stave_home(0)).operator_key())
            .unwrap();
    let stranger = ed25519_dalek::SigningKey::from_bytes(&[99; 32]);
    let v1 = operator_of(net, 1);
    let records = vec![
        forged(&v0, &net.chain_id, false),
        forged(&stranger, &net.chain_id, true),
    ];
    let target = PeerTarget {
        operator: v1,
        address: net.peer_addr(1),
    };
    let req = signed_request(
        &v0,
        &net.chain_id,
        &target,
        Body::ReplicaUpdate(pb::ReplicaUpdate { records }),
    );
    // From node 0's peer IP, which node 1's allow-list admits.
    let ch = Endpoint::from_shared(format!("http://{}", net.peer_addr(1)))
        .unwrap()
        .local_address(Some(net.peer_ip(0)))
        .connect()
        .await
        .unwrap();
    let before = sample(
        &net.metrics(1).await.unwrap(),
        "stave_replica_refused_total{reason=\"signature\"}",
    )
    .unwrap_or(0.0);
    let r = ReplicaServiceClient::new(ch)
        .update(req)
        .await
        .unwrap()
        .into_inner();
    assert_eq!((r.accepted, r.refused), (0, 2));
    let m = net.metrics(1).await.unwrap();
    assert_eq!(
        sample(&m, "stave_replica_refused_total{reason=\"signature\"}"),
        Some(before + 1.0)
    );
    assert!(
        sample(&m, "stave_replica_refused_total{reason=\"not_validator\"}").unwrap_or(0.0) >= 1.0
    );
    // Two rounds later, no node holds it.
    tokio::time::sleep(Duration::from_secs(5)).await;
    for i in 0..4 {
        let g = get(net, i, "ops", "forged").await;
        assert!(
            !g.found && g.owners.is_empty(),
            "node{i} holds the forged record"
        );
    }
}

/// Node `i`'s operator key, from the key file in its home.
fn operator_of(net: &Localnet, i: usize) -> [u8; 32] {
    let k =
        stave::keyfile::load_ed25519(&stave::config::Home::new(net.stave_home(i)).operator_key())
            .unwrap();
    k.verifying_key().to_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_replicas_converge_and_catch_up() {
    let Some(bins) = binaries("e2e_replicas_converge_and_catch_up") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, BASE_PORT));
    net.up();
    net.wait_stave_height(0, 2, WAIT).await;
    each_node_writes_and_all_converge(&net).await;
    a_stopped_node_catches_up(&net).await;
    forged_records_spread_nowhere(&net).await;
    net.wait_status_ok(WAIT).await;
}
