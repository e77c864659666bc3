//! Node-local data (issue 26): the private local KV's get and set latency
//! in process on a real local store (RocksDB, every set a synced write),
//! and the CRDT merge's throughput.
//!
//! Run: `cargo bench --bench node_local -- kv [ENTRIES] [OPS]` (defaults
//! 10,000 entries already stored, 2,000 timed gets and sets), or
//! `cargo bench --bench node_local -- merge [ENTRIES]` (default 100,000
//! entries per replica, half of the keys shared), or
//! `cargo bench --bench node_local -- partition [ENTRIES] [MISSED]`: two
//! validators in process, anti-entropy over real gRPC on loopback (the
//! low localnet proof-of-work base): one writes ENTRIES (default 100,000)
//! records and the other copies them all; then the second misses MISSED
//! (default 10,000) more, and catches up. Time and bytes of each.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

use stave::crdt::{merge_db, Db, Entry, Stamp};
use stave::crypto::kek::Kek;
use stave::local::kv::LocalKv;
use stave::local::LocalStore;

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .filter(|a| !a.starts_with('-'))
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn percentile(ms: &mut [f64], p: f64) -> f64 {
    ms.sort_by(f64::total_cmp);
    let i = ((ms.len() as f64 - 1.0) * p).round() as usize;
    ms.get(i).copied().unwrap_or(0.0)
}

fn timed(n: usize, mut f: impl FnMut(usize)) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect()
}

fn kv(entries: usize, ops: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = LocalStore::open(&dir.path().join("local")).expect("local store");
    let kek = Kek::from_bytes([9; 32]);
    let kv = LocalKv {
        store: &store,
        kek: &kek,
    };
    let value = vec![0x5a; 256];
    let t = Instant::now();
    for i in 0..entries {
        kv.set("bench", format!("key-{i:08}").as_bytes(), &value, false, 1)
            .expect("set");
    }
    println!(
        "filled {entries} encrypted 256-byte entries in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let key = |i: usize| format!("key-{:08}", (i * 7919) % entries.max(1)).into_bytes();
    for (what, plaintext) in [("encrypted", false), ("plaintext", true)] {
        // The sets first, so the gets read rows of this profile.
        let mut sets = timed(ops, |i| {
            kv.set("bench", &key(i), &value, plaintext, 2).expect("set");
        });
        let mut gets = timed(ops, |i| {
            let got = kv.get("bench", &key(i)).expect("get").expect("found");
            assert_eq!(got.encrypted, !plaintext);
        });
        println!(
            "| {what} | {entries} | {ops} | {:.3} | {:.3} | {:.3} | {:.3} |",
            percentile(&mut gets, 0.5),
            percentile(&mut gets, 0.99),
            percentile(&mut sets, 0.5),
            percentile(&mut sets, 0.99),
        );
    }
}

/// A replica's database: counters, sets, hashes and values, by key.
fn replica(entries: usize, replica: u8, offset: usize) -> Db {
    let r = [replica; 32];
    let mut db = Db::new();
    for i in 0..entries {
        let k = offset + i;
        let s = Stamp::new(1_000 + k as u64, r);
        let mut e = Entry::default();
        let ok = match k % 4 {
            0 => e.incr_by(s, 3).is_ok(),
            1 => e
                .sadd(s, &[vec![replica], k.to_be_bytes().to_vec()])
                .is_ok(),
            2 => e.hset(s, b"f".to_vec(), vec![replica; 16]).is_ok(),
            _ => {
                e.set(s, vec![replica; 32], None);
                true
            }
        };
        assert!(ok, "a write to an empty entry");
        db.insert(format!("key-{k:08}").into_bytes(), e);
    }
    db
}

fn merge(entries: usize) {
    let a = replica(entries, 1, 0);
    let b = replica(entries, 2, entries / 2);
    let t = Instant::now();
    let m = merge_db(&a, &b);
    let secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let live = m.values().filter(|e| e.read(10_000_000).is_some()).count();
    let read_secs = t.elapsed().as_secs_f64();
    println!(
        "| {entries} + {entries} | {} | {:.1} | {:.0} | {:.1} | {live} |",
        m.len(),
        secs * 1e3,
        (2 * entries) as f64 / secs,
        read_secs * 1e3,
    );
}

#[path = "../tests/common/replica.rs"]
mod cluster;

fn exchanged(n: &cluster::Node, peer: [u8; 32]) -> (u64, u64) {
    let s = n.replica.stats.snapshot().remove(&peer).unwrap_or_default();
    (s.bytes_sent + s.bytes_received, s.bytes_accepted)
}

async fn catch_up(a: &cluster::Node, b: &cluster::Node, what: &str) {
    let peer = a.replica.me();
    let (x0, c0) = exchanged(b, peer);
    let t = Instant::now();
    b.round().await;
    let secs = t.elapsed().as_secs_f64();
    let (x1, c1) = exchanged(b, peer);
    let (x, c) = (x1 - x0, c1 - c0);
    let (_, full) = b.replica.records.footprint();
    assert_eq!(
        b.replica.records.len(),
        a.replica.records.len(),
        "caught up"
    );
    println!(
        "| {what} | {} | {secs:.2} | {x} | {c} | {:.2} | {:.2} |",
        b.replica.records.len(),
        x as f64 / c as f64,
        x as f64 / full as f64
    );
}

fn write(n: &cluster::Node, from: usize, to: usize) {
    use stave::replica::db::Op;
    for start in (from..to).step_by(1_000) {
        let ops: Vec<_> = (start..to.min(start + 1_000))
            .map(|k| {
                cluster::op(
                    "bench",
                    &format!("key-{k:08}"),
                    Op::Set(vec![0x5a; 100], None),
                )
            })
            .collect();
        n.write(&ops);
    }
}

fn partition(entries: usize, missed: usize) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let nodes = cluster::cluster(dir.path(), 2);
        let t = Instant::now();
        write(&nodes[0], 0, entries);
        let w = t.elapsed().as_secs_f64();
        println!("wrote {entries} 100-byte SETs in {w:.1} s ({:.0} records/s)", entries as f64 / w);
        println!("| catch-up | records after | seconds | bytes exchanged | bytes changed | ÷ changed | ÷ full copy |");
        println!("|---|---|---|---|---|---|---|");
        catch_up(&nodes[0], &nodes[1], "empty node copies all").await;
        write(&nodes[0], entries, entries + missed);
        catch_up(&nodes[0], &nodes[1], &format!("missed {missed}")).await;
    });
}

fn main() {
    match std::env::args()
        .filter(|a| !a.starts_with('-'))
        .nth(1)
        .as_deref()
    {
        Some("partition") => partition(arg(2, 100_000), arg(3, 10_000)),
        Some("merge") => {
            println!(
                "| entries merged | keys after | merge ms | entries/s | read-all ms | live keys |"
            );
            println!("|---|---|---|---|---|---|");
            merge(arg(2, 100_000));
        }
        _ => {
            println!("| profile | stored entries | timed ops | get p50 ms | get p99 ms | set p50 ms | set p99 ms |");
            println!("|---|---|---|---|---|---|---|");
            kv(arg(2, 10_000), arg(3, 2_000));
        }
    }
}
