//! A real single-validator CometBFT node (`--proxy_app=kvstore`) on
//! 127.0.0.1, shared by the tests that run at the same time and killed when
//! the last of them drops it.
//!
//! The binary is `COMETBFT_BIN`, else `cometbft` on PATH, else
//! `$HOME/go/bin/cometbft`. Missing: the test fails under `CI=true`, and
//! prints a notice and skips otherwise.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::light::rpc::Rpc;
use crate::light::REQUEST_TIMEOUT;

/// The node is ready once it has committed this height.
const READY_HEIGHT: u64 = 12;
/// Bound on the node's start.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running node; dropping it kills the process.
pub struct Node {
    child: Child,
    pub rpc: String,
    home: tempfile::TempDir,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

static SHARED: tokio::sync::Mutex<Weak<Node>> = tokio::sync::Mutex::const_new(Weak::new());

/// The shared node (started if none is running), or `None` to skip.
pub async fn node(test: &str) -> Option<Arc<Node>> {
    let bin = cometbft_bin(test)?;
    let mut slot = SHARED.lock().await;
    if let Some(node) = slot.upgrade() {
        return Some(node);
    }
    let node = Arc::new(Node::start(&bin).await);
    *slot = Arc::downgrade(&node);
    Some(node)
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn cometbft_bin(test: &str) -> Option<PathBuf> {
    let from_env = std::env::var_os("COMETBFT_BIN").filter(|v| !v.is_empty());
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("cometbft"))
            .find(|c| is_executable(c))
    });
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let bin = from_env
        .map(PathBuf::from)
        .or(on_path)
        .unwrap_or_else(|| PathBuf::from(home).join("go/bin/cometbft"));
    if is_executable(&bin) {
        return Some(bin);
    }
    let msg = format!(
        "{test}: no cometbft binary at {} (set COMETBFT_BIN)",
        bin.display()
    );
    assert!(!in_ci(), "{msg}; CI=true: this test must run, not skip");
    eprintln!("NOTICE: skipping {msg}");
    None
}

/// Two free ports next to each other in 47xxx: RPC and P2P.
fn free_ports() -> (u16, u16) {
    (47600..47700)
        .step_by(2)
        .find(|p| {
            TcpListener::bind(("127.0.0.1", *p)).is_ok()
                && TcpListener::bind(("127.0.0.1", p + 1)).is_ok()
        })
        .map(|p| (p, p + 1))
        .expect("no free port pair in 47600..47700")
}

impl Node {
    async fn start(bin: &Path) -> Node {
        let home = tempfile::tempdir().expect("tempdir");
        let status = Command::new(bin)
            .args(["init", "--home"])
            .arg(home.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run cometbft init");
        assert!(status.success(), "cometbft init: {status}");
        fast_blocks(home.path());
        let (rpc_port, p2p_port) = free_ports();
        let log = std::fs::File::create(home.path().join("node.log")).expect("log file");
        let child = Command::new(bin)
            .args(["start", "--proxy_app=kvstore", "--home"])
            .arg(home.path())
            .arg(format!("--rpc.laddr=tcp://127.0.0.1:{rpc_port}"))
            .arg(format!("--p2p.laddr=tcp://127.0.0.1:{p2p_port}"))
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .spawn()
            .expect("spawn cometbft start");
        let rpc = format!("http://127.0.0.1:{rpc_port}");
        let mut node = Node { child, rpc, home };
        node.wait_ready().await;
        node
    }

    async fn wait_ready(&mut self) {
        let rpc = Rpc::new(&self.rpc, REQUEST_TIMEOUT).expect("rpc client");
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("cometbft exited with {status}:\n{}", self.log_tail());
            }
            if rpc.latest_height().await.is_ok_and(|h| h >= READY_HEIGHT) {
                return;
            }
            if start.elapsed() > START_TIMEOUT {
                panic!(
                    "cometbft not at height {READY_HEIGHT} in {START_TIMEOUT:?}:\n{}",
                    self.log_tail()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.home.path().join("node.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// `timeout_commit = "200ms"`, so blocks come fast.
fn fast_blocks(home: &Path) {
    let path = home.join("config/config.toml");
    let text = std::fs::read_to_string(&path).expect("read config.toml");
    let line = "timeout_commit = \"1s\"";
    assert!(text.contains(line), "config.toml has no `{line}`");
    let text = text.replace(line, "timeout_commit = \"200ms\"");
    std::fs::write(&path, text).expect("write config.toml");
}
