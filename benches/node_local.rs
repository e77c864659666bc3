//! Node-local data (issue 26): the private local KV's get and set latency
//! in process on a real local store (RocksDB, every set a synced write),
//! and the CRDT merge's throughput.
//!
//! Run: `cargo bench --bench node_local -- kv [ENTRIES] [OPS]` (defaults
//! 10,000 entries already stored, 2,000 timed gets and sets), or
//! `cargo bench --bench node_local -- merge [ENTRIES]` (default 100,000
//! entries per replica, half of the keys shared).

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

fn main() {
    match std::env::args()
        .filter(|a| !a.starts_with('-'))
        .nth(1)
        .as_deref()
    {
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
