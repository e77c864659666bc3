//! Takedowns whose resolution vote expires
//! ([`crate::keyspaces::validators::expiry`]): a PENDING takedown that the
//! validators neither confirmed nor dismissed within `election_blocks` is
//! DISMISSED and the policy it replaced is restored, so an unresolved
//! request never denies content for good.

use super::actions::restore_policy;
use super::{TakedownStatus, TakedownsRead, TakedownsWrite};
use crate::keyspaces::validators::election;
use crate::keyspaces::validators::expiry::expire;
use crate::keyspaces::Event;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Closes the takedown vote on `cid` as EXPIRED if it is still OPEN in
/// `round`, dismissing the takedown.
pub fn expire_takedown<S: StateWrite + ?Sized>(
    state: &mut S,
    cid: &[u8],
    round: u64,
    height: u64,
    events: &mut Vec<Event>,
) -> Result<(), TxError> {
    let Some(mut t) = state.takedown(cid)? else {
        return Ok(());
    };
    if t.status != TakedownStatus::Pending as u32 {
        return Ok(());
    }
    let Some(e) = t.election.as_mut() else {
        return Ok(());
    };
    if !expire(e, round, height) {
        return Ok(());
    }
    let result = election::status_name(e.status);
    t.status = TakedownStatus::Dismissed as u32;
    t.resolved_at = height;
    restore_policy(state, &t)?;
    state.put_takedown(&t);
    events.push(
        Event::new("takedown.dismissed")
            .indexed("cid", hex::encode(cid))
            .plain("result", result)
            .plain("height", height.to_string()),
    );
    Ok(())
}
