//! How each fault is injected and healed (the `Driver`'s half that
//! touches processes, files and links).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;

use super::faults::{Driver, Fault};
use crate::common::localnet::{Localnet, Proc};

/// Bytes of a node's log from `from` to its end.
pub fn log_since(net: &Localnet, node: usize, what: &str, from: u64) -> String {
    let all = std::fs::read(net.log_path(node, what)).unwrap_or_default();
    let from = (from as usize).min(all.len());
    String::from_utf8_lossy(&all[from..]).into_owned()
}

impl Driver {
    /// SIGKILL one process; the supervisor restarts the pair.
    pub(super) async fn kill(&mut self, node: usize, what: Proc) -> Result<(), String> {
        let old = (
            self.net.pid(node, Proc::Stave),
            self.net.pid(node, Proc::Cometbft),
        );
        self.net.kill(node, what);
        self.net
            .wait_pair_restarted(node, old, super::faults::RECOVERY)
            .await;
        Ok(())
    }

    /// SIGSTOP both processes, then SIGCONT after 3–10 s.
    pub(super) async fn pause(&mut self, node: usize, fault: &mut Fault) -> Result<(), String> {
        let pids: Vec<u32> = [Proc::Stave, Proc::Cometbft]
            .into_iter()
            .filter_map(|p| self.net.pid(node, p))
            .collect();
        let hold = self.millis(3_000, 10_000);
        signal("-STOP", &pids);
        tokio::time::sleep(hold).await;
        signal("-CONT", &pids);
        fault.detail = format!("paused pids {pids:?} for {hold:?}");
        Ok(())
    }

    /// `testnet restart` of two nodes at once.
    pub(super) async fn restart_two(&mut self, nodes: Vec<usize>) -> Result<(), String> {
        let tasks: Vec<_> = nodes
            .into_iter()
            .map(|i| {
                let net = self.net.clone();
                tokio::task::spawn_blocking(move || net.script(&["restart", &i.to_string()]))
            })
            .collect();
        for t in tasks {
            let out = t.await.map_err(|e| format!("restart task: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "testnet restart failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        Ok(())
    }

    /// Cuts every p2p link of `node` for 5–30 s.
    pub(super) async fn partition(&mut self, node: usize, fault: &mut Fault) -> Result<(), String> {
        let hold = self.millis(5_000, 30_000);
        self.links.set_cut(node, true);
        tokio::time::sleep(hold).await;
        self.links.set_cut(node, false);
        fault.detail = format!("cut for {hold:?}");
        Ok(())
    }

    /// Stops the node, truncates one file of its local store to half its
    /// length, and restarts it.
    pub(super) async fn truncate_local(
        &mut self,
        node: usize,
        fault: &mut Fault,
    ) -> Result<(), String> {
        let net = self.net.clone();
        tokio::task::spawn_blocking(move || net.stop(node))
            .await
            .map_err(|e| format!("stop task: {e}"))?;
        let dir = self.net.stave_home(node).join("data/local");
        let mut files = local_files(&dir);
        files.shuffle(&mut self.rng);
        fault.detail = match files.first() {
            Some((path, len)) => {
                let half = len / 2;
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .and_then(|f| f.set_len(half))
                    .map_err(|e| format!("truncating {}: {e}", path.display()))?;
                format!("{} truncated from {len} to {half} bytes", path.display())
            }
            None => format!("no .sst, MANIFEST or .log in {}", dir.display()),
        };
        let net = self.net.clone();
        tokio::task::spawn_blocking(move || net.restart(node))
            .await
            .map_err(|e| format!("restart task: {e}"))?;
        Ok(())
    }

    /// Fills the tmpfs under the node's Stave `data/`, waits for Stave to
    /// exit, holds 2–6 s, frees the space; the supervisor restarts it.
    pub(super) async fn disk_full(&mut self, fault: &mut Fault) -> Result<(), String> {
        let (node, data) = self.disk.clone();
        let filler = data.join("chaos-filler");
        let (sup0, stave0) = self.log_sizes(node);
        let written = fill(&filler).map_err(|e| format!("filling {}: {e}", filler.display()))?;
        let deadline = Instant::now() + Duration::from_secs(60);
        let exited = loop {
            let sup = log_since(&self.net, node, "supervisor", sup0);
            if sup
                .lines()
                .any(|l| l.contains("stave (pid") && l.contains("exited with status"))
            {
                break true;
            }
            if Instant::now() >= deadline {
                break false;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let hold = self.millis(2_000, 6_000);
        tokio::time::sleep(hold).await;
        std::fs::remove_file(&filler).map_err(|e| format!("removing the filler: {e}"))?;
        let log = log_since(&self.net, node, "stave", stave0);
        fault.enospc_line = enospc_line(&log, &data);
        fault.detail = format!(
            "filled {} with {written} bytes; stave exited: {exited}; full for {hold:?} more",
            data.display()
        );
        Ok(())
    }
}

/// The first log line naming ENOSPC (or its message) and a path under `data`.
pub fn enospc_line(log: &str, data: &Path) -> Option<String> {
    let data = data.to_string_lossy();
    log.lines()
        .find(|l| {
            (l.contains("ENOSPC") || l.contains("No space left on device")) && l.contains(&*data)
        })
        .map(str::to_string)
}

/// Writes zeros to `path` until the filesystem is full; returns the bytes written.
fn fill(path: &Path) -> std::io::Result<u64> {
    let mut f = std::fs::File::create(path)?;
    let mut written = 0u64;
    for chunk in [1 << 20, 4096, 1] {
        let buf = vec![0u8; chunk];
        loop {
            match f.write_all(&buf) {
                Ok(()) => written += chunk as u64,
                Err(e) if e.raw_os_error() == Some(28) => break,
                Err(e) => return Err(e),
            }
        }
    }
    Ok(written)
}

/// The local store's .sst, MANIFEST and .log files that are not empty.
fn local_files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<(PathBuf, u64)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let wanted =
                name.ends_with(".sst") || name.starts_with("MANIFEST-") || name.ends_with(".log");
            let len = e.metadata().ok()?.len();
            (wanted && len > 0 && !name.starts_with("LOG")).then(|| (e.path(), len))
        })
        .collect();
    v.sort();
    v
}

/// `kill SIG PIDS...`.
fn signal(sig: &str, pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    let _ = Command::new("kill")
        .arg(sig)
        .args(pids.iter().map(u32::to_string))
        .status();
}
