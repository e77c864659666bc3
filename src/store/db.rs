//! Opening the chain store's RocksDB.

use std::path::Path;
use std::sync::Arc;

use rocksdb::{BlockBasedOptions, Cache, ColumnFamilyDescriptor, Options, DB};

use super::{cf, StoreError};

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
