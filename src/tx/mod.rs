//! Transactions: the envelope, sign bytes, verification, actions and the
//! stable error codes.

mod action;
pub mod build;
mod codes;
mod envelope;
mod error;
pub mod verify;

pub use action::Action;
pub use codes::{Code, CODESPACE};
pub(crate) use envelope::EmbeddedSigs;
pub use envelope::{
    clear_identity_key_cache, identity_key, parse_identity_key, sign_bytes, DecodedTx,
    UnverifiedTx, SIGN_DOMAIN,
};
pub use error::TxError;

#[cfg(test)]
mod tests;
