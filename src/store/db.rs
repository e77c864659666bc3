//! Opening the chain store's RocksDB.

use std::path::Path;
use std::sync::Arc;

use rocksdb::{BlockBasedIndexType, BlockBasedOptions, Cache, ColumnFamilyDescriptor, Options, DB};

use super::{cf, StoreError};

/// The memtable Bloom filter's size, as a fraction of the write buffer.
const MEMTABLE_BLOOM_RATIO: f64 = 0.02;

/// What the chain store's RocksDB may hold in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    /// The block cache (uncompressed blocks, index and filter blocks).
    pub cache_bytes: usize,
    /// All memtables together: past it RocksDB flushes the column family
    /// with the oldest memtable (a flush trigger, not a hard cap: one large
    /// write batch can overshoot it until its flush ends).
    pub memtable_bytes: usize,
}

impl Default for Memory {
    fn default() -> Self {
        Memory {
            cache_bytes: 128 << 20,
            memtable_bytes: 64 << 20,
        }
    }
}

/// Opens (creating if needed) a RocksDB with all chain-store column families.
pub fn open(path: &Path, memory: Memory) -> Result<Arc<DB>, StoreError> {
    std::fs::create_dir_all(path)?;
    let cache = Cache::new_lru_cache(memory.cache_bytes);
    let mut db_opts = Options::default();
    db_opts.create_if_missing(true);
    db_opts.create_missing_column_families(true);
    db_opts.set_max_background_jobs(2);
    db_opts.set_keep_log_file_num(5);
    // One budget over every column family's memtables (a write buffer
    // manager, which flushes the oldest memtable past it), each memtable at
    // most a quarter of it: the tree's column families take most of a
    // block's writes.
    db_opts.set_db_write_buffer_size(memory.memtable_bytes);
    let per_cf = (memory.memtable_bytes / 4).max(1 << 20);
    let cfs = cf::ALL.iter().map(|name| {
        let mut o = Options::default();
        o.set_write_buffer_size(per_cf);
        // A third memtable, so a flush running behind never stalls writes.
        o.set_max_write_buffer_number(3);
        let mut t = BlockBasedOptions::default();
        t.set_block_cache(&cache);
        t.set_bloom_filter(10.0, false);
        // Index and filter blocks live in the block cache, cut into 4 KiB
        // partitions under a small pinned top level: a read loads only the
        // partitions it needs. Whole per-file index and filter blocks (about
        // 120 MiB at 10M keys) thrashed the cache, and each read missing
        // them parsed a block of hundreds of KiB.
        t.set_cache_index_and_filter_blocks(true);
        t.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        t.set_partition_filters(true);
        t.set_metadata_block_size(4096);
        t.set_pin_top_level_index_and_filter(true);
        t.set_pin_l0_filter_and_index_blocks_in_cache(true);
        o.set_block_based_table_factory(&t);
        o.set_compression_type(rocksdb::DBCompressionType::Lz4);
        // A Bloom filter over whole keys in each memtable: most reads in a
        // block miss (a fresh key, a signer that is no validator), and a
        // miss then skips the skip-list search of every memtable.
        o.set_memtable_prefix_bloom_ratio(MEMTABLE_BLOOM_RATIO);
        o.set_memtable_whole_key_filtering(true);
        ColumnFamilyDescriptor::new(*name, o)
    });
    let db = DB::open_cf_descriptors(&db_opts, path, cfs)?;
    Ok(Arc::new(db))
}

/// Opens an existing chain store read-only: no lock, so it works beside a
/// running node (it sees what was flushed or logged when it opened).
/// Only the meta column family, and few files at a time: enough for
/// [`super::ChainStore::peek`] on a store of any size or schema.
pub fn open_read_only(path: &Path) -> Result<Arc<DB>, StoreError> {
    let mut opts = Options::default();
    opts.set_max_open_files(16);
    let db = DB::open_cf_for_read_only(&opts, path, [cf::META], false)?;
    Ok(Arc::new(db))
}

/// The handle of a column family that `open` always creates.
pub fn handle<'a>(db: &'a DB, name: &str) -> &'a rocksdb::ColumnFamily {
    db.cf_handle(name)
        .expect("open() creates every column family in cf::ALL")
}
