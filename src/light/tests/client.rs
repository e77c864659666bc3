//! The light client end to end against the real node.

use std::time::Duration;

use super::node::node;
use super::{client, root, rpc};
use crate::light::{LightClient, LightError, LightOptions};

#[tokio::test]
async fn forward_from_root_2_to_8_matches_the_commit_app_hash() {
    let Some(node) = node("forward_from_root_2_to_8").await else {
        return;
    };
    let client = client(&node, 2, LightOptions::default()).await;
    let header = client.verified_header(8).await.expect("verified header 8");
    let commit = rpc(&node).signed_header(Some(8)).await.expect("commit 8");
    assert_eq!(header.height.value(), 8);
    assert_eq!(header.app_hash, commit.header.app_hash);
    assert_eq!(header.hash(), commit.header.hash());
}

#[tokio::test]
async fn forward_to_the_latest_height() {
    let Some(node) = node("forward_to_the_latest_height").await else {
        return;
    };
    let client = client(&node, 2, LightOptions::default()).await;
    let latest = client.latest_height().await.expect("latest");
    let header = client
        .verified_header(latest)
        .await
        .expect("verified latest");
    assert_eq!(header.height.value(), latest);
}

#[tokio::test]
async fn backward_from_root_8_to_3() {
    let Some(node) = node("backward_from_root_8_to_3").await else {
        return;
    };
    let client = client(&node, 8, LightOptions::default()).await;
    let header = client.verified_header(3).await.expect("verified header 3");
    let commit = rpc(&node).signed_header(Some(3)).await.expect("commit 3");
    assert_eq!(header.height.value(), 3);
    assert_eq!(header.hash(), commit.header.hash());
}

#[tokio::test]
async fn root_height_gives_the_root_header() {
    let Some(node) = node("root_height_gives_the_root_header").await else {
        return;
    };
    let client = client(&node, 5, LightOptions::default()).await;
    let header = client.verified_header(5).await.expect("verified header 5");
    assert_eq!(header.hash().as_bytes(), client.root().hash);
}

#[tokio::test]
async fn wrong_trust_hash_is_rejected() {
    let Some(node) = node("wrong_trust_hash_is_rejected").await else {
        return;
    };
    let mut root = root(&node, 2).await;
    root.hash[0] ^= 1;
    let client = LightClient::new(&node.rpc, root, LightOptions::default()).expect("client");
    match client.verified_header(8).await {
        Err(LightError::TrustHashMismatch {
            height: 2,
            expected,
            ..
        }) => {
            assert_eq!(expected, client.root().hash_hex());
        }
        other => panic!("expected TrustHashMismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn wrong_root_chain_id_is_rejected() {
    let Some(node) = node("wrong_root_chain_id_is_rejected").await else {
        return;
    };
    let mut root = root(&node, 2).await;
    let real = root.chain_id.clone();
    root.chain_id = "other-chain".into();
    let client = LightClient::new(&node.rpc, root, LightOptions::default()).expect("client");
    match client.verified_header(8).await {
        Err(LightError::ChainIdMismatch { expected, got }) => {
            assert_eq!((expected.as_str(), got), ("other-chain", real));
        }
        other => panic!("expected ChainIdMismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn root_older_than_the_trusting_period_is_rejected() {
    let Some(node) = node("root_older_than_the_trusting_period").await else {
        return;
    };
    let period = Duration::from_secs(1);
    let client = client(&node, 2, LightOptions::with_trusting_period(period)).await;
    // Make sure the root's header is over 1 s old (bounded: at most ~1.1 s).
    let root_time = rpc(&node)
        .signed_header(Some(2))
        .await
        .expect("commit 2")
        .header
        .time;
    let age = tendermint::Time::now()
        .duration_since(root_time)
        .unwrap_or_default();
    tokio::time::sleep(Duration::from_millis(1100).saturating_sub(age)).await;
    for height in [2, 8, 1] {
        match client.verified_header(height).await {
            Err(LightError::OutsideTrustingPeriod {
                root_time: t,
                period: p,
                ..
            }) => {
                assert_eq!((t, p), (root_time, period));
            }
            other => panic!("height {height}: expected OutsideTrustingPeriod, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn heights_out_of_bounds_are_rejected() {
    let Some(node) = node("heights_out_of_bounds_are_rejected").await else {
        return;
    };
    let client = client(&node, 2, LightOptions::default()).await;
    match client.verified_header(0).await {
        Err(LightError::BelowBounds { height: 0, min: 1 }) => {}
        other => panic!("expected BelowBounds, got {other:?}"),
    }
    let far = client.latest_height().await.expect("latest") + 1_000_000;
    match client.verified_header(far).await {
        Err(LightError::AboveBounds { height, max }) => assert!(height == far && max < far),
        other => panic!("expected AboveBounds, got {other:?}"),
    }
}

#[tokio::test]
async fn wait_for_height_waits_and_times_out() {
    let Some(node) = node("wait_for_height_waits_and_times_out").await else {
        return;
    };
    let client = client(&node, 2, LightOptions::default()).await;
    let latest = client.latest_height().await.expect("latest");
    let reached = client
        .wait_for_height(latest + 2, Duration::from_secs(20))
        .await;
    assert!(reached.expect("reached") >= latest + 2);
    let header = client.verified_header(latest + 2).await.expect("verified");
    assert_eq!(header.height.value(), latest + 2);
    let timeout = Duration::from_millis(600);
    match client.wait_for_height(u64::MAX, timeout).await {
        Err(LightError::WaitTimeout {
            height,
            latest: Some(_),
            waited,
            ..
        }) => {
            assert!(height == u64::MAX && waited >= Duration::from_millis(400));
        }
        other => panic!("expected WaitTimeout, got {other:?}"),
    }
}

#[tokio::test]
async fn unreachable_node_reports_the_url() {
    let root = crate::light::TrustRoot {
        chain_id: "c".into(),
        height: 2,
        hash: [0; 32],
    };
    let url = "http://127.0.0.1:47999";
    let client = LightClient::new(url, root, LightOptions::default()).expect("client");
    match client.verified_header(3).await {
        Err(e @ LightError::Rpc { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains(url) && msg.contains("onnection refused"),
                "{msg}"
            );
        }
        other => panic!("expected Rpc, got {other:?}"),
    }
}

#[tokio::test]
async fn rpc_error_names_the_url_and_the_node_message() {
    let Some(node) = node("rpc_error_names_the_url").await else {
        return;
    };
    let far = 1_000_000_000;
    match rpc(&node).signed_header(Some(far)).await {
        Err(e @ LightError::Rpc { .. }) => {
            let msg = e.to_string();
            eprintln!("{msg}");
            assert!(msg.contains(&format!("/commit?height={far}")), "{msg}");
        }
        other => panic!("expected Rpc, got {other:?}"),
    }
}
