//! What chain state says about an intent, before anything is stored: this
//! validator may process it, every set member is ACTIVE, the uploader may
//! upload into the group, and the sizes fit the caps and budgets.
//!
//! The budget check is an estimate: the encrypted size is not known until
//! the audio is transcoded, so the declared audio bytes stand in for it (a
//! FLAC of PCM is smaller; of a lossy source, larger), and the artwork's
//! declared bytes stand in for its PNGs. `UploadComplete` charges the real
//! sizes on chain.

use super::{IngestError, Intent, UploadConfig};
use crate::keyspaces::params::ParamsRead;
use crate::keyspaces::rights::RightsParams;
use crate::keyspaces::uploads::{content_pool_key, validator_usage_key, UploadsRead};
use crate::keyspaces::validators::ValidatorsRead;
use crate::store::StateRead;

/// Checks `intent` against the state `s` for the validator `me`, with the
/// node's `[upload]` policy (ungrouped uploads, the cap on one upload).
///
/// # Errors
/// `GroupRequired`, `NotProcessor`, `InactiveMember`, `NotMember`,
/// `TooLarge`, `Budget`, `Internal` (a store read failed).
pub fn admit<S: StateRead + ?Sized>(
    s: &S,
    intent: &Intent,
    me: &[u8; 32],
    cfg: &UploadConfig,
) -> Result<(), IngestError> {
    if intent.group_id.is_empty() && !cfg.allow_ungrouped {
        return Err(IngestError::GroupRequired);
    }
    let max_upload_bytes = cfg.max_upload_bytes;
    check_processor(s, intent, me)?;
    for k in intent.replication_set.iter().chain(&intent.dek_holder_set) {
        if !s.is_active_validator(k)? {
            return Err(IngestError::InactiveMember(hex::encode(k)));
        }
    }
    crate::keyspaces::groups::require_member(s, &intent.group_id, &intent.uploader).map_err(
        |_| IngestError::NotMember {
            uploader: hex::encode(intent.uploader),
            group: intent.group_id.clone(),
        },
    )?;
    if intent.audio_bytes > max_upload_bytes {
        return Err(IngestError::TooLarge {
            what: "audio",
            size: intent.audio_bytes,
            max: max_upload_bytes,
            param: "upload.max_upload_bytes",
        });
    }
    // one read of the params for both checks
    let p = s.params()?.unwrap_or_default().rights;
    check_art(&p, intent, cfg)?;
    check_budgets(s, &p, intent)
}

/// At most `rights.max_image_cids` artwork files, each within
/// `upload.max_art_bytes`.
fn check_art(p: &RightsParams, intent: &Intent, cfg: &UploadConfig) -> Result<(), IngestError> {
    let max_images = p.max_image_cids;
    if intent.art_bytes.len() > max_images as usize {
        return Err(IngestError::BadIntent(format!(
            "{} artwork files; at most {max_images} (rights.max_image_cids)",
            intent.art_bytes.len()
        )));
    }
    if let Some(size) = intent.art_bytes.iter().find(|n| **n > cfg.max_art_bytes) {
        return Err(IngestError::TooLarge {
            what: "artwork",
            size: *size,
            max: cfg.max_art_bytes,
            param: "upload.max_art_bytes",
        });
    }
    Ok(())
}

fn check_processor<S: StateRead + ?Sized>(
    s: &S,
    intent: &Intent,
    me: &[u8; 32],
) -> Result<(), IngestError> {
    let refuse = |why: String| Err(IngestError::NotProcessor(why));
    if &intent.processing_validator != me {
        return refuse(format!(
            "the intent names {}, this is {}",
            hex::encode(intent.processing_validator),
            hex::encode(me)
        ));
    }
    if !s.is_active_validator(me)? {
        return refuse(format!("{} is not an active validator", hex::encode(me)));
    }
    if !intent.replication_set.contains(me) || !intent.dek_holder_set.contains(me) {
        return refuse(format!(
            "{} must be in both the replication set and the DEK holder set",
            hex::encode(me)
        ));
    }
    Ok(())
}

fn check_budgets<S: StateRead + ?Sized>(
    s: &S,
    p: &RightsParams,
    intent: &Intent,
) -> Result<(), IngestError> {
    let size = crate::crypto::stream::encrypted_len(intent.audio_bytes)
        .min(p.max_encrypted_bytes)
        .saturating_add(intent.art_total());
    let replicas = intent.replication_set.len() as u64;
    let (who, param, max) = if intent.group_id.is_empty() {
        let who = "ungrouped uploads".to_string();
        (
            who,
            "rights.ungrouped_content_budget",
            p.ungrouped_content_budget,
        )
    } else {
        let who = format!("group {:?}", intent.group_id);
        (who, "rights.group_content_budget", p.group_content_budget)
    };
    let pools = std::iter::once((
        who,
        param,
        max,
        content_pool_key(&intent.group_id),
        size.saturating_mul(replicas),
    ))
    .chain(intent.replication_set.iter().map(|k| {
        (
            format!("validator {}", hex::encode(k)),
            "rights.validator_replication_quota",
            p.validator_replication_quota,
            validator_usage_key(k),
            size,
        )
    }));
    for (who, param, max, key, adding) in pools {
        let used = s.usage(&key)?;
        if used.saturating_add(adding) > max {
            return Err(IngestError::Budget {
                who,
                used,
                adding,
                max,
                param,
            });
        }
    }
    Ok(())
}
