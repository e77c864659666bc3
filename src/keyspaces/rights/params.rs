//! `RightsParams`: the genesis caps of the content and rights keyspaces.

use serde::{Deserialize, Serialize};

use crate::proto::rights as pb;

/// Caps on every collection a content or rights tx can grow (BRIEF §4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RightsParams {
    pub max_cid_bytes: u32,
    pub max_image_cids: u32,
    pub max_set_size: u32,
    pub max_group_id_bytes: u32,
    pub max_wrapped_dek_bytes: u32,
    pub max_ern_tracks: u32,
    pub max_ern_territories: u32,
    pub max_ern_string_bytes: u32,
    pub max_scope_territories: u32,
    pub max_scope_conditions: u32,
    pub max_condition_bytes: u32,
    pub max_model_id_bytes: u32,
    /// Entitlement records of one cid (grants to new keys are refused past it).
    pub max_entitlements_per_cid: u32,
    /// Grants one validator may record in one block.
    pub max_grants_per_validator_per_block: u32,
    /// The largest `encrypted_size` an upload may declare (review M7).
    pub max_encrypted_bytes: u64,
    /// Off-chain bytes an ACTIVE group's uploads may make validators store:
    /// the sum of `(encrypted_size + image sizes) × replicas` (review M7).
    pub group_content_budget: u64,
    /// Encrypted bytes one validator may be named to replicate (review M7).
    pub validator_replication_quota: u64,
    /// The one budget all uploads without a group share, like a group's.
    pub ungrouped_content_budget: u64,
    /// The largest image (normalised PNG) an upload may carry.
    pub max_image_bytes: u64,
    /// The grant log keeps one record per (cid, consumer, period) of this
    /// many seconds of block time, with a count (docs/access.md).
    pub grant_period_secs: u64,
    /// Uploads EndBlock reassigns per block away from validators that left.
    pub reassignments_per_block: u32,
    pub max_release_parties: u32,
    pub max_release_deals: u32,
    pub max_deal_periods: u32,
    pub max_deal_use_types: u32,
    pub max_track_releases: u32,
    pub max_release_images: u32,
    pub max_release_variants: u32,
    pub max_group_depth: u32,
    pub max_release_bytes: u64,
    pub max_releases_per_cid: u32,
    pub max_release_versions: u32,
    pub max_message_clock_skew_secs: u64,
}

impl Default for RightsParams {
    fn default() -> Self {
        RightsParams {
            max_cid_bytes: 128,
            max_image_cids: 16,
            max_set_size: 64,
            max_group_id_bytes: 128,
            max_wrapped_dek_bytes: 512,
            max_ern_tracks: 200,
            max_ern_territories: 250,
            max_ern_string_bytes: 1024,
            max_scope_territories: 250,
            max_scope_conditions: 16,
            max_condition_bytes: 256,
            max_model_id_bytes: 256,
            max_entitlements_per_cid: 10_000,
            max_grants_per_validator_per_block: 1_000,
            // A long hi-res album (24-bit/192 kHz FLAC) stays well under it.
            max_encrypted_bytes: 8 << 30,
            group_content_budget: 2 << 40,
            // What a validator's content volume must hold, at most.
            validator_replication_quota: 4 << 40,
            // A quarter of one quota: ungrouped uploads alone fill no validator.
            ungrouped_content_budget: 1 << 40,
            // A 4000×4000 RGBA cover compresses well under it.
            max_image_bytes: 32 << 20,
            // One record per consumer, cid and day.
            grant_period_secs: 86_400,
            // an upload's reassignment is a few reads and writes
            reassignments_per_block: 64,
            max_release_parties: 200,
            max_release_deals: 64,
            max_deal_periods: 8,
            max_deal_use_types: 16,
            max_track_releases: 200,
            max_release_images: 4,
            max_release_variants: 16,
            max_group_depth: 3,
            max_release_bytes: 96 << 10,
            max_releases_per_cid: 16,
            max_release_versions: 64,
            max_message_clock_skew_secs: 600,
        }
    }
}

impl RightsParams {
    /// Rejects caps no network could run with. Cids live in keys behind a
    /// one-byte length, so they stay under 256 bytes; every upload's flac
    /// cid is 36 bytes (a raw CIDv1), and the actions that name it must
    /// take it.
    pub fn validate(&self) -> Result<(), String> {
        let min = crate::media::cid::RAW_CID_LEN as u32;
        if !(min..=255).contains(&self.max_cid_bytes) {
            return Err(format!(
                "rights.max_cid_bytes is {}; allowed {min}..=255",
                self.max_cid_bytes
            ));
        }
        if self.max_set_size == 0 || self.max_ern_tracks == 0 || self.max_ern_string_bytes == 0 {
            return Err(
                "rights.max_set_size, max_ern_tracks and max_ern_string_bytes must be positive"
                    .into(),
            );
        }
        if self.max_wrapped_dek_bytes == 0 || self.max_model_id_bytes == 0 {
            return Err(
                "rights.max_wrapped_dek_bytes and max_model_id_bytes must be positive".into(),
            );
        }
        if self.max_encrypted_bytes == 0
            || self.group_content_budget == 0
            || self.validator_replication_quota == 0
            || self.ungrouped_content_budget == 0
            || self.max_image_bytes == 0
            || self.grant_period_secs == 0
            || self.reassignments_per_block == 0
        {
            return Err(
                "rights.max_encrypted_bytes, group_content_budget, validator_replication_quota, ungrouped_content_budget, max_image_bytes, grant_period_secs and reassignments_per_block must be positive"
                    .into(),
            );
        }
        let release_caps = [
            self.max_release_parties,
            self.max_release_deals,
            self.max_deal_periods,
            self.max_deal_use_types,
            self.max_track_releases,
            self.max_release_images,
            self.max_release_variants,
            self.max_group_depth,
            self.max_releases_per_cid,
            self.max_release_versions,
        ];
        let read = super::access::MAX_RELEASES_READ;
        if release_caps.contains(&0)
            || self.max_release_bytes == 0
            || self.max_group_depth > 8
            || self.max_releases_per_cid as usize > read
        {
            return Err(format!(
                "rights release caps (max_release_*, max_deal_*, max_track_releases, max_group_depth, max_releases_per_cid) must be positive, max_group_depth at most 8 and max_releases_per_cid at most {read}"
            ));
        }
        if self.max_entitlements_per_cid == 0 || self.max_grants_per_validator_per_block == 0 {
            return Err(
                "rights.max_entitlements_per_cid and max_grants_per_validator_per_block must be positive"
                    .into(),
            );
        }
        Ok(())
    }
}

impl RightsParams {
    /// The caps [`crate::ddex::validate`] checks a release against.
    pub fn release_caps(&self) -> crate::ddex::validate::Caps {
        crate::ddex::validate::Caps {
            max_tracks: self.max_ern_tracks,
            max_parties: self.max_release_parties,
            max_images: self.max_release_images,
            max_deals: self.max_release_deals,
            max_territories_per_deal: self.max_ern_territories,
            max_periods_per_deal: self.max_deal_periods,
            max_use_types_per_deal: self.max_deal_use_types,
            max_string_bytes: self.max_ern_string_bytes,
            max_variants: self.max_release_variants,
            max_group_depth: self.max_group_depth,
            max_track_releases: self.max_track_releases,
        }
    }
}

impl From<&RightsParams> for pb::RightsParams {
    fn from(p: &RightsParams) -> Self {
        pb::RightsParams {
            max_cid_bytes: p.max_cid_bytes,
            max_image_cids: p.max_image_cids,
            max_set_size: p.max_set_size,
            max_group_id_bytes: p.max_group_id_bytes,
            max_wrapped_dek_bytes: p.max_wrapped_dek_bytes,
            max_ern_tracks: p.max_ern_tracks,
            max_ern_territories: p.max_ern_territories,
            max_ern_string_bytes: p.max_ern_string_bytes,
            max_scope_territories: p.max_scope_territories,
            max_scope_conditions: p.max_scope_conditions,
            max_condition_bytes: p.max_condition_bytes,
            max_model_id_bytes: p.max_model_id_bytes,
            max_entitlements_per_cid: p.max_entitlements_per_cid,
            max_grants_per_validator_per_block: p.max_grants_per_validator_per_block,
            max_encrypted_bytes: p.max_encrypted_bytes,
            group_content_budget: p.group_content_budget,
            validator_replication_quota: p.validator_replication_quota,
            ungrouped_content_budget: p.ungrouped_content_budget,
            max_image_bytes: p.max_image_bytes,
            grant_period_secs: p.grant_period_secs,
            reassignments_per_block: p.reassignments_per_block,
            max_release_parties: p.max_release_parties,
            max_release_deals: p.max_release_deals,
            max_deal_periods: p.max_deal_periods,
            max_deal_use_types: p.max_deal_use_types,
            max_track_releases: p.max_track_releases,
            max_release_images: p.max_release_images,
            max_release_variants: p.max_release_variants,
            max_group_depth: p.max_group_depth,
            max_release_bytes: p.max_release_bytes,
            max_releases_per_cid: p.max_releases_per_cid,
            max_release_versions: p.max_release_versions,
            max_message_clock_skew_secs: p.max_message_clock_skew_secs,
        }
    }
}

impl TryFrom<pb::RightsParams> for RightsParams {
    type Error = String;
    fn try_from(p: pb::RightsParams) -> Result<Self, String> {
        let params = RightsParams {
            max_cid_bytes: p.max_cid_bytes,
            max_image_cids: p.max_image_cids,
            max_set_size: p.max_set_size,
            max_group_id_bytes: p.max_group_id_bytes,
            max_wrapped_dek_bytes: p.max_wrapped_dek_bytes,
            max_ern_tracks: p.max_ern_tracks,
            max_ern_territories: p.max_ern_territories,
            max_ern_string_bytes: p.max_ern_string_bytes,
            max_scope_territories: p.max_scope_territories,
            max_scope_conditions: p.max_scope_conditions,
            max_condition_bytes: p.max_condition_bytes,
            max_model_id_bytes: p.max_model_id_bytes,
            max_entitlements_per_cid: p.max_entitlements_per_cid,
            max_grants_per_validator_per_block: p.max_grants_per_validator_per_block,
            max_encrypted_bytes: p.max_encrypted_bytes,
            group_content_budget: p.group_content_budget,
            validator_replication_quota: p.validator_replication_quota,
            ungrouped_content_budget: p.ungrouped_content_budget,
            max_image_bytes: p.max_image_bytes,
            grant_period_secs: p.grant_period_secs,
            reassignments_per_block: p.reassignments_per_block,
            max_release_parties: p.max_release_parties,
            max_release_deals: p.max_release_deals,
            max_deal_periods: p.max_deal_periods,
            max_deal_use_types: p.max_deal_use_types,
            max_track_releases: p.max_track_releases,
            max_release_images: p.max_release_images,
            max_release_variants: p.max_release_variants,
            max_group_depth: p.max_group_depth,
            max_release_bytes: p.max_release_bytes,
            max_releases_per_cid: p.max_releases_per_cid,
            max_release_versions: p.max_release_versions,
            max_message_clock_skew_secs: p.max_message_clock_skew_secs,
        };
        params.validate()?;
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_cid_bytes_must_fit_a_raw_cid_and_a_key() {
        let with = |n| RightsParams {
            max_cid_bytes: n,
            ..RightsParams::default()
        };
        for ok in [36, 128, 255] {
            assert!(with(ok).validate().is_ok(), "{ok}");
        }
        for bad in [0, 1, 35, 256] {
            let e = with(bad).validate().unwrap_err();
            assert!(e.contains("36..=255"), "{bad}: {e}");
        }
    }
}
