//! The `policies/` keyspace: `policies/{cid}`, written by `SetPolicy`.
//! The two takedown states are written only by the takedown flow.

mod set;

pub use set::SetPolicy;

use prost::Message;

use crate::proto::rights as pb;
use crate::store::{StateRead, StateWrite, StoreError};

const PREFIX: &[u8] = b"policies/";

/// `policies/{cid}`.
pub fn policy_key(cid: &[u8]) -> Vec<u8> {
    let mut k = PREFIX.to_vec();
    k.extend_from_slice(cid);
    k
}

pub trait PoliciesRead: StateRead {
    fn policy(&self, cid: &[u8]) -> Result<Option<pb::Policy>, StoreError> {
        let key = policy_key(cid);
        match self.get_raw(&key)? {
            None => Ok(None),
            Some(raw) => pb::Policy::decode(raw.as_slice())
                .map(Some)
                .map_err(|e| StoreError::corrupt(&key, e)),
        }
    }
}
impl<T: StateRead + ?Sized> PoliciesRead for T {}

pub trait PoliciesWrite: StateWrite {
    fn put_policy(&mut self, p: &pb::Policy) {
        self.put_raw(policy_key(&p.cid), p.encode_to_vec());
    }
}
impl<T: StateWrite + ?Sized> PoliciesWrite for T {}

/// A policy's type as its enum (unknown numbers read as unspecified).
pub fn type_of(p: &pb::Policy) -> pb::PolicyType {
    pb::PolicyType::try_from(p.r#type).unwrap_or(pb::PolicyType::Unspecified)
}
