//! The soak's oracle: every committed tx readable with its effect on
//! every node, app hashes equal at every height, and every exit and panic
//! in the nodes' logs matched by a fault in the driver's log.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;
use stave::client::StaveClient;
use stave::proto::casbin::casbin_query_service_client::CasbinQueryServiceClient;
use stave::proto::casbin::ModelRequest;
use stave::proto::governance::GroupRequest;
use stave::proto::kv::{KvdbRequest, TupleRequest};
use tonic::transport::Channel;

use super::faults::{Fault, Kind};
use super::setup::NODES;
use super::traffic::{Committed, Effect, KVDB, TOKEN_PID};
use crate::common::localnet::Localnet;

/// Waits (bounded) until every node has passed the highest height any had;
/// returns the lowest height all have.
pub async fn common_height(net: &Localnet) -> Result<u64, String> {
    let mut top = 0;
    for i in 0..NODES {
        top = top.max(super::height(net, i).await.unwrap_or(0));
    }
    let target = top + 2;
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut low = 0;
    for i in 0..NODES {
        loop {
            match super::height(net, i).await {
                Some(h) if h >= target => {
                    low = if low == 0 { h } else { low.min(h) };
                    break;
                }
                h if Instant::now() >= deadline => {
                    return Err(format!(
                        "node{i} never reached height {target} at the end (at {h:?})"
                    ))
                }
                _ => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        }
    }
    Ok(low)
}

/// Every node's header app hash at every height from the highest
/// earliest-kept block to `top`; the heights where they differ.
pub async fn app_hash_mismatches(net: &Localnet, top: u64) -> Result<Vec<String>, String> {
    let mut per_node: Vec<BTreeMap<u64, String>> = Vec::new();
    for i in 0..NODES {
        per_node.push(headers(net, i, top).await?);
    }
    let base = per_node
        .iter()
        .map(|m| m.keys().next().copied().unwrap_or(top))
        .max()
        .unwrap_or(1);
    let mut bad = Vec::new();
    for h in base..=top {
        let hashes: Vec<Option<&String>> = per_node.iter().map(|m| m.get(&h)).collect();
        if hashes.iter().any(|x| x.is_none() || *x != hashes[0]) {
            bad.push(format!("height {h}: {hashes:?}"));
        }
    }
    Ok(bad)
}

/// Node's header app hashes from its earliest kept block to `top`.
async fn headers(net: &Localnet, node: usize, top: u64) -> Result<BTreeMap<u64, String>, String> {
    let rpc = net.comet(node);
    let mut out = BTreeMap::new();
    let mut max = top;
    while max >= 1 {
        let min = max.saturating_sub(19).max(1);
        let params = json!({ "minHeight": min.to_string(), "maxHeight": max.to_string() });
        let r = rpc
            .raw("blockchain", params)
            .await
            .map_err(|e| format!("node{node} blockchain {min}..{max}: {e:#}"))?;
        let metas = r["block_metas"].as_array().cloned().unwrap_or_default();
        for m in &metas {
            let h: u64 = m["header"]["height"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let hash = m["header"]["app_hash"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            out.insert(h, hash);
        }
        if metas.is_empty() || min == 1 {
            break;
        }
        max = min - 1;
    }
    Ok(out)
}

/// Clients of one node.
struct Reader {
    stave: StaveClient,
    casbin: CasbinQueryServiceClient<Channel>,
}

/// For every committed tx whose effect some node does not show: the tx
/// and why, per node.
pub async fn unreadable(net: &Localnet, txs: &[Committed]) -> Result<Vec<String>, String> {
    let mut readers = Vec::new();
    for i in 0..NODES {
        let url = net.grpc_url(i);
        let stave = StaveClient::connect(&url)
            .await
            .map_err(|e| format!("node{i}: {e:#}"))?;
        let casbin = CasbinQueryServiceClient::connect(url)
            .await
            .map_err(|e| format!("node{i} casbin: {e}"))?;
        readers.push(Reader { stave, casbin });
    }
    let mut lost = Vec::new();
    for tx in txs {
        let mut why = Vec::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Err(e) = check(r, &tx.effect).await {
                why.push(format!("node{i}: {e}"));
            }
        }
        if !why.is_empty() {
            lost.push(format!("{tx:?}: {}", why.join("; ")));
        }
    }
    Ok(lost)
}

async fn check(r: &mut Reader, effect: &Effect) -> Result<(), String> {
    match effect {
        Effect::Kv { signer, key, value } => {
            let got = Localnet::kv_get(&mut r.stave, signer, key).await?;
            expect(got.as_ref() == Some(value), || format!("KvGet {got:?}"))
        }
        Effect::Token {
            controller,
            key,
            value,
        } => {
            let req = TupleRequest {
                protocol_id: TOKEN_PID.into(),
                key: key.clone(),
                controller: controller.clone(),
            };
            let t = r
                .stave
                .kv
                .tuple(req)
                .await
                .map_err(|e| format!("Tuple: {e}"))?
                .into_inner();
            let got = t.live.and_then(|l| l.token).map(|t| t.value);
            expect(got.as_ref() == Some(value), || {
                format!("live token value {got:?}")
            })
        }
        Effect::Kvdb {
            owner,
            key,
            field,
            value,
        } => {
            let req = KvdbRequest {
                op: "HGET".into(),
                owner: owner.clone(),
                db: KVDB.into(),
                key: key.clone(),
                arg: field.clone(),
                ..Default::default()
            };
            let g = r
                .stave
                .kv
                .kvdb(req)
                .await
                .map_err(|e| format!("Kvdb: {e}"))?
                .into_inner();
            expect(g.found && &g.value == value, || format!("HGET {g:?}"))
        }
        Effect::CasbinModel { model_id } => {
            let req = ModelRequest {
                model_id: model_id.clone(),
            };
            let m = r
                .casbin
                .model(req)
                .await
                .map_err(|e| format!("Model: {e}"))?
                .into_inner();
            expect(m.found, || "model not found".into())
        }
        Effect::GroupApplied {
            group_id,
            applicant,
        } => {
            let g = group(r, group_id).await?;
            expect(
                g.as_ref().is_some_and(|g| &g.applicant == applicant),
                || format!("group {g:?}"),
            )
        }
        Effect::GroupVote { group_id, voter } => {
            let g = group(r, group_id).await?;
            let voted = g
                .as_ref()
                .and_then(|g| g.election.as_ref())
                .is_some_and(|e| e.votes.iter().any(|v| &v.voter == voter && v.approve));
            expect(voted, || format!("no approval by the voter in {g:?}"))
        }
    }
}

async fn group(
    r: &mut Reader,
    group_id: &str,
) -> Result<Option<stave::proto::governance::GroupRecord>, String> {
    let req = GroupRequest {
        group_id: group_id.into(),
        prove: false,
    };
    let g = r
        .stave
        .governance
        .group(req)
        .await
        .map_err(|e| format!("Group: {e}"))?
        .into_inner();
    Ok(g.found.then_some(g.group).flatten())
}

fn expect(ok: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(why())
    }
}

/// Exits in supervisor logs and panics in Stave logs that no fault explains.
pub fn unexplained(net: &Localnet, faults: &[Fault]) -> Vec<String> {
    let mut bad = Vec::new();
    for node in 0..NODES {
        for (at, line) in lines(net, node, "supervisor") {
            if let Some((proc_, status)) = exit_of(&line) {
                if !faults
                    .iter()
                    .any(|f| explains_exit(f, node, at, proc_, status))
                {
                    bad.push(format!("node{node} supervisor.log: {line}"));
                }
            }
        }
        for (at, line) in lines(net, node, "stave") {
            if line.contains("panicked at") && !faults.iter().any(|f| explains_panic(f, node, at)) {
                bad.push(format!("node{node} stave.log: {line}"));
            }
        }
    }
    bad
}

/// Each line of a node's log with its byte offset.
fn lines(net: &Localnet, node: usize, what: &str) -> Vec<(u64, String)> {
    let text = std::fs::read(net.log_path(node, what)).unwrap_or_default();
    let mut at = 0u64;
    let mut out = Vec::new();
    for l in text.split(|&b| b == b'\n') {
        out.push((at, String::from_utf8_lossy(l).into_owned()));
        at += l.len() as u64 + 1;
    }
    out
}

/// ("stave" | "cometbft", status) of a supervisor "exited with status" line.
fn exit_of(line: &str) -> Option<(&'static str, i32)> {
    let status = line.split("exited with status ").nth(1)?;
    let status: i32 = status.split_whitespace().next()?.parse().ok()?;
    let proc_ = if line.contains("] stave (pid") {
        "stave"
    } else {
        "cometbft"
    };
    Some((proc_, status))
}

fn window_of(f: &Fault, node: usize, supervisor: bool, at: u64) -> bool {
    f.windows.iter().any(|w| {
        let (a, b) = if supervisor { w.supervisor } else { w.stave };
        w.node == node && a <= at && at < b
    })
}

fn explains_exit(f: &Fault, node: usize, at: u64, proc_: &str, status: i32) -> bool {
    window_of(f, node, true, at)
        && match (f.kind, proc_) {
            (Kind::KillStave, "stave") => status == 137,
            (Kind::KillCometbft, "cometbft") => status == 137,
            // 70: a write in the consensus path failed; 1: Stave could
            // not open its stores while the disk was still full.
            (Kind::DiskFull, "stave") => matches!(status, 1 | 70 | 101),
            (Kind::TruncateLocal, "stave") => status == 70 || status == 101,
            // CometBFT stops when its app dies under it.
            (Kind::KillStave | Kind::DiskFull | Kind::TruncateLocal, "cometbft") => true,
            _ => false,
        }
}

fn explains_panic(f: &Fault, node: usize, at: u64) -> bool {
    matches!(f.kind, Kind::DiskFull | Kind::TruncateLocal) && window_of(f, node, false, at)
}

/// Each disk-full fault: Stave exited 70 in its window and logged a line
/// naming ENOSPC and the path.
pub fn disk_full_findings(net: &Localnet, faults: &[Fault]) -> Vec<String> {
    let mut bad = Vec::new();
    for f in faults.iter().filter(|f| f.kind == Kind::DiskFull) {
        let node = f.nodes[0];
        let exited = lines(net, node, "supervisor")
            .iter()
            .any(|(at, l)| window_of(f, node, true, *at) && exit_of(l) == Some(("stave", 70)));
        if !exited {
            bad.push(format!(
                "node{node}'s disk filled at {:.0}s but stave did not exit 70",
                f.at_secs
            ));
        }
        if f.enospc_line.is_none() {
            bad.push(format!(
                "node{node}'s disk filled at {:.0}s but no stave.log line names ENOSPC and the path",
                f.at_secs
            ));
        }
    }
    bad
}
