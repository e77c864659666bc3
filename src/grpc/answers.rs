//! The reads that can be proven, each a pure function of (state, request,
//! height). The node runs them over its committed view, through a
//! recorder when the request asks to prove; a client replays the same
//! function over the proven values (`crate::proof`) and must get the same
//! answer.

// tonic's `Status` is large; it is the error type every handler must return.
#![allow(clippy::result_large_err)]

use tonic::Status;

use super::query::{internal, key32};
use crate::keyspaces::accounts::AccountsRead;
use crate::keyspaces::deks::DeksRead;
use crate::keyspaces::entitlements::{self, EntitlementsRead};
use crate::keyspaces::grants;
use crate::keyspaces::groups::GroupsRead;
use crate::keyspaces::kv;
use crate::keyspaces::policies::PoliciesRead;
use crate::keyspaces::releases::{self, ReleasesRead};
use crate::keyspaces::takedowns::TakedownsRead;
use crate::keyspaces::uploads::UploadsRead;
use crate::keyspaces::validators::query as validators;
use crate::proto::governance as gov;
use crate::proto::kv as kvpb;
use crate::proto::proof::ReadProof;
use crate::proto::query as q;
use crate::proto::rights as r;
use crate::store::QueryRead;

/// A read of committed state at `height` that a client can replay.
pub type Answer<Q, A> = fn(&dyn QueryRead, &Q, u64) -> Result<A, Status>;

/// A request that can ask for a proof.
pub trait AsksProof {
    fn prove(&self) -> bool;
}

/// A response that carries one.
pub trait CarriesProof {
    fn proof(&self) -> Option<&ReadProof>;
    fn set_proof(&mut self, p: Option<ReadProof>);
    fn height(&self) -> u64;
    /// Clears what the node adds beyond the proven state (node-local
    /// fields), on both sides of a replay's comparison.
    fn clear_unproven(&mut self) {}
}

macro_rules! asks_proof {
    ($($t:ty),* $(,)?) => {$(
        impl AsksProof for $t {
            fn prove(&self) -> bool {
                self.prove
            }
        }
    )*};
}

macro_rules! carries_proof {
    ($($t:ty),* $(,)?) => {$(
        impl CarriesProof for $t {
            fn proof(&self) -> Option<&ReadProof> {
                self.proof.as_ref()
            }
            fn set_proof(&mut self, p: Option<ReadProof>) {
                self.proof = p;
            }
            fn height(&self) -> u64 {
                self.height
            }
        }
    )*};
}

asks_proof!(
    q::KvGetRequest,
    q::AccountRequest,
    kvpb::LookupRequest,
    r::CidRequest,
    r::ReleaseRequest,
    r::EntitlementRequest,
    r::ListByKeyRequest,
    r::ListByCidRequest,
    gov::ValidatorRequest,
    gov::GroupRequest,
    gov::GetTakedownRequest,
);

carries_proof!(
    q::KvGetResponse,
    kvpb::LookupResponse,
    r::UploadResponse,
    r::DekResponse,
    r::ReleaseResponse,
    r::ReleasesResponse,
    r::PolicyResponse,
    r::EntitlementResponse,
    r::EntitlementsResponse,
    r::GrantsResponse,
    gov::ValidatorResponse,
    gov::GroupResponse,
    gov::GetTakedownResponse,
);

impl CarriesProof for q::AccountResponse {
    fn proof(&self) -> Option<&ReadProof> {
        self.proof.as_ref()
    }
    fn set_proof(&mut self, p: Option<ReadProof>) {
        self.proof = p;
    }
    fn height(&self) -> u64 {
        self.height
    }
    /// `next_nonce` counts this node's mempool: node-local, never proven.
    fn clear_unproven(&mut self) {
        self.next_nonce = 0;
    }
}

/// An account (`next_nonce` is left at the stored nonce; the node adds its
/// mempool's count after).
pub fn account(
    v: &dyn QueryRead,
    req: &q::AccountRequest,
    height: u64,
) -> Result<q::AccountResponse, Status> {
    use crate::keyspaces::validators::{Acting, ValidatorSigningRead};
    let pk = key32("pubkey", &req.pubkey)?;
    let acting = v.acting(&pk).map_err(internal)?;
    let name = acting.name(&pk);
    let acts_as = if name == pk {
        Vec::new()
    } else {
        name.to_vec()
    };
    let retired = matches!(acting, Acting::Retired(_));
    Ok(match v.account(&name).map_err(internal)? {
        None => q::AccountResponse {
            found: false,
            height,
            acts_as,
            retired,
            ..Default::default()
        },
        Some(a) => q::AccountResponse {
            found: true,
            nonce: a.nonce,
            next_nonce: a.nonce,
            created_at: a.created_at,
            created_height: a.created_height,
            stored_bytes: a.stored_bytes,
            quota: a.quota,
            height,
            proof: None,
            acts_as,
            retired,
        },
    })
}

/// A default-database kvdb value or counter, as of the last block's time.
pub fn kv_get(
    v: &dyn QueryRead,
    req: &q::KvGetRequest,
    height: u64,
) -> Result<q::KvGetResponse, Status> {
    let signer = key32("signer", &req.signer)?;
    let Some(e) = kv::query::get(v, &signer, &req.key).map_err(internal)? else {
        return Ok(q::KvGetResponse {
            found: false,
            height,
            ..Default::default()
        });
    };
    let Some(value) = kv::query::rendered(&e) else {
        return Err(Status::failed_precondition(
            kv::KvError::WrongType {
                key: hex::encode(&req.key),
                held: e.kind.name(),
                wanted: "value or counter",
            }
            .to_string(),
        ));
    };
    Ok(q::KvGetResponse {
        found: true,
        value,
        updated_height: e.updated_height,
        updated_at: e.updated_at,
        height,
        kind: e.kind.name().into(),
        proof: None,
    })
}

/// Live KV tokens by selector.
pub fn lookup(
    v: &dyn QueryRead,
    req: &kvpb::LookupRequest,
    height: u64,
) -> Result<kvpb::LookupResponse, Status> {
    let lq = super::kv::to_lookup(req.clone())?;
    let tokens = kv::token::query::lookup(v, &lq).map_err(|e| match e {
        kv::token::query::LookupError::Store(s) => internal(s),
        other => Status::invalid_argument(other.to_string()),
    })?;
    Ok(kvpb::LookupResponse {
        tokens: tokens.into_iter().map(super::kv::token_view).collect(),
        height,
        proof: None,
    })
}

/// A read of one record by its key: `found`, the record and the height.
macro_rules! point_read {
    ($($name:ident($req:ty) -> $m:ident::$resp:ident { $field:ident = $call:ident($key:ident) })*) => {$(
        pub fn $name(v: &dyn QueryRead, req: &$req, height: u64) -> Result<$m::$resp, Status> {
            let $field = v.$call(&req.$key).map_err(internal)?;
            Ok($m::$resp {
                found: $field.is_some(),
                $field,
                height,
                proof: None,
            })
        }
    )*};
}

point_read! {
    get_upload(r::CidRequest) -> r::UploadResponse { upload = upload(cid) }
    get_dek(r::CidRequest) -> r::DekResponse { dek = recovery_dek(cid) }
    get_policy(r::CidRequest) -> r::PolicyResponse { policy = policy(cid) }
    get_release(r::ReleaseRequest) -> r::ReleaseResponse { release = release(release_id) }
    group(gov::GroupRequest) -> gov::GroupResponse { group = group(group_id) }
    takedown(gov::GetTakedownRequest) -> gov::GetTakedownResponse { takedown = takedown(cid) }
}

pub fn releases_by_cid(
    v: &dyn QueryRead,
    req: &r::ListByCidRequest,
    height: u64,
) -> Result<r::ReleasesResponse, Status> {
    let (releases, next_cursor) =
        releases::query::by_cid(v, &req.cid, &req.cursor, req.limit).map_err(internal)?;
    Ok(r::ReleasesResponse {
        releases,
        next_cursor,
        height,
        proof: None,
    })
}

pub fn get_entitlement(
    v: &dyn QueryRead,
    req: &r::EntitlementRequest,
    height: u64,
) -> Result<r::EntitlementResponse, Status> {
    let pk = key32("pubkey", &req.pubkey)?;
    let entitlement = v.entitlement(&req.cid, &pk).map_err(internal)?;
    Ok(r::EntitlementResponse {
        found: entitlement.is_some(),
        entitlement,
        height,
        proof: None,
    })
}

pub fn entitlements_by_cid(
    v: &dyn QueryRead,
    req: &r::ListByCidRequest,
    height: u64,
) -> Result<r::EntitlementsResponse, Status> {
    let (entitlements, next) =
        entitlements::query::by_cid(v, &req.cid, &req.cursor, req.limit).map_err(internal)?;
    Ok(r::EntitlementsResponse {
        entitlements,
        next_cursor: next.unwrap_or_default(),
        height,
        proof: None,
    })
}

pub fn entitlements_by_key(
    v: &dyn QueryRead,
    req: &r::ListByKeyRequest,
    height: u64,
) -> Result<r::EntitlementsResponse, Status> {
    let pk = key32("pubkey", &req.pubkey)?;
    let (entitlements, next) =
        entitlements::query::by_key(v, &pk, &req.cursor, req.limit).map_err(internal)?;
    Ok(r::EntitlementsResponse {
        entitlements,
        next_cursor: next.unwrap_or_default(),
        height,
        proof: None,
    })
}

pub fn grants_by_cid(
    v: &dyn QueryRead,
    req: &r::ListByCidRequest,
    height: u64,
) -> Result<r::GrantsResponse, Status> {
    let (grants, next) = grants::by_cid(v, &req.cid, &req.cursor, req.limit).map_err(internal)?;
    Ok(r::GrantsResponse {
        grants,
        next_cursor: next.unwrap_or_default(),
        height,
        proof: None,
    })
}

pub fn grants_by_key(
    v: &dyn QueryRead,
    req: &r::ListByKeyRequest,
    height: u64,
) -> Result<r::GrantsResponse, Status> {
    let pk = key32("pubkey", &req.pubkey)?;
    let (grants, next) = grants::by_key(v, &pk, &req.cursor, req.limit).map_err(internal)?;
    Ok(r::GrantsResponse {
        grants,
        next_cursor: next.unwrap_or_default(),
        height,
        proof: None,
    })
}

pub fn validator(
    v: &dyn QueryRead,
    req: &gov::ValidatorRequest,
    height: u64,
) -> Result<gov::ValidatorResponse, Status> {
    let op = key32("operator_key", &req.operator_key)?;
    let validator = validators::get(v, &op).map_err(internal)?;
    Ok(gov::ValidatorResponse {
        found: validator.is_some(),
        validator,
        height,
        proof: None,
    })
}
