//! Point reads at a height, and proofs against that height's root
//! (chosen by [`crate::proof::choose`]).

use jmt::JellyfishMerkleTree;

use super::tree::{key_hash, DbTreeReader, Hasher};
use super::{ChainStore, StoreError};

/// A value read at a height.
#[derive(Debug, Clone)]
pub struct ProvenValue {
    pub height: u64,
    pub value: Option<Vec<u8>>,
}

impl ChainStore {
    /// Reads `key` as of `height` (`None`: the latest committed height).
    ///
    /// # Errors
    /// [`StoreError::HeightUnavailable`] if the height is pruned or in the future.
    pub fn get_at(&self, key: &[u8], height: Option<u64>) -> Result<ProvenValue, StoreError> {
        let view = self.view();
        let h = Self::height_in(&view, height)?;
        let reader = DbTreeReader {
            db: self.db(),
            snap: Some(view.snapshot()),
        };
        let value = JellyfishMerkleTree::<_, Hasher>::new(&reader)
            .get(key_hash(key), h)
            .map_err(|e| StoreError::Tree(format!("get at {h}: {e:#}")))?;
        Ok(ProvenValue { height: h, value })
    }

    /// `height` (`None`: the latest) if `view` holds it.
    ///
    /// # Errors
    /// [`StoreError::HeightUnavailable`] if the height is pruned or in the future.
    pub fn height_in(view: &super::View<'_>, height: Option<u64>) -> Result<u64, StoreError> {
        let info = view.commit_info()?;
        let latest = info.height.ok_or(StoreError::HeightUnavailable {
            requested: height.unwrap_or(0),
            earliest: 0,
            latest: 0,
        })?;
        let h = height.unwrap_or(latest);
        if h > latest || h < info.earliest_version {
            return Err(StoreError::HeightUnavailable {
                requested: h,
                earliest: info.earliest_version,
                latest,
            });
        }
        Ok(h)
    }

    /// `key`'s value at `height` with its ICS23 proof, read through
    /// `view`'s snapshot (the read a proven query made).
    ///
    /// # Errors
    /// [`StoreError::Tree`] when the version is missing or the read fails.
    pub fn prove_in(
        &self,
        view: &super::View<'_>,
        key: &[u8],
        height: u64,
    ) -> Result<(Option<Vec<u8>>, ics23::CommitmentProof), StoreError> {
        let reader = DbTreeReader {
            db: self.db(),
            snap: Some(view.snapshot()),
        };
        JellyfishMerkleTree::<_, Hasher>::new(&reader)
            .get_with_ics23_proof(key.to_vec(), height)
            .map_err(|e| StoreError::Tree(format!("proof at {height}: {e:#}")))
    }

    /// `key`'s value at `height` with its jmt-native proof (borsh-encoded
    /// `SparseMerkleProof<Sha256>`), read through `view`'s snapshot: for
    /// what ICS23 cannot carry (empty values, an empty tree).
    ///
    /// # Errors
    /// [`StoreError::Tree`] when the version is missing or the read fails.
    pub fn prove_jmt_in(
        &self,
        view: &super::View<'_>,
        key: &[u8],
        height: u64,
    ) -> Result<(Option<Vec<u8>>, Vec<u8>), StoreError> {
        let reader = DbTreeReader {
            db: self.db(),
            snap: Some(view.snapshot()),
        };
        let (value, proof) = JellyfishMerkleTree::<_, Hasher>::new(&reader)
            .get_with_proof(key_hash(key), height)
            .map_err(|e| StoreError::Tree(format!("jmt proof at {height}: {e:#}")))?;
        let bytes = borsh::to_vec(&proof)
            .map_err(|e| StoreError::Tree(format!("jmt proof encoding: {e}")))?;
        Ok((value, bytes))
    }

    /// The root hash of a committed version.
    pub fn root_at(&self, height: u64) -> Result<Option<[u8; 32]>, StoreError> {
        self.root_in(&self.view(), height)
    }

    /// The root hash of a committed version, read through `view`'s snapshot.
    pub fn root_in(
        &self,
        view: &super::View<'_>,
        height: u64,
    ) -> Result<Option<[u8; 32]>, StoreError> {
        let reader = DbTreeReader {
            db: self.db(),
            snap: Some(view.snapshot()),
        };
        let tree = JellyfishMerkleTree::<_, Hasher>::new(&reader);
        tree.get_root_hash_option(height)
            .map(|r| r.map(|r| r.0))
            .map_err(|e| StoreError::Tree(format!("root at {height}: {e:#}")))
    }
}
