//! Key builders of the `params/` keyspace.

/// `params/current`: the one params record.
pub fn params_key() -> Vec<u8> {
    b"params/current".to_vec()
}
