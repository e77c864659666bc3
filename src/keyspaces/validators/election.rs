//! Elections: ACTIVE validators vote once each; the vote that takes
//! approvals over 2/3 of the active voting power passes it, the vote that
//! takes rejections to 1/3 or more (so approvals can no longer pass) fails it.
//! Counted at the block where that vote lands, with each voter's power then.

use crate::proto::governance as pb;

/// `Election.status`.
pub const OPEN: u32 = 1;
pub const PASSED: u32 = 2;
pub const FAILED: u32 = 3;
/// Still open `election_blocks` after it opened.
pub const EXPIRED: u32 = 4;
/// Closed undecided because its subject left (`LeaveValidator`).
pub const WITHDRAWN: u32 = 5;

/// The result of a tally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Open,
    Passed,
    Failed,
}

/// Decides an election from the approving and rejecting power of voters
/// that are ACTIVE now, against the total ACTIVE power now.
pub fn decide(approve: u64, reject: u64, total: u64) -> Decision {
    let (a, r, t) = (u128::from(approve), u128::from(reject), u128::from(total));
    if t == 0 {
        Decision::Open
    } else if 3 * a > 2 * t {
        Decision::Passed
    } else if 3 * r >= t {
        Decision::Failed
    } else {
        Decision::Open
    }
}

/// The name of an `ElectionKind` in events and errors.
pub fn kind_name(kind: i32) -> &'static str {
    match pb::ElectionKind::try_from(kind) {
        Ok(pb::ElectionKind::Admit) => "ADMIT",
        Ok(pb::ElectionKind::Remove) => "REMOVE",
        Ok(pb::ElectionKind::Suspend) => "SUSPEND",
        Ok(pb::ElectionKind::Upgrade) => "UPGRADE",
        _ => "UNSPECIFIED",
    }
}

/// The name of an election status.
pub fn status_name(status: u32) -> &'static str {
    match status {
        OPEN => "OPEN",
        PASSED => "PASSED",
        FAILED => "FAILED",
        EXPIRED => "EXPIRED",
        WITHDRAWN => "WITHDRAWN",
        _ => "NONE",
    }
}

/// A new open election.
pub fn open(kind: pb::ElectionKind, previous: Option<&pb::Election>, height: u64) -> pb::Election {
    pb::Election {
        kind: kind as i32,
        status: OPEN,
        round: previous.map_or(0, |e| e.round) + 1,
        opened_at: height,
        closed_at: 0,
        votes: Vec::new(),
    }
}

/// Approving and rejecting power, with `power_of` giving each voter's
/// ACTIVE power now (0 for one that is no longer ACTIVE).
pub fn tally<E>(
    e: &pb::Election,
    mut power_of: impl FnMut(&[u8]) -> Result<u64, E>,
) -> Result<(u64, u64), E> {
    let (mut yes, mut no) = (0u64, 0u64);
    for v in &e.votes {
        let p = power_of(&v.voter)?;
        if v.approve {
            yes = yes.saturating_add(p);
        } else {
            no = no.saturating_add(p);
        }
    }
    Ok((yes, no))
}

/// The outcome of [`cast`]: the decision and the powers behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub decision: Decision,
    pub approve: u64,
    pub reject: u64,
    pub active: u64,
}

/// Casts `voter`'s vote in the open election `e` about `subject` and
/// decides it with the ACTIVE powers now; a decided election is closed at
/// `height`. The caller has checked that `voter` is ACTIVE.
///
/// A voter who sends the vote it already cast (same side) adds nothing: the
/// election is counted again with the powers now. This is how an election
/// whose voters left the active set, and which would now pass or fail on the
/// votes it holds, gets decided.
///
/// # Errors
/// `DoubleVote` (a vote on the other side); a store fault.
pub fn cast<S: crate::store::StateRead + ?Sized>(
    state: &S,
    e: &mut pb::Election,
    voter: &[u8; 32],
    approve: bool,
    height: u64,
    subject: &str,
) -> Result<Tally, crate::tx::TxError> {
    use super::ValidatorsRead;
    match e.votes.iter().find(|v| v.voter.as_slice() == voter) {
        Some(v) if v.approve != approve => {
            return Err(super::GovError::DoubleVote {
                voter: hex::encode(voter),
                subject: subject.to_string(),
                kind: kind_name(e.kind),
                round: e.round,
            }
            .into());
        }
        Some(_) => {} // the same vote again: recount only
        None => e.votes.push(pb::Vote {
            voter: voter.to_vec(),
            approve,
            height,
        }),
    }
    let (yes, no) = tally(e, |v| state.active_power(v))?;
    let active = state.validator_totals()?.active_power;
    let decision = decide(yes, no, active);
    match decision {
        Decision::Open => {}
        Decision::Passed => close(e, PASSED, height),
        Decision::Failed => close(e, FAILED, height),
    }
    Ok(Tally {
        decision,
        approve: yes,
        reject: no,
        active,
    })
}

fn close(e: &mut pb::Election, status: u32, height: u64) {
    e.status = status;
    e.closed_at = height;
}

/// `NotValidator` unless `signer` is an ACTIVE validator.
pub fn require_active<S: crate::store::StateRead + ?Sized>(
    state: &S,
    signer: &[u8; 32],
) -> Result<(), crate::tx::TxError> {
    use super::ValidatorsRead;
    if state.active_power(signer)? == 0 {
        return Err(super::GovError::NotValidator {
            signer: hex::encode(signer),
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_than_two_thirds_passes_and_one_third_against_fails() {
        // 4 validators of 10: 3 approvals pass (30 > 26.6), 2 do not.
        assert_eq!(decide(20, 0, 40), Decision::Open);
        assert_eq!(decide(30, 0, 40), Decision::Passed);
        // exactly 2/3 is not more than 2/3
        assert_eq!(decide(20, 0, 30), Decision::Open);
        assert_eq!(decide(21, 0, 30), Decision::Passed);
        // 1/3 against: 2/3 can no longer be exceeded
        assert_eq!(decide(0, 10, 30), Decision::Failed);
        assert_eq!(decide(0, 9, 30), Decision::Open);
        assert_eq!(decide(0, 0, 0), Decision::Open);
        assert_eq!(decide(u64::MAX, 0, u64::MAX), Decision::Passed);
    }
}
