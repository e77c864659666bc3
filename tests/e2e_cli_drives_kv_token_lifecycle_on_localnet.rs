//! End-to-end, through the `stave` CLI only, on a real 2-validator localnet
//! (base port 18000): `keys add`, `tx kv token create|update|delete` (the
//! update relayed by another key), `query kv tokens --tag … --mode any` and
//! `query kv history`, each read through the other node than the write;
//! then two `--no-wait` txs in a row, the second on the pending nonce.

mod common;

use std::time::Duration;

use common::localnet::{binaries, Localnet, LocalnetConfig};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(120);
const PID: &str = "[1,\"cli profile\"]";

struct Cli<'a> {
    net: &'a Localnet,
    keyring: String,
}

impl Cli<'_> {
    fn run(&self, what: &str, args: &[&str]) -> Value {
        let mut full = vec!["--output", "json"];
        full.extend_from_slice(args);
        let out = self.net.stave_cmd(&full);
        self.net.expect_success(what, &out);
        self.net.json_of(what, &out)
    }

    fn add_key(&self, name: &str) -> String {
        let r = self.run(
            &format!("keys add {name}"),
            &["keys", "add", name, "--keyring-dir", &self.keyring],
        );
        r["pubkey"].as_str().unwrap_or_default().to_string()
    }

    /// `stave tx kv token <op> <args>` through `node`, with `extra` flags.
    fn token(&self, op: &str, node: usize, args: &[&str], from: &str, extra: &[&str]) -> Value {
        let url = self.net.grpc_url(node);
        let mut full = vec!["tx", "kv", "token", op];
        full.extend_from_slice(args);
        full.extend_from_slice(&[
            "--protocol-id",
            PID,
            "--from",
            from,
            "--node",
            &url,
            "--keyring-dir",
            &self.keyring,
        ]);
        full.extend_from_slice(extra);
        self.run(&format!("stave tx kv token {op} via node{node}"), &full)
    }

    /// A token tx through `node`; returns its commit height.
    fn token_tx(&self, op: &str, node: usize, args: &[&str], from: &str) -> u64 {
        let what = format!("stave tx kv token {op} via node{node}");
        let r = self.token(op, node, args, from, &[]);
        if r["committed"] != true || r["code"] != 0 {
            self.net.fail(&format!("{what}: not committed: {r}"));
        }
        r["height"].as_u64().unwrap_or(0)
    }

    fn tokens(&self, node: usize, tags: &[&str], mode: &str) -> Vec<Value> {
        let url = self.net.grpc_url(node);
        let mut args = vec!["query", "kv", "tokens", "--mode", mode, "--node", &url];
        for t in tags {
            args.extend_from_slice(&["--tag", t]);
        }
        let r = self.run("stave query kv tokens", &args);
        r["tokens"].as_array().cloned().unwrap_or_default()
    }
}

fn values(ts: &[Value]) -> Vec<&str> {
    ts.iter()
        .map(|t| t["value"].as_str().unwrap_or("?"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cli_drives_a_token_lifecycle_and_its_queries() {
    let Some(bins) = binaries("cli_drives_a_token_lifecycle_and_its_queries") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(2, 18000));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let keyring = net.scratch.join("keyring");
    let cli = Cli {
        net: &net,
        keyring: keyring.to_str().expect("utf-8 path").to_string(),
    };
    let alice = cli.add_key("alice");
    cli.add_key("bob");
    assert_eq!(alice.len(), 64, "keys add printed no hex pubkey");

    // Create through node 0, read through node 1.
    let h = cli.token_tx(
        "create",
        0,
        &["name", "Ada", "--tag", "music", "--tag", "jazz"],
        "alice",
    );
    net.wait_stave_height(1, h, WAIT).await;
    let found = cli.tokens(1, &["jazz", "nothing"], "any");
    assert_eq!(values(&found), ["Ada"], "{found:?}");
    assert_eq!(found[0]["controller"], alice.as_str());
    assert_eq!(found[0]["generation"], 1);
    assert_eq!(cli.tokens(1, &["jazz", "nothing"], "all").len(), 0);

    // bob relays alice's update (alice's key signs the token).
    let h = cli.token_tx(
        "update",
        1,
        &["name", "Grace", "--tag", "rock", "--controller", "alice"],
        "bob",
    );
    net.wait_stave_height(0, h, WAIT).await;
    assert_eq!(values(&cli.tokens(0, &["rock"], "all")), ["Grace"]);
    assert!(
        cli.tokens(0, &["jazz"], "any").is_empty(),
        "old token still live"
    );

    // Delete through node 0; the history keeps both versions, in order.
    let h = cli.token_tx("delete", 0, &["name"], "alice");
    net.wait_stave_height(1, h, WAIT).await;
    assert!(
        cli.tokens(1, &["rock"], "any").is_empty(),
        "deleted token still live"
    );
    let url = net.grpc_url(1);
    let r = cli.run(
        "stave query kv history",
        &[
            "query",
            "kv",
            "history",
            "name",
            "--protocol-id",
            PID,
            "--controller",
            &alice,
            "--node",
            &url,
        ],
    );
    let history = r["history"].as_array().cloned().unwrap_or_default();
    assert_eq!(values(&history), ["Ada", "Grace"], "{r}");
    assert!(
        history.iter().all(|t| t["spent_height"].as_u64() > Some(0)),
        "every version is spent after the delete: {r}"
    );

    // Two txs back to back, neither waited for: the second asks node 0 for
    // alice's next nonce, which counts the first while it is pending.
    let queued = |name: &str| {
        let r = cli.token(
            "create",
            0,
            &[name, "v", "--tag", "queued"],
            "alice",
            &["--no-wait"],
        );
        assert_eq!(r["check_code"], 0, "{name}: {r}");
        r["nonce"].as_u64().unwrap_or(u64::MAX)
    };
    let (first, second) = (queued("q1"), queued("q2"));
    assert_eq!(second, first + 1, "the second tx signed the pending nonce");
    net.wait_for("both queued tokens on node 1", WAIT, || async {
        let live = cli.tokens(1, &["queued"], "any");
        match values(&live)[..] {
            ["v", "v"] => Ok(()),
            _ => Err(format!("{live:?}")),
        }
    })
    .await;
    text_output_is_for_people_and_json_stays_raw(&cli, &alice);
}

/// `query account` in text shows `created_at` as RFC 3339 and
/// `stored_bytes` in human units; JSON keeps Unix nanoseconds and bytes.
fn text_output_is_for_people_and_json_stays_raw(cli: &Cli, alice: &str) {
    let url = cli.net.grpc_url(1);
    let args = ["query", "account", alice, "--node", url.as_str()];
    let raw = cli.run("stave query account (json)", &args);
    let out = cli.net.stave_cmd(&args);
    let text = cli.net.expect_success("stave query account (text)", &out);
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}: ")))
            .unwrap_or_else(|| panic!("no {k} in:\n{text}"))
            .to_string()
    };
    let nanos = raw["created_at"].as_i64().unwrap_or_default();
    let shown = tendermint::Time::parse_from_rfc3339(&field("created_at"))
        .unwrap_or_else(|e| panic!("created_at is not RFC 3339 ({e}):\n{text}"));
    let unix = shown.unix_timestamp_nanos();
    assert!(nanos > 0 && unix == i128::from(nanos), "{unix} vs {raw}");
    let bytes = raw["stored_bytes"].as_u64().unwrap_or_default();
    let want = if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    };
    assert!(bytes < 1 << 20, "alice holds {bytes} bytes");
    assert_eq!(field("stored_bytes"), want, "{text}");
}
