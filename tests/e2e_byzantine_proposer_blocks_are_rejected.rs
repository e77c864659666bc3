//! Issue 27 item 4 on a real 4-validator localnet: node 3 is a Byzantine
//! proposer. A test-only ABCI proxy (`common/abci_proxy.rs`) between its
//! CometBFT and its Stave rewrites each `ResponsePrepareProposal` it
//! gives: the honest txs, then one hostile set in turn:
//!
//! - an undecodable tx;
//! - a valid tx twice (the second's nonce is spent);
//! - a bad signature;
//! - a tx signed for another chain;
//! - a nonce gap;
//! - declared `gas_limit`s summing past `max_block_gas`;
//! - a tx over the app's `max_tx_bytes`.
//!
//! The honest validators' ProcessProposal rejects each such block (counted
//! in `stave_proposals_rejected_total` by reason) and the chain goes on
//! with the next proposer: every honest tx commits, no hostile tx ever
//! does, and app hashes agree. The reasons are checked per node, not per
//! set (two sets share `NONCE`). How cheap a rejection is is tested in
//! process (`process_proposal_rejects_a_bad_block_without_paying_for_it`).
//! Oversized blocks are not sent: CometBFT v0.38 panics in its own
//! proposer when PrepareProposal answers more than `max_tx_bytes`, so the
//! in-process check is that Stave's PrepareProposal never does
//! (`one_account_many_txs_in_one_block`). Base port 26000.

#[path = "common/abci_proxy.rs"]
mod abci_proxy;
mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::localnet::{binaries, sample, Localnet, LocalnetConfig};
use ed25519_dalek::SigningKey;
use prost::Message;
use serde_json::json;
use stave::keyspaces::{kv::KvSet, params::Params};
use stave::tx::build::{sign_tx, sign_tx_with_gas};
use stave::tx::{Action, DecodedTx};

const WAIT: Duration = Duration::from_secs(120);
const BASE_PORT: u16 = 26000;
/// Each hostile set is proposed at least this many times.
const ROUNDS_EACH: u64 = 2;
/// Honest txs sent at most (the loop ends once every set was proposed).
const MAX_HONEST: u64 = 400;

/// One hostile set: its name, its txs, and the reason honest nodes give.
struct Hostile {
    name: &'static str,
    txs: Vec<Bytes>,
    reason: &'static str,
}

fn set(key: &str) -> Vec<Action> {
    vec![Action::KvSet(KvSet {
        key: key.as_bytes().to_vec(),
        value: b"hostile".to_vec(),
    })]
}

/// A fresh key per set, never used by an honest tx. The oversized tx's
/// value alone is one byte over the default `max_tx_bytes` (the localnet's).
fn key(n: u8) -> SigningKey {
    SigningKey::from_bytes(&[0xB0 ^ n; 32])
}

fn hostile_sets(chain: &str, max_gas: u64, tag: &str) -> Vec<Hostile> {
    let tx = |n: u8, nonce: u64| {
        Bytes::from(sign_tx(
            &key(n),
            chain,
            nonce,
            set(&format!("{tag}/{n}")),
            "",
        ))
    };
    let garbage = Bytes::from_static(b"\x0a\xff\xff\xff\xff\x0f not a tx");
    let undecodable = DecodedTx::decode(&garbage, &Params::default())
        .err()
        .map_or("?", |e| e.code().name());
    let mut forged = stave::proto::tx::Tx::decode(tx(3, 0).as_ref()).unwrap();
    forged.signature[7] ^= 0x20;
    let half = max_gas / 2 + 1;
    let gas = |n: u8| {
        Bytes::from(sign_tx_with_gas(
            &key(n),
            chain,
            0,
            set(&format!("{tag}/{n}")),
            "",
            half,
        ))
    };
    let big = vec![Action::KvSet(KvSet {
        key: format!("{tag}/big").into_bytes(),
        value: vec![7u8; Params::default().max_tx_bytes as usize + 1],
    })];
    vec![
        Hostile {
            name: "undecodable",
            txs: vec![garbage],
            reason: undecodable,
        },
        Hostile {
            name: "duplicate",
            txs: vec![tx(1, 0), tx(1, 0)],
            reason: "NONCE",
        },
        Hostile {
            name: "bad signature",
            txs: vec![forged.encode_to_vec().into()],
            reason: "SIGNATURE",
        },
        Hostile {
            name: "wrong chain",
            txs: vec![Bytes::from(sign_tx(
                &key(4),
                "another-chain",
                0,
                set(&format!("{tag}/4")),
                "",
            ))],
            reason: "WRONG_CHAIN",
        },
        Hostile {
            name: "nonce gap",
            txs: vec![tx(5, 7)],
            reason: "NONCE",
        },
        Hostile {
            name: "over max_block_gas",
            txs: vec![gas(6), gas(8)],
            reason: "OVER_MAX_BLOCK_GAS",
        },
        Hostile {
            name: "over max_tx_bytes",
            txs: vec![Bytes::from(sign_tx(&key(9), chain, 0, big, ""))],
            reason: "TX_TOO_LARGE",
        },
    ]
}

/// Points node `i`'s CometBFT at `socket` instead of Stave's own.
fn point_proxy_app(net: &Localnet, i: usize, socket: &std::path::Path) {
    let path = net.comet_home(i).join("config/config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut found = false;
    let edited: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("proxy_app =") {
                found = true;
                format!("proxy_app = \"unix://{}\"", socket.display())
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(found, "no proxy_app in {}", path.display());
    std::fs::write(&path, edited.join("\n") + "\n").unwrap();
}

async fn max_block_gas(net: &Localnet) -> u64 {
    let r = net
        .comet(0)
        .raw("consensus_params", json!({}))
        .await
        .unwrap();
    let g = &r["consensus_params"]["block"]["max_gas"];
    g.as_str()
        .and_then(|s| s.parse().ok())
        .or(g.as_u64())
        .unwrap()
}

fn rejected(metrics: &str, reason: &str) -> f64 {
    sample(
        metrics,
        &format!("stave_proposals_rejected_total{{reason=\"{reason}\"}}"),
    )
    .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_byzantine_proposer_blocks_are_rejected() {
    let Some(bins) = binaries("e2e_byzantine_proposer_blocks_are_rejected") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, BASE_PORT));
    net.up();
    net.wait_stave_height(0, 2, WAIT).await;
    let tag = format!("byz{:08x}", rand::random::<u32>());
    let sets = Arc::new(hostile_sets(&net.chain_id, max_block_gas(&net).await, &tag));

    // Node 3 behind the proxy: each of its proposals carries the next set.
    net.stop(3);
    let served = Arc::new(std::sync::Mutex::new(vec![0u64; sets.len()]));
    let (s, counts) = (sets.clone(), served.clone());
    let proxy = abci_proxy::start(
        &net.scratch.join("byzantine.sock"),
        &net.stave_home(3).join("abci.sock"),
        Arc::new(move |mut honest: Vec<Bytes>| {
            let mut c = counts.lock().unwrap();
            let i = (0..c.len()).min_by_key(|i| c[*i]).unwrap_or(0);
            c[i] += 1;
            honest.extend(s[i].txs.iter().cloned());
            honest
        }),
    );
    point_proxy_app(&net, 3, &proxy.socket);
    net.restart(3);

    // Honest traffic through node 0 until every set was proposed ROUNDS_EACH times.
    let honest = SigningKey::from_bytes(&[0x5A; 32]);
    let mut sent = 0u64;
    while served.lock().unwrap().iter().any(|n| *n < ROUNDS_EACH) {
        if sent >= MAX_HONEST {
            net.fail(&format!(
                "sets proposed {:?} after {sent} honest txs",
                served.lock().unwrap()
            ));
        }
        let tx = sign_tx(
            &honest,
            &net.chain_id,
            sent,
            set(&format!("{tag}/honest/{sent}")),
            "",
        );
        net.commit_tx(0, tx, &format!("honest tx {sent}")).await;
        sent += 1;
    }
    eprintln!(
        "{sent} honest txs committed while node 3 made {} hostile proposals {:?}",
        proxy.rewritten.load(Ordering::SeqCst),
        served.lock().unwrap()
    );

    // Every honest validator rejected every kind, for the reason expected, and nothing else.
    let reasons: std::collections::BTreeSet<&str> = sets.iter().map(|h| h.reason).collect();
    for i in 0..3 {
        let m = net.metrics(i).await.unwrap();
        for h in sets.iter() {
            assert!(
                rejected(&m, h.reason) >= 1.0,
                "node{i} never rejected {} ({})",
                h.name,
                h.reason
            );
        }
        let others: Vec<&str> = m
            .lines()
            .filter(|l| l.starts_with("stave_proposals_rejected_total{"))
            .filter(|l| !reasons.iter().any(|r| l.contains(&format!("\"{r}\""))))
            .collect();
        assert!(
            others.is_empty(),
            "node{i} rejected for other reasons: {others:?}"
        );
    }
    // No hostile tx was ever committed, on any node.
    for h in sets.iter() {
        for tx in &h.txs {
            for i in 0..4 {
                let c = net.comet(i).committed_tx(tx).await.unwrap();
                assert!(c.is_none(), "node{i} committed a {} tx: {c:?}", h.name);
            }
        }
    }
    net.assert_app_hashes_agree(WAIT).await;
    net.wait_status_ok(WAIT).await;
}
