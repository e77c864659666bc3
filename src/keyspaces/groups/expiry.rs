//! Group elections that expire ([`crate::keyspaces::validators::expiry`]),
//! and the counts the caps read: `max_groups` counts open applications plus
//! groups that are not REMOVED, `max_group_applications` open applications.
//! A closed application is deleted: a failed or expired one leaves nothing,
//! an admitted one lives on as the group record.

use super::{GroupStatus, GroupsRead, GroupsWrite};
use crate::keyspaces::validators::election;
use crate::keyspaces::validators::expiry::expire;
use crate::keyspaces::Event;
use crate::store::StateWrite;
use crate::tx::TxError;

/// One live group (or open application) fewer.
pub(super) fn release<S: StateWrite + ?Sized>(state: &mut S) -> Result<(), TxError> {
    let n = state.group_count()?;
    state.put_group_count(n.saturating_sub(1));
    Ok(())
}

/// An application closed: deleted, and no longer open. One that was not
/// admitted also leaves the `max_groups` count.
pub(super) fn close_application<S: StateWrite + ?Sized>(
    state: &mut S,
    id: &str,
    admitted: bool,
) -> Result<(), TxError> {
    let open = state.open_group_applications()?;
    state.put_open_group_applications(open.saturating_sub(1));
    if !admitted {
        release(state)?;
    }
    state.delete_group_application(id);
    Ok(())
}

/// Closes the election of group `id` (or of its application) as EXPIRED
/// if it is still OPEN in `round`. An expired application is deleted and
/// frees its places under the caps.
pub fn expire_group_election<S: StateWrite + ?Sized>(
    state: &mut S,
    id: &str,
    round: u64,
    height: u64,
    events: &mut Vec<Event>,
) -> Result<(), TxError> {
    let (mut rec, application) = match state.group(id)? {
        Some(g) => (g, false),
        None => match state.group_application(id)? {
            Some(a) => (a, true),
            None => return Ok(()),
        },
    };
    let Some(e) = rec.election.as_mut() else {
        return Ok(());
    };
    if !expire(e, round, height) {
        return Ok(());
    }
    events.push(
        Event::new("group.election_closed")
            .indexed("group_id", id.to_string())
            .plain("kind", election::kind_name(e.kind))
            .plain("round", round.to_string())
            .plain("result", election::status_name(e.status)),
    );
    if application {
        close_application(state, id, false)?;
    } else {
        debug_assert!(GroupStatus::of(rec.status).is_some());
        state.put_group(&rec);
    }
    Ok(())
}
