//! `KvTokenParams`: the genesis caps of KV tokens and kvdb.

use serde::{Deserialize, Serialize};

use crate::proto::genesis as pb;

/// Caps of the kv area (domain type of `stave.genesis.v1.KvTokenParams`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KvTokenParams {
    pub max_key_bytes: u32,
    pub max_value_bytes: u32,
    pub max_tags: u32,
    pub max_tag_bytes: u32,
    pub min_protocol_name_chars: u32,
    pub max_protocol_name_chars: u32,
    pub max_live_tokens_per_controller: u64,
    pub kvdb_max_members: u64,
    pub kvdb_max_db_name_bytes: u32,
    pub kvdb_gc_per_block: u32,
}

impl Default for KvTokenParams {
    fn default() -> Self {
        KvTokenParams {
            max_key_bytes: 256,
            max_value_bytes: 64 * 1024,
            max_tags: 16,
            max_tag_bytes: 64,
            min_protocol_name_chars: 5,
            max_protocol_name_chars: 400,
            max_live_tokens_per_controller: 100_000,
            kvdb_max_members: 100_000,
            kvdb_max_db_name_bytes: 64,
            kvdb_gc_per_block: 1_000,
        }
    }
}

impl KvTokenParams {
    /// Rejects caps no network could run with.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("max_key_bytes", self.max_key_bytes as u64),
            ("max_tags", self.max_tags as u64),
            ("max_tag_bytes", self.max_tag_bytes as u64),
            (
                "max_protocol_name_chars",
                self.max_protocol_name_chars as u64,
            ),
            (
                "max_live_tokens_per_controller",
                self.max_live_tokens_per_controller,
            ),
            ("kvdb_max_members", self.kvdb_max_members),
            ("kvdb_max_db_name_bytes", self.kvdb_max_db_name_bytes as u64),
            ("kvdb_gc_per_block", self.kvdb_gc_per_block as u64),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(format!("kv_tokens.{name} must be positive"));
            }
        }
        if self.min_protocol_name_chars > self.max_protocol_name_chars {
            return Err(format!(
                "kv_tokens.min_protocol_name_chars {} > max_protocol_name_chars {}",
                self.min_protocol_name_chars, self.max_protocol_name_chars
            ));
        }
        if self.max_tags > 1024 {
            return Err(format!("kv_tokens.max_tags {} > 1024", self.max_tags));
        }
        if self.kvdb_max_db_name_bytes > MAX_DB_NAME_BYTES {
            return Err(format!(
                "kv_tokens.kvdb_max_db_name_bytes {} > {MAX_DB_NAME_BYTES}: every kvdb member, \
                 expiry and orphan key stores the database name's length in one byte",
                self.kvdb_max_db_name_bytes
            ));
        }
        Ok(())
    }
}

/// The longest database name a kvdb key can carry (its length is one byte).
pub const MAX_DB_NAME_BYTES: u32 = u8::MAX as u32;

impl From<&KvTokenParams> for pb::KvTokenParams {
    fn from(p: &KvTokenParams) -> Self {
        pb::KvTokenParams {
            max_key_bytes: p.max_key_bytes,
            max_value_bytes: p.max_value_bytes,
            max_tags: p.max_tags,
            max_tag_bytes: p.max_tag_bytes,
            min_protocol_name_chars: p.min_protocol_name_chars,
            max_protocol_name_chars: p.max_protocol_name_chars,
            max_live_tokens_per_controller: p.max_live_tokens_per_controller,
            kvdb_max_members: p.kvdb_max_members,
            kvdb_max_db_name_bytes: p.kvdb_max_db_name_bytes,
            kvdb_gc_per_block: p.kvdb_gc_per_block,
        }
    }
}

impl From<pb::KvTokenParams> for KvTokenParams {
    fn from(p: pb::KvTokenParams) -> Self {
        KvTokenParams {
            max_key_bytes: p.max_key_bytes,
            max_value_bytes: p.max_value_bytes,
            max_tags: p.max_tags,
            max_tag_bytes: p.max_tag_bytes,
            min_protocol_name_chars: p.min_protocol_name_chars,
            max_protocol_name_chars: p.max_protocol_name_chars,
            max_live_tokens_per_controller: p.max_live_tokens_per_controller,
            kvdb_max_members: p.kvdb_max_members,
            kvdb_max_db_name_bytes: p.kvdb_max_db_name_bytes,
            kvdb_gc_per_block: p.kvdb_gc_per_block,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_db_name_cap_over_one_length_byte_is_refused() {
        let at_limit = KvTokenParams {
            kvdb_max_db_name_bytes: 255,
            ..Default::default()
        };
        assert_eq!(at_limit.validate(), Ok(()));
        let over = KvTokenParams {
            kvdb_max_db_name_bytes: 256,
            ..Default::default()
        };
        let err = over.validate().unwrap_err();
        assert!(err.contains("kvdb_max_db_name_bytes 256 > 255"), "{err}");
    }
}
