//! The pure verification functions on real blocks, tampered with.

use std::collections::HashMap;
use std::sync::Mutex;

use tendermint::block::Header;
use tendermint::{block, Time};

use super::node::node;
use super::{absent_signatures, block, later, nil_votes, root, rpc};
use crate::light::{
    bisect, check_root, verify_forward, walk_back, LightBlock, LightError, LightOptions,
};

fn opts() -> LightOptions {
    LightOptions::default()
}

#[tokio::test]
async fn untampered_blocks_verify() {
    let Some(node) = node("untampered_blocks_verify").await else {
        return;
    };
    let (b2, b3, b8) = (
        block(&node, 2).await,
        block(&node, 3).await,
        block(&node, 8).await,
    );
    check_root(&root(&node, 2).await, &b2, &opts(), Time::now()).expect("root");
    verify_forward(&b2, &b3, &opts(), Time::now()).expect("2 -> 3");
    verify_forward(&b2, &b8, &opts(), Time::now()).expect("2 -> 8");
}

#[tokio::test]
async fn far_future_now_is_outside_the_trusting_period() {
    let Some(node) = node("far_future_now").await else {
        return;
    };
    let (b2, b8) = (block(&node, 2).await, block(&node, 8).await);
    let now = later(169 * 3600);
    let root = root(&node, 2).await;
    for result in [
        check_root(&root, &b2, &opts(), now),
        verify_forward(&b2, &b8, &opts(), now),
    ] {
        match result {
            Err(LightError::OutsideTrustingPeriod {
                root_time, now: n, ..
            }) => {
                assert_eq!((root_time, n), (b2.time(), now));
            }
            other => panic!("expected OutsideTrustingPeriod, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn target_without_signatures_is_rejected() {
    let Some(node) = node("target_without_signatures").await else {
        return;
    };
    let b2 = block(&node, 2).await;
    for height in [3, 8] {
        let mut target = block(&node, height).await;
        absent_signatures(&mut target);
        match verify_forward(&b2, &target, &opts(), Time::now()) {
            Err(LightError::Invalid {
                trusted: 2,
                height: h,
                reason,
            }) => {
                assert!(h == height && reason.contains("no signatures"), "{reason}");
            }
            other => panic!("height {height}: expected Invalid, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn target_with_nil_votes_lacks_trust_or_signers() {
    let Some(node) = node("target_with_nil_votes").await else {
        return;
    };
    let b2 = block(&node, 2).await;
    let (mut b3, mut b8) = (block(&node, 3).await, block(&node, 8).await);
    nil_votes(&mut b3);
    nil_votes(&mut b8);
    match verify_forward(&b2, &b3, &opts(), Time::now()) {
        Err(LightError::Invalid { reason, .. }) => {
            assert!(reason.contains("insufficient signers"), "{reason}")
        }
        other => panic!("adjacent: expected Invalid, got {other:?}"),
    }
    match verify_forward(&b2, &b8, &opts(), Time::now()) {
        Err(LightError::NotEnoughTrust {
            trusted: 2,
            height: 8,
            ..
        }) => {}
        other => panic!("skipping: expected NotEnoughTrust, got {other:?}"),
    }
}

#[tokio::test]
async fn target_with_other_chain_id_is_rejected() {
    let Some(node) = node("target_with_other_chain_id").await else {
        return;
    };
    let b2 = block(&node, 2).await;
    let mut b8 = block(&node, 8).await;
    b8.signed_header.header.chain_id = "other-chain".parse().expect("chain id");
    match verify_forward(&b2, &b8, &opts(), Time::now()) {
        Err(LightError::ChainIdMismatch { expected, got }) => {
            assert_eq!(
                (expected, got.as_str()),
                (b2.signed_header.header.chain_id.to_string(), "other-chain")
            );
        }
        other => panic!("expected ChainIdMismatch, got {other:?}"),
    }
}

/// The real blocks 2..=9, those at `tampered` with nil votes.
async fn blocks(node: &super::node::Node, tampered: &[u64]) -> HashMap<u64, LightBlock> {
    let mut out = HashMap::new();
    for h in 2..=9 {
        let mut b = block(node, h).await;
        if tampered.contains(&h) {
            nil_votes(&mut b);
        }
        out.insert(h, b);
    }
    out
}

/// Bisection from 2 to 8 over `blocks`; the heights it fetched and its result.
async fn run_bisect(
    blocks: &HashMap<u64, LightBlock>,
) -> (Vec<u64>, Result<LightBlock, LightError>) {
    let asked = Mutex::new(Vec::new());
    let fetch = |h: u64| {
        asked.lock().expect("lock").push(h);
        let b = blocks
            .get(&h)
            .cloned()
            .ok_or(LightError::AboveBounds { height: h, max: 9 });
        async move { b }
    };
    let trusted = blocks.get(&2).cloned().expect("block 2");
    let result = bisect(trusted, 8, &LightOptions::default(), Time::now(), fetch).await;
    (asked.into_inner().expect("lock"), result)
}

#[tokio::test]
async fn bisection_pivots_at_midpoints_and_stops() {
    let Some(node) = node("bisection_pivots").await else {
        return;
    };
    let (asked, result) = run_bisect(&blocks(&node, &[]).await).await;
    assert_eq!(
        (asked, result.expect("verified").height()),
        (vec![8], block::Height::from(8u32))
    );

    let (asked, result) = run_bisect(&blocks(&node, &[8]).await).await;
    assert_eq!(asked, vec![8, 5, 6, 7]);
    assert!(
        matches!(
            result,
            Err(LightError::Invalid {
                trusted: 7,
                height: 8,
                ..
            })
        ),
        "{result:?}"
    );

    let (asked, result) = run_bisect(&blocks(&node, &[3, 4, 5, 6, 7, 8]).await).await;
    assert_eq!(asked, vec![8, 5, 3]);
    assert!(
        matches!(
            result,
            Err(LightError::Invalid {
                trusted: 2,
                height: 3,
                ..
            })
        ),
        "{result:?}"
    );
}

/// The real headers 1..=8, keyed by height.
async fn headers(node: &super::node::Node) -> HashMap<u64, Header> {
    let rpc = rpc(node);
    let mut out = HashMap::new();
    for h in 1..=8 {
        out.insert(h, rpc.signed_header(Some(h)).await.expect("commit").header);
    }
    out
}

#[tokio::test]
async fn broken_hash_chain_is_rejected() {
    let Some(node) = node("broken_hash_chain").await else {
        return;
    };
    let mut headers = headers(&node).await;
    let top = headers.get(&8).cloned().expect("header 8");
    let fetch = |hs: &HashMap<u64, Header>, h: u64| {
        let r = hs
            .get(&h)
            .cloned()
            .ok_or(LightError::BelowBounds { height: h, min: 1 });
        async move { r }
    };
    let ok = walk_back(top.clone(), 1, |h| fetch(&headers, h))
        .await
        .expect("walk to 1");
    assert_eq!(ok.height.value(), 1);
    if let Some(h5) = headers.get_mut(&5) {
        h5.app_hash = tendermint::AppHash::try_from(vec![1u8; 8]).expect("app hash");
    }
    match walk_back(top.clone(), 3, |h| fetch(&headers, h)).await {
        Err(LightError::HashChainBroken { height: 5, .. }) => {}
        other => panic!("expected HashChainBroken at 5, got {other:?}"),
    }
    let mut high = top;
    high.height = block::Height::try_from(20_000u64).expect("height");
    match walk_back(high, 3, |h| fetch(&headers, h)).await {
        Err(LightError::BelowBounds {
            height: 3,
            min: 10_000,
        }) => {}
        other => panic!("expected BelowBounds, got {other:?}"),
    }
}
