//! The access decision: a pure function of state and the request
//! `(cid, consumer, territory, use type, block time)`. `CheckAccess` runs it over the
//! latest committed state; `RecordGrant` runs it inside FinalizeBlock at the
//! block's height and time, so both give the same answer for the same state.
//!
//! Order of the checks:
//! 1. the cid has an upload (`UNKNOWN_CID`) that is published (`ACCESS_DENIED`);
//! 2. governance: takedown states and jurisdiction flags ([`takedown_state`],
//!    [`governance_denial`]; `TAKEDOWN_ACTIVE` / `ACCESS_DENIED`);
//! 3. the policy type (no policy = `DIRECT_GRANT`): takedown states deny
//!    (`TAKEDOWN_ACTIVE`), `PROGRAMMABLE` is `UNSUPPORTED_POLICY_TYPE`, never
//!    allow or deny;
//! 4. an `OWNER` or `ADMIN` whose scope covers the request is allowed;
//! 5. the cid must be in a release (`ACCESS_DENIED`: a cid in no release is
//!    unpublished), and a deal of one of its releases (on the main release
//!    or on the cid's TrackRelease) must cover the territory, the use type
//!    (the deal's UseType is the request's or its parent; UNSPECIFIED is an
//!    on-demand stream) and the block time (`NO_DEAL`). CommercialModelType
//!    is stored, not enforced. A request with no territory (an anonymous
//!    Download of a PUBLIC cid) is covered by a deal in any territory;
//! 6. `PUBLIC` allows; `DIRECT_GRANT` needs an entitlement (any role) whose
//!    scope covers the territory and block time; `ROLE_BASED` asks the
//!    Casbin model; `CONDITIONAL` needs both the covering entitlement and the
//!    Casbin model's allow. A Casbin evaluation that cannot complete is a
//!    deny with `CASBIN_EVALUATION_FAILED`, and so is a model whose owner no
//!    longer holds `OWNER` or `ADMIN` on the cid: a model keeps its power
//!    only while its owner does (review M5).

use super::{hx, RightsError};
use crate::keyspaces::casbin::{self, CacheUse, CasbinDecision, CasbinRequest};
use crate::keyspaces::entitlements::{scope, EntitlementsRead};
use crate::keyspaces::policies::{type_of, PoliciesRead};
use crate::keyspaces::releases::ReleasesRead;
use crate::keyspaces::uploads::{status_of, UploadsRead};
use crate::proto::rights as pb;
use crate::proto::rights::PolicyType as T;
use crate::store::{StateRead, StoreError};

/// The Casbin action every access request asks for.
pub const CASBIN_ACT: &str = "access";

/// One decision: the policy type that governed it, and allow (with the
/// reason) or the refusal (whose code is the deny's stable code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessDecision {
    pub policy_type: T,
    pub outcome: Result<String, RightsError>,
}

impl AccessDecision {
    pub fn allowed(&self) -> bool {
        self.outcome.is_ok()
    }
}

/// Why `cid` is under a pending or confirmed takedown (the `takedowns/`
/// keyspace), or `None`. `SetPolicy` refuses while this is `Some`, and the
/// access decision denies.
pub fn takedown_state<S: StateRead + ?Sized>(
    state: &S,
    cid: &[u8],
) -> Result<Option<String>, StoreError> {
    crate::keyspaces::takedowns::takedown_state(state, cid)
}

/// Why access to `cid` in `territory` is denied by a jurisdiction flag
/// (`flags/`), or `None`.
pub fn governance_denial<S: StateRead + ?Sized>(
    state: &S,
    cid: &[u8],
    territory: &str,
) -> Result<Option<String>, StoreError> {
    crate::keyspaces::takedowns::governance_denial(state, cid, territory)
}

fn decision(policy_type: T, outcome: Result<String, RightsError>) -> AccessDecision {
    AccessDecision {
        policy_type,
        outcome,
    }
}

/// One access request: who asks for which cid, from where, when (block
/// time, unix seconds), with which `context` (which must meet the
/// entitlement scope's custom conditions).
#[derive(Debug, Clone, Copy)]
pub struct AccessRequest<'a> {
    pub cid: &'a [u8],
    pub consumer: &'a [u8; 32],
    pub territory: &'a str,
    /// `stave.ddex.v1.UseType` (0 = on-demand stream).
    pub use_type: i32,
    pub now: u64,
    pub context: &'a [pb::Condition],
}

/// Decides whether `consumer` may access `cid` from `territory` at block
/// time `now` (unix seconds), with the request's `context` (which must meet
/// the entitlement scope's custom conditions), on the consensus path. Only a
/// store fault is an `Err`.
pub fn decide<S: StateRead + ?Sized>(
    state: &S,
    req: &AccessRequest<'_>,
) -> Result<AccessDecision, StoreError> {
    decide_with(state, req, CacheUse::Consensus)
}

/// [`decide`], evaluating a Casbin model through `which` cache (a query
/// passes [`CacheUse::Query`]; the decision is the same).
pub fn decide_with<S: StateRead + ?Sized>(
    state: &S,
    req: &AccessRequest<'_>,
    which: CacheUse,
) -> Result<AccessDecision, StoreError> {
    let AccessRequest {
        cid,
        consumer,
        territory,
        now,
        context,
        ..
    } = *req;
    let Some(upload) = state.upload(cid)? else {
        return Ok(decision(
            T::Unspecified,
            Err(RightsError::UnknownCid(hx(cid))),
        ));
    };
    let policy = state.policy(cid)?;
    let ptype = policy.as_ref().map(type_of).unwrap_or(T::DirectGrant);
    if let Some(err) = blocked(state, cid, territory, ptype, &upload)? {
        return Ok(decision(ptype, Err(err)));
    }
    let held = state.entitlement(cid, consumer)?;
    let role = held.as_ref().and_then(|e| pb::Role::try_from(e.role).ok());
    let role_name = role.map(|r| r.as_str_name()).unwrap_or("no role");
    let scope_miss = match &held {
        None => Some(format!(
            "{} holds no entitlement on cid {}",
            hx(consumer),
            hx(cid)
        )),
        Some(e) => scope::mismatch(e.scope.as_ref(), territory, now, context),
    };
    if scope_miss.is_none() && matches!(role, Some(pb::Role::Owner | pb::Role::Admin)) {
        return Ok(decision(ptype, Ok(format!("holds {role_name} on the cid"))));
    }
    if let Some(miss) = deal_miss(state, req)? {
        return Ok(decision(ptype, Err(miss)));
    }
    let model = policy
        .as_ref()
        .map(|p| p.casbin_model_id.as_str())
        .unwrap_or("");
    let outcome = match (ptype, scope_miss) {
        (T::Public, _) => Ok("the policy is PUBLIC".to_string()),
        (T::DirectGrant, None) => Ok(format!("holds {role_name} within its scope")),
        (T::RoleBased, _) | (T::Conditional, None) => match orphaned(state, model, cid)? {
            Some(why) => Err(RightsError::CasbinFailed(why)),
            None => by_model(state, model, req, which)?,
        },
        (_, Some(miss)) => Err(RightsError::AccessDenied(miss)),
        (other, None) => Err(RightsError::UnsupportedPolicyType(
            other.as_str_name().into(),
        )),
    };
    Ok(decision(ptype, outcome))
}

/// Why the cid is closed to everyone, whatever the entitlement: not
/// published, under a takedown (the governance keyspace or the policy's
/// takedown state), flagged in `territory`, or PROGRAMMABLE (unsupported).
fn blocked<S: StateRead + ?Sized>(
    state: &S,
    cid: &[u8],
    territory: &str,
    ptype: T,
    upload: &pb::Upload,
) -> Result<Option<RightsError>, StoreError> {
    if status_of(upload) != pb::UploadStatus::Published {
        let why = format!("cid {} is not published", hx(cid));
        return Ok(Some(RightsError::AccessDenied(why)));
    }
    let takedown = match takedown_state(state, cid)? {
        Some(r) => Some(r),
        None if matches!(ptype, T::TakedownPending | T::TakenDown) => {
            Some(ptype.as_str_name().to_string())
        }
        None => None,
    };
    if let Some(reason) = takedown {
        let cid = hx(cid);
        return Ok(Some(RightsError::TakedownActive { cid, reason }));
    }
    if let Some(reason) = governance_denial(state, cid, territory)? {
        return Ok(Some(RightsError::AccessDenied(reason)));
    }
    if ptype == T::Programmable {
        let name = ptype.as_str_name().into();
        return Ok(Some(RightsError::UnsupportedPolicyType(name)));
    }
    Ok(None)
}

/// Releases of one cid the decision reads: `rights.max_releases_per_cid`
/// is validated to be at most this.
pub const MAX_RELEASES_READ: usize = 64;

/// Why no deal covers the request: the cid is in no release
/// (`ACCESS_DENIED`), or none of its releases' deals covers the territory,
/// use and block time (`NO_DEAL`).
fn deal_miss<S: StateRead + ?Sized>(
    state: &S,
    req: &AccessRequest<'_>,
) -> Result<Option<RightsError>, StoreError> {
    use crate::ddex::validate::covering_deal;
    let rows = state.cid_releases(req.cid, None, MAX_RELEASES_READ)?;
    if rows.is_empty() {
        let why = format!("cid {} is in no release", hx(req.cid));
        return Ok(Some(RightsError::AccessDenied(why)));
    }
    if crate::ddex::use_type::request_bit(req.use_type).is_none() {
        let why = format!("unknown use type {}", req.use_type);
        return Ok(Some(RightsError::AccessDenied(why)));
    }
    let covered = rows
        .iter()
        .any(|(_, deals)| covering_deal(deals, req.territory, req.use_type, req.now));
    if covered {
        return Ok(None);
    }
    let use_name = crate::proto::ddex::UseType::try_from(req.use_type)
        .map(|u| u.as_str_name())
        .unwrap_or("?");
    let ids: Vec<&str> = rows.iter().map(|(id, _)| id.as_str()).collect();
    Ok(Some(RightsError::NoDeal(format!(
        "no deal of release {} covers {use_name} in {:?} at block time {}",
        ids.join(", "),
        req.territory,
        req.now
    ))))
}

/// Why the policy's Casbin model has lost its power over `cid`: its owner
/// no longer holds OWNER or ADMIN there (revoked or demoted since the
/// policy was set), or the model does not exist. `None` while it may decide.
fn orphaned<S: StateRead + ?Sized>(
    state: &S,
    model: &str,
    cid: &[u8],
) -> Result<Option<String>, StoreError> {
    let Some(owner) = casbin::model_owner(state, model)? else {
        return Ok(Some(format!("casbin model {model:?} does not exist")));
    };
    let role = state.role_of(cid, &owner)?;
    if matches!(role, Some(pb::Role::Owner | pb::Role::Admin)) {
        return Ok(None);
    }
    let held = role.map_or("no role", |r| r.as_str_name());
    Ok(Some(format!(
        "casbin model {model:?} has no power over cid {}: its owner {} holds {held}, \
         not OWNER or ADMIN",
        hx(cid),
        hx(&owner)
    )))
}

/// The Casbin model's answer for the request (`act = "access"`, hex
/// subject and object).
fn by_model<S: StateRead + ?Sized>(
    state: &S,
    model: &str,
    req: &AccessRequest<'_>,
    which: CacheUse,
) -> Result<Result<String, RightsError>, StoreError> {
    let (sub, obj) = (hx(req.consumer), hx(req.cid));
    let creq = CasbinRequest {
        sub: &sub,
        obj: &obj,
        act: CASBIN_ACT,
        territory: req.territory,
    };
    Ok(match casbin::enforce_with(state, model, &creq, which)? {
        CasbinDecision::Allow => Ok(format!("casbin model {model:?} allows")),
        CasbinDecision::Deny(r) => Err(RightsError::AccessDenied(r)),
        CasbinDecision::Failed(r) => Err(RightsError::CasbinFailed(r)),
    })
}
