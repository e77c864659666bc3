//! Issue 26 items 2–3 in process, over real gRPC on loopback sockets: three
//! validators write to their own records of shared and separate keys, and
//! converge by CRC_DIFF/SYNC rounds in any order, and by UPDATE with
//! forwarding; reads merge every owner's record.

#[path = "common/replica.rs"]
mod replica;

use std::collections::BTreeSet;

use proptest::prelude::*;
use replica::{cluster, op, Node};
use stave::crdt::Visible;
use stave::replica::db::Op;

fn read(n: &Node, db: &str, key: &str) -> Option<Visible> {
    n.replica
        .read(db, key.as_bytes(), stave::local::peer_auth::now_ms())
        .unwrap()
        .0
        .map(|v| v.value)
}

fn set(members: &[&str]) -> Option<Visible> {
    Some(Visible::Set(
        members.iter().map(|m| m.as_bytes().to_vec()).collect(),
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn three_replicas_converge_through_crc_diff_and_sync() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster(dir.path(), 3);
    for (i, n) in nodes.iter().enumerate() {
        let mut ops = vec![
            op(
                "notes",
                "shared",
                Op::SAdd(vec![format!("m{i}").into_bytes()]),
            ),
            op("notes", "hits", Op::Incr(i as i64 + 1)),
        ];
        for k in 0..200 {
            ops.push(op(
                "notes",
                &format!("n{i}/{k}"),
                Op::Set(vec![i as u8; 40], None),
            ));
        }
        assert_eq!(n.write(&ops), 202);
    }
    // Node 1 removes its own member; node 2 a member it has not seen yet
    // (which does nothing: a removal applies to what the writer sees).
    nodes[1].write(&[op("notes", "shared", Op::SRem(vec![b"m1".to_vec()]))]);
    nodes[2].write(&[op("notes", "shared", Op::SRem(vec![b"m0".to_vec()]))]);
    for _ in 0..2 {
        for n in nodes.iter().rev() {
            n.round().await;
        }
    }
    for n in &nodes {
        assert_eq!(n.replica.records.len(), 3 * 202, "every record everywhere");
        assert_eq!(read(n, "notes", "shared"), set(&["m0", "m2"]));
        assert_eq!(read(n, "notes", "hits"), Some(Visible::Counter(6)));
        assert_eq!(read(n, "notes", "n2/17"), Some(Visible::Value(vec![2; 40])));
    }
    // Converged nodes agree at the root: a round exchanges one CRC query.
    let (c, v) = nodes[0].ctx();
    for t in &v.peers {
        let st = nodes[0].syncer.round(&c, &v, t).await.unwrap();
        assert_eq!((st.crc_queries, st.syncs, st.accepted), (1, 0, 0));
    }
    // A write after convergence: node 1 reads it after one round.
    nodes[0].write(&[op("notes", "shared", Op::SRem(vec![b"m2".to_vec()]))]);
    nodes[1].round().await;
    assert_eq!(read(&nodes[1], "notes", "shared"), set(&["m0"]));
    // Keys list across owners, each once.
    let (keys, more) = nodes[1].replica.records.keys("notes", b"", 5).unwrap();
    assert_eq!(keys[0], b"hits".to_vec());
    assert!(more);
}

#[tokio::test(flavor = "multi_thread")]
async fn updates_spread_and_are_forwarded_once() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster(dir.path(), 3);
    nodes[0].write(&[op("ops", "notice", Op::Set(b"maintenance".to_vec(), None))]);
    // Node 0 tells both peers; they pull the value from node 0.
    nodes[0].step().await;
    for n in &nodes[1..] {
        n.step().await;
        assert_eq!(
            read(n, "ops", "notice"),
            Some(Visible::Value(b"maintenance".to_vec()))
        );
    }
    // Forwarding: node 1 and node 2 announce to each other and to nobody
    // else twice; the record is known there, so nothing more moves.
    let before = nodes[2].replica.stats.snapshot();
    for n in &nodes {
        n.step().await;
    }
    for n in &nodes {
        n.step().await;
    }
    assert!(nodes.iter().all(|n| n.replica.queues.is_idle()));
    let after = nodes[2].replica.stats.snapshot();
    let accepted = |s: &std::collections::BTreeMap<[u8; 32], stave::replica::stats::PeerStats>| {
        s.values().map(|p| p.records_accepted).sum::<u64>()
    };
    assert_eq!(
        accepted(&after),
        accepted(&before),
        "a known record is not taken again"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_that_missed_writes_catches_up_with_few_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster(dir.path(), 2);
    let batch = |from: usize, to: usize| -> Vec<_> {
        (from..to)
            .map(|k| {
                op(
                    "bulk",
                    &format!("k{k:05}"),
                    Op::Set(format!("value {k}").into_bytes(), None),
                )
            })
            .collect()
    };
    nodes[0].write(&batch(0, 2_000));
    nodes[1].round().await;
    assert_eq!(nodes[1].replica.records.len(), 2_000);
    nodes[0].write(&batch(2_000, 3_000));
    let peer = nodes[0].replica.me();
    let before = nodes[1]
        .replica
        .stats
        .snapshot()
        .remove(&peer)
        .unwrap_or_default();
    nodes[1].round().await;
    let after = nodes[1]
        .replica
        .stats
        .snapshot()
        .remove(&peer)
        .unwrap_or_default();
    assert_eq!(nodes[1].replica.records.len(), 3_000);
    let exchanged =
        (after.bytes_sent + after.bytes_received) - (before.bytes_sent + before.bytes_received);
    let changed = after.bytes_accepted - before.bytes_accepted;
    let ratio = exchanged as f64 / changed as f64;
    eprintln!("catch-up: {exchanged} bytes exchanged for {changed} changed ({ratio:.2}x)");
    assert!(
        ratio <= 3.0,
        "{exchanged} bytes exchanged for {changed} bytes changed: {ratio:.2}x"
    );
}

/// A peer that allows fewer round calls than a round makes throttles the
/// asker (`RESOURCE_EXHAUSTED`): the asker waits and retries, and the
/// round still copies everything; a throttled round call is not counted
/// as a refusal.
#[tokio::test(flavor = "multi_thread")]
async fn a_throttled_round_waits_and_completes() {
    let dir = tempfile::tempdir().unwrap();
    let strict = |i: usize| stave::replica::ReplicaConfig {
        round_calls_per_sec: if i == 0 { 1 } else { 100 },
        round_calls_burst: if i == 0 { 1 } else { 200 },
        ..replica::config()
    };
    let (nodes, _) = replica::cluster_with(dir.path(), 2, |_| true, strict);
    let ops: Vec<_> = (0..1_500)
        .map(|k| op("bulk", &format!("k{k:05}"), Op::Set(b"v".to_vec(), None)))
        .collect();
    nodes[0].write(&ops);
    let refused = replica::metric("stave_replica_refused_total", "rate");
    let throttled = replica::metric("stave_replica_round_calls_throttled_total", "");
    // a CrcDiff and two Sync pages (1,000 records read a call): the
    // second call finds the peer's bucket of one empty
    let (c, v) = nodes[1].ctx();
    nodes[1].syncer.round(&c, &v, &v.peers[0]).await.unwrap();
    assert_eq!(nodes[1].replica.records.len(), 1_500);
    assert!(replica::metric("stave_replica_round_calls_throttled_total", "") > throttled);
    assert_eq!(
        replica::metric("stave_replica_refused_total", "rate"),
        refused
    );
}

/// UEP-20: the TTL and proof-of-work fields are outside the owner's
/// signature, so any node may extend a record's TTL with fresh work, and
/// the extended version wins everywhere.
#[tokio::test(flavor = "multi_thread")]
async fn anyone_may_extend_a_ttl() {
    use stave::replica::{md::Metadata, pow, store::Put};
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster(dir.path(), 3);
    nodes[0].write(&[op("ops", "notice", Op::Set(b"hi".to_vec(), None))]);
    nodes[1].round().await;
    let (dk, held) = nodes[1]
        .replica
        .records
        .scan(&[], None, 10)
        .unwrap()
        .0
        .remove(0);
    let value = nodes[1]
        .replica
        .records
        .value(&held.md.hash)
        .unwrap()
        .unwrap();
    let mut md: Metadata = held.md;
    md.ttl += 30;
    assert!(pow::solve(
        &mut md,
        stave::replica::LOCALNET_POW_BASE,
        0,
        10_000_000
    ));
    let extended = stave::replica::store::Held { md, ..held.clone() };
    let put = Put {
        datakey: dk,
        held: extended,
        value,
    };
    assert_eq!(
        nodes[1].replica.records.put(vec![put]).unwrap().keys,
        vec![dk]
    );
    for _ in 0..2 {
        nodes[2].round().await;
        nodes[0].round().await;
    }
    for n in &nodes {
        let h = n.replica.records.get(&dk).unwrap().unwrap();
        assert_eq!(h.md.ttl, held.md.ttl + 30, "the extension is taken");
        assert_eq!(h.md.sig, held.md.sig, "under the owner's own signature");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Any interleaving of writes and pairwise rounds ends, after a final
    /// round everywhere, with every node reading the same.
    #[test]
    fn any_interleaving_of_rounds_converges(script in prop::collection::vec((0usize..3, 0usize..4, 0u8..6), 1..30)) {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let nodes = cluster(dir.path(), 3);
            for (who, action, m) in &script {
                let n = &nodes[*who];
                let member = vec![*m];
                match action {
                    0 => { n.write(&[op("p", "s", Op::SAdd(vec![member]))]); }
                    1 => { n.write(&[op("p", "s", Op::SRem(vec![member]))]); }
                    2 => { n.write(&[op("p", "c", Op::Incr(i64::from(*m)))]); }
                    _ => n.round().await,
                }
            }
            for n in &nodes { n.round().await; }
            for n in &nodes { n.round().await; }
            let seen: BTreeSet<_> = nodes.iter().map(|n| (format!("{:?}", read(n, "p", "s")), format!("{:?}", read(n, "p", "c")))).collect();
            prop_assert_eq!(seen.len(), 1, "{:?}", seen);
            Ok(())
        })?;
    }
}

/// The content inventory travels like any record: node 0 learns that
/// node 1 announces both cids and node 2 only one, ranks the less loaded
/// first, and sees an announcement withdrawn.
#[tokio::test(flavor = "multi_thread")]
async fn the_content_inventory_names_only_who_announces() {
    use stave::local::worker::Announcements;
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster(dir.path(), 3);
    let (a, b) = (b"cid-a".to_vec(), b"cid-b".to_vec());
    assert!(
        nodes[1]
            .replica
            .publish_inventory(&[a.clone(), b.clone()])
            .unwrap()
            > 0
    );
    assert!(
        nodes[2]
            .replica
            .publish_inventory(std::slice::from_ref(&b))
            .unwrap()
            > 0
    );
    assert_eq!(
        nodes[1]
            .replica
            .publish_inventory(&[a.clone(), b.clone()])
            .unwrap(),
        0,
        "unchanged: nothing written"
    );
    nodes[0].round().await;
    let key = |i: usize| replica::local::op_key(i);
    assert_eq!(nodes[0].replica.announcing(&a), BTreeSet::from([key(1)]));
    assert_eq!(
        nodes[0].replica.announcing(&b),
        BTreeSet::from([key(1), key(2)])
    );
    assert!(nodes[0].replica.announcing(b"cid-c").is_empty());
    let ranked: Vec<_> = nodes[0]
        .replica
        .holders(&b)
        .unwrap()
        .into_iter()
        .map(|h| (h.operator_key, h.load))
        .collect();
    assert_eq!(
        ranked,
        vec![(key(2).to_vec(), 1), (key(1).to_vec(), 2)],
        "least loaded first"
    );

    // node 1 drops cid-a
    nodes[1]
        .replica
        .publish_inventory(std::slice::from_ref(&b))
        .unwrap();
    nodes[0].round().await;
    assert!(nodes[0].replica.announcing(&a).is_empty());
}
