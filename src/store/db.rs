//! Opening the chain store's RocksDB.

use std::path::Path;
use std::sync::Arc;

use rocksdb::{BlockBasedOptions, Cache, ColumnFamilyDescriptor, Options, DB};

use super::{cf, StoreError};

/// The memtable Bloom filter's size, as a fraction of the write buffer
/// (64 MiB by default, so about 1.3 MiB per memtable).
const MEMTABLE_BLOOM_RATIO: f64 = 0.02;

/// Opens (creating if needed) a RocksDB with all chain-store column families.
pub fn open(path: &Path, cache_bytes: usize) -> Result<Arc<DB>, StoreError> {
    std::fs::create_dir_all(path)?;
    let cache = Cache::new_lru_cache(cache_bytes);
    let mut db_opts = Options::default();
    db_opts.create_if_missing(true);
    db_opts.create_missing_column_families(true);
    db_opts.set_max_background_jobs(2);
    db_opts.set_keep_log_file_num(5);
    let cfs = cf::ALL.iter().map(|name| {
        let mut o = Options::default();
        let mut t = BlockBasedOptions::default();
        t.set_block_cache(&cache);
        t.set_bloom_filter(10.0, false);
        t.set_cache_index_and_filter_blocks(true);
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

/// The handle of a column family that `open` always creates.
pub fn handle<'a>(db: &'a DB, name: &str) -> &'a rocksdb::ColumnFamily {
    db.cf_handle(name)
        .expect("open() creates every column family in cf::ALL")
}
