//! Step 5: `(disc, track)` of every recording, from the `ResourceGroup`
//! tree, and the depth-bounded walk of that tree the other steps share.
//!
//! - The top group holds items directly: disc 1, track = the item's
//!   SequenceNumber, or its 1-based position in the group when 0.
//! - The top group holds groups (one per disc): disc = the group's
//!   SequenceNumber, or its 1-based position when 0; track as above, for
//!   items in the disc group or in any group below it. A top group that
//!   holds both groups and items is refused (its items have no disc).
//! - The same `(disc, track)` twice is refused.

use std::collections::BTreeMap;

use super::shown;
use crate::ddex::{cap, invalid, DdexError};
use crate::proto::ddex as pb;

type Visit<'a, 'f> = &'f mut dyn FnMut(&'a pb::ResourceGroup) -> Result<(), DdexError>;

/// Calls `f` on `g` (at nesting `level`) and every group below it, in
/// document order; a level over `max` is refused before it is entered.
pub(super) fn visit<'a>(
    g: &'a pb::ResourceGroup,
    level: u32,
    max: u32,
    f: Visit<'a, '_>,
) -> Result<(), DdexError> {
    cap("ResourceGroup nesting", level as usize, max)?;
    f(g)?;
    let next = level.saturating_add(1);
    g.resource_group
        .iter()
        .try_for_each(|c| visit(c, next, max, &mut *f))
}

/// A SequenceNumber, or the 1-based position `i + 1` when it is 0.
fn number(seq: u32, i: usize) -> u32 {
    if seq != 0 {
        return seq;
    }
    u32::try_from(i).unwrap_or(u32::MAX).saturating_add(1)
}

type Tracks = BTreeMap<(u32, u32), pb::TrackEntry>;

/// Checks step 5: the tracks of the release, ordered by `(disc, track)`.
pub(super) fn tracks(
    msg: &pb::NewReleaseMessage,
    r: &pb::Release,
    max_depth: u32,
) -> Result<Vec<pb::TrackEntry>, DdexError> {
    let top = r
        .resource_group
        .as_ref()
        .ok_or_else(|| invalid("the Release has no ResourceGroup"))?;
    let by_ref: BTreeMap<&str, &pb::SoundRecording> = msg
        .sound_recording
        .iter()
        .map(|s| (s.resource_reference.as_str(), s))
        .collect();
    let mut out = Tracks::new();
    if top.resource_group.is_empty() {
        add_items(top, 1, &by_ref, &mut out)?;
        return Ok(out.into_values().collect());
    }
    if !top.resource_group_content_item.is_empty() {
        return Err(invalid(
            "the top ResourceGroup holds both disc groups and content items",
        ));
    }
    for (i, g) in top.resource_group.iter().enumerate() {
        let disc = number(g.sequence_number, i);
        visit(g, 2, max_depth, &mut |h| {
            add_items(h, disc, &by_ref, &mut out)
        })?;
    }
    Ok(out.into_values().collect())
}

fn add_items(
    g: &pb::ResourceGroup,
    disc: u32,
    by_ref: &BTreeMap<&str, &pb::SoundRecording>,
    out: &mut Tracks,
) -> Result<(), DdexError> {
    for (i, item) in g.resource_group_content_item.iter().enumerate() {
        let reference = item.release_resource_reference.as_str();
        let s = by_ref.get(reference).ok_or_else(|| {
            invalid(format!(
                "dangling reference: content item {:?} names no SoundRecording",
                shown(reference)
            ))
        })?;
        let track = number(item.sequence_number, i);
        if let Some(other) = out.get(&(disc, track)) {
            return Err(invalid(format!(
                "disc {disc} track {track} is both {:?} and {:?}",
                shown(&other.resource_reference),
                shown(reference)
            )));
        }
        let isrc = s
            .sound_recording_edition
            .as_ref()
            .map(|e| e.isrc.clone())
            .unwrap_or_default();
        let entry = pb::TrackEntry {
            disc,
            track,
            cid: s.cid.clone(),
            isrc,
            resource_reference: s.resource_reference.clone(),
        };
        out.insert((disc, track), entry);
    }
    Ok(())
}
