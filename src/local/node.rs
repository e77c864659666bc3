//! What the reconciler and the peer service share: the stores, this
//! validator's keys and where assignments come from.

use std::sync::Arc;

use super::assignments::AssignmentSource;
use super::content::ContentStore;
use super::LocalStore;
use crate::keyspaces::validators::{ValidatorsRead, STATUS_ACTIVE};
use crate::proto::genesis::GenesisValidator;
use crate::store::{ChainStore, StateRead};

/// One validator's local side.
pub struct LocalNode {
    pub chain: ChainStore,
    pub local: LocalStore,
    pub content: ContentStore,
    /// The operator key: names this validator and signs peer requests.
    pub operator: ed25519_dalek::SigningKey,
    /// The X25519 keys wrapped DEKs are wrapped to (two while rotating).
    pub x25519: super::keyring::X25519Keyring,
    pub assignments: Arc<dyn AssignmentSource>,
    /// Blocks after a takedown is CONFIRMED before this node deletes the
    /// upload's data ([`super::purge`]).
    pub takedown_retention_blocks: u64,
}

impl LocalNode {
    /// This validator's operator key.
    pub fn me(&self) -> [u8; 32] {
        self.operator.verifying_key().to_bytes()
    }
}

/// The record of a validator that may still serve content to its peers:
/// any set member, whatever its status (a leaving member, UNBONDING or
/// REMOVED, serves while it runs, until its replacement confirms), or
/// `None` for a key with no record.
pub fn serving_validator(
    state: &dyn StateRead,
    operator: &[u8; 32],
) -> anyhow::Result<Option<GenesisValidator>> {
    Ok(state.validator(operator)?.and_then(|r| r.validator))
}

/// The record of an ACTIVE validator, or `None` (unknown, removed,
/// unbonding).
pub fn active_validator(
    state: &dyn StateRead,
    operator: &[u8; 32],
) -> anyhow::Result<Option<GenesisValidator>> {
    let rec = state.validator(operator)?;
    Ok(rec
        .filter(|r| r.status == STATUS_ACTIVE)
        .and_then(|r| r.validator))
}

impl LocalNode {
    /// One step of an X25519 rotation ([`super::keyring`]) against the key
    /// the latest committed state names for this validator. A failure is
    /// logged, and the next round tries again; it does not stop the
    /// reconciler.
    pub fn advance_x25519(&self) {
        let view = self.chain.view();
        let keys = match view.validator(&self.me()) {
            Ok(r) => r.and_then(|r| r.validator),
            Err(e) => return tracing::warn!(error = %e, "x25519 rotation: reading own record"),
        };
        let Some(keys) = keys else {
            return;
        };
        match self.x25519.advance(&self.local, &keys.x25519_key) {
            Ok(Some(r)) => tracing::info!(
                x25519_key = %hex::encode(&keys.x25519_key),
                rewrapped = r.rewrapped,
                unopened = r.unopened,
                "x25519 key rotated"
            ),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), "x25519 rotation step failed; retried next round")
            }
        }
    }

    /// Opens the local side of a home: the local store, the content store,
    /// the operator and X25519 keys; data of taken-down uploads is kept
    /// `takedown_retention_blocks`. (Upload jobs are recovered by
    /// [`crate::content::Pipeline::resume`].)
    pub fn open(
        home: &crate::config::Home,
        chain: ChainStore,
        assignments: Arc<dyn AssignmentSource>,
        takedown_retention_blocks: u64,
    ) -> anyhow::Result<Arc<Self>> {
        let (local, moved) = LocalStore::open_or_rebuild(&home.local_dir())?;
        if let Some(aside) = moved {
            tracing::warn!(moved_to = %aside.display(), "local store rebuilt empty; refilling from peers");
        }
        let content = ContentStore::open(&home.content_dir())?;
        Ok(Arc::new(LocalNode {
            chain,
            local,
            content,
            operator: crate::keyfile::load_ed25519(&home.operator_key())?,
            x25519: super::keyring::X25519Keyring::load(
                &home.x25519_key(),
                &home.x25519_next_key(),
            )?,
            assignments,
            takedown_retention_blocks,
        }))
    }
}
