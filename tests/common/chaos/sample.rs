//! Samplers that run beside the soak: every process's RSS and open files
//! from /proc every 10 s, and the majority's height every second (for the
//! longest stall).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::setup::NODES;
use crate::common::localnet::{Localnet, Proc};

pub const RSS_LIMIT: u64 = 3 << 29; // 1.5 GiB
pub const FD_LIMIT: u64 = 2000;

/// The peaks of one process kind of one node, and any sample over a limit.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Peaks {
    pub samples: u64,
    pub peak_rss_bytes: u64,
    pub peak_open_files: u64,
    pub over_limit: Vec<String>,
}

/// RSS (bytes) and open files of a live process.
fn proc_usage(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    Some((kb * 1024, fds))
}

/// Samples every node's two processes every 10 s until `stop`.
/// Index: node * 2 + (0 stave, 1 cometbft).
pub async fn processes(net: Arc<Localnet>, stop: Arc<AtomicBool>) -> Vec<Peaks> {
    let mut peaks = vec![Peaks::default(); NODES * 2];
    let start = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        for node in 0..NODES {
            for (k, p) in [Proc::Stave, Proc::Cometbft].into_iter().enumerate() {
                let Some((rss, fds)) = net.pid(node, p).and_then(proc_usage) else {
                    continue;
                };
                let pk = &mut peaks[node * 2 + k];
                pk.samples += 1;
                pk.peak_rss_bytes = pk.peak_rss_bytes.max(rss);
                pk.peak_open_files = pk.peak_open_files.max(fds);
                if rss > RSS_LIMIT || fds > FD_LIMIT {
                    let t = start.elapsed().as_secs();
                    pk.over_limit.push(format!(
                        "at {t}s node{node} {}: rss {rss} B, {fds} open files",
                        p.as_str()
                    ));
                }
            }
        }
        sleep_unless(&stop, Duration::from_secs(10)).await;
    }
    peaks
}

/// The longest time (s) the height that a majority (3 of 5) has reached
/// did not move, sampled every second until `stop`.
pub async fn stalls(net: Arc<Localnet>, stop: Arc<AtomicBool>) -> f64 {
    let mut best = 0u64;
    let mut since = Instant::now();
    let mut longest = Duration::ZERO;
    while !stop.load(Ordering::SeqCst) {
        let mut hs = Vec::new();
        for i in 0..NODES {
            hs.push(super::height(&net, i).await.unwrap_or(0));
        }
        hs.sort_unstable_by(|a, b| b.cmp(a));
        let majority = hs[NODES / 2];
        if majority > best {
            best = majority;
            since = Instant::now();
        }
        longest = longest.max(since.elapsed());
        sleep_unless(&stop, Duration::from_secs(1)).await;
    }
    longest.as_secs_f64()
}

async fn sleep_unless(stop: &AtomicBool, d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end && !stop.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
