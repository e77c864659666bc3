//! The `uploads/` keyspace: `uploads/{flac_cid}`, written by
//! `UploadComplete` (status `PROCESSING_COMPLETE`) and moved to `PUBLISHED`
//! by `PublishRelease`, never back; and who serves each upload:
//! `assignments/{validator}/{flac_cid}`, changed only through a
//! [`handover`] (`AmendUploadSets`, `ConfirmHolding`, and EndBlock's
//! reassignment away from validators that left, [`churn`]), with
//! `under_replicated/{flac_cid}` listing uploads whose sets are changing
//! hands.

pub mod churn;
mod complete;
mod facts;
pub mod handover;
mod keys;
mod manifest;
pub mod query;
mod sets;
mod state;

pub use complete::UploadComplete;
pub use facts::stored_bytes;
pub use keys::{
    assignment_key, assignments_prefix, content_pool_key, under_replicated_prefix,
    upload_by_content_key, upload_by_image_key, upload_key, uploads_prefix, validator_usage_key,
};
pub use manifest::{manifest_sign_bytes, sign_manifest, MANIFEST_DOMAIN};
pub(crate) use manifest::{put_bytes, put_list};
pub use sets::{AmendUploadSets, ConfirmHolding};
pub use state::{UploadsRead, UploadsWrite};

use crate::proto::rights as pb;

/// An upload's status as its enum (unknown numbers read as unspecified).
pub fn status_of(u: &pb::Upload) -> pb::UploadStatus {
    pb::UploadStatus::try_from(u.status).unwrap_or(pb::UploadStatus::Unspecified)
}
