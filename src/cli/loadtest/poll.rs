//! The commit watcher: polls `/status` of one endpoint about every 25 ms and,
//! for each new height, fetches `/block` and records when our txs were seen
//! committed.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::Value;
use tokio::sync::watch;

use super::plan::sha256;
use super::send::HashIndex;

/// Set by the sender when every lane is done: (last submit, txs accepted).
pub type DoneSignal = watch::Receiver<Option<(Instant, usize)>>;

/// One block that carried txs.
pub struct BlockSeen {
    pub height: u64,
    pub ours: usize,
    pub total: usize,
}

#[derive(Default)]
pub struct PollResult {
    /// plan index → when its block was observed.
    pub commits: HashMap<usize, Instant>,
    pub blocks: Vec<BlockSeen>,
    pub last_height: u64,
    pub rpc_errors: usize,
    /// The watcher gave up with accepted txs still uncommitted.
    pub timed_out: bool,
}

pub struct PollConfig {
    pub url: String,
    pub start_height: u64,
    /// Stop waiting this long after the last send.
    pub timeout: Duration,
    /// Stop at this instant whatever happens.
    pub hard_deadline: Instant,
}

async fn get(http: &reqwest::Client, url: &str) -> anyhow::Result<Value> {
    let v: Value = http
        .get(url)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    if let Some(e) = v.get("error") {
        anyhow::bail!("{e}");
    }
    v.get("result")
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("no result from {url}"))
}

/// `latest_block_height` of `/status`.
pub async fn latest_height(http: &reqwest::Client, url: &str) -> anyhow::Result<u64> {
    let r = get(http, &format!("{url}/status")).await?;
    Ok(r["sync_info"]["latest_block_height"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0))
}

async fn block_hashes(
    http: &reqwest::Client,
    url: &str,
    height: u64,
) -> anyhow::Result<Vec<[u8; 32]>> {
    let r = get(http, &format!("{url}/block?height={height}")).await?;
    let txs = r["block"]["data"]["txs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    txs.iter()
        .map(|t| {
            let raw =
                base64::engine::general_purpose::STANDARD.decode(t.as_str().unwrap_or_default())?;
            Ok(sha256(&raw))
        })
        .collect()
}

pub async fn run(
    cfg: PollConfig,
    http: reqwest::Client,
    hashes: HashIndex,
    done: DoneSignal,
) -> PollResult {
    let mut res = PollResult {
        last_height: cfg.start_height,
        ..Default::default()
    };
    let mut tick = tokio::time::interval(Duration::from_millis(25));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let now = Instant::now();
        if let Some((last_send, accepted)) = *done.borrow() {
            if res.commits.len() >= accepted {
                break;
            }
            if now >= last_send + cfg.timeout {
                res.timed_out = true;
                break;
            }
        }
        if now >= cfg.hard_deadline {
            res.timed_out = true;
            break;
        }
        let h = match latest_height(&http, &cfg.url).await {
            Ok(h) => h,
            Err(_) => {
                res.rpc_errors += 1;
                continue;
            }
        };
        let observed = Instant::now();
        while res.last_height < h {
            let height = res.last_height + 1;
            let list = match block_hashes(&http, &cfg.url, height).await {
                Ok(l) => l,
                Err(_) => {
                    res.rpc_errors += 1;
                    break; // retried at the next tick
                }
            };
            let mut ours = 0;
            {
                let idx = hashes.lock();
                for hash in &list {
                    if let Some(&i) = idx.get(hash) {
                        if res.commits.insert(i, observed).is_none() {
                            ours += 1;
                        }
                    }
                }
            }
            if !list.is_empty() {
                res.blocks.push(BlockSeen {
                    height,
                    ours,
                    total: list.len(),
                });
            }
            res.last_height = height;
        }
    }
    res
}
