//! `upgrades/`: coordinated upgrades without a new chain.
//!
//! 1. ACTIVE validators vote for a plan `{name, height, app_version}` with
//!    `ScheduleUpgrade` ([`schedule`]); approvals over 2/3 of the ACTIVE
//!    power schedule it.
//! 2. At `height`, FinalizeBlock runs [`run_due`] before the txs. A binary
//!    that knows migration `name` ([`migrations`]) runs it in the block,
//!    records it under `upgrades/applied/`, sets `upgrades/app_version`, and
//!    returns CometBFT's consensus params with the new `version.app`. A
//!    binary that does not know it stops before changing anything (exit 3,
//!    "UPGRADE NEEDED"), and CometBFT replays the block to the new binary.
//! 3. Rules that change keep the old behaviour behind
//!    [`UpgradesRead::app_version`], so one binary replays the whole chain
//!    from genesis. The version is read unmetered
//!    ([`crate::store::StateRead::rules_version`]): a check that cost gas
//!    would change old blocks' results (and CometBFT's LastResultsHash).

mod due;
mod keys;
pub mod migrations;
mod schedule;
mod state;
// compiled for the unit tests too; only an `upgrade-test` build registers it
#[cfg(any(test, feature = "upgrade-test"))]
pub mod test_v2;

pub use due::{run_due, Applied, DueError, UpgradeNeeded};
pub use keys::{app_version_key, applied_key, proposal_key, scheduled_key};
pub use schedule::{ScheduleUpgrade, MAX_NAME_BYTES, MAX_PROPOSALS_PER_OPENER};
pub use state::{
    decode_app_version, UpgradesRead, UpgradesWrite, GENESIS_APP_VERSION, MAX_LIST, MAX_PROPOSALS,
};
