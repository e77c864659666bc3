//! `stave loadtest`: an app-agnostic end-to-end load tool. It speaks only
//! CometBFT's JSON-RPC (`broadcast_tx_sync`, `/status`, `/block`), so the same
//! tool measures Stave and CometBFT's `kvstore` example identically.
//!
//! Phases: build and sign every tx up front (untimed); release them at a fixed
//! rate over lanes (one lane per Stave account, nonce-ordered, always the same
//! endpoint); meanwhile watch blocks on the first endpoint and record when each
//! tx was observed committed; stop `--timeout-secs` after the last send at the
//! latest; report.

mod plan;
mod poll;
mod send;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::{json, Value};

use super::Output;

/// The application behind the CometBFT nodes; decides the tx format.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppKind {
    /// Signed Stave txs, one `kv.set` each.
    Stave,
    /// CometBFT's kvstore example: ASCII `key=value` txs.
    Kvstore,
}

#[derive(clap::Args, Debug)]
pub struct LoadtestArgs {
    /// CometBFT RPC endpoints, comma-separated; txs are spread round-robin by
    /// account. The first one is also polled for blocks.
    #[arg(long, value_delimiter = ',', default_value = "http://127.0.0.1:26607")]
    pub rpc: Vec<String>,
    /// Tx format.
    #[arg(long, value_enum, default_value = "stave")]
    pub app: AppKind,
    /// Offered load, txs per second (fixed rate).
    #[arg(long, default_value_t = 100.0)]
    pub rate: f64,
    /// Total txs to send.
    #[arg(long, default_value_t = 1000)]
    pub count: usize,
    /// Number of lanes: for stave, fresh signing keys, each with its own nonce
    /// sequence from 0 and sent in order to one endpoint; for kvstore, the same
    /// number of sequential senders.
    #[arg(long, default_value_t = 64)]
    pub accounts: usize,
    /// Encoded tx size in bytes (stave: ±2 by padding the value; kvstore:
    /// exact). 0: a natural tx with a 32-byte value.
    #[arg(long, default_value_t = 0)]
    pub tx_bytes: usize,
    /// Stop waiting for commits this many seconds after the last send.
    #[arg(long, default_value_t = 60)]
    pub timeout_secs: u64,
    /// Maximum in-flight `broadcast_tx_sync` requests.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// Stop issuing requests this many seconds after the start, even if the
    /// nodes push back so hard that txs are left (reported as `unsent`).
    /// Default: twice the planned duration (count / rate) plus 30 s.
    #[arg(long)]
    pub max_send_secs: Option<f64>,
    /// Chain id for stave txs (default: node_info.network of the first endpoint).
    #[arg(long)]
    pub chain_id: Option<String>,
    /// Build the txs, print their sizes and exit without sending anything.
    #[arg(long)]
    pub dry_run: bool,
}

fn normalize(url: &str) -> String {
    let u = url.trim().trim_end_matches('/');
    if let Some(rest) = u.strip_prefix("tcp://") {
        format!("http://{rest}")
    } else if u.starts_with("http://") || u.starts_with("https://") {
        u.to_string()
    } else {
        format!("http://{u}")
    }
}

/// The `q` quantile (0..=1) of sorted values, nearest rank.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

fn dist(mut v: Vec<f64>) -> Value {
    v.sort_by(|a, b| a.total_cmp(b));
    json!({
        "p50": round(quantile(&v, 0.50), 1),
        "p90": round(quantile(&v, 0.90), 1),
        "p99": round(quantile(&v, 0.99), 1),
        "max": round(v.last().copied().unwrap_or(0.0), 1),
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub async fn run(a: LoadtestArgs, out: Output) -> anyhow::Result<()> {
    anyhow::ensure!(
        a.rate > 0.0 && a.rate.is_finite(),
        "--rate must be positive"
    );
    anyhow::ensure!(a.count >= 1, "--count must be at least 1");
    anyhow::ensure!(a.accounts >= 1, "--accounts must be at least 1");
    anyhow::ensure!(a.concurrency >= 1, "--concurrency must be at least 1");
    let rpc: Vec<String> = a
        .rpc
        .iter()
        .filter(|u| !u.trim().is_empty())
        .map(|u| normalize(u))
        .collect();
    anyhow::ensure!(!rpc.is_empty(), "--rpc needs at least one endpoint");
    let lanes = a.accounts.min(a.count);

    if a.dry_run {
        let chain = a
            .chain_id
            .clone()
            .unwrap_or_else(|| "stave-localnet".into());
        let p = plan::Plan::build(a.app, &chain, a.count, lanes, a.tx_bytes)?;
        let (min, max) = p.size_range();
        out.print(&json!({
            "app": format!("{:?}", a.app).to_lowercase(),
            "chain_id": if a.app == AppKind::Stave { chain } else { String::new() },
            "count": a.count,
            "tx_bytes_min": min,
            "tx_bytes_max": max,
        }));
        return Ok(());
    }

    let http = send::http_client(a.concurrency.max(16))?;
    // Every endpoint must answer; the first gives the chain id and the start height.
    let mut chain_id = String::new();
    let mut start_height = 0;
    for (i, u) in rpc.iter().enumerate() {
        let st: Value = http
            .get(format!("{u}/status"))
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("{u}/status: {e}"))?
            .json()
            .await?;
        if i == 0 {
            chain_id = st["result"]["node_info"]["network"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            start_height = st["result"]["sync_info"]["latest_block_height"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
        }
    }
    let chain_id = a.chain_id.clone().unwrap_or(chain_id);
    anyhow::ensure!(
        a.app == AppKind::Kvstore || !chain_id.is_empty(),
        "no chain id from {}/status",
        rpc[0]
    );

    let t_build = Instant::now();
    let plan = Arc::new(plan::Plan::build(
        a.app, &chain_id, a.count, lanes, a.tx_bytes,
    )?);
    let build_secs = t_build.elapsed().as_secs_f64();
    let (size_min, size_max) = plan.size_range();
    let hashes: send::HashIndex = Arc::new(Mutex::new(
        plan.txs
            .iter()
            .enumerate()
            .map(|(i, t)| (t.hash, i))
            .collect(),
    ));

    let timeout = Duration::from_secs(a.timeout_secs);
    let expected = Duration::from_secs_f64(a.count as f64 / a.rate);
    let start = Instant::now();
    // Sending may fall behind the schedule (back-pressure); it stops at the
    // send budget whatever is left.
    let send_budget = match a.max_send_secs {
        Some(s) if s > 0.0 && s.is_finite() => Duration::from_secs_f64(s),
        _ => expected * 2 + Duration::from_secs(30),
    };
    let send_deadline = start + send_budget;
    let hard_deadline = send_deadline + timeout + Duration::from_secs(30);

    let (done_tx, done_rx) = tokio::sync::watch::channel(None);
    let poller = tokio::spawn(poll::run(
        poll::PollConfig {
            url: rpc[0].clone(),
            start_height,
            timeout,
            hard_deadline,
        },
        send::http_client(4)?,
        hashes.clone(),
        done_rx,
    ));
    let sent = send::run(
        send::SendConfig {
            app: a.app,
            rpc: rpc.clone(),
            rate: a.rate,
            concurrency: a.concurrency,
            send_deadline,
        },
        plan.clone(),
        hashes,
        http,
        start,
    )
    .await;
    let accepted = sent
        .sent
        .iter()
        .filter(|s| s.outcome == send::Outcome::Accepted)
        .count();
    let first_send = sent.sent.iter().map(|s| s.submit).min();
    let last_send = sent.sent.iter().map(|s| s.submit).max();
    let _ = done_tx.send(Some((last_send.unwrap_or_else(Instant::now), accepted)));
    let polled = poller.await?;

    out.print(&report(
        &a,
        &rpc,
        &chain_id,
        (size_min, size_max),
        build_secs,
        &sent,
        &polled,
        first_send,
        last_send,
    ));
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn report(
    a: &LoadtestArgs,
    rpc: &[String],
    chain_id: &str,
    sizes: (usize, usize),
    build_secs: f64,
    sent: &send::SendResult,
    polled: &poll::PollResult,
    first_send: Option<Instant>,
    last_send: Option<Instant>,
) -> Value {
    let mut rejected: BTreeMap<String, usize> = BTreeMap::new();
    let mut latency = Vec::new();
    let mut check_ms = Vec::new();
    let mut lag_ms = Vec::new();
    let mut committed_accepted = 0usize;
    let mut last_commit: Option<Instant> = None;
    for s in &sent.sent {
        if let Some(k) = send::outcome_key(a.app, &s.outcome) {
            *rejected.entry(k).or_default() += 1;
        }
        check_ms.push(ms(s.answered - s.submit));
        lag_ms.push(ms(s.submit.saturating_duration_since(s.intended)));
        if let Some(&c) = polled.commits.get(&s.idx) {
            latency.push(ms(c.saturating_duration_since(s.submit)));
            last_commit = last_commit.max(Some(c));
            if s.outcome == send::Outcome::Accepted {
                committed_accepted += 1;
            }
        }
    }
    let accepted = sent
        .sent
        .iter()
        .filter(|s| s.outcome == send::Outcome::Accepted)
        .count();
    let committed = latency.len();
    let send_span = match (first_send, last_send) {
        (Some(f), Some(l)) => (l - f).as_secs_f64(),
        _ => 0.0,
    };
    let achieved = if send_span > 0.0 {
        (sent.sent.len() - 1) as f64 / send_span
    } else {
        0.0
    };
    let duration = match (first_send, last_commit) {
        (Some(f), Some(l)) => l.saturating_duration_since(f).as_secs_f64(),
        _ => 0.0,
    };
    let tps = if duration > 0.0 {
        committed as f64 / duration
    } else {
        0.0
    };
    let ours: Vec<&poll::BlockSeen> = polled.blocks.iter().filter(|b| b.ours > 0).collect();
    let samples: BTreeMap<&String, &String> = sent.samples.iter().collect();

    json!({
        "app": format!("{:?}", a.app).to_lowercase(),
        "rpc": rpc,
        "chain_id": chain_id,
        "accounts": a.accounts.min(a.count),
        "concurrency": a.concurrency,
        "tx_bytes": { "min": sizes.0, "max": sizes.1 },
        "offered_rate": a.rate,
        "count": a.count,
        "build_secs": round(build_secs, 2),
        "sent": sent.sent.len(),
        "unsent": sent.unsent,
        "accepted": accepted,
        "rejected_total": sent.sent.len() - accepted,
        "rejected": rejected,
        "committed": committed,
        "uncommitted_accepted": accepted - committed_accepted,
        "timed_out": polled.timed_out,
        "send_secs": round(send_span, 3),
        "achieved_offered_rate": round(achieved, 1),
        "duration_secs": round(duration, 3),
        "committed_tps": round(tps, 1),
        "latency_ms": dist(latency),
        "check_tx_rtt_ms": dist(check_ms),
        "send_lag_ms": dist(lag_ms),
        "blocks": {
            "first_height": ours.first().map_or(0, |b| b.height),
            "last_height": ours.last().map_or(0, |b| b.height),
            "with_our_txs": ours.len(),
            "max_txs_per_block": polled.blocks.iter().map(|b| b.total).max().unwrap_or(0),
        },
        "poll_rpc_errors": polled.rpc_errors,
        "rejection_samples": samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_use_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(quantile(&v, 1.0), 100.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }

    #[test]
    fn normalizes_urls() {
        assert_eq!(normalize("127.0.0.1:1/"), "http://127.0.0.1:1");
        assert_eq!(normalize("tcp://127.0.0.1:1"), "http://127.0.0.1:1");
    }
}
