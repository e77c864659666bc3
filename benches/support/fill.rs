//! Shared by the benches that fill a store directly: rows written through
//! the store's own `prepare` and `commit`, a version at a time, not by txs.

use stave::store::{ChainStore, MemState, Overlay, PruneConfig, StateWrite};

/// Writes the rows `entry(0..keys)` in versions of `per_version` rows, from
/// `*height + 1` on (block time: the height in seconds), and calls
/// `progress(height, rows written)` after each version.
pub fn put_versions(
    store: &ChainStore,
    height: &mut u64,
    keys: u64,
    per_version: u64,
    entry: impl Fn(u64) -> (Vec<u8>, Vec<u8>),
    mut progress: impl FnMut(u64, u64),
) {
    let base = MemState::default();
    let mut from = 0;
    while from < keys {
        let to = (from + per_version).min(keys);
        let mut o = Overlay::new(&base);
        for i in from..to {
            let (k, v) = entry(i);
            o.put_raw(k, v);
        }
        *height += 1;
        let p = store
            .prepare(*height, *height as i64 * 1_000_000_000, o.into_changes())
            .expect("prepare");
        store.commit(p, PruneConfig::default()).expect("commit");
        from = to;
        progress(*height, to);
    }
}
