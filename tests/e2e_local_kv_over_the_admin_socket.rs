//! Issue 26 item 1 on a real one-validator localnet (real `stave` and
//! `cometbft`): the node's private KV through the real CLI binary
//! (`stave local kv ...`) over the real admin socket, and the store it
//! writes (the real local RocksDB, read while the node is stopped).
//!
//! 1. set / get / list / remove, encrypted by default and plaintext by
//!    choice; the encrypted value is not in the store in the clear.
//! 2. The public client port does not serve `LocalKvService`.
//! 3. A corrupt row written while the node is down: `get` refuses it
//!    (DATA_LOSS), `list` marks it, `relinquish` refuses a healthy entry
//!    and removes the corrupt one, and the values survive the restart.
//!
//! Binaries and CI behaviour as in `e2e_localnet.rs`. Base port 17000.

mod common;

use std::process::Output;
use std::time::Duration;

use common::localnet::{binaries, Localnet, LocalnetConfig};
use stave::local::{keys, LocalRaw, LocalStore};
use stave::proto::local::local_kv_service_client::LocalKvServiceClient;
use stave::proto::local::LocalKvGetRequest;
use tonic::transport::Endpoint;

const WAIT: Duration = Duration::from_secs(90);
const BASE_PORT: u16 = 17000;

fn kv_in(net: &Localnet, context: &str, args: &[&str]) -> Output {
    let home = net.stave_home(0);
    std::process::Command::new(&net.stave_bin)
        .args(["--output", "json", "local", "kv"])
        .args(args)
        .args(["--home", home.to_str().unwrap(), "--context", context])
        .output()
        .unwrap()
}

fn kv(net: &Localnet, args: &[&str]) -> Output {
    kv_in(net, "ops", args)
}

fn kv_ok(net: &Localnet, args: &[&str]) -> serde_json::Value {
    let out = kv(net, args);
    assert!(
        out.status.success(),
        "stave local kv {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn kv_err(net: &Localnet, args: &[&str]) -> String {
    let out = kv(net, args);
    assert!(!out.status.success(), "stave local kv {args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

async fn wait_admin(net: &Localnet) {
    let socket = net.admin_socket(0);
    net.wait_for("the admin socket", WAIT, || {
        let socket = socket.clone();
        async move {
            let mut c = stave::client::admin_kv_client(&socket)
                .await
                .map_err(|e| format!("{e:#}"))?;
            let req = LocalKvGetRequest {
                context: "ops".into(),
                key: b"notice".to_vec(),
            };
            c.get(req).await.map_err(|e| e.to_string())
        }
    })
    .await;
}

fn set_get_list_remove(net: &Localnet) {
    let set = kv_ok(net, &["set", "notice", "maintenance at noon"]);
    assert_eq!(
        (set["replaced"].as_bool(), set["encrypted"].as_bool()),
        (Some(false), Some(true))
    );
    let got = kv_ok(net, &["get", "notice"]);
    assert_eq!(got["value"], "maintenance at noon");
    assert_eq!(got["encrypted"], true);
    let set = kv_ok(net, &["set", "notice", "moved to 1pm"]);
    assert_eq!(set["replaced"], true, "an update replaces the one entry");
    assert_eq!(kv_ok(net, &["get", "notice"])["value"], "moved to 1pm");
    kv_ok(net, &["set", "motd", "public words", "--plaintext"]);
    assert_eq!(kv_ok(net, &["get", "motd"])["encrypted"], false);
    kv_ok(net, &["set", "tmp", "x"]);
    let list = kv_ok(net, &["list", "--values"]);
    let keys: Vec<&str> = list["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["motd", "notice", "tmp"]);
    assert_eq!(list["entries"][1]["value"], "moved to 1pm");
    assert_eq!(kv_ok(net, &["remove", "tmp"])["removed"], true);
    assert!(kv_err(net, &["get", "tmp"]).contains("no entry"));
    let bad = kv_in(net, "a/b", &["get", "k"]);
    let msg = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && msg.contains("1 to 128 bytes"),
        "{msg}"
    );
}

async fn not_on_the_public_port(net: &Localnet) {
    let public = Endpoint::from_shared(net.grpc_url(0))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let s = LocalKvServiceClient::new(public)
        .get(LocalKvGetRequest {
            context: "ops".into(),
            key: b"notice".to_vec(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        s.code(),
        tonic::Code::Unimplemented,
        "LocalKvService on the public port: {s:?}"
    );
}

/// With the node stopped: the encrypted value is not in the clear, and a
/// corrupt row goes in beside the healthy ones.
fn corrupt_a_row_while_down(net: &Localnet) {
    net.stop(0);
    let local = LocalStore::open(&net.stave_home(0).join("data/local")).unwrap();
    let rows = local.scan_raw(&keys::kv_prefix("ops")).unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|(_, v)| !v.windows(6).any(|w| w == b"moved ")),
        "encrypted at rest"
    );
    assert!(
        rows.iter()
            .any(|(_, v)| v.windows(6).any(|w| w == b"public")),
        "plaintext by choice"
    );
    local
        .put_raw(&keys::kv("ops", b"broken"), b"\x08\xff\xff")
        .unwrap();
    drop(local);
    net.restart(0);
}

fn corrupt_rows_are_refused_and_relinquished(net: &Localnet) {
    let e = kv_err(net, &["get", "broken"]);
    assert!(e.contains("corrupt") && e.contains("relinquish"), "{e}");
    let list = kv_ok(net, &["list"]);
    let broken = &list["entries"][0];
    assert_eq!(broken["key"], "broken");
    assert!(
        broken["corrupt"].as_str().is_some_and(|c| !c.is_empty()),
        "{list}"
    );
    let e = kv_err(net, &["relinquish", "notice"]);
    assert!(e.contains("healthy"), "{e}");
    assert_eq!(kv_ok(net, &["relinquish", "broken"])["removed"], true);
    assert!(kv_err(net, &["get", "broken"]).contains("no entry"));
    assert_eq!(
        kv_ok(net, &["get", "notice"])["value"],
        "moved to 1pm",
        "values survive a restart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_local_kv_over_the_admin_socket() {
    let Some(bins) = binaries("e2e_local_kv_over_the_admin_socket") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(1, BASE_PORT));
    net.up();
    net.wait_stave_height(0, 2, WAIT).await;
    set_get_list_remove(&net);
    not_on_the_public_port(&net).await;
    corrupt_a_row_while_down(&net);
    wait_admin(&net).await;
    corrupt_rows_are_refused_and_relinquished(&net);
}
