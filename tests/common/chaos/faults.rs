//! The fault driver: one fault at a time, at seeded random instants, each
//! healed (and its node caught up) before the next. Every fault is logged
//! with its time, node(s), kind and the byte ranges of the node's
//! supervisor and Stave logs written while it lasted, which the oracle
//! uses to match every exit and panic to a fault.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;
use serde::Serialize;

use super::proxy::Links;
use super::setup::NODES;
use crate::common::localnet::Localnet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    KillStave,
    KillCometbft,
    Pause,
    RestartTwo,
    DiskFull,
    TruncateLocal,
    Partition,
}

pub const KINDS: [Kind; 7] = [
    Kind::KillStave,
    Kind::KillCometbft,
    Kind::Pause,
    Kind::RestartTwo,
    Kind::DiskFull,
    Kind::TruncateLocal,
    Kind::Partition,
];

/// Byte ranges of one node's logs written while a fault lasted.
#[derive(Debug, Clone, Serialize)]
pub struct Window {
    pub node: usize,
    pub supervisor: (u64, u64),
    pub stave: (u64, u64),
}

/// One entry of the driver's log.
#[derive(Debug, Clone, Serialize)]
pub struct Fault {
    pub kind: Kind,
    pub nodes: Vec<usize>,
    /// Seconds since the soak started.
    pub at_secs: f64,
    pub healed_secs: f64,
    pub detail: String,
    pub windows: Vec<Window>,
    /// Disk full: the Stave log line naming ENOSPC and the path, if any.
    pub enospc_line: Option<String>,
}

/// What the driver needs to reach the network.
pub struct Driver {
    pub net: Arc<Localnet>,
    pub links: Arc<Links>,
    /// The node whose Stave `data/` is a tmpfs, and that path.
    pub disk: (usize, std::path::PathBuf),
    /// Nodes under a fault now (a bit per node): traffic avoids them.
    pub faulted: Arc<AtomicU32>,
    pub start: Instant,
    pub rng: StdRng,
    pub log: Vec<Fault>,
}

/// How long a node may take to catch up after a fault is healed.
pub const RECOVERY: Duration = Duration::from_secs(180);

impl Driver {
    /// Injects faults until `until`; the first `KINDS.len()` are every kind
    /// once, in a seeded order. Stops at the first node that does not
    /// recover, with why.
    pub async fn run(&mut self, until: Instant) -> Result<(), String> {
        let mut first = KINDS.to_vec();
        first.shuffle(&mut self.rng);
        let mut n = 0;
        loop {
            let gap = Duration::from_millis(self.rng.gen_range(5_000..12_000));
            if Instant::now() + gap >= until {
                return Ok(());
            }
            tokio::time::sleep(gap).await;
            let kind = first
                .get(n)
                .copied()
                .unwrap_or_else(|| *KINDS.choose(&mut self.rng).expect("kinds"));
            n += 1;
            self.inject(kind).await?;
        }
    }

    async fn inject(&mut self, kind: Kind) -> Result<(), String> {
        let nodes = self.pick_nodes(kind);
        let at = self.start.elapsed().as_secs_f64();
        eprintln!("[chaos {at:7.1}s] fault {kind:?} on {nodes:?}");
        let starts: Vec<(u64, u64)> = nodes.iter().map(|&i| self.log_sizes(i)).collect();
        self.mark(&nodes, true);
        let mut fault = Fault {
            kind,
            nodes: nodes.clone(),
            at_secs: at,
            healed_secs: 0.0,
            detail: String::new(),
            windows: Vec::new(),
            enospc_line: None,
        };
        let result = self.apply(&mut fault).await;
        let recovered = match result {
            Ok(()) => self.catch_up(&nodes).await,
            Err(e) => Err(e),
        };
        self.mark(&nodes, false);
        fault.healed_secs = self.start.elapsed().as_secs_f64();
        fault.windows = nodes
            .iter()
            .zip(starts)
            .map(|(&node, (s0, t0))| {
                let (s1, t1) = self.log_sizes(node);
                Window {
                    node,
                    supervisor: (s0, s1),
                    stave: (t0, t1),
                }
            })
            .collect();
        eprintln!(
            "[chaos {:7.1}s] healed {kind:?} on {nodes:?} {}",
            fault.healed_secs, fault.detail
        );
        self.log.push(fault);
        recovered
    }

    async fn apply(&mut self, fault: &mut Fault) -> Result<(), String> {
        let node = fault.nodes[0];
        match fault.kind {
            Kind::KillStave => self.kill(node, crate::common::localnet::Proc::Stave).await,
            Kind::KillCometbft => {
                self.kill(node, crate::common::localnet::Proc::Cometbft)
                    .await
            }
            Kind::Pause => self.pause(node, fault).await,
            Kind::RestartTwo => self.restart_two(fault.nodes.clone()).await,
            Kind::DiskFull => self.disk_full(fault).await,
            Kind::TruncateLocal => self.truncate_local(node, fault).await,
            Kind::Partition => self.partition(node, fault).await,
        }
    }

    fn pick_nodes(&mut self, kind: Kind) -> Vec<usize> {
        match kind {
            Kind::DiskFull => vec![self.disk.0],
            Kind::RestartTwo => {
                let mut all: Vec<usize> = (0..NODES).collect();
                all.shuffle(&mut self.rng);
                let mut two = all[..2].to_vec();
                two.sort();
                two
            }
            _ => vec![self.rng.gen_range(0..NODES)],
        }
    }

    fn mark(&self, nodes: &[usize], on: bool) {
        for &i in nodes {
            if on {
                self.faulted.fetch_or(1 << i, Ordering::SeqCst);
            } else {
                self.faulted.fetch_and(!(1 << i), Ordering::SeqCst);
            }
        }
    }

    /// Current sizes of node's supervisor and Stave logs.
    pub(super) fn log_sizes(&self, node: usize) -> (u64, u64) {
        let len = |what| {
            std::fs::metadata(self.net.log_path(node, what))
                .map(|m| m.len())
                .unwrap_or(0)
        };
        (len("supervisor"), len("stave"))
    }

    /// Waits until every one of `nodes` has reached the height the others
    /// had when the fault was healed.
    async fn catch_up(&self, nodes: &[usize]) -> Result<(), String> {
        let mut target = 0;
        for i in (0..NODES).filter(|i| !nodes.contains(i)) {
            target = target.max(super::height(&self.net, i).await.unwrap_or(0));
        }
        let deadline = Instant::now() + RECOVERY;
        for &i in nodes {
            loop {
                let h = super::height(&self.net, i).await;
                if h.is_some_and(|h| h >= target) {
                    break;
                }
                if Instant::now() >= deadline {
                    return Err(format!(
                        "node{i} did not reach height {target} within {RECOVERY:?} after the fault healed (at {h:?})"
                    ));
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        Ok(())
    }

    pub fn millis(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(self.rng.gen_range(lo..hi))
    }
}

/// How many faults of each kind `log` holds.
pub fn count_by_kind(log: &[Fault]) -> std::collections::BTreeMap<Kind, usize> {
    let mut m = std::collections::BTreeMap::new();
    for f in log {
        *m.entry(f.kind).or_insert(0) += 1;
    }
    m
}
