//! The sending side: a pacer that releases txs at a fixed rate and one
//! sequential sender per lane, all sharing a cap on in-flight requests.
//!
//! Ordering: a Stave account's txs must reach its node in nonce order, since
//! CheckTx accepts only the account's next pending nonce. Each lane sends
//! its txs one after the other, waiting for each `broadcast_tx_sync` answer
//! before the next, always to the same endpoint, so arrival order is send
//! order. Parallelism comes from many lanes.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde::Deserialize;
use tokio::sync::{mpsc, Semaphore};

use super::plan::{rpc_body, sha256, Plan};
use super::AppKind;
use crate::tx::Code;

/// What happened to one broadcast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    /// CheckTx answered with a non-zero code.
    Rejected(u32),
    /// A JSON-RPC error (e.g. mempool full, tx already in cache), or a
    /// transport failure / timeout.
    Failed(String),
}

/// One sent tx.
pub struct Sent {
    pub idx: usize,
    /// When the pacer meant it to go out.
    pub intended: Instant,
    /// When the request was issued.
    pub submit: Instant,
    /// When the answer arrived.
    pub answered: Instant,
    pub outcome: Outcome,
}

/// What all lanes did.
#[derive(Default)]
pub struct SendResult {
    pub sent: Vec<Sent>,
    /// Txs released by the pacer but dropped because the send deadline passed,
    /// plus those the pacer never released.
    pub unsent: usize,
    /// One example log per rejection key.
    pub samples: HashMap<String, String>,
}

/// Settings of the sending phase.
pub struct SendConfig {
    pub app: AppKind,
    pub rpc: Vec<String>,
    pub rate: f64,
    pub concurrency: usize,
    /// No request is issued after this instant.
    pub send_deadline: Instant,
}

pub fn http_client(pool: usize) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(pool)
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(15))
        .build()?)
}

/// A key for a rejection: the code (and its Stave name) or the RPC error's
/// first clause.
pub fn outcome_key(app: AppKind, o: &Outcome) -> Option<String> {
    match o {
        Outcome::Accepted => None,
        Outcome::Rejected(c) => {
            let name = match app {
                AppKind::Stave => Code::ALL
                    .iter()
                    .find(|k| k.value() == *c)
                    .map(|k| k.name())
                    .unwrap_or("?"),
                AppKind::Kvstore => "",
            };
            Some(if name.is_empty() {
                format!("code {c}")
            } else {
                format!("code {c} {name}")
            })
        }
        Outcome::Failed(m) => Some(m.clone()),
    }
}

#[derive(Deserialize)]
struct RpcResp {
    result: Option<CheckRes>,
    error: Option<RpcErr>,
}

#[derive(Deserialize)]
struct CheckRes {
    #[serde(default)]
    code: u32,
    #[serde(default)]
    log: String,
}

#[derive(Deserialize)]
struct RpcErr {
    #[serde(default)]
    message: String,
    #[serde(default)]
    data: String,
}

/// The first clause of an error message, without the numbers that vary.
fn short(msg: &str) -> String {
    let head = msg.split([':', '(', ',']).next().unwrap_or(msg).trim();
    head.chars().take(60).collect()
}

/// One `broadcast_tx_sync`. Returns the outcome and a log line.
async fn broadcast(http: &reqwest::Client, url: &str, body: bytes::Bytes) -> (Outcome, String) {
    let resp = http
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await;
    let resp = match resp {
        Ok(r) => r,
        Err(e) if e.is_timeout() => return (Outcome::Failed("http timeout".into()), e.to_string()),
        Err(e) => return (Outcome::Failed("http error".into()), e.to_string()),
    };
    let status = resp.status();
    let bytes = match resp.bytes().await {
        Ok(b) => b,
        Err(e) => return (Outcome::Failed("http error".into()), e.to_string()),
    };
    match serde_json::from_slice::<RpcResp>(&bytes) {
        Ok(RpcResp {
            result: Some(r), ..
        }) if r.code == 0 => (Outcome::Accepted, String::new()),
        Ok(RpcResp {
            result: Some(r), ..
        }) => (Outcome::Rejected(r.code), r.log),
        Ok(RpcResp { error: Some(e), .. }) => {
            let text = if e.data.is_empty() { e.message } else { e.data };
            (Outcome::Failed(format!("rpc: {}", short(&text))), text)
        }
        _ => (
            Outcome::Failed(format!("http {}", status.as_u16())),
            String::from_utf8_lossy(&bytes).chars().take(200).collect(),
        ),
    }
}

/// The `expected N` of a Stave nonce rejection.
fn expected_nonce(log: &str) -> Option<u64> {
    let rest = &log[log.find("expected ")? + "expected ".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Known tx hashes → plan index; lanes add the hashes of re-signed txs.
pub type HashIndex = Arc<Mutex<HashMap<[u8; 32], usize>>>;

struct LaneOut {
    sent: Vec<Sent>,
    unsent: usize,
    samples: HashMap<String, String>,
}

#[allow(clippy::too_many_arguments)]
async fn lane(
    cfg: Arc<SendConfig>,
    plan: Arc<Plan>,
    hashes: HashIndex,
    http: reqwest::Client,
    sem: Arc<Semaphore>,
    url: String,
    start: Instant,
    mut rx: mpsc::UnboundedReceiver<usize>,
) -> LaneOut {
    let mut out = LaneOut {
        sent: Vec::new(),
        unsent: 0,
        samples: HashMap::new(),
    };
    let mut next_nonce = 0u64;
    while let Some(idx) = rx.recv().await {
        if Instant::now() >= cfg.send_deadline {
            out.unsent += 1;
            continue;
        }
        let planned = &plan.txs[idx];
        let body = if cfg.app == AppKind::Stave && planned.nonce != next_nonce {
            // An earlier tx of this account was refused: sign this one with
            // the nonce the node expects now.
            let raw = plan.resign(idx, next_nonce);
            hashes.lock().insert(sha256(&raw), idx);
            rpc_body(&raw, idx)
        } else {
            planned.body.clone()
        };
        let Ok(permit) = sem.acquire().await else {
            break;
        };
        let submit = Instant::now();
        let (outcome, log) = broadcast(&http, &url, body).await;
        let answered = Instant::now();
        drop(permit);
        match &outcome {
            Outcome::Accepted => next_nonce += 1,
            Outcome::Rejected(c) if *c == Code::Nonce.value() => {
                if let Some(n) = expected_nonce(&log) {
                    next_nonce = n;
                }
            }
            _ => {}
        }
        if let Some(k) = outcome_key(cfg.app, &outcome) {
            out.samples.entry(k).or_insert(log);
        }
        out.sent.push(Sent {
            idx,
            intended: start + Duration::from_secs_f64(idx as f64 / cfg.rate),
            submit,
            answered,
            outcome,
        });
    }
    out
}

/// Runs the sending phase from `start`. Returns when every lane is done.
pub async fn run(
    cfg: SendConfig,
    plan: Arc<Plan>,
    hashes: HashIndex,
    http: reqwest::Client,
    start: Instant,
) -> SendResult {
    let cfg = Arc::new(cfg);
    let lanes = plan.txs.iter().map(|t| t.lane).max().map_or(0, |m| m + 1);
    let sem = Arc::new(Semaphore::new(cfg.concurrency.max(1)));
    let mut senders = Vec::with_capacity(lanes);
    let mut handles = Vec::with_capacity(lanes);
    for l in 0..lanes {
        let (tx, rx) = mpsc::unbounded_channel();
        senders.push(tx);
        let url = cfg.rpc[l % cfg.rpc.len()].clone();
        handles.push(tokio::spawn(lane(
            cfg.clone(),
            plan.clone(),
            hashes.clone(),
            http.clone(),
            sem.clone(),
            url,
            start,
            rx,
        )));
    }

    // The pacer: every tick, release all txs due by now (elapsed × rate), so
    // the rate holds however coarse the timer is.
    let count = plan.txs.len();
    let mut released = 0usize;
    let mut tick = tokio::time::interval(Duration::from_millis(2));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    while released < count {
        tick.tick().await;
        let now = Instant::now();
        if now >= cfg.send_deadline {
            break;
        }
        let due = (((now - start).as_secs_f64() * cfg.rate) as usize + 1).min(count);
        while released < due {
            let _ = senders[plan.txs[released].lane].send(released);
            released += 1;
        }
    }
    drop(senders);

    let mut res = SendResult {
        unsent: count - released,
        ..Default::default()
    };
    for h in handles {
        if let Ok(o) = h.await {
            res.sent.extend(o.sent);
            res.unsent += o.unsent;
            for (k, v) in o.samples {
                res.samples.entry(k).or_insert(v);
            }
        }
    }
    res.sent.sort_by_key(|s| s.idx);
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_expected_nonce() {
        assert_eq!(
            expected_nonce("wrong nonce for ab12: expected 7, got 9"),
            Some(7)
        );
        assert_eq!(expected_nonce("something else"), None);
    }

    #[test]
    fn shortens_rpc_errors() {
        assert_eq!(
            short("mempool is full: number of txs 5000 (max: 5000), total txs bytes 1"),
            "mempool is full"
        );
        assert_eq!(
            short("tx already exists in cache"),
            "tx already exists in cache"
        );
    }
}
