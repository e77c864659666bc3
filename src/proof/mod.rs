//! Verified reads. A read asked to prove (`prove = true`) runs its query
//! through a [`Recorder`], which notes every state key the query looked at
//! and every index row it walked. The node answers with the result and a
//! `ReadProof`: each state key's value (or absence) with an ICS23 proof
//! (or jmt's own proof, where ICS23 cannot hold: empty values)
//! against the app hash at the read's height, plus the index rows.
//!
//! A client checks it without trusting the node:
//! 1. the header at `height + 1` (which carries the app hash of `height`) is
//!    verified by the light client (`crate::light`) from a trust root;
//! 2. every proof is checked against that app hash ([`check_entries`]);
//! 3. the same query runs again over the proven values ([`Proven`]) and
//!    must give the node's answer exactly ([`replay`]).
//!
//! Index rows are not in the app hash: a listing is proven item by item
//! (each item is read from its primary record), never complete.

mod choose;
pub mod client;
mod proven;
mod record;
mod verify;

#[cfg(test)]
mod tests;

pub use choose::{choose, Chosen, ChosenProof};
pub use client::{verify_answer, Verified};
pub use proven::Proven;
pub use record::{prove, ProveError, Recorder, MAX_INDEX_ROWS, MAX_PROVEN_KEYS};
pub use verify::{check_entries, ics23_holds, jmt_holds, replay, VerifyError};
