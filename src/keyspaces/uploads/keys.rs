//! Key builders of the `uploads/` keyspace.

const PREFIX: &[u8] = b"uploads/";
const BY_CONTENT: &[u8] = b"uploads_by_content/";
const BY_IMAGE: &[u8] = b"uploads_by_image/";
const GROUP_USAGE: &[u8] = b"uploads_usage/group/";
const UNGROUPED_USAGE: &[u8] = b"uploads_usage/ungrouped";
const VALIDATOR_USAGE: &[u8] = b"uploads_usage/validator/";
const ASSIGNMENTS: &[u8] = b"assignments/";
const CHURN: &[u8] = b"churn/";
const UNDER_REPLICATED: &[u8] = b"under_replicated/";
const STRANDED: &[u8] = b"stranded/";
const EPOCH: &[u8] = b"assignment_epoch/";

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

/// `assignments/{operator}/`: every upload the validator serves.
pub fn assignments_prefix(operator: &[u8; 32]) -> Vec<u8> {
    let mut k = ASSIGNMENTS.to_vec();
    k.extend_from_slice(operator);
    k
}

/// `assignments/{operator}/{flac_cid}` (value: one byte, [`super::handover::REPLICA`]
/// | [`super::handover::HOLDER`]): the validator serves the upload. Verifiable
/// state, so reassignment never reads the index space.
pub fn assignment_key(operator: &[u8; 32], flac_cid: &[u8]) -> Vec<u8> {
    let mut k = assignments_prefix(operator);
    k.extend_from_slice(flac_cid);
    k
}

/// `assignment_epoch/{operator}`: the height at which the validator's
/// `assignments/` rows last changed (8 bytes BE), so its reconciler knows
/// whether anything changed since its last round without reading them.
pub fn assignment_epoch_key(operator: &[u8; 32]) -> Vec<u8> {
    let mut k = EPOCH.to_vec();
    k.extend_from_slice(operator);
    k
}

/// `churn/`: validators whose uploads EndBlock still reassigns.
pub fn churn_prefix() -> Vec<u8> {
    CHURN.to_vec()
}

/// `churn/{operator}` (value: the last flac cid reassigned, empty at
/// first).
pub fn churn_key(operator: &[u8; 32]) -> Vec<u8> {
    let mut k = CHURN.to_vec();
    k.extend_from_slice(operator);
    k
}

/// `stranded/`: validators that left with uploads no ACTIVE validator
/// could take over; walked again when a validator becomes ACTIVE.
pub fn stranded_prefix() -> Vec<u8> {
    STRANDED.to_vec()
}

/// `stranded/{operator}` (value: empty).
pub fn stranded_key(operator: &[u8; 32]) -> Vec<u8> {
    let mut k = STRANDED.to_vec();
    k.extend_from_slice(operator);
    k
}

/// `under_replicated/`.
pub fn under_replicated_prefix() -> Vec<u8> {
    UNDER_REPLICATED.to_vec()
}

/// `under_replicated/{flac_cid}` (value: `UnderReplicated`).
pub fn under_replicated_key(flac_cid: &[u8]) -> Vec<u8> {
    let mut k = UNDER_REPLICATED.to_vec();
    k.extend_from_slice(flac_cid);
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
        for k in [
            assignment_key(&[1; 32], b"x"),
            churn_key(&[1; 32]),
            under_replicated_key(b"x"),
        ] {
            assert!(!k.starts_with(&uploads_prefix()));
        }
        assert_eq!(
            upload_by_content_key(b"ab"),
            b"uploads_by_content/ab".to_vec()
        );
    }
}
