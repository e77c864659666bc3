//! A real Stave + CometBFT network on 127.0.0.1, driven through
//! `testnet/testnet` (the same script people use by hand), for end-to-end
//! tests.
//!
//! - [`binaries`] finds `STAVE_BIN` and `COMETBFT_BIN`. With `CI=true` a
//!   missing binary fails the test; otherwise the test prints a notice and
//!   returns early.
//! - [`Localnet::new`] prepares a private network directory (a tempdir) and
//!   a private copy of the stave binary; [`Localnet::up`] starts the nodes.
//!   Dropping a `Localnet` always runs `testnet destroy`, also on panic
//!   (set `STAVE_E2E_LOG_DIR` to keep the node logs).
//! - Every wait is bounded and, on timeout, panics with the tail of every
//!   node's logs ([`Localnet::fail`]).
//!
//! Ports: node `i` uses `P = base_port + 10*i`: gRPC `P`, metrics `P+1`,
//! peer gRPC `127.0.0.(i+2):P+2` (its own loopback IP, named in genesis),
//! CometBFT p2p `P+6`, CometBFT RPC `P+7`; its admin socket is
//! `<stave home>/admin.sock`. Give every test its own base port
//! and tests can run in parallel. Every port lies below the kernel's
//! ephemeral range (`ip_local_port_range`, 32768 by default): a port inside
//! it can be held at any moment by some outgoing connection's local end
//! (or its TIME_WAIT), and the node then fails to bind it.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stave::client::{CometRpc, StaveClient};
use stave::proto::query::{
    AccountRequest, KvGetRequest, KvListRequest, StatusRequest, StatusResponse,
};

/// The value of the series `name` (with its labels, if any, as exposed) in
/// Prometheus text.
pub fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// How often wait loops poll.
pub const POLL: Duration = Duration::from_millis(200);

/// The binaries an end-to-end test runs.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub stave: PathBuf,
    pub cometbft: PathBuf,
}

/// True when the environment says this is CI (`CI=true` or `CI=1`).
pub fn in_ci() -> bool {
    std::env::var("CI")
        .map(|v| v.eq_ignore_ascii_case("true") || v == "1")
        .unwrap_or(false)
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn home_dir() -> PathBuf {
    PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The `stave` binary cargo built for this very test run (so a stale
/// binary is never tested); `STAVE_BIN` overrides it.
pub fn stave_bin_path() -> PathBuf {
    if let Some(p) = non_empty_env("STAVE_BIN") {
        let p = PathBuf::from(p);
        if p != Path::new(env!("CARGO_BIN_EXE_stave")) && is_executable(&p) {
            return p;
        }
    }
    PathBuf::from(env!("CARGO_BIN_EXE_stave"))
}

/// `COMETBFT_BIN`, else `cometbft` on PATH, else `$HOME/go/bin/cometbft`.
pub fn cometbft_bin_path() -> PathBuf {
    if let Some(p) = non_empty_env("COMETBFT_BIN") {
        return PathBuf::from(p);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let c = dir.join("cometbft");
            if is_executable(&c) {
                return c;
            }
        }
    }
    home_dir().join("go/bin/cometbft")
}

/// The binaries, or `None` (after a notice) when one is missing outside CI.
/// Under `CI=true` a missing binary panics: CI must never skip these tests.
pub fn binaries(test: &str) -> Option<Binaries> {
    let bins = Binaries {
        stave: stave_bin_path(),
        cometbft: cometbft_bin_path(),
    };
    let mut missing = Vec::new();
    if !is_executable(&bins.stave) {
        missing.push(format!(
            "stave binary {} (set STAVE_BIN, or run `cargo build --release --bin stave`)",
            bins.stave.display()
        ));
    }
    if !is_executable(&bins.cometbft) {
        missing.push(format!(
            "cometbft binary {} (set COMETBFT_BIN, or run scripts/install-cometbft.sh)",
            bins.cometbft.display()
        ));
    }
    if missing.is_empty() {
        return Some(bins);
    }
    let msg = format!("{test}: missing {}", missing.join("; "));
    if in_ci() {
        panic!("{msg}. CI=true: end-to-end tests must run, not skip");
    }
    eprintln!("NOTICE: skipping {msg} (outside CI a missing binary skips the test)");
    None
}

/// Removes ANSI escape sequences (`ESC [ ... letter`), so logs read cleanly
/// in a failure message.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The repository root (where `testnet/testnet` lives).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One of a node's two processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proc {
    Stave,
    Cometbft,
}

impl Proc {
    pub fn as_str(self) -> &'static str {
        match self {
            Proc::Stave => "stave",
            Proc::Cometbft => "cometbft",
        }
    }
}

/// Settings of a new network.
#[derive(Debug, Clone)]
pub struct LocalnetConfig {
    pub nodes: usize,
    /// First port; node i uses base_port + 10*i .. +8. Unique per test.
    pub base_port: u16,
    pub chain_id: String,
    /// CometBFT `consensus.timeout_commit`.
    pub timeout_commit: String,
    /// Seconds `testnet up` waits for block 1 on every node.
    pub up_timeout_secs: u64,
    /// More `testnet/testnet` settings (`STAVE_TAKEDOWN_RETENTION`, ...).
    pub env: Vec<(String, String)>,
}

impl LocalnetConfig {
    pub fn new(nodes: usize, base_port: u16) -> Self {
        assert_below_ephemeral(base_port, base_port as u32 + 10 * nodes as u32);
        LocalnetConfig {
            nodes,
            base_port,
            chain_id: format!("stave-e2e-{base_port}"),
            timeout_commit: "500ms".into(),
            up_timeout_secs: 120,
            env: Vec::new(),
        }
    }
}

/// Panics unless `first..=last` lies below the kernel's ephemeral port range,
/// where no outgoing connection can be holding one of them.
pub fn assert_below_ephemeral(first: u16, last: u32) {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .unwrap_or_else(|e| panic!("reading the ephemeral port range: {e}"));
    let low: u32 = range
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("unreadable ip_local_port_range {range:?}"));
    assert!(
        last < low,
        "test ports {first}..={last} reach the ephemeral range starting at {low}: \
         an outgoing connection may hold them; pick ports below {low}"
    );
}

/// A localnet in a private directory. Dropping it destroys the network.
pub struct Localnet {
    pub nodes: usize,
    pub base_port: u16,
    pub chain_id: String,
    /// `STAVE_TESTNET_HOME`.
    pub home: PathBuf,
    /// The private copy of the stave binary every process of this network runs.
    pub stave_bin: PathBuf,
    pub cometbft_bin: PathBuf,
    /// A scratch directory for the test (keyrings, ...), removed with the network.
    pub scratch: PathBuf,
    bin_dir: PathBuf,
    script: PathBuf,
    timeout_commit: String,
    up_timeout_secs: u64,
    env: Vec<(String, String)>,
    /// Set once [`Localnet::fail`] printed the logs, so the drop guard does not repeat them.
    reported: std::sync::atomic::AtomicBool,
    _tmp: tempfile::TempDir,
}

impl Localnet {
    /// Prepares the network directory; starts nothing. Create the `Localnet`
    /// before [`Localnet::up`] so that its drop guard covers a failed start.
    ///
    /// The stave binary is copied into the tempdir and passed as
    /// `STAVE_BIN`: `testnet up` rebuilds when `STAVE_BIN` is cargo's own
    /// output path (and `cargo test` holds the target-dir lock), and a
    /// private copy cannot change under the network if someone rebuilds.
    pub fn new(bins: &Binaries, cfg: LocalnetConfig) -> Self {
        assert!(cfg.nodes >= 1, "a network needs at least one node");
        let tmp = tempfile::Builder::new()
            .prefix("stave-e2e-")
            .tempdir()
            .expect("creating the test's tempdir");
        let bin_dir = tmp.path().join("bin");
        let scratch = tmp.path().join("scratch");
        std::fs::create_dir_all(&bin_dir).expect("creating bin dir");
        std::fs::create_dir_all(&scratch).expect("creating scratch dir");
        let stave_bin = bin_dir.join("stave");
        std::fs::copy(&bins.stave, &stave_bin).unwrap_or_else(|e| {
            panic!(
                "copying {} to {}: {e}",
                bins.stave.display(),
                stave_bin.display()
            )
        });
        // testnet/testnet finds CometBFT through scripts/install-cometbft.sh,
        // which looks on PATH first: put the chosen binary first on PATH.
        let comet_link = bin_dir.join("cometbft");
        std::os::unix::fs::symlink(&bins.cometbft, &comet_link).unwrap_or_else(|e| {
            panic!(
                "linking {} to {}: {e}",
                bins.cometbft.display(),
                comet_link.display()
            )
        });
        Localnet {
            nodes: cfg.nodes,
            base_port: cfg.base_port,
            chain_id: cfg.chain_id,
            home: tmp.path().join("net"),
            stave_bin,
            cometbft_bin: bins.cometbft.clone(),
            scratch,
            bin_dir,
            script: repo_root().join("testnet/testnet"),
            timeout_commit: cfg.timeout_commit,
            up_timeout_secs: cfg.up_timeout_secs,
            env: cfg.env,
            reported: std::sync::atomic::AtomicBool::new(false),
            _tmp: tmp,
        }
    }

    // ---------------------------------------------------------------------
    // The script

    fn script_command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("bash");
        c.arg(&self.script).args(args);
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.bin_dir.clone()];
        dirs.extend(std::env::split_paths(&path));
        c.env("PATH", std::env::join_paths(dirs).expect("PATH"))
            .env("STAVE_TESTNET_HOME", &self.home)
            .env("STAVE_BASE_PORT", self.base_port.to_string())
            .env("STAVE_NODES", self.nodes.to_string())
            .env("STAVE_CHAIN_ID", &self.chain_id)
            .env("STAVE_BIN", &self.stave_bin)
            .env("COMETBFT_BIN", &self.cometbft_bin)
            .env("STAVE_TIMEOUT_COMMIT", &self.timeout_commit)
            .env("STAVE_UP_TIMEOUT", self.up_timeout_secs.to_string())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        c
    }

    /// Starts `testnet/testnet ARGS` with `envs` added, output piped; the
    /// caller waits for it.
    pub fn script_spawn(&self, args: &[&str], envs: &[(&str, &str)]) -> std::process::Child {
        let mut c = self.script_command(args);
        c.envs(envs.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c.spawn()
            .unwrap_or_else(|e| panic!("running {} {args:?}: {e}", self.script.display()))
    }

    /// Runs `testnet/testnet ARGS` and returns its output, whatever the exit status.
    pub fn script(&self, args: &[&str]) -> Output {
        self.script_command(args)
            .output()
            .unwrap_or_else(|e| panic!("running {} {args:?}: {e}", self.script.display()))
    }

    /// Runs `testnet/testnet ARGS`; fails the test (with logs) unless it exits 0.
    pub fn script_ok(&self, args: &[&str]) -> String {
        let out = self.script(args);
        if !out.status.success() {
            self.fail(&format!(
                "`testnet/testnet {}` failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `testnet up N`: creates and starts the network; returns when every node
    /// has committed block 1 (the script's own bounded wait).
    pub fn up(&self) {
        let n = self.nodes.to_string();
        self.script_ok(&["up", &n]);
    }

    /// `testnet down`: stops every process, keeps the data.
    pub fn down(&self) {
        self.script_ok(&["down"]);
    }

    /// `testnet kill NODE PROC`: SIGKILL; the supervisor restarts the pair.
    pub fn kill(&self, node: usize, what: Proc) {
        self.script_ok(&["kill", &node.to_string(), what.as_str()]);
    }

    /// `testnet stop NODE`: stops the node's supervisor and pair; nothing
    /// restarts them until [`Localnet::restart`].
    pub fn stop(&self, node: usize) {
        self.script_ok(&["stop", &node.to_string()]);
    }

    /// `testnet restart NODE` (starts a supervisor if none runs).
    pub fn restart(&self, node: usize) {
        self.script_ok(&["restart", &node.to_string()]);
    }

    /// `testnet status`: (exit code, stdout).
    pub fn status(&self) -> (i32, String) {
        let out = self.script(&["status"]);
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// Polls `testnet status` until it exits 0 (every node up, app hashes
    /// identical at the lowest common height). Exit 1 (hashes differ) fails at once.
    pub async fn wait_status_ok(&self, timeout: Duration) -> String {
        let net = self;
        self.wait_for("`testnet status` to exit 0", timeout, move || async move {
            let (code, out) = net.status();
            match code {
                0 => Ok(out),
                1 => net.fail(&format!(
                    "`testnet status` reports DIFFERENT app hashes:\n{out}"
                )),
                c => Err(format!("exit {c}:\n{out}")),
            }
        })
        .await
    }

    // ---------------------------------------------------------------------
    // Layout

    pub fn port(&self, node: usize) -> u16 {
        self.base_port + 10 * node as u16
    }
    pub fn grpc_url(&self, node: usize) -> String {
        format!("http://127.0.0.1:{}", self.port(node))
    }
    /// The loopback IP of node's peer listener (and of its peer calls).
    pub fn peer_ip(&self, node: usize) -> std::net::IpAddr {
        std::net::Ipv4Addr::new(127, 0, 0, 2 + node as u8).into()
    }
    /// `host:port` of node's peer listener, as its validator record names it.
    pub fn peer_addr(&self, node: usize) -> String {
        format!("{}:{}", self.peer_ip(node), self.port(node) + 2)
    }
    /// Node's admin socket (`LocalService`).
    pub fn admin_socket(&self, node: usize) -> PathBuf {
        self.stave_home(node).join("admin.sock")
    }
    pub fn rpc_url(&self, node: usize) -> String {
        format!("http://127.0.0.1:{}", self.port(node) + 7)
    }

    /// Node `node`'s Prometheus text from its metrics endpoint.
    pub async fn metrics(&self, node: usize) -> Result<String, String> {
        let url = format!("http://127.0.0.1:{}/metrics", self.port(node) + 1);
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(5))
            .build()
            .map_err(|e| format!("{url}: {e}"))?;
        let r = client
            .get(&url)
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        r.text().await.map_err(|e| format!("{url}: {e}"))
    }
    pub fn node_dir(&self, node: usize) -> PathBuf {
        self.home.join(format!("node{node}"))
    }
    pub fn stave_home(&self, node: usize) -> PathBuf {
        self.node_dir(node).join("stave")
    }
    pub fn comet_home(&self, node: usize) -> PathBuf {
        self.node_dir(node).join("cometbft")
    }
    pub fn log_path(&self, node: usize, what: &str) -> PathBuf {
        self.node_dir(node).join(format!("{what}.log"))
    }

    /// The live pid of a node's process (from the supervisor's pid file).
    pub fn pid(&self, node: usize, what: Proc) -> Option<u32> {
        let file = self.node_dir(node).join(format!("{}.pid", what.as_str()));
        let pid: u32 = std::fs::read_to_string(file).ok()?.trim().parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let state = stat.rsplit_once(") ")?.1.chars().next()?;
        (state != 'Z').then_some(pid)
    }

    /// How many lines of a node's log (stave, cometbft, supervisor) contain `needle`.
    pub fn count_in_log(&self, node: usize, what: &str, needle: &str) -> usize {
        std::fs::read_to_string(self.log_path(node, what))
            .map(|s| s.lines().filter(|l| l.contains(needle)).count())
            .unwrap_or(0)
    }

    // ---------------------------------------------------------------------
    // Failure reports

    /// The last `lines` lines of `testnet logs NODE WHAT`.
    pub fn log_tail(&self, node: usize, what: &str, lines: usize) -> String {
        let out = self.script(&["logs", &node.to_string(), what]);
        let text = if out.status.success() {
            String::from_utf8_lossy(&out.stdout).into_owned()
        } else {
            format!("(no log: {})", String::from_utf8_lossy(&out.stderr).trim())
        };
        let text = strip_ansi(&text);
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// `testnet status` and the tail of every node's logs.
    pub fn diagnostics(&self) -> String {
        let (code, status) = self.status();
        let mut s = format!(
            "===== testnet status (exit {code}) [STAVE_TESTNET_HOME={}]\n{status}",
            self.home.display()
        );
        for i in 0..self.nodes {
            for what in ["supervisor", "stave", "cometbft"] {
                s.push_str(&format!(
                    "\n===== node{i} {what} (testnet/testnet logs {i} {what}, last lines)\n{}\n",
                    self.log_tail(i, what, 25)
                ));
            }
        }
        s
    }

    /// Fails the test with `msg` and the nodes' logs.
    pub fn fail(&self, msg: &str) -> ! {
        let diagnostics = self.diagnostics();
        self.reported
            .store(true, std::sync::atomic::Ordering::SeqCst);
        panic!("{msg}\n\n{diagnostics}")
    }

    /// Polls `probe` every [`POLL`] until it returns `Ok`, for at most
    /// `timeout`; then fails with `what`, the last `Err` and the logs.
    pub async fn wait_for<T, F, Fut>(&self, what: &str, timeout: Duration, mut probe: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, String>>,
    {
        let deadline = Instant::now() + timeout;
        loop {
            let last = match probe().await {
                Ok(v) => return v,
                Err(e) => e,
            };
            if Instant::now() >= deadline {
                self.fail(&format!(
                    "timed out after {timeout:?} waiting for {what}; last observation: {last}"
                ));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    // ---------------------------------------------------------------------
    // Clients

    /// A fresh gRPC client of a node (fails the test if it cannot connect).
    pub async fn client(&self, node: usize) -> StaveClient {
        match StaveClient::connect(&self.grpc_url(node)).await {
            Ok(c) => c,
            Err(e) => self.fail(&format!("node{node}: gRPC connect: {e:#}")),
        }
    }

    /// Commits `n` kv txs through `node`, signed by the key of seed
    /// `[seed; 32]` (nonces from 0), under keys `prefix/0`, `prefix/1`, ...
    pub async fn commit_kv_txs(&self, node: usize, seed: u8, prefix: &str, n: u64) {
        let key = ed25519_dalek::SigningKey::from_bytes(&[seed; 32]);
        for nonce in 0..n {
            let set = stave::tx::Action::KvSet(stave::keyspaces::kv::KvSet {
                key: format!("{prefix}/{nonce}").into_bytes(),
                value: b"v".to_vec(),
            });
            let tx = stave::tx::build::sign_tx(&key, &self.chain_id, nonce, vec![set], "");
            self.commit_tx(node, tx, &format!("{prefix} tx {nonce}"))
                .await;
        }
    }

    /// Submits `tx` through `node` with BroadcastAndWait (60 s); fails the
    /// test, naming `what`, unless it committed with code 0. Returns the height.
    pub async fn commit_tx(&self, node: usize, tx: Vec<u8>, what: &str) -> u64 {
        let mut c = self.client(node).await;
        let r =
            c.tx.broadcast_and_wait(stave::proto::tx::BroadcastAndWaitRequest {
                tx,
                timeout_ms: 60_000,
            })
            .await
            .unwrap_or_else(|e| self.fail(&format!("{what}: BroadcastAndWait: {e}")))
            .into_inner();
        if !r.committed || r.code != 0 {
            self.fail(&format!("{what}: not committed with code 0: {r:?}"));
        }
        r.height
    }

    /// A CometBFT JSON-RPC client of a node.
    pub fn comet(&self, node: usize) -> CometRpc {
        CometRpc::new(&self.rpc_url(node))
    }

    /// Stave's gRPC `Status`, or why not.
    pub async fn stave_status(&self, node: usize) -> Result<StatusResponse, String> {
        let mut c = StaveClient::connect(&self.grpc_url(node))
            .await
            .map_err(|e| format!("node{node}: {e:#}"))?;
        c.query
            .status(StatusRequest {})
            .await
            .map(|r| r.into_inner())
            .map_err(|e| format!("node{node}: Status: {e}"))
    }

    /// CometBFT's latest block height, or why not.
    pub async fn comet_height(&self, node: usize) -> Result<u64, String> {
        self.comet(node)
            .status()
            .await
            .map(|(h, _, _)| h)
            .map_err(|e| format!("node{node} cometbft: {e:#}"))
    }

    /// The `app_hash` of block `height`'s header (upper-case hex), or why not.
    pub async fn block_app_hash(&self, node: usize, height: u64) -> Result<String, String> {
        let r = self
            .comet(node)
            .raw("block", json!({ "height": height.to_string() }))
            .await
            .map_err(|e| format!("node{node} block {height}: {e:#}"))?;
        r["block"]["header"]["app_hash"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("node{node} block {height}: no header.app_hash in {r}"))
    }

    /// Waits until node's CometBFT has committed `height`.
    pub async fn wait_comet_height(&self, node: usize, height: u64, timeout: Duration) -> u64 {
        let net = self;
        self.wait_for(
            &format!("node{node} CometBFT to reach height {height}"),
            timeout,
            move || async move {
                let h = net.comet_height(node).await?;
                if h >= height {
                    Ok(h)
                } else {
                    Err(format!("at height {h}"))
                }
            },
        )
        .await
    }

    /// Waits until every node's CometBFT has committed `height`.
    pub async fn wait_all_comet_height(&self, height: u64, timeout: Duration) {
        for i in 0..self.nodes {
            self.wait_comet_height(i, height, timeout).await;
        }
    }

    /// Waits until node's Stave reports committed height >= `height`.
    pub async fn wait_stave_height(
        &self,
        node: usize,
        height: u64,
        timeout: Duration,
    ) -> StatusResponse {
        let net = self;
        self.wait_for(
            &format!("node{node} Stave to commit height {height}"),
            timeout,
            move || async move {
                let s = net.stave_status(node).await?;
                if s.height >= height {
                    Ok(s)
                } else {
                    Err(format!("Stave at height {}", s.height))
                }
            },
        )
        .await
    }

    /// The addresses in CometBFT's validator set, as node `node` sees it.
    pub async fn comet_validators(&self, node: usize) -> Result<Vec<String>, String> {
        let v = self
            .comet(node)
            .raw("validators", json!({ "per_page": "100" }))
            .await
            .map_err(|e| format!("{e:#}"))?;
        let list = v["validators"]
            .as_array()
            .ok_or(format!("no validators in {v}"))?;
        Ok(list
            .iter()
            .filter_map(|x| x["address"].as_str().map(str::to_string))
            .collect())
    }

    /// Addresses that signed the commit of `height` (block_id_flag 2:
    /// COMMIT), as node `node` stores it.
    pub async fn commit_signers(&self, node: usize, height: u64) -> Result<Vec<String>, String> {
        let v = self
            .comet(node)
            .raw("commit", json!({ "height": height.to_string() }))
            .await
            .map_err(|e| format!("{e:#}"))?;
        let sigs = v["signed_header"]["commit"]["signatures"]
            .as_array()
            .ok_or(format!("no signatures in {v}"))?;
        Ok(sigs
            .iter()
            .filter(|s| s["block_id_flag"] == json!(2))
            .filter_map(|s| s["validator_address"].as_str().map(str::to_string))
            .collect())
    }

    /// Waits until `address` signed the commit of one of node 0's latest
    /// three blocks; returns that height.
    pub async fn wait_signed_by(&self, address: &str, timeout: Duration) -> u64 {
        let net = self;
        self.wait_for(
            &format!("{address} to sign a commit"),
            timeout,
            move || async move {
                let h = net.comet_height(0).await?;
                for height in h.saturating_sub(2).max(1)..=h {
                    if net
                        .commit_signers(0, height)
                        .await?
                        .iter()
                        .any(|a| a == address)
                    {
                        return Ok(height);
                    }
                }
                Err(format!("not among the signers up to height {h}"))
            },
        )
        .await
    }

    /// The highest CometBFT height among reachable nodes.
    pub async fn max_comet_height(&self) -> u64 {
        let mut max = 0;
        for i in 0..self.nodes {
            if let Ok(h) = self.comet_height(i).await {
                max = max.max(h);
            }
        }
        max
    }

    /// Waits until `testnet kill` made the supervisor restart node's pair:
    /// both processes run with pids other than `old` (stave, cometbft).
    pub async fn wait_pair_restarted(
        &self,
        node: usize,
        old: (Option<u32>, Option<u32>),
        timeout: Duration,
    ) -> (u32, u32) {
        let net = self;
        self.wait_for(
            &format!("the supervisor to restart node{node}'s pair (old pids {old:?})"),
            timeout,
            move || async move {
                let s = net.pid(node, Proc::Stave);
                let c = net.pid(node, Proc::Cometbft);
                match (s, c) {
                    (Some(s), Some(c)) if Some(s) != old.0 && Some(c) != old.1 => Ok((s, c)),
                    other => Err(format!("pids now (stave, cometbft) = {other:?}")),
                }
            },
        )
        .await
    }

    /// Asserts that every node agrees on the app hash:
    /// 1. each Stave's committed (height h, app hash) from gRPC `Status` equals
    ///    the `app_hash` in the header of block h+1 on *every* node's CometBFT;
    /// 2. at the lowest common CometBFT height, every node's header app hash is the same.
    ///
    /// Returns that common height.
    pub async fn assert_app_hashes_agree(&self, timeout: Duration) -> u64 {
        let mut statuses = Vec::new();
        for i in 0..self.nodes {
            let net = self;
            let s = self
                .wait_for(
                    &format!("node{i} Stave Status"),
                    timeout,
                    move || async move { net.stave_status(i).await },
                )
                .await;
            statuses.push(s);
        }
        let max_h = statuses.iter().map(|s| s.height).max().unwrap_or(0);
        self.wait_all_comet_height(max_h + 1, timeout).await;
        for (i, s) in statuses.iter().enumerate() {
            for j in 0..self.nodes {
                let header = match self.block_app_hash(j, s.height + 1).await {
                    Ok(h) => h,
                    Err(e) => self.fail(&e),
                };
                if !header.eq_ignore_ascii_case(&s.app_hash) {
                    self.fail(&format!(
                        "node{i} Stave committed height {} with app hash {}, but node{j}'s block {} header carries app hash {header}",
                        s.height,
                        s.app_hash,
                        s.height + 1
                    ));
                }
            }
        }
        let mut common = u64::MAX;
        for i in 0..self.nodes {
            match self.comet_height(i).await {
                Ok(h) => common = common.min(h),
                Err(e) => self.fail(&e),
            }
        }
        let mut hashes = Vec::new();
        for i in 0..self.nodes {
            match self.block_app_hash(i, common).await {
                Ok(h) => hashes.push(h),
                Err(e) => self.fail(&e),
            }
        }
        if hashes.iter().any(|h| h != &hashes[0]) {
            self.fail(&format!(
                "app hashes at common height {common} differ: {hashes:?}"
            ));
        }
        common
    }

    // ---------------------------------------------------------------------
    // State reads over gRPC

    /// An account's (found, nonce) on a node.
    pub async fn account(&self, node: usize, pubkey: &[u8]) -> Result<(bool, u64), String> {
        let mut c = StaveClient::connect(&self.grpc_url(node))
            .await
            .map_err(|e| format!("node{node}: {e:#}"))?;
        let r = c
            .query
            .account(AccountRequest {
                pubkey: pubkey.to_vec(),
                ..Default::default()
            })
            .await
            .map_err(|e| format!("node{node}: Account: {e}"))?
            .into_inner();
        Ok((r.found, r.nonce))
    }

    /// `KvGet` on a node: `Some(value)` if found.
    pub async fn kv_get(
        client: &mut StaveClient,
        signer: &[u8],
        key: &[u8],
    ) -> Result<Option<Vec<u8>>, String> {
        let r = client
            .query
            .kv_get(KvGetRequest {
                signer: signer.to_vec(),
                key: key.to_vec(),
                ..Default::default()
            })
            .await
            .map_err(|e| format!("KvGet: {e}"))?
            .into_inner();
        Ok(r.found.then_some(r.value))
    }

    /// Every kv entry of `signer` on a node, following `next_key`.
    pub async fn kv_list_all(
        client: &mut StaveClient,
        signer: &[u8],
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, String> {
        let mut out = Vec::new();
        let mut start_after = Vec::new();
        for _ in 0..10_000 {
            let r = client
                .query
                .kv_list(KvListRequest {
                    signer: signer.to_vec(),
                    start_after: start_after.clone(),
                    limit: 1000,
                })
                .await
                .map_err(|e| format!("KvList: {e}"))?
                .into_inner();
            out.extend(r.entries.into_iter().map(|e| (e.key, e.value)));
            if r.next_key.is_empty() {
                return Ok(out);
            }
            start_after = r.next_key;
        }
        Err("KvList did not finish after 10000 pages".into())
    }

    // ---------------------------------------------------------------------
    // Running binaries directly

    /// Runs the network's stave binary with `args` (e.g. the CLI).
    pub fn stave_cmd(&self, args: &[&str]) -> Output {
        Command::new(&self.stave_bin)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running stave {args:?}: {e}"))
    }

    /// Runs the CometBFT binary with `args`.
    pub fn cometbft_cmd(&self, args: &[&str]) -> Output {
        Command::new(&self.cometbft_bin)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running cometbft {args:?}: {e}"))
    }

    /// Runs a binary's output check: fails with its output unless it exited 0.
    pub fn expect_success(&self, what: &str, out: &Output) -> String {
        if !out.status.success() {
            self.fail(&format!(
                "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Parses stdout of a `--output json` command.
    pub fn json_of(&self, what: &str, out: &Output) -> Value {
        let text = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(&text).unwrap_or_else(|e| {
            self.fail(&format!(
                "{what}: stdout is not JSON ({e}):\n--- stdout\n{text}\n--- stderr\n{}",
                String::from_utf8_lossy(&out.stderr)
            ))
        })
    }

    /// Runs `stave --output json ARGS` (unless ARGS choose the output),
    /// fails the test unless it succeeds, and returns its JSON.
    /// `stave query local status --output json` of node `i`, over its
    /// admin socket.
    pub fn local_status(&self, i: usize) -> Value {
        let home = self.stave_home(i);
        let home = home.to_str().expect("utf-8 home");
        let out = self.stave_cmd(&[
            "query", "local", "status", "--home", home, "--output", "json",
        ]);
        self.expect_success("stave query local status", &out);
        self.json_of("stave query local status", &out)
    }

    pub fn stave_json(&self, what: &str, args: &[&str]) -> Value {
        let mut full = vec![];
        if args.first() != Some(&"--output") {
            full.extend(["--output", "json"]);
        }
        full.extend_from_slice(args);
        let out = self.stave_cmd(&full);
        self.expect_success(what, &out);
        self.json_of(what, &out)
    }
}

impl Localnet {
    /// With `STAVE_E2E_LOG_DIR` set, copies every node's logs to
    /// `$STAVE_E2E_LOG_DIR/<chain id>/nodeI/` before the network is deleted.
    fn save_logs(&self) {
        let Some(dir) = non_empty_env("STAVE_E2E_LOG_DIR") else {
            return;
        };
        for i in 0..self.nodes {
            let dest = Path::new(&dir)
                .join(&self.chain_id)
                .join(format!("node{i}"));
            if std::fs::create_dir_all(&dest).is_err() {
                continue;
            }
            for what in ["supervisor", "stave", "cometbft"] {
                let _ = std::fs::copy(self.log_path(i, what), dest.join(format!("{what}.log")));
            }
        }
        eprintln!("[localnet] node logs saved in {dir}/{}", self.chain_id);
    }
}

impl Drop for Localnet {
    fn drop(&mut self) {
        if std::thread::panicking() && !self.reported.load(std::sync::atomic::Ordering::SeqCst) {
            eprintln!(
                "\n[localnet {}] test failed; state before teardown:",
                self.home.display()
            );
            eprintln!("{}", self.diagnostics());
        }
        if self.home.exists() {
            let out = self.script(&["down"]);
            if !out.status.success() {
                eprintln!(
                    "[localnet {}] `testnet down` failed ({}): {}",
                    self.home.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            self.save_logs();
            let out = self.script(&["destroy"]);
            if !out.status.success() {
                eprintln!(
                    "[localnet {}] `testnet destroy` failed ({}): {}",
                    self.home.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}
