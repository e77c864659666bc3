//! A process-wide cache of compiled models. Keyed by model id and the
//! model's content digest (a hash chain over its text and every rule change),
//! so an entry is a pure function of the state it was built from: a hit can
//! never change a result. Bounded; evicts the smallest key when full.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use super::eval::Compiled;

/// Entries kept at most.
pub const CAPACITY: usize = 512;

type Key = (String, [u8; 32]);

static CACHE: LazyLock<Mutex<BTreeMap<Key, Arc<Compiled>>>> =
    LazyLock::new(|| Mutex::new(BTreeMap::new()));

pub fn get(model_id: &str, digest: &[u8; 32]) -> Option<Arc<Compiled>> {
    CACHE.lock().get(&(model_id.to_string(), *digest)).cloned()
}

pub fn put(model_id: &str, digest: &[u8; 32], compiled: Arc<Compiled>) {
    let mut cache = CACHE.lock();
    while cache.len() >= CAPACITY {
        cache.pop_first();
    }
    cache.insert((model_id.to_string(), *digest), compiled);
}

/// Empties the cache (tests compare cold and warm results).
pub fn clear() {
    CACHE.lock().clear();
}
