//! `ReplicaParams`: the settings every validator of a network must share
//! for their replicas to agree, so they are genesis params
//! (`app_state.params.replica`), not `stave.toml`: a node with another
//! proof-of-work base or horizon would refuse, or purge, everyone else's
//! records. Nothing here feeds the app hash beyond the params record.

use serde::{Deserialize, Serialize};

use crate::proto::genesis as pb;

/// The longest horizon a network may set: ten years (hours).
pub const MAX_HORIZON_HOURS: u64 = 10 * 365 * 24;

/// Domain type of `stave.genesis.v1.ReplicaParams`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplicaParams {
    /// UEP-20's difficulty base (UEP-20 fixes it at 1,000,000).
    pub pow_base: u64,
    /// Records stamped earlier than this are refused (hours).
    pub horizon_hours: u64,
}

impl Default for ReplicaParams {
    fn default() -> Self {
        ReplicaParams {
            pow_base: 1_000_000,
            horizon_hours: 7 * 24,
        }
    }
}

impl ReplicaParams {
    /// Rejects settings no network could run with.
    pub fn validate(&self) -> Result<(), String> {
        if self.pow_base == 0 {
            return Err("replica.pow_base must be at least 1".into());
        }
        if !(1..=MAX_HORIZON_HOURS).contains(&self.horizon_hours) {
            return Err(format!(
                "replica.horizon_hours {} must be 1 to {MAX_HORIZON_HOURS}",
                self.horizon_hours
            ));
        }
        Ok(())
    }

    pub fn horizon_ms(&self) -> u64 {
        self.horizon_hours.saturating_mul(3_600_000).max(3_600_000)
    }

    /// The TTL own records carry (days): the horizon, rounded up.
    pub fn ttl_days(&self) -> u32 {
        self.horizon_hours
            .div_ceil(24)
            .clamp(1, u64::from(u32::MAX)) as u32
    }
}

impl From<&ReplicaParams> for pb::ReplicaParams {
    fn from(p: &ReplicaParams) -> Self {
        pb::ReplicaParams {
            pow_base: p.pow_base,
            horizon_hours: p.horizon_hours,
        }
    }
}

impl From<pb::ReplicaParams> for ReplicaParams {
    fn from(p: pb::ReplicaParams) -> Self {
        ReplicaParams {
            pow_base: p.pow_base,
            horizon_hours: p.horizon_hours,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_base_or_a_horizon_out_of_range_is_refused() {
        assert_eq!(ReplicaParams::default().validate(), Ok(()));
        let zero = ReplicaParams {
            pow_base: 0,
            ..Default::default()
        };
        assert!(zero.validate().unwrap_err().contains("pow_base"));
        for h in [0, MAX_HORIZON_HOURS + 1] {
            let p = ReplicaParams {
                horizon_hours: h,
                ..Default::default()
            };
            assert!(p.validate().unwrap_err().contains(&h.to_string()));
        }
        let p = ReplicaParams {
            horizon_hours: 25,
            ..Default::default()
        };
        assert_eq!((p.horizon_ms(), p.ttl_days()), (25 * 3_600_000, 2));
    }
}
