//! TTL: an entry reads as absent from the first block whose time is at or
//! past its expiry; the end-of-block GC removes it and its members through
//! the expiry and orphan queues, a bounded amount per block.

mod inproc;
use inproc::kv::*;
use inproc::*;
use stave::keyspaces::kv::db::query as dbq;
use stave::keyspaces::kv::{KvType, KvdbOp as Op};

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn members_left(node: &Node) -> usize {
    node.store
        .prefix_list(b"kvdbm/", None, usize::MAX)
        .unwrap()
        .len()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_value_expires_exactly_at_its_block_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    // Block times are 1 s apart: set at height 1 with 2000 ms → expires at height 3's time.
    node.block(
        1,
        vec![signed(
            1,
            0,
            vec![kvdb(
                "d",
                "v",
                Op::Set {
                    value: b("x"),
                    ttl_ms: 2000,
                },
            )],
        )],
    )
    .await;
    assert_eq!(ttl(&node, 1, "d", "v"), 2000);
    node.block(2, vec![]).await;
    assert_eq!(
        ttl(&node, 1, "d", "v"),
        1000,
        "present one ms-second before"
    );
    node.block(3, vec![]).await;
    assert_eq!(ttl(&node, 1, "d", "v"), -2, "absent at the exact expiry");
    assert!(
        node.store
            .prefix_list(b"kvdb/", None, 10)
            .unwrap()
            .is_empty(),
        "GC removed the entry"
    );
    let acct = stave::keyspaces::accounts::AccountsRead::account(&node.store.view(), &owner(1))
        .unwrap()
        .unwrap();
    assert_eq!(
        acct.stored_bytes,
        stave::keyspaces::accounts::storage::ACCOUNT_RECORD_BYTES,
        "quota released; the account's own record stays charged"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_hash_loses_its_members_and_gc_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(serde_json::json!({"params": {"kv_tokens": {"kvdb_gc_per_block": 4}}}))
        .await;
    let fields: Vec<_> = (0..10)
        .map(|i| {
            kvdb(
                "d",
                "h",
                Op::HSet {
                    field: format!("f{i}").into_bytes(),
                    value: b("v"),
                },
            )
        })
        .collect();
    let mut ops = fields;
    ops.push(kvdb("d", "h", Op::Expire { ttl_ms: 1000 }));
    node.block(1, vec![signed(1, 0, ops)]).await;
    assert_eq!(members_left(&node), 10);
    let o = owner(1);
    assert_eq!(
        dbq::len(
            &node.store.view(),
            at(&o, "d", "h"),
            committed_ms(&node),
            KvType::Hash
        )
        .unwrap(),
        10
    );
    // Height 2 is the expiry block: the hash reads as absent at once, and a
    // write in that block starts a fresh hash.
    let (_, r) = node
        .block(
            2,
            vec![signed(
                1,
                1,
                vec![kvdb(
                    "d",
                    "h",
                    Op::HSet {
                        field: b("new"),
                        value: b("1"),
                    },
                )],
            )],
        )
        .await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
    let v = node.store.view();
    let (hall, _) = dbq::members(
        &v,
        at(&o, "d", "h"),
        committed_ms(&node),
        KvType::Hash,
        &[],
        100,
    )
    .unwrap();
    assert_eq!(hall, vec![(b("new"), b("1"))]);
    drop(v);
    // 10 orphans + the new field; at most 4 rows per block are collected.
    assert!(members_left(&node) > 1 && members_left(&node) <= 11);
    let mut h = 3;
    while members_left(&node) > 1 {
        let before = members_left(&node);
        node.block(h, vec![]).await;
        assert!(
            before - members_left(&node) <= 4,
            "GC did more than its budget"
        );
        h += 1;
        assert!(h < 20, "GC never finished");
    }
    assert!(node
        .store
        .prefix_list(b"kvdbgc/", None, 10)
        .unwrap()
        .is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_counter_with_ttl_keeps_counting_until_it_expires() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    node.block(
        1,
        vec![signed(
            1,
            0,
            vec![
                kvdb("d", "c", Op::IncrBy(1)),
                kvdb("d", "c", Op::Expire { ttl_ms: 3000 }),
            ],
        )],
    )
    .await;
    node.block(2, vec![signed(1, 1, vec![kvdb("d", "c", Op::IncrBy(1))])])
        .await;
    let o = owner(1);
    let get =
        |node: &Node| dbq::get(&node.store.view(), at(&o, "d", "c"), committed_ms(node)).unwrap();
    assert_eq!(get(&node), Some(b("2")));
    assert_eq!(ttl(&node, 1, "d", "c"), 2000);
    node.block(3, vec![]).await;
    assert_eq!(get(&node), Some(b("2")));
    node.block(4, vec![signed(1, 2, vec![kvdb("d", "c", Op::IncrBy(1))])])
        .await;
    assert_eq!(
        get(&node),
        Some(b("1")),
        "expired at height 4, then a fresh counter"
    );
    assert_eq!(ttl(&node, 1, "d", "c"), -1);
}
