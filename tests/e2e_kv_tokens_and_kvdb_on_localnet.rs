//! End-to-end on a real 4-validator localnet (base port 15000): a KV
//! token's full lifecycle through gRPC (relayed, across all nodes), the same
//! tag query answer on every node, the full history, and a kvdb hash and
//! counter whose TTL expires at the first block whose time reaches it.

mod common;

use std::time::{Duration, Instant};

use common::localnet::{binaries, Localnet, LocalnetConfig};
use ed25519_dalek::SigningKey;
use stave::keyspaces::kv::token::client;
use stave::keyspaces::kv::{KvdbAction, KvdbOp};
use stave::proto::kv::{HistoryRequest, KvdbRequest, LookupRequest, TupleRequest};
use stave::proto::tx::BroadcastAndWaitRequest;
use stave::tx::{build::sign_tx, Action};

const WAIT: Duration = Duration::from_secs(120);
const PID: &str = "[1,\"e2e profile\"]";

struct Sender {
    key: SigningKey,
    nonce: u64,
}

/// Sends one tx through `node`'s BroadcastAndWait; returns the commit height.
async fn send(net: &Localnet, node: usize, s: &mut Sender, actions: Vec<Action>) -> u64 {
    let tx = sign_tx(&s.key, &net.chain_id, s.nonce, actions, "");
    let mut c = net.client(node).await;
    let r = match c
        .tx
        .broadcast_and_wait(BroadcastAndWaitRequest {
            tx,
            timeout_ms: 60_000,
        })
        .await
    {
        Ok(r) => r.into_inner(),
        Err(e) => net.fail(&format!("node{node}: BroadcastAndWait: {e}")),
    };
    if !r.committed || r.code != 0 {
        net.fail(&format!("node{node}: tx not committed ok: {r:?}"));
    }
    s.nonce += 1;
    // The next step reads through another node: let every node commit first.
    for i in 0..net.nodes {
        net.wait_stave_height(i, r.height, WAIT).await;
    }
    r.height
}

async fn live_id(net: &Localnet, node: usize, key: &str, ctl: &str) -> [u8; 32] {
    let mut c = net.client(node).await;
    let r =
        c.kv.tuple(TupleRequest {
            protocol_id: PID.into(),
            key: key.into(),
            controller: ctl.into(),
        })
        .await
        .expect("Tuple")
        .into_inner();
    r.live
        .expect("a live token")
        .token_id
        .try_into()
        .expect("32 bytes")
}

/// Block time of `height` in unix ms, from node 0's CometBFT (waiting for
/// it to have the block: the height may come from a node that is ahead).
async fn block_ms(net: &Localnet, height: u64) -> i64 {
    let what = format!("node0's CometBFT to serve block {height}");
    let r = net
        .wait_for(&what, WAIT, || async {
            net.comet(0)
                .raw("block", serde_json::json!({ "height": height.to_string() }))
                .await
                .map_err(|e| e.to_string())
        })
        .await;
    let t = r["block"]["header"]["time"].as_str().expect("header.time");
    let t = tendermint::Time::parse_from_rfc3339(t).expect("rfc3339");
    (t.unix_timestamp_nanos() / 1_000_000) as i64
}

fn kvdb(db: &str, key: &str, op: KvdbOp) -> Action {
    Action::Kvdb(KvdbAction {
        db: db.into(),
        key: key.as_bytes().to_vec(),
        op,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kv_tokens_and_kvdb_on_a_real_localnet() {
    let Some(bins) = binaries("kv_tokens_and_kvdb_on_a_real_localnet") else {
        return;
    };
    let started = Instant::now();
    let net = Localnet::new(&bins, LocalnetConfig::new(4, 15000));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let ctl_key = SigningKey::generate(&mut rand::thread_rng());
    let ctl = client::controller_hex(&ctl_key);
    let mut relayer = Sender {
        key: SigningKey::generate(&mut rand::thread_rng()),
        nonce: 0,
    };
    let chain = net.chain_id.clone();
    let tags = client::tags_json(&["e2e", "music"]);

    // Lifecycle through gRPC, each step through another node, relayed.
    let c = client::create(&ctl_key, &chain, PID, "name", b"v1", &tags, 1);
    send(&net, 0, &mut relayer, vec![Action::KvTokenCreate(c)]).await;
    let id1 = live_id(&net, 1, "name", &ctl).await;
    let u = client::update(&ctl_key, &chain, PID, "name", b"v2", &tags, 2, id1);
    send(&net, 1, &mut relayer, vec![Action::KvTokenUpdate(u)]).await;
    let id2 = live_id(&net, 2, "name", &ctl).await;
    let d = client::delete(&ctl_key, &chain, PID, "name", 3, id2);
    send(&net, 2, &mut relayer, vec![Action::KvTokenDelete(d)]).await;
    let c = client::create(
        &ctl_key,
        &chain,
        PID,
        "name",
        b"v4",
        &client::tags_json(&["e2e"]),
        4,
    );
    let c2 = client::create(
        &ctl_key,
        &chain,
        PID,
        "other",
        b"o1",
        &client::tags_json(&["music"]),
        1,
    );
    let h = send(
        &net,
        3,
        &mut relayer,
        vec![Action::KvTokenCreate(c), Action::KvTokenCreate(c2)],
    )
    .await;
    for i in 0..net.nodes {
        net.wait_stave_height(i, h, WAIT).await;
    }

    // Same tag query answer on every node; history complete everywhere.
    let mut answers = Vec::new();
    for i in 0..net.nodes {
        let mut cl = net.client(i).await;
        let q = LookupRequest {
            tags: vec!["e2e".into(), "music".into()],
            tag_query_mode: "any".into(),
            ..Default::default()
        };
        let r = cl.kv.lookup(q).await.expect("Lookup").into_inner();
        let vals: Vec<(Vec<u8>, Vec<u8>)> = r
            .tokens
            .iter()
            .map(|t| (t.token_id.clone(), t.token.clone().unwrap().value))
            .collect();
        answers.push(vals);
        let hist = cl
            .kv
            .history(HistoryRequest {
                protocol_id: PID.into(),
                key: "name".into(),
                controller: ctl.clone(),
                from: 0,
                limit: 0,
            })
            .await
            .expect("History")
            .into_inner();
        let hv: Vec<Vec<u8>> = hist
            .tokens
            .iter()
            .map(|t| t.token.clone().unwrap().value)
            .collect();
        assert_eq!(
            hv,
            vec![b"v1".to_vec(), b"v2".to_vec(), b"v4".to_vec()],
            "node{i}: history"
        );
    }
    assert!(
        answers.iter().all(|a| *a == answers[0]),
        "tag query differs between nodes: {answers:?}"
    );
    let values: Vec<&[u8]> = answers[0].iter().map(|(_, v)| v.as_slice()).collect();
    assert_eq!(values, vec![&b"v4"[..], &b"o1"[..]]);

    // kvdb: a hash and a counter, both with a 3 s TTL.
    let mut owner = Sender {
        key: SigningKey::generate(&mut rand::thread_rng()),
        nonce: 0,
    };
    let ops = vec![
        kvdb(
            "app",
            "h",
            KvdbOp::HSet {
                field: b"f1".to_vec(),
                value: b"a".to_vec(),
            },
        ),
        kvdb(
            "app",
            "h",
            KvdbOp::HSet {
                field: b"f2".to_vec(),
                value: b"b".to_vec(),
            },
        ),
        kvdb("app", "h", KvdbOp::Expire { ttl_ms: 3000 }),
        kvdb("app", "c", KvdbOp::IncrBy(41)),
        kvdb("app", "c", KvdbOp::IncrBy(1)),
        kvdb("app", "c", KvdbOp::Expire { ttl_ms: 3000 }),
    ];
    let h0 = send(&net, 0, &mut owner, ops).await;
    let expire = block_ms(&net, h0).await + 3000;
    let owner_pk = owner.key.verifying_key().to_bytes().to_vec();
    let deadline = Instant::now() + WAIT;
    let mut seen_present = [false; 4];
    let mut seen_absent = [false; 4];
    while seen_absent.iter().any(|a| !a) {
        assert!(Instant::now() < deadline, "kvdb entries never expired");
        for i in 0..net.nodes {
            let mut cl = net.client(i).await;
            let req = |op: &str, key: &str| KvdbRequest {
                op: op.into(),
                owner: owner_pk.clone(),
                db: "app".into(),
                key: key.as_bytes().to_vec(),
                ..Default::default()
            };
            let hl = cl
                .kv
                .kvdb(req("HLEN", "h"))
                .await
                .expect("HLEN")
                .into_inner();
            let cg = cl.kv.kvdb(req("GET", "c")).await.expect("GET").into_inner();
            if hl.height != cg.height {
                continue; // a commit landed between the two reads
            }
            let t = block_ms(&net, hl.height).await;
            if t < expire {
                assert_eq!(
                    (hl.number, cg.value.as_slice()),
                    (2, &b"42"[..]),
                    "node{i} at height {}: present before expiry",
                    hl.height
                );
                seen_present[i] = true;
            } else {
                assert_eq!(
                    (hl.number, cg.found),
                    (0, false),
                    "node{i} at height {}: absent from the expiry block on",
                    hl.height
                );
                seen_absent[i] = true;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        seen_present.iter().any(|p| *p),
        "never saw the entries before expiry"
    );
    eprintln!("kv e2e passed in {:.1}s", started.elapsed().as_secs_f64());
}
