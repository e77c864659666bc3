//! The validator state machine: the document's four statuses and the only
//! transitions between them.

use super::GovError;

/// `validators/{pubkey}.status` (the document's enum; 0 is never stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum ValidatorStatus {
    Active = 1,
    Candidate = 2,
    Unbonding = 3,
    Removed = 4,
}

impl ValidatorStatus {
    pub const ALL: [ValidatorStatus; 4] = [
        ValidatorStatus::Active,
        ValidatorStatus::Candidate,
        ValidatorStatus::Unbonding,
        ValidatorStatus::Removed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ValidatorStatus::Active => "ACTIVE",
            ValidatorStatus::Candidate => "CANDIDATE",
            ValidatorStatus::Unbonding => "UNBONDING",
            ValidatorStatus::Removed => "REMOVED",
        }
    }
}

impl TryFrom<u32> for ValidatorStatus {
    type Error = u32;
    fn try_from(v: u32) -> Result<Self, u32> {
        Self::ALL.into_iter().find(|s| *s as u32 == v).ok_or(v)
    }
}

/// What can happen to a validator record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidatorEvent {
    /// `ApplyValidator` by the operator.
    Apply,
    /// The admission election passed.
    Admitted,
    /// The admission election failed.
    Rejected,
    /// `LeaveValidator` by the operator.
    Leave,
    /// The removal election passed.
    RemovedByVote,
    /// The unbonding period ended.
    Unbonded,
    /// The admission election expired undecided.
    Expired,
}

impl ValidatorEvent {
    pub const ALL: [ValidatorEvent; 7] = [
        ValidatorEvent::Apply,
        ValidatorEvent::Admitted,
        ValidatorEvent::Rejected,
        ValidatorEvent::Leave,
        ValidatorEvent::RemovedByVote,
        ValidatorEvent::Unbonded,
        ValidatorEvent::Expired,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ValidatorEvent::Apply => "apply",
            ValidatorEvent::Admitted => "admit",
            ValidatorEvent::Rejected => "reject",
            ValidatorEvent::Leave => "leave",
            ValidatorEvent::RemovedByVote => "remove",
            ValidatorEvent::Unbonded => "unbond",
            ValidatorEvent::Expired => "expire",
        }
    }
}

/// The one transition table. `from` is `None` when no record exists.
pub fn next_status(
    from: Option<ValidatorStatus>,
    event: ValidatorEvent,
) -> Option<ValidatorStatus> {
    use ValidatorEvent as E;
    use ValidatorStatus as S;
    match (from, event) {
        (None | Some(S::Removed), E::Apply) => Some(S::Candidate),
        (Some(S::Candidate), E::Admitted) => Some(S::Active),
        (Some(S::Candidate), E::Rejected | E::Leave | E::Expired) => Some(S::Removed),
        (Some(S::Active), E::Leave) => Some(S::Unbonding),
        (Some(S::Active), E::RemovedByVote) => Some(S::Removed),
        (Some(S::Unbonding), E::Unbonded) => Some(S::Removed),
        _ => None,
    }
}

/// [`next_status`], or the refusal that names the record and the action.
pub fn transition(
    subject: &[u8; 32],
    from: Option<ValidatorStatus>,
    event: ValidatorEvent,
) -> Result<ValidatorStatus, GovError> {
    next_status(from, event).ok_or_else(|| GovError::InvalidTransition {
        subject: hex::encode(subject),
        from: from.map_or("absent", ValidatorStatus::name),
        action: event.name(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_documented_transitions_exist() {
        use ValidatorEvent as E;
        use ValidatorStatus as S;
        let allowed = [
            (None, E::Apply, S::Candidate),
            (Some(S::Removed), E::Apply, S::Candidate),
            (Some(S::Candidate), E::Admitted, S::Active),
            (Some(S::Candidate), E::Rejected, S::Removed),
            (Some(S::Candidate), E::Leave, S::Removed),
            (Some(S::Candidate), E::Expired, S::Removed),
            (Some(S::Active), E::Leave, S::Unbonding),
            (Some(S::Active), E::RemovedByVote, S::Removed),
            (Some(S::Unbonding), E::Unbonded, S::Removed),
        ];
        let froms = std::iter::once(None).chain(S::ALL.into_iter().map(Some));
        for from in froms {
            for ev in E::ALL {
                let want = allowed
                    .iter()
                    .find(|(f, e, _)| *f == from && *e == ev)
                    .map(|(_, _, t)| *t);
                assert_eq!(next_status(from, ev), want, "{from:?} --{ev:?}-->");
            }
        }
    }

    #[test]
    fn status_numbers_round_trip_and_zero_is_not_a_status() {
        for s in ValidatorStatus::ALL {
            assert_eq!(ValidatorStatus::try_from(s as u32), Ok(s));
        }
        assert_eq!(ValidatorStatus::try_from(0), Err(0));
        assert_eq!(ValidatorStatus::try_from(5), Err(5));
        assert_eq!(ValidatorStatus::Active as u32, super::super::STATUS_ACTIVE);
    }
}
