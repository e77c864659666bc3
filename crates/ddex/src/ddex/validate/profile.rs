//! Step 1: the profile, the required elements, and every integer
//! re-derived from its text (see the module documentation of
//! [`super`]).

use super::shown;
use crate::ddex::{invalid, time, DdexError};
use crate::proto::ddex as pb;

/// Checks step 1 and returns the release.
pub(super) fn check(msg: &pb::NewReleaseMessage) -> Result<&pb::Release, DdexError> {
    if msg.ern_version != "43" {
        return Err(invalid(format!(
            "ern_version {:?} is not \"43\"",
            shown(&msg.ern_version)
        )));
    }
    let profile = msg.release_profile_version_id.as_str();
    if profile != "Audio" && profile != "SimpleAudioSingle" {
        return Err(invalid(format!(
            "ReleaseProfileVersionId {:?} is not Audio or SimpleAudioSingle",
            shown(profile)
        )));
    }
    let header = msg
        .message_header
        .as_ref()
        .ok_or_else(|| invalid("no MessageHeader"))?;
    let release = msg.release.as_ref().ok_or_else(|| invalid("no Release"))?;
    header_ok(header)?;
    durations(msg, release)?;
    deals(msg)?;
    Ok(release)
}

fn header_ok(h: &pb::MessageHeader) -> Result<(), DdexError> {
    if h.message_id.is_empty() {
        return Err(invalid("MessageHeader has no MessageId"));
    }
    let control = h.message_control_type.as_str();
    if !control.is_empty() && control != "LiveMessage" {
        return Err(invalid(format!(
            "MessageControlType {:?} is not LiveMessage",
            shown(control)
        )));
    }
    let want = time::date_time_ms(&h.message_created_date_time)?;
    if h.message_created_ms != want {
        return Err(invalid(format!(
            "message_created_ms {} is not {want}, the MessageCreatedDateTime {:?}",
            h.message_created_ms,
            shown(&h.message_created_date_time)
        )));
    }
    Ok(())
}

fn durations(msg: &pb::NewReleaseMessage, r: &pb::Release) -> Result<(), DdexError> {
    duration("Release", &r.release_reference, &r.duration, r.duration_ms)?;
    for s in &msg.sound_recording {
        duration(
            "SoundRecording",
            &s.resource_reference,
            &s.duration,
            s.duration_ms,
        )?;
    }
    Ok(())
}

fn duration(what: &str, reference: &str, text: &str, ms: u64) -> Result<(), DdexError> {
    let want = if text.is_empty() {
        0
    } else {
        time::duration_ms(text)?
    };
    if ms != want {
        return Err(invalid(format!(
            "{what} {:?}: duration_ms {ms} is not {want}, the Duration {:?}",
            shown(reference),
            shown(text)
        )));
    }
    Ok(())
}

fn deals(msg: &pb::NewReleaseMessage) -> Result<(), DdexError> {
    for (r, rd) in msg.release_deal.iter().enumerate() {
        if rd.deal.is_empty() {
            return Err(invalid(format!("ReleaseDeal {r} has no Deal")));
        }
        for (d, deal) in rd.deal.iter().enumerate() {
            let terms = deal
                .deal_terms
                .as_ref()
                .ok_or_else(|| invalid(format!("ReleaseDeal {r} Deal {d} has no DealTerms")))?;
            for p in &terms.validity_period {
                period(p).map_err(|e| at_deal(e, r, d))?;
            }
        }
    }
    Ok(())
}

fn at_deal(e: DdexError, r: usize, d: usize) -> DdexError {
    match e {
        DdexError::Invalid(m) => invalid(format!("ReleaseDeal {r} Deal {d}: {m}")),
        other => other,
    }
}

/// One end of a period: a date, a date-time, or neither (0).
fn end_secs(
    what: &str,
    date: &str,
    date_time: &str,
    of_date: fn(&str) -> Result<u64, DdexError>,
) -> Result<u64, DdexError> {
    match (date.is_empty(), date_time.is_empty()) {
        (true, true) => Ok(0),
        (false, true) => of_date(date),
        (true, false) => time::date_time_secs(date_time),
        (false, false) => Err(invalid(format!(
            "ValidityPeriod has both {what}Date {:?} and {what}DateTime {:?}",
            shown(date),
            shown(date_time)
        ))),
    }
}

/// Re-derives a period's seconds and checks its order.
pub(super) fn period(p: &pb::ValidityPeriod) -> Result<(), DdexError> {
    let start = end_secs(
        "Start",
        &p.start_date,
        &p.start_date_time,
        time::date_start_secs,
    )?;
    let end = end_secs("End", &p.end_date, &p.end_date_time, time::date_end_secs)?;
    if p.start_secs != start || p.end_secs != end {
        return Err(invalid(format!(
            "ValidityPeriod secs [{}, {}) are not [{start}, {end}) from its dates",
            p.start_secs, p.end_secs
        )));
    }
    let has_end = !p.end_date.is_empty() || !p.end_date_time.is_empty();
    if has_end && end <= start {
        return Err(invalid(format!(
            "ValidityPeriod start {start} is not before its end {end}"
        )));
    }
    Ok(())
}
