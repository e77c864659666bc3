//! Step 4: references are non-empty, unique where they name something, and
//! resolve; the release's group tree holds every recording exactly once.

use std::collections::{BTreeMap, BTreeSet};

use super::{groups, shown};
use crate::ddex::{invalid, DdexError};
use crate::proto::ddex as pb;

type R = Result<(), DdexError>;

/// The references a message defines.
struct Defined<'a> {
    parties: BTreeSet<&'a str>,
    recordings: BTreeSet<&'a str>,
    images: BTreeSet<&'a str>,
    releases: BTreeSet<&'a str>,
}

/// Checks step 4.
pub(super) fn check(msg: &pb::NewReleaseMessage, r: &pb::Release, max_depth: u32) -> R {
    let d = defined(msg, r)?;
    release_parties(&d, r)?;
    msg.sound_recording
        .iter()
        .try_for_each(|s| recording_parties(&d, s))?;
    msg.track_release
        .iter()
        .try_for_each(|t| track_release(&d, t))?;
    group_tree(&d, r, max_depth)?;
    msg.release_deal
        .iter()
        .enumerate()
        .try_for_each(|(i, rd)| deal_refs(&d, i, rd))
}

fn dangling(from: &str, value: &str, to: &str) -> DdexError {
    invalid(format!(
        "dangling reference: {from} {:?} names no {to}",
        shown(value)
    ))
}

/// Inserts every reference, refusing an empty or repeated one.
fn unique<'a>(what: &str, set: &mut BTreeSet<&'a str>, refs: impl Iterator<Item = &'a str>) -> R {
    for r in refs {
        if r.is_empty() {
            return Err(invalid(format!("an empty {what}")));
        }
        if !set.insert(r) {
            return Err(invalid(format!("{what} {:?} is repeated", shown(r))));
        }
    }
    Ok(())
}

fn defined<'a>(
    msg: &'a pb::NewReleaseMessage,
    r: &'a pb::Release,
) -> Result<Defined<'a>, DdexError> {
    let mut parties = BTreeSet::new();
    let party_refs = msg.party_list.iter().map(|p| p.party_reference.as_str());
    unique("PartyReference", &mut parties, party_refs)?;
    let rec_refs = msg
        .sound_recording
        .iter()
        .map(|s| s.resource_reference.as_str());
    let img_refs = msg.image.iter().map(|i| i.resource_reference.as_str());
    let mut resources = BTreeSet::new();
    unique(
        "ResourceReference",
        &mut resources,
        rec_refs.clone().chain(img_refs.clone()),
    )?;
    let mut releases = BTreeSet::new();
    let track_refs = msg
        .track_release
        .iter()
        .map(|t| t.release_reference.as_str());
    let release_refs = std::iter::once(r.release_reference.as_str()).chain(track_refs);
    unique("ReleaseReference", &mut releases, release_refs)?;
    Ok(Defined {
        parties,
        recordings: rec_refs.collect(),
        images: img_refs.collect(),
        releases,
    })
}

fn party(d: &Defined, from: &str, value: &str) -> R {
    if d.parties.contains(value) {
        return Ok(());
    }
    Err(dangling(from, value, "Party"))
}

fn release_parties(d: &Defined, r: &pb::Release) -> R {
    for a in &r.display_artist {
        party(d, "Release ArtistPartyReference", &a.artist_party_reference)?;
    }
    for l in &r.release_label_reference {
        party(d, "Release ReleaseLabelReference", &l.value)?;
    }
    Ok(())
}

fn recording_parties(d: &Defined, s: &pb::SoundRecording) -> R {
    let at = |what: &str| format!("SoundRecording {:?} {what}", shown(&s.resource_reference));
    for a in &s.display_artist {
        party(d, &at("ArtistPartyReference"), &a.artist_party_reference)?;
    }
    for c in &s.contributor {
        party(
            d,
            &at("ContributorPartyReference"),
            &c.contributor_party_reference,
        )?;
    }
    Ok(())
}

fn track_release(d: &Defined, t: &pb::TrackRelease) -> R {
    let at = |what: &str| format!("TrackRelease {:?} {what}", shown(&t.release_reference));
    for l in &t.release_label_reference {
        party(d, &at("ReleaseLabelReference"), &l.value)?;
    }
    let resource = t.release_resource_reference.as_str();
    if !d.recordings.contains(resource) {
        return Err(dangling(
            &at("ReleaseResourceReference"),
            resource,
            "SoundRecording",
        ));
    }
    Ok(())
}

/// Every content item names a recording, every linked reference an image
/// or a recording, and each recording is in the tree exactly once.
fn group_tree(d: &Defined, r: &pb::Release, max_depth: u32) -> R {
    let top = r
        .resource_group
        .as_ref()
        .ok_or_else(|| invalid("the Release has no ResourceGroup"))?;
    let mut seen: BTreeMap<&str, u32> = d.recordings.iter().map(|s| (*s, 0)).collect();
    let mut items = 0usize;
    groups::visit(top, 1, max_depth, &mut |g| {
        for item in &g.resource_group_content_item {
            let value = item.release_resource_reference.as_str();
            let n = seen
                .get_mut(value)
                .ok_or_else(|| dangling("ReleaseResourceReference", value, "SoundRecording"))?;
            *n = n.saturating_add(1);
            items = items.saturating_add(1);
        }
        for value in &g.linked_release_resource_reference {
            if !d.images.contains(value.as_str()) && !d.recordings.contains(value.as_str()) {
                return Err(dangling("LinkedReleaseResourceReference", value, "Image"));
            }
        }
        Ok(())
    })?;
    if items == 0 {
        return Err(invalid("the Release's ResourceGroup has no content item"));
    }
    match seen.iter().find(|(_, n)| **n != 1) {
        Some((s, n)) => Err(invalid(format!(
            "SoundRecording {:?} is in the ResourceGroup tree {n} times, not once",
            shown(s)
        ))),
        None => Ok(()),
    }
}

fn deal_refs(d: &Defined, i: usize, rd: &pb::ReleaseDeal) -> R {
    if rd.deal_release_reference.is_empty() {
        return Err(invalid(format!(
            "ReleaseDeal {i} has no DealReleaseReference"
        )));
    }
    let mut set = BTreeSet::new();
    let what = format!("ReleaseDeal {i} DealReleaseReference");
    unique(
        &what,
        &mut set,
        rd.deal_release_reference.iter().map(String::as_str),
    )?;
    let refs = &rd.deal_release_reference;
    match refs.iter().find(|v| !d.releases.contains(v.as_str())) {
        Some(v) => Err(dangling(&what, v, "Release or TrackRelease")),
        None => Ok(()),
    }
}
