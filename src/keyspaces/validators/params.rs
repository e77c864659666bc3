//! `params.governance`: the consensus parameters of elections, unbonding
//! and the validator caps.

use serde::{Deserialize, Serialize};

use crate::proto::governance as pb;

/// Governance parameters (domain type of `stave.governance.v1.GovernanceParams`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GovernanceParams {
    /// Voting power an elected validator gets.
    pub elected_validator_power: u64,
    /// Blocks from `LeaveValidator` to REMOVED.
    pub unbonding_blocks: u64,
    /// Validator records that are not REMOVED.
    pub max_validator_records: u32,
    /// ACTIVE validators.
    pub max_active_validators: u32,
    pub max_jurisdictions: u32,
    pub max_identity_bytes: u32,
    pub max_address_bytes: u32,
    pub max_groups: u32,
    pub max_group_authorities: u32,
    pub max_group_members: u32,
    /// Keys one action may name (`ApplyGroup`: authorities and members
    /// together). Review M2: decoding each key costs point
    /// decompressions, so a list of 1,000 made one tx cost milliseconds to
    /// decode; a larger group grows by `SetGroupMember`, one key each.
    pub max_keys_per_action: u32,
    pub max_reason_bytes: u32,
    pub max_counter_notice_bytes: u32,
    /// Blocks an election stays open before it closes as EXPIRED.
    pub election_blocks: u64,
    /// Open validator applications (CANDIDATE records) at once.
    pub max_candidates: u32,
    /// Open group applications at once.
    pub max_group_applications: u32,
}

impl Default for GovernanceParams {
    fn default() -> Self {
        GovernanceParams {
            elected_validator_power: 10,
            unbonding_blocks: 10,
            max_validator_records: 200,
            max_active_validators: 100,
            max_jurisdictions: 32,
            max_identity_bytes: 256,
            max_address_bytes: 256,
            max_groups: 1000,
            max_group_authorities: 8,
            max_group_members: 1000,
            max_keys_per_action: 32,
            max_reason_bytes: 1024,
            max_counter_notice_bytes: 4096,
            election_blocks: 20_000,
            max_candidates: 16,
            max_group_applications: 16,
        }
    }
}

/// CometBFT's limit on total voting power (`MaxTotalVotingPower`, i64::MAX / 8).
pub const MAX_TOTAL_POWER: u64 = (i64::MAX / 8) as u64;

/// The least power of a validator (genesis or elected). One block's updates
/// change less than 1/3 of the total power, so a set whose total is 3 or
/// less could never change again; with every full validator at 4 or more,
/// a non-empty set always has room for a step of at least 1.
pub const MIN_VALIDATOR_POWER: u64 = 4;

impl GovernanceParams {
    /// Rejects parameters no network could run with.
    pub fn validate(&self) -> Result<(), String> {
        let g = self;
        if g.elected_validator_power < MIN_VALIDATOR_POWER || g.unbonding_blocks == 0 {
            return Err(format!(
                "governance: elected_validator_power ({}) must be at least {MIN_VALIDATOR_POWER} and unbonding_blocks ({}) positive",
                g.elected_validator_power, g.unbonding_blocks
            ));
        }
        if g.max_candidates == 0 || g.max_candidates > g.max_validator_records {
            return Err(format!(
                "governance: need 0 < max_candidates ({}) <= max_validator_records ({})",
                g.max_candidates, g.max_validator_records
            ));
        }
        if g.max_group_applications == 0 || g.max_group_applications > g.max_groups {
            return Err(format!(
                "governance: need 0 < max_group_applications ({}) <= max_groups ({})",
                g.max_group_applications, g.max_groups
            ));
        }
        if g.election_blocks == 0 {
            return Err("governance: election_blocks must be positive".into());
        }
        if g.max_group_authorities == 0 {
            return Err("governance: max_group_authorities must be positive".into());
        }
        if g.max_keys_per_action < g.max_group_authorities || g.max_keys_per_action > 256 {
            return Err(format!(
                "governance: need max_group_authorities ({}) <= max_keys_per_action ({}) <= 256",
                g.max_group_authorities, g.max_keys_per_action
            ));
        }
        if g.max_active_validators == 0 || g.max_validator_records < g.max_active_validators {
            return Err(format!(
                "governance: need 0 < max_active_validators ({}) <= max_validator_records ({})",
                g.max_active_validators, g.max_validator_records
            ));
        }
        // ACTIVE and UNBONDING validators are all in CometBFT's set, and
        // together they are at most `max_validator_records`.
        let most = g
            .elected_validator_power
            .checked_mul(u64::from(g.max_validator_records));
        if most.is_none_or(|p| p > MAX_TOTAL_POWER / 2) {
            return Err(format!(
                "governance: elected_validator_power {} x {} validator records overflows half of CometBFT's power limit",
                g.elected_validator_power, g.max_validator_records
            ));
        }
        Ok(())
    }
}

impl From<&GovernanceParams> for pb::GovernanceParams {
    fn from(g: &GovernanceParams) -> Self {
        pb::GovernanceParams {
            elected_validator_power: g.elected_validator_power,
            unbonding_blocks: g.unbonding_blocks,
            max_validator_records: g.max_validator_records,
            max_active_validators: g.max_active_validators,
            max_jurisdictions: g.max_jurisdictions,
            max_identity_bytes: g.max_identity_bytes,
            max_address_bytes: g.max_address_bytes,
            max_groups: g.max_groups,
            max_group_authorities: g.max_group_authorities,
            max_group_members: g.max_group_members,
            max_keys_per_action: g.max_keys_per_action,
            max_reason_bytes: g.max_reason_bytes,
            max_counter_notice_bytes: g.max_counter_notice_bytes,
            election_blocks: g.election_blocks,
            max_candidates: g.max_candidates,
            max_group_applications: g.max_group_applications,
        }
    }
}

impl From<pb::GovernanceParams> for GovernanceParams {
    fn from(g: pb::GovernanceParams) -> Self {
        GovernanceParams {
            elected_validator_power: g.elected_validator_power,
            unbonding_blocks: g.unbonding_blocks,
            max_validator_records: g.max_validator_records,
            max_active_validators: g.max_active_validators,
            max_jurisdictions: g.max_jurisdictions,
            max_identity_bytes: g.max_identity_bytes,
            max_address_bytes: g.max_address_bytes,
            max_groups: g.max_groups,
            max_group_authorities: g.max_group_authorities,
            max_group_members: g.max_group_members,
            max_keys_per_action: g.max_keys_per_action,
            max_reason_bytes: g.max_reason_bytes,
            max_counter_notice_bytes: g.max_counter_notice_bytes,
            election_blocks: g.election_blocks,
            max_candidates: g.max_candidates,
            max_group_applications: g.max_group_applications,
        }
    }
}
