//! Verified reads on a real 4-validator localnet (base port 45000): the
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

/// A QueryService in front of a real node that forwards every call and,
/// per `mode`, tampers with Account answers.
struct Tamper {
    up: QueryServiceClient<tonic::transport::Channel>,
    mode: Arc<AtomicU8>,
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
        let mut a = self.up.clone().account(r.into_inner()).await?.into_inner();
        let mode = self.mode.load(Ordering::SeqCst);
        if mode == ANSWER {
            a.nonce += 1;
        }
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

async fn start_proxy(node_url: String, port: u16) -> (String, Arc<AtomicU8>) {
    let up = QueryServiceClient::connect(node_url)
        .await
        .expect("connect upstream");
    let mode = Arc::new(AtomicU8::new(HONEST));
    let svc = Tamper {
        up,
        mode: mode.clone(),
    };
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(QueryServiceServer::new(svc))
            .serve(addr),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    (format!("http://{addr}"), mode)
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
    let net = Localnet::new(&bins, LocalnetConfig::new(4, 45000));
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
    let (proxy, mode) = start_proxy(grpc1.clone(), 45900).await;
    let a = cli.ok("account via honest proxy", &cli.account_args(&proxy, &rpc1));
    assert_eq!(a["found"], true, "{a}");
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
    ] {
        mode.store(m, Ordering::SeqCst);
        let err = cli.fails(what, &cli.account_args(&proxy, &rpc1));
        assert!(
            err.contains("verification failed") && err.contains(needle),
            "{what}: {err}"
        );
    }
    mode.store(HONEST, Ordering::SeqCst);

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
    assert!(err.contains("trusting period"), "{err}");
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
