//! The hardened network surface (issue 20 items 1-2; review M6, m6, m8) on
//! a real one-validator localnet (real `stave` and `cometbft`, real sockets).
//! Its genesis record names the peer address 127.0.0.2:P+2.
//!
//! 1. Three listeners: the admin socket exists with mode 0600 and serves
//!    `LocalService`; the public client port answers `LocalService` and
//!    `PeerService` with UNIMPLEMENTED; the ABCI socket has mode 0600.
//! 2. The peer allow-list: a peer call from 127.0.0.99 is closed at accept
//!    (and counted), the same call from 127.0.0.2 reaches the handler.
//! 3. m8: a lookup with a huge `skip` is refused with INVALID_ARGUMENT.
//! 4. M6: 5,000 idle TCP connections to the client port (from this process,
//!    its `RLIMIT_NOFILE` raised) with `client_max_connections = 500`: the
//!    node holds at most the cap (its descriptor count stays bounded), closes
//!    the rest at accept, keeps committing, and its peer listener and admin
//!    socket still serve a call.

mod common;

use std::net::IpAddr;
use std::time::Duration;

use common::localnet::{binaries, Localnet, LocalnetConfig, Proc};
use stave::local::peer_client::{signed_request, PeerTarget};
use stave::proto::kv::LookupRequest;
use stave::proto::local::local_service_client::LocalServiceClient;
use stave::proto::local::LocalStatusRequest;
use stave::proto::peer::peer_request::Body;
use stave::proto::peer::peer_service_client::PeerServiceClient;
use stave::proto::peer::FetchWrappedDek;
use tonic::transport::{Channel, Endpoint};

const WAIT: Duration = Duration::from_secs(90);
const BASE_PORT: u16 = 21000;
const IDLE_CONNECTIONS: usize = 5000;
const CAP: usize = 500;

fn operator_of(net: &Localnet, node: usize) -> [u8; 32] {
    let path = net.stave_home(node).join("config/genesis-fragment.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    hex::decode(v["operator_key"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap()
}

async fn peer_client(addr: &str, from: IpAddr) -> Result<PeerServiceClient<Channel>, String> {
    let ch = Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .local_address(Some(from))
        .connect_timeout(Duration::from_secs(3))
        .timeout(Duration::from_secs(5))
        .connect()
        .await
        .map_err(|e| format!("connect from {from}: {e}"))?;
    Ok(PeerServiceClient::new(ch))
}

/// A signed `FetchWrappedDek` from a fresh key (not a validator) to node 0,
/// sent from `from`: the handler's answer, or the transport's error.
async fn peer_call(net: &Localnet, from: IpAddr) -> Result<tonic::Status, String> {
    let target = PeerTarget {
        operator: operator_of(net, 0),
        address: net.peer_addr(0),
    };
    let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let body = Body::FetchWrappedDek(FetchWrappedDek { cid: vec![1; 36] });
    let req = signed_request(&key, &net.chain_id, &target, body);
    let mut c = peer_client(&target.address, from).await?;
    match c.fetch_wrapped_dek(req).await {
        Ok(r) => panic!("a non-validator got a DEK: {:?}", r.into_inner()),
        Err(s) => Ok(s),
    }
}

/// The handler answered (a refusal by the peer service itself).
fn assert_served(s: &tonic::Status, what: &str) {
    assert_eq!(s.code(), tonic::Code::PermissionDenied, "{what}: {s:?}");
    assert!(s.message().contains("PEER_NOT_VALIDATOR"), "{what}: {s:?}");
}

async fn admin_status(net: &Localnet) -> Result<u64, String> {
    let mut c = stave::client::admin_client(&net.admin_socket(0))
        .await
        .map_err(|e| format!("{e:#}"))?;
    c.status(LocalStatusRequest {})
        .await
        .map(|r| r.into_inner().last_reconcile_height)
        .map_err(|e| format!("admin Status: {e}"))
}

fn metric(text: &str, name_and_labels: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(name_and_labels))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

fn fd_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

async fn listeners_are_separate(net: &Localnet) {
    let mode = |p: &std::path::Path| stave::net::unix::mode(p).unwrap();
    assert_eq!(mode(&net.admin_socket(0)), 0o600, "admin socket mode");
    assert_eq!(
        mode(&net.stave_home(0).join("abci.sock")),
        0o600,
        "ABCI socket mode"
    );
    admin_status(net)
        .await
        .expect("the admin socket serves LocalService");

    let public = Endpoint::from_shared(net.grpc_url(0))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let s = LocalServiceClient::new(public.clone())
        .status(LocalStatusRequest {})
        .await
        .unwrap_err();
    assert_eq!(
        s.code(),
        tonic::Code::Unimplemented,
        "LocalService on the public port: {s:?}"
    );
    let target = PeerTarget {
        operator: operator_of(net, 0),
        address: net.grpc_url(0),
    };
    let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let req = signed_request(
        &key,
        &net.chain_id,
        &target,
        Body::FetchWrappedDek(FetchWrappedDek { cid: vec![1; 36] }),
    );
    let s = PeerServiceClient::new(public)
        .fetch_wrapped_dek(req)
        .await
        .unwrap_err();
    assert_eq!(
        s.code(),
        tonic::Code::Unimplemented,
        "PeerService on the public port: {s:?}"
    );
}

async fn allow_list_admits_validators_only(net: &Localnet) {
    let stranger: IpAddr = "127.0.0.99".parse().unwrap();
    match peer_call(net, stranger).await {
        Ok(s) if s.code() == tonic::Code::PermissionDenied => {
            panic!("a call from {stranger} reached the peer service: {s:?}")
        }
        Ok(_) | Err(_) => {}
    }
    let text = net.metrics(0).await.unwrap();
    let refused = metric(
        &text,
        r#"stave_listener_refused_total{listener="peer",reason="not_allowed"}"#,
    );
    assert!(refused >= 1.0, "the refusal is counted:\n{text}");
    let s = peer_call(net, net.peer_ip(0))
        .await
        .expect("the listed address connects");
    assert_served(&s, "from the listed address");
}

async fn huge_skip_is_refused(net: &Localnet) {
    let mut c = net.client(0).await;
    let s =
        c.kv.lookup(LookupRequest {
            controller: "anyone".into(),
            skip: u64::MAX,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(s.code(), tonic::Code::InvalidArgument, "{s:?}");
    assert!(s.message().contains("skip"), "{s:?}");
}

/// Sets node 0's client connection cap to [`CAP`], with per-IP connection
/// rates and caps high enough that the listener's cap decides.
fn cap_client_connections(net: &Localnet) {
    let path = net.stave_home(0).join("config/stave.toml");
    let mut c = stave::config::Config::load(&path).unwrap();
    c.limits.client_max_connections = CAP;
    c.limits.per_ip_connections_per_sec = 1_000_000;
    c.limits.per_ip_connection_burst = 1_000_000;
    c.limits.per_ip_max_connections = 1_000_000;
    c.save(&path).unwrap();
}

async fn idle_connections_leave_the_node_committing(net: &Localnet) {
    stave::net::rlimit::raise_nofile();
    let pid = net.pid(0, Proc::Stave).expect("stave runs");
    let baseline = fd_count(pid);
    let addr = format!("127.0.0.1:{}", net.port(0));
    let mut held = Vec::with_capacity(IDLE_CONNECTIONS);
    for _ in 0..IDLE_CONNECTIONS {
        match tokio::net::TcpStream::connect(&addr).await {
            Ok(s) => held.push(s),
            Err(e) => panic!("connection {} to {addr}: {e}", held.len()),
        }
    }
    let h = net.comet_height(0).await.unwrap();
    net.wait_comet_height(0, h + 3, WAIT).await;
    let during = fd_count(pid);
    assert!(
        during <= baseline + CAP + 64,
        "stave holds {during} descriptors with {IDLE_CONNECTIONS} connections open (baseline {baseline}, cap {CAP})"
    );
    let text = net.metrics(0).await.unwrap();
    let full = metric(
        &text,
        r#"stave_listener_refused_total{listener="client",reason="full"}"#,
    );
    eprintln!(
        "{IDLE_CONNECTIONS} idle connections, cap {CAP}: stave descriptors {baseline} before, {during} during; {full} closed at the cap"
    );
    assert!(
        full >= (IDLE_CONNECTIONS - CAP) as f64 * 0.9,
        "refusals at the cap: {full}\n{text}"
    );
    assert_served(
        &peer_call(net, net.peer_ip(0)).await.unwrap(),
        "peer during the flood",
    );
    admin_status(net).await.expect("admin during the flood");
    drop(held);
    let s = net.wait_stave_height(0, h + 4, WAIT).await;
    assert!(s.height > h, "Stave committed through the flood");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn listeners_are_separate_capped_and_allow_listed() {
    let Some(bins) = binaries("listeners_are_separate_capped_and_allow_listed") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(1, BASE_PORT));
    net.up();
    net.wait_stave_height(0, 2, WAIT).await;
    listeners_are_separate(&net).await;
    allow_list_admits_validators_only(&net).await;
    huge_skip_is_refused(&net).await;

    cap_client_connections(&net);
    net.restart(0);
    net.wait_stave_height(0, 3, WAIT).await;
    idle_connections_leave_the_node_committing(&net).await;
}
