//! Shared by the benches that prefill a store: wait for RocksDB to go
//! quiet before measuring.

use std::time::{Duration, Instant};

use stave::store::ChainStore;

/// Flushes every column family and waits until RocksDB has no flush or
/// compaction running or pending, so the measurement sees a node in steady
/// state rather than the background work the one-shot prefill leaves behind.
pub fn settle(store: &ChainStore) {
    let t = Instant::now();
    let db = store.db();
    let busy = |name: &str| {
        let cf = db.cf_handle(name).expect("cf");
        [
            "rocksdb.compaction-pending",
            "rocksdb.num-running-compactions",
            "rocksdb.num-running-flushes",
        ]
        .iter()
        .any(|p| {
            db.property_int_value_cf(&cf, *p)
                .ok()
                .flatten()
                .unwrap_or(0)
                > 0
        })
    };
    for name in stave::store::cf::ALL {
        let cf = db.cf_handle(name).expect("cf");
        db.flush_cf(&cf).expect("flush");
    }
    while stave::store::cf::ALL.iter().any(|n| busy(n)) {
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "background flushes and compactions settled in {:.1}s",
        t.elapsed().as_secs_f64()
    );
}
