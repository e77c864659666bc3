//! Action handlers of the `kv/` keyspace, one file each.

mod delete;
mod set;

pub use delete::KvDelete;
pub use set::KvSet;

use crate::keyspaces::params::Params;
use crate::tx::TxError;

fn check_key(key: &[u8], params: &Params) -> Result<(), TxError> {
    if key.is_empty() || key.len() > params.max_kv_key_bytes as usize {
        return Err(TxError::InvalidArgument(format!(
            "kv key is {} bytes; allowed 1..={}",
            key.len(),
            params.max_kv_key_bytes
        )));
    }
    Ok(())
}
