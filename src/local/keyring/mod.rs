//! This validator's X25519 keys: the one its DEKs are wrapped to and,
//! during a rotation, the next one (`config/x25519_key.next.json`, written
//! by `stave tx validator rotate-x25519-key`).
//!
//! A rotation, crash-safe and resumable:
//! 1. the CLI writes the next key file and sends `RotateX25519Key`;
//! 2. the reconciler loads the file on its next round; from then on this
//!    node wraps its own DEKs to the next key, and opens DEKs wrapped to
//!    either key (peers wrap to the key the chain names);
//! 3. once the chain names the next key, [`X25519Keyring::advance`]
//!    re-wraps every held DEK to it (synced writes; a DEK that already
//!    opens under it is skipped, so a restart resumes), then renames the
//!    next key file over the current one, so the old key file is gone (as
//!    with any deleted file, its bytes may stay in free disk blocks).
//!
//! A crash before the rename leaves both files, and the next round redoes
//! step 3; a crash after it leaves the next key alone, every DEK already
//! wrapped to it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use parking_lot::RwLock;
use x25519_dalek::{PublicKey, StaticSecret};

use super::deks::{wrapped_of, DeksExt};
use super::LocalStore;
use crate::crypto::wrap::{unwrap_dek, wrap_dek, WrappedDek};
use crate::crypto::{CryptoError, Dek};
use crate::proto::local::StoredDek;

/// The keys held now.
struct Keys {
    current: StaticSecret,
    next: Option<StaticSecret>,
}

impl Keys {
    /// The key this node wraps its own DEKs to: the next one once loaded.
    fn own(&self) -> &StaticSecret {
        self.next.as_ref().unwrap_or(&self.current)
    }

    /// Whether a next key is loaded and it is `on_chain`.
    fn next_is(&self, on_chain: &[u8]) -> bool {
        self.next
            .as_ref()
            .is_some_and(|n| public(n).as_slice() == on_chain)
    }
}

/// What a finished rotation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rotated {
    /// DEKs re-wrapped to the new key.
    pub rewrapped: usize,
    /// DEKs that opened under neither key (left as they are).
    pub unopened: usize,
}

/// The X25519 keys of one validator, and where they live on disk.
pub struct X25519Keyring {
    keys: RwLock<Keys>,
    /// `(current, next)` key files; `None` for a keyring held in memory.
    files: Option<(PathBuf, PathBuf)>,
    /// The foreign chain key last warned about.
    foreign: parking_lot::Mutex<Vec<u8>>,
}

impl From<StaticSecret> for X25519Keyring {
    /// A keyring of one key, in memory only (it never rotates).
    fn from(current: StaticSecret) -> Self {
        X25519Keyring {
            keys: RwLock::new(Keys {
                current,
                next: None,
            }),
            files: None,
            foreign: Default::default(),
        }
    }
}

fn public(s: &StaticSecret) -> [u8; 32] {
    PublicKey::from(s).to_bytes()
}

impl X25519Keyring {
    /// Loads `current`, and `next` when that file exists.
    pub fn load(current: &Path, next: &Path) -> anyhow::Result<Self> {
        let cur = crate::keyfile::load_x25519(current)?;
        let nxt = match next.exists() {
            true => Some(crate::keyfile::load_x25519(next)?),
            false => None,
        };
        Ok(X25519Keyring {
            keys: RwLock::new(Keys {
                current: cur,
                next: nxt,
            }),
            files: Some((current.to_path_buf(), next.to_path_buf())),
            foreign: Default::default(),
        })
    }

    /// The public key this node wraps its own DEKs to: the next key once
    /// loaded, else the current one.
    pub fn own_public(&self) -> [u8; 32] {
        public(self.keys.read().own())
    }

    /// The current public key (the one in `x25519_key.json`).
    pub fn current_public(&self) -> [u8; 32] {
        public(&self.keys.read().current)
    }

    /// The next public key, while a rotation is under way.
    pub fn next_public(&self) -> Option<[u8; 32]> {
        self.keys.read().next.as_ref().map(public)
    }

    /// Opens `w` with whichever key it was wrapped to.
    ///
    /// # Errors
    /// The current key's error when no key opens it.
    pub fn unwrap(&self, w: &WrappedDek, cid: &[u8]) -> Result<Dek, CryptoError> {
        let k = self.keys.read();
        let first = unwrap_dek(&k.current, w, cid);
        match (&first, &k.next) {
            (Err(_), Some(n)) => unwrap_dek(n, w, cid).or(first),
            _ => first,
        }
    }

    /// Wraps `dek` to [`Self::own_public`] and hands the record to `store`,
    /// holding the keyring so a rotation cannot finish in between.
    pub fn seal_own<R>(
        &self,
        dek: &Dek,
        cid: &[u8],
        store: impl FnOnce(Result<WrappedDek, CryptoError>) -> R,
    ) -> R {
        let k = self.keys.read();
        store(wrap_dek(dek, &public(k.own()), cid))
    }

    /// Loads the next key file if it appeared since (the CLI wrote it).
    fn pick_up_next(&self) -> anyhow::Result<()> {
        let Some((_, next)) = &self.files else {
            return Ok(());
        };
        if self.keys.read().next.is_some() || !next.exists() {
            return Ok(());
        }
        let key = crate::keyfile::load_x25519(next)?;
        tracing::info!(next = %hex::encode(public(&key)), "x25519 rotation: next key loaded");
        self.keys.write().next = Some(key);
        Ok(())
    }

    /// One step of a rotation, given the key the chain names for this
    /// validator: loads a new next key file; once the chain names the next
    /// key, re-wraps every held DEK to it and makes it the current key.
    /// `Some` when a rotation finished.
    pub fn advance(&self, local: &LocalStore, on_chain: &[u8]) -> anyhow::Result<Option<Rotated>> {
        self.pick_up_next()?;
        if !self.keys.read().next_is(on_chain) {
            self.warn_if_foreign(on_chain);
            return Ok(None);
        }
        // every DEK without blocking the node; under the lock, only those
        // stored since (none when every writer wrapped to the next key)
        let (early, seen) = self.rewrap_all(local, &self.keys.read(), &BTreeSet::new())?;
        let mut k = self.keys.write();
        if !k.next_is(on_chain) {
            return Ok(None); // another caller finished it meanwhile
        }
        let (last, _) = self.rewrap_all(local, &k, &seen)?;
        if let Some((current, next)) = &self.files {
            std::fs::rename(next, current)?;
        }
        if let Some(n) = k.next.take() {
            k.current = n;
        }
        drop(k);
        if let Some((current, next)) = &self.files {
            crate::keyfile::remove_stale_temps(next);
            if let Err(e) = crate::keyfile::sync_dir(current) {
                tracing::warn!(error = %e, file = %current.display(), "x25519 rotation: syncing the key directory");
            }
        }
        Ok(Some(Rotated {
            rewrapped: early.rewrapped + last.rewrapped,
            unopened: early.unopened + last.unopened,
        }))
    }

    /// Warns, once per key, when the chain names a key this node does not
    /// hold: peers wrap DEKs for it to a key it cannot open (a rotation
    /// sent from another copy of this home, or an old backup restored).
    fn warn_if_foreign(&self, on_chain: &[u8]) {
        if on_chain == self.current_public().as_slice() {
            return;
        }
        let mut warned = self.foreign.lock();
        if warned.as_slice() != on_chain {
            tracing::warn!(
                on_chain = %hex::encode(on_chain),
                held = %hex::encode(self.current_public()),
                "x25519 key on chain is not one this node holds; DEKs wrapped to it will not open"
            );
            *warned = on_chain.to_vec();
        }
    }

    /// Re-wraps to the next key every held DEK, but those in `skip`, that
    /// opens under the current key only. Returns the count and the cids
    /// looked at.
    fn rewrap_all(
        &self,
        local: &LocalStore,
        k: &Keys,
        skip: &BTreeSet<Vec<u8>>,
    ) -> anyhow::Result<(Rotated, BTreeSet<Vec<u8>>)> {
        let mut done = Rotated {
            rewrapped: 0,
            unopened: 0,
        };
        let mut seen = BTreeSet::new();
        let Some(next) = &k.next else {
            return Ok((done, seen));
        };
        for (cid, held) in local.deks()? {
            if skip.contains(&cid) {
                continue;
            }
            seen.insert(cid.clone());
            let w = wrapped_of(&held)?;
            if unwrap_dek(next, &w, &cid).is_ok() {
                continue;
            }
            let Ok(dek) = unwrap_dek(&k.current, &w, &cid) else {
                done.unopened += 1;
                continue;
            };
            let again = wrap_dek(&dek, &public(next), &cid)?;
            // not over a record deleted or replaced meanwhile
            let _one = local.dek_lock();
            if local.dek(&cid)?.as_ref() != Some(&held) {
                continue;
            }
            local.put_dek(&StoredDek {
                wrapped_dek: again.ciphertext,
                ephemeral_pubkey: again.ephemeral_pubkey.to_vec(),
                ..held
            })?;
            done.rewrapped += 1;
        }
        Ok((done, seen))
    }
}

#[cfg(test)]
mod tests;
