//! The upgrade that falls due at a height. FinalizeBlock calls [`run_due`]
//! before the block's txs: a binary that knows the scheduled migration runs
//! it there, in the block's overlay, and the block and every later one run
//! under the new app version; one that does not returns [`UpgradeNeeded`]
//! and the node stops having changed nothing, so that CometBFT replays the
//! block to the new binary.

use super::{migrations, UpgradesRead, UpgradesWrite};
use crate::keyspaces::chain::{ChainRead, ChainWrite};
use crate::keyspaces::Event;
use crate::proto::governance as pb;
use crate::store::{StateWrite, StoreError};

/// This binary does not know the migration of an upgrade due now.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error(
    "UPGRADE NEEDED: upgrade {name:?} to app_version {app_version} is scheduled for height \
     {height}, and this binary ({binary}) knows no migration of that name and version \
     (it knows: {known}). Stop this node, install a binary that knows {name:?}, and start it \
     again: CometBFT replays height {height} to it. Nothing was changed."
)]
pub struct UpgradeNeeded {
    pub name: String,
    pub height: u64,
    pub app_version: u64,
    pub binary: String,
    pub known: String,
}

/// What an applied upgrade changed, for the FinalizeBlock response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub app_version: u64,
    /// CometBFT's consensus params with `version.app` set to the new version
    /// (protobuf `tendermint.types.ConsensusParams`); empty when genesis did
    /// not record them (a chain store from before they were recorded).
    pub consensus_params: Vec<u8>,
    pub event: Event,
}

#[derive(Debug, thiserror::Error)]
pub enum DueError {
    #[error(transparent)]
    Needed(#[from] UpgradeNeeded),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Runs the upgrade scheduled for `height`, if any (see the module doc).
pub fn run_due<S: StateWrite>(state: &mut S, height: u64) -> Result<Option<Applied>, DueError> {
    let Some(plan) = state.scheduled_upgrade()? else {
        return Ok(None);
    };
    if plan.height > height {
        return Ok(None);
    }
    match migrations::run(&plan.name, plan.app_version, state) {
        None => Err(needed(&plan).into()),
        Some(r) => {
            r?;
            Ok(Some(record(state, &plan, height)?))
        }
    }
}

fn needed(plan: &pb::UpgradeProposal) -> UpgradeNeeded {
    let known: Vec<String> = migrations::known()
        .iter()
        .map(|(n, v)| format!("{n} (app_version {v})"))
        .collect();
    UpgradeNeeded {
        name: plan.name.clone(),
        height: plan.height,
        app_version: plan.app_version,
        binary: format!("stave {}", env!("CARGO_PKG_VERSION")),
        known: if known.is_empty() {
            "none".into()
        } else {
            known.join(", ")
        },
    }
}

/// Records a migration that ran: the applied row, the new version, the
/// consensus params that carry it; the plan is no longer scheduled, and no
/// proposal remains.
fn record<S: StateWrite>(
    state: &mut S,
    plan: &pb::UpgradeProposal,
    height: u64,
) -> Result<Applied, StoreError> {
    state.delete_scheduled_upgrade();
    // the plan that ran and every other proposal: at most MAX_PROPOSALS rows
    for p in state.upgrade_proposals()? {
        state.delete_upgrade_proposal(&p);
    }
    state.put_upgrade_applied(&pb::UpgradeApplied {
        name: plan.name.clone(),
        height,
        app_version: plan.app_version,
    });
    state.put_app_version(plan.app_version);
    // a migration may have changed the block gas limit, which CometBFT's
    // mempool and proposer must learn with the version
    let max_gas =
        crate::keyspaces::params::ParamsRead::params(&*state)?.map(|p| p.gas.max_block_gas);
    let consensus_params = match state.consensus_params()? {
        Some(p) => {
            let p = crate::keyspaces::chain::with_app_version(&p, plan.app_version, max_gas)?;
            state.put_consensus_params(&p);
            p
        }
        None => Vec::new(),
    };
    Ok(Applied {
        app_version: plan.app_version,
        consensus_params,
        event: Event::new("upgrade.applied")
            .indexed("name", plan.name.clone())
            .plain("height", height.to_string())
            .plain("app_version", plan.app_version.to_string()),
    })
}
