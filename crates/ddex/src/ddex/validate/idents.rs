//! Step 3: identifiers (release id, ISRCs, party ids, dates, cids).

use std::collections::BTreeSet;

use super::shown;
use crate::ddex::{ids, invalid, time, DdexError};
use crate::proto::ddex as pb;

/// Checks step 3 and returns the release id (GTIN-14 or GRid).
pub(super) fn check(msg: &pb::NewReleaseMessage, r: &pb::Release) -> Result<String, DdexError> {
    let release_id = release_id(r)?;
    for (what, d) in [
        ("ReleaseDate", &r.release_date),
        ("OriginalReleaseDate", &r.original_release_date),
    ] {
        if !d.is_empty() {
            time::check_release_date(d).map_err(|e| prefix(e, what))?;
        }
    }
    recordings(&msg.sound_recording)?;
    for t in msg.track_release.iter().filter(|t| !t.isrc.is_empty()) {
        ids::check_isrc(&t.isrc)?;
    }
    msg.party_list.iter().try_for_each(party)?;
    for i in &msg.image {
        cid("Image", &i.resource_reference, &i.cid)?;
    }
    Ok(release_id)
}

fn prefix(e: DdexError, what: &str) -> DdexError {
    match e {
        DdexError::Invalid(m) => invalid(format!("{what}: {m}")),
        other => other,
    }
}

pub(super) fn release_id(r: &pb::Release) -> Result<String, DdexError> {
    match (r.icpn.is_empty(), r.grid.is_empty()) {
        (false, true) => ids::gtin14(&r.icpn),
        (true, false) => ids::check_grid(&r.grid).map(|()| r.grid.clone()),
        (true, true) => Err(invalid("the Release has neither ICPN nor GRid")),
        (false, false) => Err(invalid(format!(
            "the Release has both ICPN {:?} and GRid {:?}",
            shown(&r.icpn),
            shown(&r.grid)
        ))),
    }
}

fn recordings(v: &[pb::SoundRecording]) -> Result<(), DdexError> {
    let mut isrcs = BTreeSet::new();
    let mut cids = BTreeSet::new();
    for s in v {
        let reference = &s.resource_reference;
        let edition = s.sound_recording_edition.as_ref().ok_or_else(|| {
            invalid(format!(
                "SoundRecording {:?} has no SoundRecordingEdition",
                shown(reference)
            ))
        })?;
        ids::check_isrc(&edition.isrc)?;
        if !isrcs.insert(edition.isrc.as_str()) {
            return Err(DdexError::Isrc {
                isrc: shown(&edition.isrc),
                reason: "repeated".to_string(),
            });
        }
        cid("SoundRecording", reference, &s.cid)?;
        if !cids.insert(s.cid.as_slice()) {
            return Err(invalid(format!(
                "SoundRecording {:?}: cid {} is another recording's",
                shown(reference),
                hex(&s.cid)
            )));
        }
    }
    Ok(())
}

fn cid(what: &str, reference: &str, cid: &[u8]) -> Result<(), DdexError> {
    if cid.is_empty() || cid.len() > 64 {
        return Err(invalid(format!(
            "{what} {:?}: cid of {} bytes, not 1 to 64",
            shown(reference),
            cid.len()
        )));
    }
    Ok(())
}

/// At most the first 32 bytes of `b` in hex, for messages.
pub(super) fn hex(b: &[u8]) -> String {
    b.iter().take(32).map(|x| format!("{x:02x}")).collect()
}

fn party(p: &pb::Party) -> Result<(), DdexError> {
    for id in &p.party_id {
        match (id.dpid.is_empty(), id.isni.is_empty()) {
            (false, true) => ids::check_dpid(&id.dpid)?,
            (true, false) => ids::check_isni(&id.isni)?,
            _ => {
                return Err(invalid(format!(
                    "Party {:?}: a PartyId needs exactly one of DPID {:?} and ISNI {:?}",
                    shown(&p.party_reference),
                    shown(&id.dpid),
                    shown(&id.isni)
                )))
            }
        }
    }
    let named = p.full_name.first().is_some_and(|n| !n.value.is_empty());
    if p.party_id.is_empty() && !named {
        return Err(invalid(format!(
            "Party {:?} has neither a PartyId nor a FullName",
            shown(&p.party_reference)
        )));
    }
    Ok(())
}
