//! Typed access to the params record.

use prost::Message;

use super::{keys::params_key, Params};
use crate::proto::genesis as pb;
use crate::store::{StateRead, StateWrite, StoreError};

pub trait ParamsRead: StateRead {
    /// The params written at genesis.
    fn params(&self) -> Result<Option<Params>, StoreError> {
        let key = params_key();
        match self.get_raw(&key)? {
            None => Ok(None),
            Some(raw) => {
                let pb =
                    pb::Params::decode(raw.as_slice()).map_err(|e| StoreError::corrupt(&key, e))?;
                Params::try_from(pb)
                    .map(Some)
                    .map_err(|e| StoreError::corrupt(&key, e))
            }
        }
    }
}
impl<T: StateRead + ?Sized> ParamsRead for T {}

pub trait ParamsWrite: StateWrite {
    fn put_params(&mut self, params: &Params) {
        self.put_raw(params_key(), pb::Params::from(params).encode_to_vec());
    }
}
impl<T: StateWrite + ?Sized> ParamsWrite for T {}
