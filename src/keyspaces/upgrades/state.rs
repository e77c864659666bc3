//! Typed reads and writes of `upgrades/`.

use prost::Message;

use super::keys;
use crate::proto::governance as pb;
use crate::store::decode_row as decode;
use crate::store::{Space, StateRead, StateWrite, StoreError};

/// The app version of a chain no upgrade has changed.
pub const GENESIS_APP_VERSION: u64 = 1;

/// Listings return at most this many rows.
pub const MAX_LIST: usize = 256;

/// Proposals stored at once. A new one first drops those that can no longer
/// pass (expired, or whose height has come), and an applied upgrade drops
/// them all, so only live plans count.
pub const MAX_PROPOSALS: usize = 16;

/// The app version stored under `key` (absent: [`GENESIS_APP_VERSION`]).
pub fn decode_app_version(key: &[u8], raw: Option<Vec<u8>>) -> Result<u64, StoreError> {
    match raw {
        None => Ok(GENESIS_APP_VERSION),
        Some(raw) => <[u8; 8]>::try_from(raw.as_slice())
            .map(u64::from_be_bytes)
            .map_err(|_| StoreError::corrupt(key, "not 8 bytes")),
    }
}

pub trait UpgradesRead: StateRead {
    /// The version whose rules run now (unmetered: [`StateRead::rules_version`]).
    fn app_version(&self) -> Result<u64, StoreError> {
        self.rules_version()
    }
    /// The plan that passed and has not run.
    fn scheduled_upgrade(&self) -> Result<Option<pb::UpgradeProposal>, StoreError> {
        let key = keys::scheduled_key();
        decode(&key, self.get_raw(&key)?)
    }
    fn upgrade_proposal(
        &self,
        name: &str,
        height: u64,
        app_version: u64,
    ) -> Result<Option<pb::UpgradeProposal>, StoreError> {
        let key = keys::proposal_key(name, height, app_version);
        decode(&key, self.get_raw(&key)?)
    }
    fn upgrade_applied(&self, name: &str) -> Result<Option<pb::UpgradeApplied>, StoreError> {
        let key = keys::applied_key(name);
        decode(&key, self.get_raw(&key)?)
    }
    /// Every proposal (at most [`MAX_PROPOSALS`]), in name, height and
    /// version order.
    fn upgrade_proposals(&self) -> Result<Vec<pb::UpgradeProposal>, StoreError> {
        list(self, &keys::proposals_prefix())
    }
    /// Up to [`MAX_LIST`] applied migrations in name order.
    fn upgrades_applied(&self) -> Result<Vec<pb::UpgradeApplied>, StoreError> {
        list(self, &keys::applied_prefix())
    }
}
impl<T: StateRead + ?Sized> UpgradesRead for T {}

fn list<S: StateRead + ?Sized, M: Message + Default>(
    s: &S,
    prefix: &[u8],
) -> Result<Vec<M>, StoreError> {
    s.prefix_raw(Space::State, prefix, None, MAX_LIST)?
        .into_iter()
        .map(|(k, v)| M::decode(v.as_slice()).map_err(|e| StoreError::corrupt(&k, e)))
        .collect()
}

pub trait UpgradesWrite: StateWrite {
    fn put_app_version(&mut self, v: u64) {
        self.put_raw(keys::app_version_key(), v.to_be_bytes().to_vec());
    }
    fn put_scheduled_upgrade(&mut self, p: &pb::UpgradeProposal) {
        self.put_raw(keys::scheduled_key(), p.encode_to_vec());
    }
    fn delete_scheduled_upgrade(&mut self) {
        self.delete_raw(keys::scheduled_key());
    }
    fn put_upgrade_proposal(&mut self, p: &pb::UpgradeProposal) {
        self.put_raw(
            keys::proposal_key(&p.name, p.height, p.app_version),
            p.encode_to_vec(),
        );
    }
    fn delete_upgrade_proposal(&mut self, p: &pb::UpgradeProposal) {
        self.delete_raw(keys::proposal_key(&p.name, p.height, p.app_version));
    }
    fn put_upgrade_applied(&mut self, a: &pb::UpgradeApplied) {
        self.put_raw(keys::applied_key(&a.name), a.encode_to_vec());
    }
}
impl<T: StateWrite + ?Sized> UpgradesWrite for T {}
