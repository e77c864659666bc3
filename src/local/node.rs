//! What the reconciler and the peer service share: the stores, this
//! validator's keys and where assignments come from.

use std::sync::Arc;

use super::assignments::AssignmentSource;
use super::content::ContentStore;
use super::LocalStore;
use crate::keyspaces::validators::{ValidatorsRead, STATUS_ACTIVE};
use crate::proto::genesis::GenesisValidator;
use crate::store::{ChainStore, StateRead, StoreError};

/// One validator's local side.
pub struct LocalNode {
    pub chain: ChainStore,
    pub local: LocalStore,
    pub content: ContentStore,
    /// The operator key: signs peer requests, receipts and txs for this
    /// validator, and names it unless a rotation handed signing to it
    /// ([`LocalNode::me`]).
    pub operator: ed25519_dalek::SigningKey,
    /// The X25519 keys wrapped DEKs are wrapped to (two while rotating).
    pub x25519: super::keyring::X25519Keyring,
    pub assignments: Arc<dyn AssignmentSource>,
    /// Blocks after a takedown is CONFIRMED before this node deletes the
    /// upload's data ([`super::purge`]).
    pub takedown_retention_blocks: u64,
}

impl LocalNode {
    /// This validator's name on chain: the operator key its record is
    /// stored under. That is the home's key unless a `RotateOperatorKey`
    /// handed signing to it, read from the latest committed state.
    pub fn me(&self) -> [u8; 32] {
        name_of(&self.chain, &self.key())
    }

    /// The public half of the key this node signs with.
    pub fn key(&self) -> [u8; 32] {
        self.operator.verifying_key().to_bytes()
    }
}

/// The validator `key` signs, or signed, for in the latest committed state
/// (`key` itself unless a rotation names it). A store that cannot be read
/// answers `key`, logged: the node then acts as before the rotation.
pub fn name_of(chain: &ChainStore, key: &[u8; 32]) -> [u8; 32] {
    match name_in(&chain.view(), key) {
        Ok(name) => name,
        Err(e) => {
            tracing::warn!(error = %e, "operator key row unreadable; acting under the key itself");
            *key
        }
    }
}

/// The validator `key` signs, or signed, for in `state`.
pub fn name_in(state: &dyn StateRead, key: &[u8; 32]) -> Result<[u8; 32], StoreError> {
    use crate::keyspaces::validators::ValidatorSigningRead;
    Ok(state.acting(key)?.name(key))
}

/// The key that signs for the validator `name` in `state`: its record's
/// rotated operator key, or `name` itself.
pub fn signing_key_in(state: &dyn StateRead, name: &[u8; 32]) -> Result<[u8; 32], StoreError> {
    Ok(state.validator(name)?.map_or(*name, |r| {
        crate::keyspaces::validators::signing::signing_key(name, &r)
    }))
}

/// The validator a peer request's signing `key` is from, or `None` for a
/// key a rotation retired (refused like a non-validator's).
pub fn requester_name(
    state: &dyn StateRead,
    key: &[u8; 32],
) -> Result<Option<[u8; 32]>, StoreError> {
    use crate::keyspaces::validators::{Acting, ValidatorSigningRead};
    Ok(match state.acting(key)? {
        Acting::Retired(_) => None,
        a => Some(a.name(key)),
    })
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
