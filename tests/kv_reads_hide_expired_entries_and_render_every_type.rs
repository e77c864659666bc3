//! Defects a black-box client found in `QueryService.KvGet`/`KvList` (issue
//! "A hardened network surface", item 7):
//! - `KvGet` served an entry that had expired but that the GC, bounded per
//!   block, had not removed yet; `KvList` and kvdb GET already hid it.
//! - A counter or a collection in the `default` database read as
//!   `found=true` with an empty value. Now a counter renders as its decimal
//!   (as kvdb GET does), a collection is refused with WRONGTYPE by `KvGet`
//!   and listed with its kind and no value by `KvList`.
//!
//! The handlers run over the real chain store, called as tonic calls them.

mod inproc;
use inproc::kv::*;
use inproc::*;
use stave::grpc::query::QueryServiceImpl;
use stave::keyspaces::kv::KvdbOp as Op;
use stave::proto::query::query_service_server::QueryService;
use stave::proto::query::{KvGetRequest, KvGetResponse, KvListRequest, KvListResponse};
use tonic::Request;

/// The client `QueryService` over `node`'s store (with an empty mempool).
fn query(node: &Node) -> QueryServiceImpl {
    let sigs = std::sync::Arc::new(stave::app::SigCache::default());
    let decoded = std::sync::Arc::new(stave::app::DecodeCache::new(1 << 20, 64));
    QueryServiceImpl {
        store: node.store.clone(),
        mempool: std::sync::Arc::new(stave::app::Mempool::new(
            node.store.clone(),
            sigs,
            decoded,
            16,
        )),
    }
}

async fn get(svc: &QueryServiceImpl, k: &str) -> Result<KvGetResponse, tonic::Status> {
    svc.kv_get(Request::new(KvGetRequest {
        signer: owner(1).to_vec(),
        key: k.as_bytes().to_vec(),
        ..Default::default()
    }))
    .await
    .map(|r| r.into_inner())
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

#[tokio::test(flavor = "multi_thread")]
async fn kv_get_hides_an_expired_entry_the_gc_has_not_removed_yet() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    // One row of GC a block: of three entries expiring together, two are
    // still in state one block after their expiry.
    node.init_chain(serde_json::json!({"params": {"kv_tokens": {"kvdb_gc_per_block": 1}}}))
        .await;
    let sets = ["a", "b", "c"]
        .iter()
        .map(|k| {
            kvdb(
                "default",
                k,
                Op::Set {
                    value: b("soon gone"),
                    ttl_ms: 1000,
                },
            )
        })
        .collect();
    node.block(1, vec![signed(1, 0, sets)]).await;
    let svc = query(&node);
    assert!(get(&svc, "a").await.unwrap().found, "live before expiry");
    node.block(2, vec![]).await; // the expiry block: GC removes one of three
    let left = node.store.prefix_list(b"kvdb/", None, 10).unwrap().len();
    assert_eq!(left, 2, "the GC budget leaves two expired entries in state");
    for k in ["a", "b", "c"] {
        let r = get(&svc, k).await.unwrap();
        assert!(!r.found, "{k}: expired entry served: {r:?}");
    }
    let list = list_all(&svc).await;
    assert!(list.entries.is_empty(), "{list:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn counters_render_and_collections_are_wrongtype_in_the_default_db() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let ops = vec![
        set("plain", "v"),
        kvdb("default", "n", Op::IncrBy(-42)),
        kvdb(
            "default",
            "h",
            Op::HSet {
                field: b("f"),
                value: b("x"),
            },
        ),
    ];
    let (_, r) = node.block(1, vec![signed(1, 0, ops)]).await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
    let svc = query(&node);

    let n = get(&svc, "n").await.unwrap();
    assert!(n.found);
    assert_eq!(
        (n.value.as_slice(), n.kind.as_str()),
        (&b"-42"[..], "counter")
    );
    let plain = get(&svc, "plain").await.unwrap();
    assert_eq!(
        (plain.value.as_slice(), plain.kind.as_str()),
        (&b"v"[..], "value")
    );
    let h = get(&svc, "h").await.unwrap_err();
    assert_eq!(h.code(), tonic::Code::FailedPrecondition);
    assert!(h.message().starts_with("WRONGTYPE"), "{}", h.message());

    let list = list_all(&svc).await;
    let rows: Vec<(String, String, String)> = list
        .entries
        .iter()
        .map(|e| {
            (
                String::from_utf8(e.key.clone()).unwrap(),
                e.kind.clone(),
                String::from_utf8(e.value.clone()).unwrap(),
            )
        })
        .collect();
    let row = |k: &str, kind: &str, v: &str| (k.to_string(), kind.to_string(), v.to_string());
    assert_eq!(
        rows,
        vec![
            row("h", "hash", ""),
            row("n", "counter", "-42"),
            row("plain", "value", "v"),
        ]
    );
}

/// Every `default`-db row of account 1, as KvList serves it.
async fn list_all(svc: &QueryServiceImpl) -> KvListResponse {
    svc.kv_list(Request::new(KvListRequest {
        signer: owner(1).to_vec(),
        ..Default::default()
    }))
    .await
    .unwrap()
    .into_inner()
}
