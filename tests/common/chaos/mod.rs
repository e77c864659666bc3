//! The chaos soak (issue 27): a 4-validator + 1 full-node localnet under
//! mixed traffic while a seeded driver kills, pauses, restarts,
//! partitions, fills the disk of, and truncates the local store of its
//! nodes; then an oracle in code. `tests/chaos.rs` runs it; `scripts/chaos`
//! wraps that test.
//!
//! - `setup`: the network, its p2p proxies (`proxy`) and the tmpfs.
//! - `faults` + `inject`: the driver and its log.
//! - `traffic` + `governance`: the txs, and what each committed one wrote.
//! - `sample`: RSS, open files, and the longest stall.
//! - `oracle`: the checks at the end.

pub mod faults;
mod governance;
mod inject;
pub mod oracle;
pub mod proxy;
pub mod sample;
pub mod setup;
pub mod traffic;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::common::localnet::{Binaries, Localnet};

/// CometBFT's height on a node, or `None` within 2 s (down, paused).
pub async fn height(net: &Localnet, node: usize) -> Option<u64> {
    tokio::time::timeout(Duration::from_secs(2), net.comet_height(node))
        .await
        .ok()?
        .ok()
}

/// `STAVE_CHAOS_SEED` (default 1), `STAVE_CHAOS_MINUTES` (default 3) and
/// `STAVE_CHAOS_REPORT` (a JSON report's path, optional).
#[derive(Debug, Clone)]
pub struct Settings {
    pub seed: u64,
    pub minutes: f64,
    pub report: Option<PathBuf>,
}

impl Settings {
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Settings {
            seed: var("STAVE_CHAOS_SEED").map_or(1, |v| v.parse().expect("STAVE_CHAOS_SEED")),
            minutes: var("STAVE_CHAOS_MINUTES")
                .map_or(3.0, |v| v.parse().expect("STAVE_CHAOS_MINUTES")),
            report: var("STAVE_CHAOS_REPORT").map(PathBuf::from),
        }
    }
}

/// What a soak did and found; `failures` empty means it passed.
#[derive(Debug, Serialize)]
pub struct Report {
    pub seed: u64,
    pub minutes: f64,
    pub failures: Vec<String>,
    pub faults_by_kind: BTreeMap<faults::Kind, usize>,
    pub faults: Vec<faults::Fault>,
    pub txs_by_kind: BTreeMap<&'static str, traffic::Outcomes>,
    pub txs_committed: usize,
    pub txs_lost: usize,
    pub longest_stall_secs: f64,
    pub peak_rss_bytes: u64,
    pub peak_open_files: u64,
    /// Per node and process ("node0 stave", ...).
    pub processes: BTreeMap<String, sample::Peaks>,
    pub final_height: u64,
    pub disk_full_node: usize,
    pub elapsed_secs: f64,
}

/// Runs the soak on a fresh network; the network is gone when it returns.
pub async fn soak(bins: &Binaries, s: &Settings) -> Report {
    let started = Instant::now();
    let mut rng = StdRng::seed_from_u64(s.seed);
    let net = setup::create(bins);
    net.down();
    let links =
        Arc::new(proxy::Links::start(setup::NODES, setup::PROXY_BASE, setup::p2p_port).await);
    setup::route_through(&net, &links);
    let net = Arc::new(net);
    let disk_node = rng.gen_range(0..setup::VALIDATORS);
    let tmpfs = setup::Tmpfs::mount(&net, disk_node);
    net.script_ok(&["up"]);
    net.wait_status_ok(Duration::from_secs(120)).await;
    eprintln!(
        "[chaos] seed {} for {} min; node{disk_node}'s data/ is a tmpfs",
        s.seed, s.minutes
    );

    let stop = Arc::new(AtomicBool::new(false));
    let procs = tokio::spawn(sample::processes(net.clone(), stop.clone()));
    let stalls = tokio::spawn(sample::stalls(net.clone(), stop.clone()));
    let soak_start = Instant::now();
    let until = soak_start + Duration::from_secs_f64(s.minutes * 60.0);
    let faulted = Arc::new(AtomicU32::new(0));
    let traffic = traffic::Traffic {
        net: net.clone(),
        faulted: faulted.clone(),
        committed: Arc::new(Mutex::new(Vec::new())),
        outcomes: Arc::new(Mutex::new(BTreeMap::new())),
        seed: s.seed,
    };
    let loops = traffic.start(until);
    let mut driver = faults::Driver {
        net: net.clone(),
        links: links.clone(),
        disk: (disk_node, tmpfs.path.clone()),
        faulted,
        start: soak_start,
        rng,
        log: Vec::new(),
    };
    let mut failures = Vec::new();
    if let Err(e) = driver.run(until).await {
        failures.push(format!("a node did not recover: {e}"));
    }
    links.heal_all();
    for l in loops {
        l.await.expect("a traffic loop panicked");
    }
    eprintln!(
        "[chaos] traffic and faults done at {:.0}s; checking",
        soak_start.elapsed().as_secs_f64()
    );
    let committed = traffic.committed.lock().expect("committed").clone();
    let checked = check(&net, &driver.log, &committed, &mut failures).await;
    stop.store(true, Ordering::SeqCst);
    let peaks = procs.await.expect("process sampler");
    let longest_stall_secs = stalls.await.expect("stall sampler");
    let report = Report {
        seed: s.seed,
        minutes: s.minutes,
        failures,
        faults_by_kind: faults::count_by_kind(&driver.log),
        faults: driver.log.clone(),
        txs_by_kind: traffic.outcomes.lock().expect("outcomes").clone(),
        txs_committed: committed.len(),
        txs_lost: checked.lost,
        longest_stall_secs,
        peak_rss_bytes: peaks.iter().map(|p| p.peak_rss_bytes).max().unwrap_or(0),
        peak_open_files: peaks.iter().map(|p| p.peak_open_files).max().unwrap_or(0),
        processes: named(peaks),
        final_height: checked.height,
        disk_full_node: disk_node,
        elapsed_secs: started.elapsed().as_secs_f64(),
    };
    let mut report = report;
    for p in report.processes.values() {
        report.failures.extend(p.over_limit.iter().cloned());
    }
    drop(driver);
    drop(tmpfs);
    report
}

struct Checked {
    height: u64,
    lost: usize,
}

/// The oracle; findings go to `failures`.
async fn check(
    net: &Localnet,
    log: &[faults::Fault],
    committed: &[traffic::Committed],
    failures: &mut Vec<String>,
) -> Checked {
    let height = match oracle::common_height(net).await {
        Ok(h) => h,
        Err(e) => {
            failures.push(e);
            0
        }
    };
    match oracle::app_hash_mismatches(net, height).await {
        Ok(bad) => failures.extend(bad.into_iter().map(|b| format!("app hashes differ at {b}"))),
        Err(e) => failures.push(e),
    }
    let lost = match oracle::unreadable(net, committed).await {
        Ok(lost) => lost,
        Err(e) => vec![e],
    };
    failures.extend(lost.iter().map(|l| format!("lost: {l}")));
    failures.extend(
        oracle::unexplained(net, log)
            .into_iter()
            .map(|l| format!("unexplained: {l}")),
    );
    failures.extend(oracle::disk_full_findings(net, log));
    Checked {
        height,
        lost: lost.len(),
    }
}

fn named(peaks: Vec<sample::Peaks>) -> BTreeMap<String, sample::Peaks> {
    peaks
        .into_iter()
        .enumerate()
        .map(|(i, p)| (format!("node{} {}", i / 2, ["stave", "cometbft"][i % 2]), p))
        .collect()
}

/// A human summary of `r`.
pub fn summary(r: &Report) -> String {
    let mut s = format!(
        "chaos soak: seed {} for {} min ({:.0} s in all), final height {}\n\
         faults by kind: {:?}\ntxs by kind: {:?}\n\
         txs committed {}, lost {}; longest stall {:.1} s; peak RSS {:.1} MiB; peak open files {}\n",
        r.seed,
        r.minutes,
        r.elapsed_secs,
        r.final_height,
        r.faults_by_kind,
        r.txs_by_kind,
        r.txs_committed,
        r.txs_lost,
        r.longest_stall_secs,
        r.peak_rss_bytes as f64 / (1 << 20) as f64,
        r.peak_open_files
    );
    for f in &r.faults {
        s.push_str(&format!(
            "  {:7.1}s..{:7.1}s {:?} {:?} {}\n",
            f.at_secs, f.healed_secs, f.kind, f.nodes, f.detail
        ));
    }
    for f in &r.failures {
        s.push_str(&format!("FAILURE: {f}\n"));
    }
    s
}
