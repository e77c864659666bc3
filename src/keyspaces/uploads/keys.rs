//! Key builders of the `uploads/` keyspace.

const PREFIX: &[u8] = b"uploads/";

/// `uploads/`.
pub fn uploads_prefix() -> Vec<u8> {
    PREFIX.to_vec()
}

/// `uploads/{flac_cid}`. The cid is the whole suffix, so no two cids share a key.
pub fn upload_key(flac_cid: &[u8]) -> Vec<u8> {
    let mut k = uploads_prefix();
    k.extend_from_slice(flac_cid);
    k
}
