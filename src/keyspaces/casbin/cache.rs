//! Process-wide caches of compiled models, bounded by bytes (review B1).
//! Keyed by model id and the model's content digest (a hash chain over its
//! text and every rule change), so an entry is a pure function of the state
//! it was built from: a hit can never change a result, and neither can an
//! eviction.
//!
//! Two caches, each with its own byte budget:
//! - [`Use::Consensus`]: filled only by the consensus path (`RecordGrant`
//!   in FinalizeBlock and the proposal dry runs); default
//!   [`CONSENSUS_BUDGET`];
//! - [`Use::Query`]: filled by the public queries (`Enforce`,
//!   `CheckAccess`), which never read or fill the consensus cache; default
//!   [`QUERY_BUDGET`].
//!
//! Each entry is weighed by [`Compiled::memory_usage`] (every regex's
//! `memory_usage` plus the rule bytes; searches make their caches per call,
//! so an entry does not grow after it is built). Inserting evicts the least
//! recently used entries until the accounted bytes fit the budget; an entry
//! bigger than the whole budget is used once and not cached.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use super::eval::Compiled;

/// Default byte budget of the consensus cache.
pub const CONSENSUS_BUDGET: usize = 256 << 20;
/// Default byte budget of the query cache.
pub const QUERY_BUDGET: usize = 32 << 20;

/// Which cache a lookup uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// The consensus path: FinalizeBlock and proposals.
    Consensus,
    /// Public queries over gRPC.
    Query,
}

type Key = (String, [u8; 32]);

/// What a cache holds and has done, for tests and metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes accounted now (never above the budget).
    pub bytes: usize,
    pub entries: usize,
    /// Lookups that found an entry.
    pub hits: u64,
    /// Entries inserted.
    pub inserts: u64,
}

struct Entry {
    compiled: Arc<Compiled>,
    bytes: usize,
    last_use: u64,
}

/// One byte-budgeted LRU cache.
struct Budgeted {
    budget: usize,
    used: usize,
    clock: u64,
    hits: u64,
    inserts: u64,
    entries: BTreeMap<Key, Entry>,
    /// `last_use` → key: the eviction order.
    lru: BTreeMap<u64, Key>,
}

impl Budgeted {
    const fn new(budget: usize) -> Self {
        Budgeted {
            budget,
            used: 0,
            clock: 0,
            hits: 0,
            inserts: 0,
            entries: BTreeMap::new(),
            lru: BTreeMap::new(),
        }
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn get(&mut self, key: &Key) -> Option<Arc<Compiled>> {
        let now = self.tick();
        let entry = self.entries.get_mut(key)?;
        self.hits += 1;
        self.lru.remove(&entry.last_use);
        entry.last_use = now;
        self.lru.insert(now, key.clone());
        Some(entry.compiled.clone())
    }

    fn remove(&mut self, key: &Key) {
        if let Some(old) = self.entries.remove(key) {
            self.lru.remove(&old.last_use);
            self.used -= old.bytes;
        }
    }

    /// Evicts least recently used entries until `bytes` more fit.
    fn make_room(&mut self, bytes: usize) {
        while self.used + bytes > self.budget {
            let Some((_, key)) = self.lru.pop_first() else {
                return;
            };
            if let Some(old) = self.entries.remove(&key) {
                self.used -= old.bytes;
            }
        }
    }

    /// Caches `compiled` unless it alone exceeds the budget.
    fn put(&mut self, key: Key, compiled: Arc<Compiled>) {
        let bytes = compiled.memory_usage();
        self.remove(&key);
        if bytes > self.budget {
            return;
        }
        self.make_room(bytes);
        let now = self.tick();
        self.lru.insert(now, key.clone());
        self.used += bytes;
        self.inserts += 1;
        self.entries.insert(
            key,
            Entry {
                compiled,
                bytes,
                last_use: now,
            },
        );
    }

    fn set_budget(&mut self, budget: usize) {
        self.budget = budget;
        self.make_room(0);
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.lru.clear();
        self.used = 0;
    }
}

static CONSENSUS: LazyLock<Mutex<Budgeted>> =
    LazyLock::new(|| Mutex::new(Budgeted::new(CONSENSUS_BUDGET)));
static QUERY: LazyLock<Mutex<Budgeted>> = LazyLock::new(|| Mutex::new(Budgeted::new(QUERY_BUDGET)));

thread_local! {
    /// Set while [`as_query`] runs: consensus-path lookups use the query cache.
    static QUERY_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Restores the previous [`QUERY_ONLY`] on drop, also when unwinding.
struct Restore(bool);

impl Drop for Restore {
    fn drop(&mut self) {
        QUERY_ONLY.with(|q| q.set(self.0));
    }
}

/// Runs `f` with every lookup on this thread, consensus-path ones included,
/// served by the query cache. `TxService.Simulate` runs actions as a block
/// would, but a public call must never fill or churn the consensus cache.
/// Decisions and gas do not depend on which cache serves them.
pub fn as_query<R>(f: impl FnOnce() -> R) -> R {
    let _restore = Restore(QUERY_ONLY.with(|q| q.replace(true)));
    f()
}

fn cache(which: Use) -> &'static Mutex<Budgeted> {
    let which = if QUERY_ONLY.with(|q| q.get()) {
        Use::Query
    } else {
        which
    };
    match which {
        Use::Consensus => &CONSENSUS,
        Use::Query => &QUERY,
    }
}

fn key(model_id: &str, digest: &[u8; 32]) -> Key {
    (model_id.to_string(), *digest)
}

pub fn get(which: Use, model_id: &str, digest: &[u8; 32]) -> Option<Arc<Compiled>> {
    cache(which).lock().get(&key(model_id, digest))
}

pub fn put(which: Use, model_id: &str, digest: &[u8; 32], compiled: Arc<Compiled>) {
    cache(which).lock().put(key(model_id, digest), compiled);
}

/// Bytes the cache accounts for now (never above its budget).
pub fn accounted_bytes(which: Use) -> usize {
    cache(which).lock().used
}

/// Entries the cache holds now.
pub fn entries(which: Use) -> usize {
    cache(which).lock().entries.len()
}

/// The cache's counts (bytes, entries, hits, inserts).
pub fn stats(which: Use) -> Stats {
    let c = cache(which).lock();
    Stats {
        bytes: c.used,
        entries: c.entries.len(),
        hits: c.hits,
        inserts: c.inserts,
    }
}

/// The cache's byte budget.
pub fn budget(which: Use) -> usize {
    cache(which).lock().budget
}

/// Sets the cache's byte budget, evicting down to it (node start, tests).
pub fn set_budget(which: Use, bytes: usize) {
    cache(which).lock().set_budget(bytes);
}

/// Empties both caches (tests compare cold and warm results).
pub fn clear() {
    CONSENSUS.lock().clear();
    QUERY.lock().clear();
}
