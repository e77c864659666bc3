//! Which proof a key's read carries: ICS23 where it holds, else jmt's own.
//! ICS23 refuses an empty value (the key's own, or a neighbour's in a proof
//! of absence) and has no proof in an empty tree; jmt's sparse-Merkle proof
//! covers those. The node checks the proof it chose against the root before
//! sending it, so an answer never carries a proof that cannot hold.

use crate::store::{ChainStore, StoreError, View};

/// A key's value at a height with the proof that holds for it.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub value: Option<Vec<u8>>,
    pub proof: ChosenProof,
}

/// The proof of a [`Chosen`] read.
#[derive(Debug, Clone)]
pub enum ChosenProof {
    /// Boxed: a proof is far larger than the jmt variant's `Vec`.
    Ics23(Box<ics23::CommitmentProof>),
    /// A borsh-encoded `jmt::proof::SparseMerkleProof<Sha256>`.
    Jmt(Vec<u8>),
}

/// `key`'s value at `height`, read through `view`'s snapshot, with a proof
/// that holds against that height's root.
///
/// # Errors
/// [`StoreError::HeightUnavailable`] if `view` has no root at `height`
/// (pruned meanwhile); [`StoreError::Tree`] if neither proof holds or the
/// two reads disagree (a node fault).
pub fn choose(
    store: &ChainStore,
    view: &View<'_>,
    key: &[u8],
    height: u64,
) -> Result<Chosen, StoreError> {
    let root = store
        .root_in(view, height)?
        .ok_or(StoreError::HeightUnavailable {
            requested: height,
            earliest: 0,
            latest: 0,
        })?;
    if let Ok((value, cp)) = store.prove_in(view, key, height) {
        if super::ics23_holds(&cp, key, value.as_deref(), &root) {
            return Ok(Chosen {
                value,
                proof: ChosenProof::Ics23(Box::new(cp)),
            });
        }
    }
    let (value, data) = store.prove_jmt_in(view, key, height)?;
    match super::jmt_holds(&data, key, value.as_deref(), &root) {
        Ok(true) => Ok(Chosen {
            value,
            proof: ChosenProof::Jmt(data),
        }),
        Ok(false) | Err(_) => Err(StoreError::Tree(format!(
            "neither an ICS23 nor a jmt proof of key {} holds at height {height}",
            hex::encode(key)
        ))),
    }
}
