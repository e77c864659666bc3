//! Trust roots and trust files.

use std::time::Duration;

use super::node::node;
use super::rpc;
use crate::light::{init_from_node, LightError, LightOptions, TrustFile, TrustRoot};

#[tokio::test]
async fn init_from_node_reads_the_latest_and_a_given_height() {
    let Some(node) = node("init_from_node").await else {
        return;
    };
    let latest = init_from_node(&node.rpc, None).await.expect("latest root");
    let at4 = init_from_node(&node.rpc, Some(4)).await.expect("root at 4");
    let header4 = rpc(&node)
        .signed_header(Some(4))
        .await
        .expect("commit 4")
        .header;
    assert!(latest.height >= 4);
    assert_eq!(latest.chain_id, header4.chain_id.to_string());
    assert_eq!(
        (at4.height, at4.hash.as_slice()),
        (4, header4.hash().as_bytes())
    );
}

#[test]
fn trust_file_round_trips() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("trust.json");
    let root = TrustRoot {
        chain_id: "stave-1".into(),
        height: 42,
        hash: [0xab; 32],
    };
    let file = TrustFile::new(&root, Duration::from_secs(3600));
    file.save(&path).expect("save");
    let loaded = TrustFile::load(&path).expect("load");
    assert_eq!(loaded, file);
    assert_eq!(loaded.root().expect("root"), root);
    assert_eq!(
        loaded.options(),
        LightOptions::with_trusting_period(Duration::from_secs(3600))
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    let keys = ["chain_id", "height", "hash", "trusting_period_secs"];
    assert!(keys.iter().all(|k| json.get(k).is_some()), "{json}");
}

#[test]
fn trust_file_with_a_bad_hash_is_rejected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("trust.json");
    let text = r#"{"chain_id":"c","height":1,"hash":"abcd","trusting_period_secs":10}"#;
    std::fs::write(&path, text).expect("write");
    match TrustFile::load(&path) {
        Err(LightError::TrustFile { path: p, reason }) => {
            assert!(
                p.ends_with("trust.json") && reason.contains("2 bytes"),
                "{p}: {reason}"
            );
        }
        other => panic!("expected TrustFile, got {other:?}"),
    }
    assert!(matches!(
        TrustFile::load(&dir.path().join("missing.json")),
        Err(LightError::TrustFile { .. })
    ));
}

#[test]
fn default_options_match_the_brief() {
    let o = LightOptions::default();
    assert_eq!(o.trusting_period, Duration::from_secs(24 * 3600));
    assert_eq!(o.clock_drift, Duration::from_secs(10));
    assert_eq!(
        (o.trust_level.numerator(), o.trust_level.denominator()),
        (2, 3)
    );
}
