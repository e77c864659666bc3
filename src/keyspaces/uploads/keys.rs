//! Key builders of the `uploads/` keyspace.

const PREFIX: &[u8] = b"uploads/";
const BY_CONTENT: &[u8] = b"uploads_by_content/";

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

/// `uploads_by_content/{encrypted_cid}` (verifiable state): the `flac_cid`
/// of the upload whose encrypted blob is `encrypted_cid`, so a peer's
/// content request finds its upload without a scan. It is state, not an
/// index, because `UploadComplete` refuses a blob another upload claims.
pub fn upload_by_content_key(encrypted_cid: &[u8]) -> Vec<u8> {
    let mut k = BY_CONTENT.to_vec();
    k.extend_from_slice(encrypted_cid);
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_key_is_outside_the_primary_keyspace() {
        assert!(!upload_by_content_key(b"x").starts_with(&uploads_prefix()));
        assert_eq!(
            upload_by_content_key(b"ab"),
            b"uploads_by_content/ab".to_vec()
        );
    }
}
