use thiserror::Error;

/// Errors of the chain store. All but two are node faults (disk,
/// corruption, a broken invariant), never the fault of a transaction: the
/// consensus path treats them as fatal rather than as a tx result, because
/// turning them into a result would let one node's disk fork the chain.
/// The two that are not: `OutOfGas` (ends its tx) and `NoBlockTime` (a
/// query on a freshly restored node, answered UNAVAILABLE).
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("rocksdb: {0}")]
    Rocks(#[from] rocksdb::Error),
    #[error("corrupt record under key {key}: {reason}")]
    Corrupt { key: String, reason: String },
    #[error("merkle tree: {0}")]
    Tree(String),
    #[error("height {requested} is not available (earliest {earliest}, latest {latest})")]
    HeightUnavailable {
        requested: u64,
        earliest: u64,
        latest: u64,
    },
    #[error("commit for height {got} does not follow the committed height {committed:?}")]
    OutOfOrder { committed: Option<u64>, got: u64 },
    #[error(
        "the chain store was written with schema {found}, this build reads schema {want}: \
         run `stave reset --home <home>` and let the node replay or sync the chain, or run a \
         build that reads schema {found}"
    )]
    SchemaMismatch { found: u32, want: u32 },
    /// Not a fault: a node restored from a snapshot knows no block time
    /// until it commits its first block, so time-based answers wait.
    #[error(
        "no block time yet at height {height:?}: this node was restored from a snapshot and \
         has not committed a block since; retry after the next block"
    )]
    NoBlockTime { height: Option<u64> },
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    /// Not a fault: a tx's gas meter ran out during a read. It ends that tx
    /// with OUT_OF_GAS (see `TxError`'s `From<StoreError>`) and never
    /// escapes it.
    #[error("out of gas: {wanted} wanted, limit {limit}")]
    OutOfGas { limit: u64, wanted: u64 },
    /// Client side only: replaying a read over a proof reached a key the
    /// proof does not cover (`crate::proof::Proven`).
    #[error("the proof does not cover {space} key {key}")]
    Unproven { space: &'static str, key: String },
}

impl StoreError {
    /// A record under `key` failed to decode.
    pub fn corrupt(key: &[u8], reason: impl ToString) -> Self {
        StoreError::Corrupt {
            key: hex::encode(key),
            reason: reason.to_string(),
        }
    }
}

/// The protobuf message stored under `key`, if any: a row that does not
/// decode is [`StoreError::Corrupt`].
pub fn decode_row<M: prost::Message + Default>(
    key: &[u8],
    raw: Option<Vec<u8>>,
) -> Result<Option<M>, StoreError> {
    raw.map(|r| M::decode(r.as_slice()).map_err(|e| StoreError::corrupt(key, e)))
        .transpose()
}
