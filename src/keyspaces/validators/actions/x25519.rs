//! `RotateX25519Key { x25519_key }`: the operator of a validator record that
//! is not REMOVED replaces the X25519 key its DEKs are wrapped to. From the
//! next commit, peers wrap DEKs they hand it to the new key; the node
//! itself re-wraps the DEKs it holds (see
//! `crate::local::keyring`) and then drops the old secret.

use super::apply::check_x25519;
use crate::keyspaces::params::Params;
use crate::keyspaces::{Event, TxContext};
use crate::proto::governance as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// The signer's new X25519 public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotateX25519Key {
    pub x25519_key: Vec<u8>,
}

impl From<pb::RotateX25519Key> for RotateX25519Key {
    fn from(p: pb::RotateX25519Key) -> Self {
        RotateX25519Key {
            x25519_key: p.x25519_key,
        }
    }
}

impl From<RotateX25519Key> for pb::RotateX25519Key {
    fn from(r: RotateX25519Key) -> Self {
        pb::RotateX25519Key {
            x25519_key: r.x25519_key,
        }
    }
}

impl RotateX25519Key {
    /// 32 bytes, not a low-order point.
    ///
    /// # Errors
    /// `BadX25519Key`.
    pub fn check_stateless(&self, _: &Params) -> Result<(), TxError> {
        check_x25519(&self.x25519_key)?;
        Ok(())
    }

    /// # Errors
    /// `NotOperator` (no record, or a REMOVED one), `BadX25519Key`,
    /// `Conflict` (the record already names this key).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let op = ctx.signer;
        let new = check_x25519(&self.x25519_key)?;
        let old = super::edit_own_record(state, &op, |keys| {
            if keys.x25519_key == new {
                return Err(TxError::Conflict(format!(
                    "validator {} already has X25519 key {}",
                    hex::encode(op),
                    hex::encode(new)
                )));
            }
            Ok(std::mem::replace(&mut keys.x25519_key, new.to_vec()))
        })?;
        ctx.emit(
            Event::new("validator.x25519_key_rotated")
                .indexed("operator", hex::encode(op))
                .plain("x25519_key", hex::encode(new))
                .plain("old_x25519_key", hex::encode(old)),
        );
        Ok(())
    }
}
