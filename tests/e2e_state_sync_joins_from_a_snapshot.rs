//! State sync on a real localnet (`timeout_commit` 200 ms): four validators
//! take a snapshot every 100 heights while four writers send mixed txs (kv
//! sets, KV tokens with tags, kvdb sorted-set members) for 1,000 blocks. A
//! 5th node added with `testnet add-node --state-sync` discovers the
//! snapshots; then every snapshot server's Stave is stalled (SIGSTOP), so
//! the chunk request times out (`chunk_request_timeout`) and CometBFT asks
//! again; the servers resume. The new node is killed mid-restore (its
//! restore waits 3 s per chunk, a fault-drill setting), restarts, and
//! completes. It really state-synced: CometBFT's earliest block is H+1,
//! Stave's earliest version is H, and its metrics show no FinalizeBlock at
//! or below H. Txs sent through it commit, its Stave app hash matches the
//! others' headers at sampled later heights (CometBFT on it checks every
//! block's), its queries answer as node 0's do, indexes included, and every
//! node agrees at the end.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::localnet::*;
use ed25519_dalek::SigningKey;
use serde_json::json;
use stave::client::StaveClient;
use stave::keyspaces::kv::{KvSet, KvdbAction, KvdbOp};
use stave::proto::kv::{KvdbRequest, LookupRequest};
use stave::proto::tx::BroadcastAndWaitRequest;
use stave::tx::{build::sign_tx, Action};

const BASE_PORT: u16 = 29000;
const TARGET: u64 = 1_000;
const PID: &str = "[1,\"state sync\"]";
const NEW: usize = 4;
const WRITERS: u8 = 4;

fn writer_key(w: u8) -> SigningKey {
    SigningKey::from_bytes(&[0x50 + w; 32])
}

/// Action `n` of writer `w`: a kv set, a tagged KV token, or a sorted-set
/// member, in turn.
fn action(key: &SigningKey, chain: &str, w: u8, n: u64) -> Action {
    match n % 3 {
        0 => Action::KvSet(KvSet {
            key: format!("k{n}").into_bytes(),
            value: format!("writer {w} nonce {n}").into_bytes(),
        }),
        1 => {
            let tag = if n.is_multiple_of(2) { "red" } else { "blue" };
            let tags = stave::keyspaces::kv::token::client::tags_json(&[tag]);
            let t = format!("t{n}");
            Action::KvTokenCreate(stave::keyspaces::kv::token::client::create(
                key, chain, PID, &t, b"token", &tags, 1,
            ))
        }
        _ => Action::Kvdb(KvdbAction {
            db: "scores".into(),
            key: b"z".to_vec(),
            op: KvdbOp::ZAdd {
                member: format!("m{n}").into_bytes(),
                score: (n as i64 - 500).to_string(),
            },
        }),
    }
}

/// Sends writer `w`'s txs one at a time through `url`, from nonce `from`,
/// until `stop` or nonce `until`; returns the next nonce.
async fn writer(
    url: String,
    chain: String,
    w: u8,
    (from, until): (u64, u64),
    stop: Arc<AtomicBool>,
) -> Result<u64, String> {
    let key = writer_key(w);
    let mut c = StaveClient::connect(&url)
        .await
        .map_err(|e| format!("{e:#}"))?;
    let mut n = from;
    while !stop.load(Ordering::SeqCst) && n < until {
        let tx = sign_tx(&key, &chain, n, vec![action(&key, &chain, w, n)], "");
        let r =
            c.tx.broadcast_and_wait(BroadcastAndWaitRequest { tx, timeout_ms: 0 })
                .await
                .map_err(|e| format!("writer {w} nonce {n}: {e}"))?
                .into_inner();
        if !r.committed || r.code != 0 {
            return Err(format!("writer {w} nonce {n}: {r:?}"));
        }
        n += 1;
    }
    Ok(n)
}

fn snapshot_heights(net: &Localnet, node: usize) -> Vec<u64> {
    let dir = net.stave_home(node).join("data/snapshots");
    let mut hs: Vec<u64> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    hs.sort_unstable();
    hs
}

/// What a client reads from `node`: writer kv entries, tokens by tag
/// (index), and the sorted set by score (index).
async fn reads(net: &Localnet, node: usize) -> Result<String, String> {
    let mut c = StaveClient::connect(&net.grpc_url(node))
        .await
        .map_err(|e| format!("{e:#}"))?;
    let mut out = String::new();
    for w in 0..WRITERS {
        let pk = writer_key(w).verifying_key().to_bytes();
        let kv = Localnet::kv_list_all(&mut c, &pk).await?;
        out += &format!(
            "writer {w}: {} kv entries, last {:?}\n",
            kv.len(),
            kv.last()
        );
        let z =
            c.kv.kvdb(KvdbRequest {
                op: "ZRANGE".into(),
                owner: pk.to_vec(),
                db: "scores".into(),
                key: b"z".to_vec(),
                limit: 1000,
                ..Default::default()
            })
            .await
            .map_err(|e| format!("ZRANGE: {e}"))?
            .into_inner();
        let z = stave::proto::kv::KvdbResponse { height: 0, ..z };
        out += &format!("zrange: {z:?}\n");
    }
    for tag in ["red", "blue"] {
        let r =
            c.kv.lookup(LookupRequest {
                protocol_id: PID.into(),
                tags: vec![tag.into()],
                limit: 1000,
                ..Default::default()
            })
            .await
            .map_err(|e| format!("Lookup: {e}"))?
            .into_inner();
        if r.tokens.is_empty() {
            return Err(format!("node{node}: no token tagged {tag}"));
        }
        // The read height differs between nodes as blocks go on.
        let r = stave::proto::kv::LookupResponse { height: 0, ..r };
        out += &format!("lookup {tag}: {r:?}\n");
    }
    Ok(out)
}

/// Sends SIGSTOP or SIGCONT to a process.
fn signal(pid: u32, sig: &str) {
    let _ = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status();
}

/// Processes stopped with SIGSTOP, continued when dropped (so a failed
/// wait cannot leave them stopped).
struct Stalled(Vec<u32>);

impl Stalled {
    fn stop(pids: Vec<u32>) -> Self {
        pids.iter().for_each(|p| signal(*p, "-STOP"));
        Stalled(pids)
    }
}

impl Drop for Stalled {
    fn drop(&mut self) {
        self.0.iter().for_each(|p| signal(*p, "-CONT"));
    }
}

/// Lines of node `node`'s CometBFT log that fetch chunk 0.
fn chunk0_fetches(net: &Localnet, node: usize) -> usize {
    std::fs::read_to_string(net.log_path(node, "cometbft"))
        .map(|s| {
            s.lines()
                .filter(|l| l.contains("Fetching snapshot chunk") && l.contains("chunk=0"))
                .count()
        })
        .unwrap_or(0)
}

/// Runs every writer through node `w` (node `through` when given) from the
/// nonces in `next`, up to `until` more each or until `stop`.
fn spawn_writers(
    net: &Localnet,
    next: &[u64],
    until: u64,
    through: Option<usize>,
    stop: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<Result<u64, String>>> {
    (0..WRITERS)
        .map(|w| {
            let from = next[w as usize];
            tokio::spawn(writer(
                net.grpc_url(through.unwrap_or(w as usize)),
                net.chain_id.clone(),
                w,
                (from, from + until),
                stop.clone(),
            ))
        })
        .collect()
}

async fn join_writers(
    net: &Localnet,
    ws: Vec<tokio::task::JoinHandle<Result<u64, String>>>,
) -> Vec<u64> {
    let mut next = Vec::new();
    for w in ws {
        next.push(w.await.unwrap().unwrap_or_else(|e| net.fail(&e)));
    }
    next
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifth_node_state_syncs_is_killed_mid_restore_and_joins() {
    let Some(bins) = binaries("a_fifth_node_state_syncs_is_killed_mid_restore_and_joins") else {
        return;
    };
    let mut cfg = LocalnetConfig::new(4, BASE_PORT);
    cfg.timeout_commit = "200ms".into();
    let mut net = Localnet::new(&bins, cfg);
    net.up();

    // 1. 1,000 blocks of mixed txs from four writers, one per node.
    let stop = Arc::new(AtomicBool::new(false));
    let writers = spawn_writers(&net, &[0; WRITERS as usize], 10_000, None, &stop);
    net.wait_comet_height(0, TARGET, Duration::from_secs(900))
        .await;
    let net_ref = &net;
    let snap = net
        .wait_for(
            "a snapshot at or above 1000 on node0 and node1",
            Duration::from_secs(120),
            || async move {
                let (a, b) = (snapshot_heights(net_ref, 0), snapshot_heights(net_ref, 1));
                match (a.last(), b.last()) {
                    (Some(x), Some(y)) if *x >= TARGET && *y >= TARGET => Ok(*x.min(y)),
                    _ => Err(format!("node0 {a:?}, node1 {b:?}")),
                }
            },
        )
        .await;
    stop.store(true, Ordering::SeqCst);
    let next = join_writers(&net, writers).await;
    eprintln!("snapshot {snap} on node0 and node1; {next:?} txs per writer committed");

    // 2. The 5th node discovers snapshots; every server's Stave stalls.
    let child = net.script_spawn(
        &["add-node", "--state-sync"],
        &[
            ("STAVE_FAULT_RESTORE_DELAY_MS", "3000"),
            ("STAVE_UP_TIMEOUT", "300"),
        ],
    );
    net.wait_for(
        "node4 to discover a snapshot",
        Duration::from_secs(120),
        || async move {
            match net_ref.count_in_log(NEW, "cometbft", "Discovered new snapshot") {
                0 => Err("not yet".to_string()),
                _ => Ok(()),
            }
        },
    )
    .await;
    let servers: Vec<u32> = (0..4).filter_map(|i| net.pid(i, Proc::Stave)).collect();
    assert_eq!(servers.len(), 4, "every server's Stave runs");
    let stalled = Stalled::stop(servers);
    let refetched = net
        .wait_for(
            "the request for chunk 0 to time out and be sent again",
            Duration::from_secs(90),
            || async move {
                match chunk0_fetches(net_ref, NEW) {
                    n if n >= 2 => Ok(n),
                    n => Err(format!("{n} fetches of chunk 0 so far")),
                }
            },
        )
        .await;
    eprintln!("stalled servers: chunk 0 fetched {refetched} times");

    // 3. While no chunk can arrive, the 5th node is killed mid-restore (its
    // offer accepted); the servers resume; it restarts and completes.
    assert!(
        net.count_in_log(NEW, "stave", "restoring from snapshot") >= 1,
        "the offer was accepted before the kill:\n{}",
        net.log_tail(NEW, "stave", 40)
    );
    net.kill(NEW, Proc::Stave);
    drop(stalled);
    eprintln!("killed node4's stave mid-restore; servers resumed");
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    if !out.status.success() {
        net.fail(&format!(
            "add-node --state-sync failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    net.nodes = 5;
    assert!(
        net.count_in_log(NEW, "stave", "restore was cut short; wiping it") >= 1,
        "the restart found and wiped the partial restore:\n{}",
        net.log_tail(NEW, "stave", 40)
    );

    // 4. It really state-synced.
    let m = net.metrics(NEW).await.unwrap_or_else(|e| net.fail(&e));
    let restored = sample(&m, "stave_restored_height").unwrap_or(0.0) as u64;
    let first = sample(&m, "stave_first_finalized_height").unwrap_or(0.0) as u64;
    assert!(restored >= TARGET, "restored height {restored}");
    assert!(
        first > restored,
        "FinalizeBlock ran at {first}, restored {restored}"
    );
    let status = net
        .comet(NEW)
        .raw("status", json!({}))
        .await
        .unwrap_or_else(|e| net.fail(&format!("{e:#}")));
    let earliest: u64 = status["sync_info"]["earliest_block_height"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    assert_eq!(earliest, restored + 1, "CometBFT's earliest block");
    let s = net.stave_status(NEW).await.unwrap_or_else(|e| net.fail(&e));
    assert_eq!(s.earliest_height, restored, "Stave's earliest version");

    // 5. Txs through it commit; its app hash matches node 0's headers.
    let stop = Arc::new(AtomicBool::new(false));
    let writers = spawn_writers(&net, &next, 15, Some(NEW), &stop);
    for _ in 0..5 {
        let s = net.stave_status(NEW).await.unwrap_or_else(|e| net.fail(&e));
        net.wait_comet_height(0, s.height + 1, Duration::from_secs(60))
            .await;
        let header = net
            .block_app_hash(0, s.height + 1)
            .await
            .unwrap_or_else(|e| net.fail(&e));
        assert!(
            header.eq_ignore_ascii_case(&s.app_hash),
            "node4 Stave at {} has {}, node0's header {}",
            s.height,
            s.app_hash,
            header
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let after = join_writers(&net, writers).await;
    assert!(
        after.iter().zip(&next).all(|(a, b)| *a == b + 15),
        "{after:?} after {next:?}"
    );
    let common = net.assert_app_hashes_agree(Duration::from_secs(60)).await;
    net.wait_stave_height(NEW, common, Duration::from_secs(60))
        .await;
    net.wait_stave_height(0, common, Duration::from_secs(60))
        .await;
    let (a, b) = (reads(&net, 0).await, reads(&net, NEW).await);
    let (a, b) = (
        a.unwrap_or_else(|e| net.fail(&e)),
        b.unwrap_or_else(|e| net.fail(&e)),
    );
    assert!(a.contains("lookup red") && a.len() > 1000, "{a}");
    assert_eq!(a, b, "node4 reads differ from node0's");
}
