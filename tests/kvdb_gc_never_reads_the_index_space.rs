//! Review m5: the kvdb GC decided what to delete from the `kvdbx/` expiry
//! queue in the index column family, so two nodes whose indexes differed
//! (a snapshot restore, a migration, a rebuild) forked. Now every queue the
//! GC reads is verifiable state. Two nodes run the same blocks; after the
//! entries and collections are queued, every `kvdb*` index row of one of
//! them is deleted behind its back. Both must still reach the same app
//! hash and the same state at every later block while the GC runs.

mod inproc;
use inproc::kv::*;
use inproc::*;
use stave::keyspaces::kv::KvdbOp as Op;

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn genesis() -> serde_json::Value {
    serde_json::json!({"params": {"kv_tokens": {"kvdb_gc_per_block": 2}}})
}

/// Block 1: expiring values, a sorted set, a set and a hash, each with
/// members. Block 2: the collections are deleted (their members orphaned).
fn blocks() -> Vec<Vec<bytes::Bytes>> {
    let mut first = Vec::new();
    for i in 0..5 {
        let ttl = Op::Set {
            value: b("v"),
            ttl_ms: 1500,
        };
        first.push(kvdb("d", &format!("t{i}"), ttl));
    }
    for m in ["a", "b", "c", "d", "e"] {
        let zadd = Op::ZAdd {
            member: b(m),
            score: "1.5".into(),
        };
        first.push(kvdb("d", "z", zadd));
    }
    first.push(kvdb(
        "d",
        "s",
        Op::SAdd(vec![b("1"), b("2"), b("3"), b("4")]),
    ));
    for f in ["x", "y", "w"] {
        let hset = Op::HSet {
            field: b(f),
            value: b("1"),
        };
        first.push(kvdb("d", "h", hset));
    }
    let second = ["z", "s", "h"].map(|k| kvdb("d", k, Op::Del)).to_vec();
    vec![vec![signed(1, 0, first)], vec![signed(1, 1, second)]]
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gc_gives_the_same_app_hash_without_the_index() {
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = Node::open(da.path());
    let mut c = Node::open(db.path());
    a.init_chain(genesis()).await;
    c.init_chain(genesis()).await;
    for (h, txs) in (1u64..).zip(blocks()) {
        let (ha, ra) = a.block(h, txs.clone()).await;
        let (hc, _) = c.block(h, txs).await;
        assert!(ra.tx_results.iter().all(|r| r.code.is_ok()), "{ra:?}");
        assert_eq!(ha, hc, "height {h}");
    }
    let queued = a.store.prefix_list(b"kvdb", None, usize::MAX).unwrap();
    assert!(!queued.is_empty(), "entries and queues in state");

    let path = c.shutdown();
    let wiped = wipe_index(&path, b"kvdb");
    assert!(wiped > 0, "the score index and its GC queue held rows");
    let mut c = Node::open(&path);

    // GC of 2 rows a block: the five values expire at height 3's time, the
    // 12 orphaned members follow over the next blocks.
    for h in 3..15u64 {
        let (ha, _) = a.block(h, vec![]).await;
        let (hc, _) = c.block(h, vec![]).await;
        assert_eq!(ha, hc, "height {h}: the GC read the index");
    }
    let left = a.store.prefix_list(b"kvdb", None, usize::MAX).unwrap();
    assert!(left.is_empty(), "GC finished: {left:?}");
    assert_eq!(state_dump(&a.store), state_dump(&c.store));
}
