//! Key builders of the `uploads/` keyspace.

const PREFIX: &[u8] = b"uploads/";
const BY_CONTENT: &[u8] = b"uploads_by_content/";
const BY_IMAGE: &[u8] = b"uploads_by_image/";
const GROUP_USAGE: &[u8] = b"uploads_usage/group/";
const UNGROUPED_USAGE: &[u8] = b"uploads_usage/ungrouped";
const VALIDATOR_USAGE: &[u8] = b"uploads_usage/validator/";

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

/// `uploads_by_image/{image_cid}` (verifiable state): the `flac_cid` of
/// the first upload that carried the image. Images may be shared (one
/// cover for a whole album), so the first upload keeps the entry; a peer's
/// request for the image finds an upload that names it without a scan.
pub fn upload_by_image_key(image_cid: &[u8]) -> Vec<u8> {
    let mut k = BY_IMAGE.to_vec();
    k.extend_from_slice(image_cid);
    k
}

/// The content bytes (`(encrypted_size + image sizes) × replicas`, 8
/// bytes BE) charged to
/// a pool: `uploads_usage/group/{group_id}` for a group's uploads,
/// `uploads_usage/ungrouped` (one pool for all) when `group_id` is empty.
pub fn content_pool_key(group_id: &str) -> Vec<u8> {
    if group_id.is_empty() {
        return UNGROUPED_USAGE.to_vec();
    }
    let mut k = GROUP_USAGE.to_vec();
    k.extend_from_slice(group_id.as_bytes());
    k
}

/// `uploads_usage/validator/{operator}`: the bytes (blobs and images) the
/// validator is named to replicate, 8 bytes BE.
pub fn validator_usage_key(operator: &[u8]) -> Vec<u8> {
    let mut k = VALIDATOR_USAGE.to_vec();
    k.extend_from_slice(operator);
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_key_is_outside_the_primary_keyspace() {
        assert!(!upload_by_content_key(b"x").starts_with(&uploads_prefix()));
        assert!(!upload_by_image_key(b"x").starts_with(&uploads_prefix()));
        assert!(!upload_by_image_key(b"x").starts_with(BY_CONTENT));
        assert!(!content_pool_key("x").starts_with(&uploads_prefix()));
        assert!(!validator_usage_key(b"x").starts_with(&uploads_prefix()));
        assert!(!content_pool_key("x").starts_with(b"uploads_usage/validator/"));
        assert_ne!(content_pool_key(""), content_pool_key("ungrouped"));
        assert_eq!(
            upload_by_content_key(b"ab"),
            b"uploads_by_content/ab".to_vec()
        );
    }
}
