//! Verified reads on a real 4-validator localnet (base port 25000): the
//! `stave` CLI's `--verify` checks reads through node 1 against headers its
//! light client verifies from a trust root, and fails when a proxy between
//! client and node tampers with the answer; the library checks ABCI proofs
//! at past heights (existence and non-existence) against real headers.

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use common::localnet::{binaries, Localnet, LocalnetConfig};
use serde_json::{json, Value};
use stave::proto::proof::{ProvenEntry, ReadProof};
use stave::proto::query as q;
use stave::proto::query::query_service_client::QueryServiceClient;
use stave::proto::query::query_service_server::{QueryService, QueryServiceServer};
use tonic::{Request, Response, Status};

const WAIT: Duration = Duration::from_secs(120);
const PID: &str = "[1,\"verified reads\"]";

/// How the proxy tampers with Account answers.
const HONEST: u8 = 0;
const VALUE: u8 = 1;
const OTHER_KEY: u8 = 2;
const ANSWER: u8 = 3;
/// A valid proof, of another key (an account nobody holds).
const SWAP: u8 = 4;
/// The first honest answer, replayed.
const REPLAY: u8 = 5;

/// A QueryService in front of a real node that forwards every call and,
/// per `mode`, tampers with Account answers.
struct Tamper {
    up: QueryServiceClient<tonic::transport::Channel>,
    mode: Arc<AtomicU8>,
    first: Arc<std::sync::Mutex<Option<q::AccountResponse>>>,
}

fn tamper_entry(e: &mut ProvenEntry, mode: u8) {
    match mode {
        VALUE => {
            if let Some(b) = e.value.last_mut() {
                *b ^= 1;
            }
        }
        OTHER_KEY => {
            if let Some(b) = e.key.last_mut() {
                *b ^= 1;
            }
        }
        _ => {}
    }
}

#[tonic::async_trait]
impl QueryService for Tamper {
    async fn status(
        &self,
        r: Request<q::StatusRequest>,
    ) -> Result<Response<q::StatusResponse>, Status> {
        self.up.clone().status(r.into_inner()).await
    }
    async fn account(
        &self,
        r: Request<q::AccountRequest>,
    ) -> Result<Response<q::AccountResponse>, Status> {
        let req = r.into_inner();
        let mut a = self.up.clone().account(req.clone()).await?.into_inner();
        let mode = self.mode.load(Ordering::SeqCst);
        let first = self.first.lock().expect("lock").clone();
        match mode {
            ANSWER => a.nonce += 1,
            SWAP => {
                // The other account's proof at the answer's own height (a
                // block may commit between the two reads: read again).
                let other = q::AccountRequest {
                    pubkey: vec![0x5a; 32],
                    prove: true,
                };
                for _ in 0..20 {
                    let o = self.up.clone().account(other.clone()).await?.into_inner();
                    if o.height == a.height {
                        a.proof = o.proof;
                        break;
                    }
                    a = self.up.clone().account(req.clone()).await?.into_inner();
                }
            }
            REPLAY => {
                if let Some(old) = first {
                    a = old;
                }
            }
            _ => {}
        }
        self.first
            .lock()
            .expect("lock")
            .get_or_insert_with(|| a.clone());
        if let Some(p) = a.proof.as_mut() {
            for e in p.entries.iter_mut().filter(|e| e.exists) {
                tamper_entry(e, mode);
            }
        }
        Ok(Response::new(a))
    }
    async fn kv_get(
        &self,
        r: Request<q::KvGetRequest>,
    ) -> Result<Response<q::KvGetResponse>, Status> {
        self.up.clone().kv_get(r.into_inner()).await
    }
    async fn kv_list(
        &self,
        r: Request<q::KvListRequest>,
    ) -> Result<Response<q::KvListResponse>, Status> {
        self.up.clone().kv_list(r.into_inner()).await
    }
}

async fn start_proxy(node_url: String) -> (String, Arc<AtomicU8>) {
    let up = QueryServiceClient::connect(node_url)
        .await
        .expect("connect upstream");
    let mode = Arc::new(AtomicU8::new(HONEST));
    let svc = Tamper {
        up,
        mode: mode.clone(),
        first: Arc::default(),
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("bind grpc proxy");
    let addr: SocketAddr = listener.local_addr().expect("proxy address");
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(QueryServiceServer::new(svc))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    (format!("http://{addr}"), mode)
}

/// How the RPC proxy tampers with `/commit` answers above the trust root.
const RPC_HONEST: u8 = 0;
/// Every commit signature but the first made absent: 1 of 4 equal powers.
const RPC_FEW_SIGNERS: u8 = 1;
/// The header names another chain.
const RPC_OTHER_CHAIN: u8 = 2;

/// Tampers one `/commit` answer (JSON) per `mode`.
fn tamper_commit(body: &mut Value, mode: u8) {
    let sh = &mut body["result"]["signed_header"];
    match mode {
        RPC_FEW_SIGNERS => {
            if let Some(sigs) = sh["commit"]["signatures"].as_array_mut() {
                for s in sigs.iter_mut().skip(1) {
                    *s = json!({"block_id_flag": 1, "validator_address": "",
                        "timestamp": "0001-01-01T00:00:00Z", "signature": null});
                }
            }
        }
        RPC_OTHER_CHAIN => sh["header"]["chain_id"] = json!("another-chain"),
        _ => {}
    }
}

/// The height a request names (`?height=N`), if any.
fn asked_height(path: &str) -> Option<u64> {
    let q = path.split_once('?')?.1;
    q.split('&')
        .find_map(|kv| kv.strip_prefix("height="))
        .and_then(|h| h.trim_matches('"').parse().ok())
}

/// Answers one HTTP request on `sock` from `upstream`, tampering with
/// `/commit` above `root` per `mode`.
async fn serve_rpc(mut sock: tokio::net::TcpStream, upstream: String, root: u64, mode: u8) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 65536 {
        match sock.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let Ok(resp) = reqwest::get(format!("{upstream}{path}")).await else {
        return;
    };
    let mut text = resp.text().await.unwrap_or_default();
    let tamper = path.starts_with("/commit") && asked_height(&path).is_some_and(|h| h > root);
    if tamper && mode != RPC_HONEST {
        if let Ok(mut v) = serde_json::from_str::<Value>(&text) {
            tamper_commit(&mut v, mode);
            text = v.to_string();
        }
    }
    let out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = sock.write_all(out.as_bytes()).await;
    let _ = sock.shutdown().await;
}

/// A CometBFT RPC proxy in front of `upstream` on `port`.
async fn start_rpc_proxy(upstream: String, root: u64) -> (String, Arc<AtomicU8>) {
    let mode = Arc::new(AtomicU8::new(RPC_HONEST));
    let l = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("bind rpc proxy");
    let port = l.local_addr().expect("proxy address").port();
    let m = mode.clone();
    tokio::spawn(async move {
        while let Ok((sock, _)) = l.accept().await {
            tokio::spawn(serve_rpc(
                sock,
                upstream.clone(),
                root,
                m.load(Ordering::SeqCst),
            ));
        }
    });
    (format!("http://127.0.0.1:{port}"), mode)
}

struct Cli<'a> {
    net: &'a Localnet,
    keyring: String,
    trust: String,
}

impl Cli<'_> {
    fn raw(&self, args: &[&str]) -> std::process::Output {
        let mut full = vec!["--output", "json"];
        full.extend_from_slice(args);
        self.net.stave_cmd(&full)
    }
    fn ok(&self, what: &str, args: &[&str]) -> Value {
        let out = self.raw(args);
        self.net.expect_success(what, &out);
        self.net.json_of(what, &out)
    }
    /// Runs a command that must fail; returns its stderr.
    fn fails(&self, what: &str, args: &[&str]) -> String {
        let out = self.raw(args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if out.status.success() {
            self.net.fail(&format!(
                "{what}: succeeded, should have failed:\n{}",
                String::from_utf8_lossy(&out.stdout)
            ));
        }
        err
    }
    fn token_tx(&self, op: &str, args: &[&str]) -> u64 {
        let url = self.net.grpc_url(0);
        let mut full = vec!["tx", "kv", "token", op];
        full.extend_from_slice(args);
        full.extend_from_slice(&[
            "--protocol-id",
            PID,
            "--from",
            "alice",
            "--node",
            &url,
            "--keyring-dir",
            &self.keyring,
        ]);
        let r = self.ok(&format!("tx kv token {op}"), &full);
        assert!(r["committed"] == true && r["code"] == 0, "{op}: {r}");
        r["height"].as_u64().unwrap_or(0)
    }
    /// `stave query account alice --verify` through `node_url`.
    fn account_args<'b>(&'b self, node_url: &'b str, rpc: &'b str) -> Vec<&'b str> {
        vec![
            "query",
            "account",
            "alice",
            "--verify",
            "--node",
            node_url,
            "--rpc",
            rpc,
            "--trust-file",
            &self.trust,
            "--keyring-dir",
            &self.keyring,
        ]
    }
}

/// `abci_query /store` of `key` at `height` with its proof, as a ReadProof.
async fn abci_proof(net: &Localnet, key: &[u8], height: u64) -> ReadProof {
    let r = net
        .comet(1)
        .raw(
            "abci_query",
            json!({"path": "/store", "data": hex::encode(key), "height": height.to_string(), "prove": true}),
        )
        .await
        .expect("abci_query");
    let resp = &r["response"];
    let b64 = |v: &Value| {
        base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap_or(""))
            .expect("base64")
    };
    let value = b64(&resp["value"]);
    let proof = b64(&resp["proofOps"]["ops"][0]["data"]);
    assert_eq!(
        resp["height"].as_str(),
        Some(height.to_string().as_str()),
        "{r}"
    );
    ReadProof {
        height,
        entries: vec![ProvenEntry {
            key: key.to_vec(),
            exists: !value.is_empty(),
            value,
            proof,
            ..Default::default()
        }],
        index_rows: vec![],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn verified_reads_hold_against_headers_and_catch_a_tampering_proxy() {
    let Some(bins) = binaries("verified_reads_hold_against_headers_and_catch_a_tampering_proxy")
    else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, 25000));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 2, WAIT).await;
    }
    let scratch = net.scratch.to_str().expect("utf-8").to_string();
    let cli = Cli {
        net: &net,
        keyring: format!("{scratch}/keyring"),
        trust: format!("{scratch}/trust.json"),
    };
    let alice = cli.ok(
        "keys add",
        &["keys", "add", "alice", "--keyring-dir", &cli.keyring],
    );
    let alice: [u8; 32] = hex::decode(alice["pubkey"].as_str().unwrap_or(""))
        .expect("hex")
        .try_into()
        .expect("32 bytes");
    let rpc0 = net.rpc_url(0);
    let (rpc1, grpc1) = (net.rpc_url(1), net.grpc_url(1));

    // The trust root: node 0's header at height 2, before alice exists.
    let init = cli.ok(
        "light init",
        &[
            "light",
            "init",
            "--rpc",
            &rpc0,
            "--height",
            "2",
            "--trust-file",
            &cli.trust,
        ],
    );
    assert_eq!(init["height"], 2, "{init}");
    let h_create = cli.token_tx("create", &["name", "Ada", "--tag", "jazz"]);
    let h_update = cli.token_tx("update", &["name", "Grace", "--tag", "jazz"]);
    net.wait_stave_height(1, h_update, WAIT).await;

    // Token lookup through node 1: proven, replayed, signature rebuilt.
    let t = cli.ok(
        "query kv tokens --verify",
        &[
            "query",
            "kv",
            "tokens",
            "--key",
            "name",
            "--verify",
            "--node",
            &grpc1,
            "--rpc",
            &rpc1,
            "--trust-file",
            &cli.trust,
        ],
    );
    let tokens = t["tokens"].as_array().cloned().unwrap_or_default();
    assert_eq!(tokens.len(), 1, "{t}");
    assert_eq!(tokens[0]["value"], "Grace");
    assert_eq!(tokens[0]["op"], 2, "an update names its op: {t}");
    assert_eq!(
        tokens[0]["replaces"].as_str().map(str::len),
        Some(64),
        "{t}"
    );
    assert!(
        t["verified"]["proven_keys"].as_u64().unwrap_or(0) >= 2,
        "{t}"
    );
    assert!(
        t["verified"]["height"].as_u64().unwrap_or(0) >= h_update,
        "{t}"
    );

    // Account through an honest proxy: verified.
    let (proxy, mode) = start_proxy(grpc1.clone()).await;
    let a = cli.ok("account via honest proxy", &cli.account_args(&proxy, &rpc1));
    assert_eq!(a["found"], true, "{a}");
    // next_nonce counts the node's mempool: shown as unverified only.
    assert!(a.get("next_nonce").is_none(), "{a}");
    assert!(a["unverified"]["next_nonce"].is_u64(), "{a}");
    assert_eq!(a["verified"]["chain_id"], net.chain_id.as_str(), "{a}");

    // Each tampering is caught, with its own message.
    for (m, what, needle) in [
        (VALUE, "a tampered value", "does not hold against app hash"),
        (
            OTHER_KEY,
            "a proof for another key",
            "does not hold against app hash",
        ),
        (
            ANSWER,
            "an answer the proof does not give",
            "differs from the answer the proven values give",
        ),
        (
            SWAP,
            "a valid proof of another key",
            "the proof does not cover state key",
        ),
    ] {
        mode.store(m, Ordering::SeqCst);
        let err = cli.fails(what, &cli.account_args(&proxy, &rpc1));
        assert!(
            err.contains("verification failed") && err.contains(needle),
            "{what}: {err}"
        );
    }
    // The first honest answer, replayed once its block is old, is refused
    // as stale (and accepted under a looser bound).
    mode.store(REPLAY, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut args = cli.account_args(&proxy, &rpc1);
    args.extend_from_slice(&["--max-age-secs", "3"]);
    let err = cli.fails("a replayed answer", &args);
    assert!(
        err.contains("verification failed") && err.contains("old; at most 3 s"),
        "{err}"
    );
    let mut args = cli.account_args(&proxy, &rpc1);
    args.extend_from_slice(&["--max-age-secs", "3600"]);
    cli.ok("a replayed answer under a one-hour bound", &args);
    mode.store(HONEST, Ordering::SeqCst);

    // Headers from a tampering RPC: signed by a quarter of the power, or
    // naming another chain. The same read through an honest pass of the
    // proxy verifies.
    let (rpc_proxy, rpc_mode) = start_rpc_proxy(rpc1.clone(), 2).await;
    cli.ok(
        "account via the honest RPC proxy",
        &cli.account_args(&grpc1, &rpc_proxy),
    );
    for (m, what, needles) in [
        (
            RPC_FEW_SIGNERS,
            "a header signed by a quarter of the power",
            &["from trusted height", "needed more than"][..],
        ),
        (
            RPC_OTHER_CHAIN,
            "a header from another chain",
            &["chain id mismatch"][..],
        ),
    ] {
        rpc_mode.store(m, Ordering::SeqCst);
        let err = cli.fails(what, &cli.account_args(&grpc1, &rpc_proxy));
        assert!(
            err.contains("verification failed: light client")
                && needles.iter().any(|n| err.contains(n)),
            "{what}: {err}"
        );
    }
    rpc_mode.store(RPC_HONEST, Ordering::SeqCst);

    // A root outside its trusting period is refused.
    let root_hash = init["hash"].as_str().unwrap_or("").to_string();
    let mut args = cli.account_args(&grpc1, &rpc1);
    args.extend_from_slice(&[
        "--trust-height",
        "2",
        "--trust-hash",
        &root_hash,
        "--trusting-period-hours",
        "0",
    ]);
    let err = cli.fails("an expired trust root", &args);
    assert!(err.contains("is outside the trusting period"), "{err}");
    // A trust hash that is not the chain's header at that height is refused.
    let wrong = "00".repeat(32);
    let mut args = cli.account_args(&grpc1, &rpc1);
    args.extend_from_slice(&["--trust-height", "2", "--trust-hash", &wrong]);
    let err = cli.fails("a wrong trust hash", &args);
    assert!(err.contains("hashes to"), "{err}");

    // Past heights through the library: alice's account is absent at
    // height 2 and present at h_create, each proven against the app hash in
    // the verified header one above; and a proof never holds at another height.
    let file = stave::light::TrustFile::load(std::path::Path::new(&cli.trust)).expect("trust file");
    let light = stave::light::LightClient::new(&rpc1, file.root().expect("root"), file.options())
        .expect("light client");
    let key = stave::keyspaces::accounts::account_key(&alice);
    let app_hash = |h: u64| {
        let light = &light;
        async move {
            let hdr = light.verified_header(h + 1).await.expect("verified header");
            hdr.app_hash.as_bytes().to_vec()
        }
    };
    let absent = abci_proof(&net, &key, 2).await;
    assert!(!absent.entries[0].exists);
    stave::proof::check_entries(&absent, &app_hash(2).await, None).expect("non-existence at 2");
    let present = abci_proof(&net, &key, h_create).await;
    assert!(present.entries[0].exists);
    stave::proof::check_entries(&present, &app_hash(h_create).await, None)
        .expect("existence at the create height");
    let err = stave::proof::check_entries(&present, &app_hash(2).await, None)
        .expect_err("a proof of h_create at height 2");
    assert!(err.to_string().contains("does not hold"), "{err}");
    net.down();
}
