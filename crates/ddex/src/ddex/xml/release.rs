//! ReleaseList: the one Release (with its ResourceGroup tree) and the
//! TrackReleases. A ClipRelease is refused.

use super::common::{display_artist, display_title, duration, genre, line};
use super::cx::{req, sub, Cx};
use super::parse::Node;
use crate::ddex::{invalid, DdexError};
use crate::proto::ddex as pb;

/// ReleaseList: sets `m.release` (exactly one Release) and appends the
/// TrackReleases.
pub(super) fn release_list(
    cx: &mut Cx,
    path: &str,
    n: &Node,
    m: &mut pb::NewReleaseMessage,
) -> Result<(), DdexError> {
    if n.child("ClipRelease").is_some() {
        return Err(invalid(format!(
            "{path}/ClipRelease is not accepted (profiles Audio and SimpleAudioSingle carry no clips)"
        )));
    }
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "Release" if m.release.is_some() => {
                return Err(invalid(format!(
                    "more than one {p}: exactly one is required"
                )))
            }
            "Release" => m.release = Some(release(cx, &p, c)?),
            "TrackRelease" => m.track_release.push(track_release(cx, &p, c)),
            _ => cx.skip(path, c),
        }
    }
    Ok(())
}

fn release(cx: &mut Cx, path: &str, n: &Node) -> Result<pb::Release, DdexError> {
    req(n, path, "ReleaseReference")?;
    let mut r = pb::Release::default();
    let mut seen = [false; 6];
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "ReleaseReference" => cx.once(&mut r.release_reference, &mut seen[0], &p, c),
            "ReleaseType" => cx.once(&mut r.release_type, &mut seen[1], &p, c),
            "ReleaseId" => release_id(cx, &p, c, &mut r),
            "DisplayTitleText" => r.display_title_text.push(cx.text(&p, c)),
            "DisplayTitle" => r.display_title.push(display_title(cx, &p, c)),
            "DisplayArtistName" => r.display_artist_name.push(cx.text(&p, c)),
            "DisplayArtist" => r.display_artist.push(display_artist(cx, &p, c)),
            "ReleaseLabelReference" => r.release_label_reference.push(cx.text(&p, c)),
            "PLine" => r.p_line.push(line(cx, &p, c, "PLineText")),
            "CLine" => r.c_line.push(line(cx, &p, c, "CLineText")),
            "Genre" => r.genre.push(genre(cx, &p, c)),
            "ReleaseDate" => cx.once(&mut r.release_date, &mut seen[2], &p, c),
            "OriginalReleaseDate" => cx.once(&mut r.original_release_date, &mut seen[3], &p, c),
            "ParentalWarningType" => r.parental_warning_type.push(cx.text(&p, c)),
            "Duration" if seen[4] => cx.drop(format!("{p} (a repeat; the first is kept)")),
            "Duration" => {
                (r.duration, r.duration_ms) = duration(cx, &p, c)?;
                seen[4] = true;
            }
            "ResourceGroup" if seen[5] => cx.drop(format!("{p} (a repeat; the first is kept)")),
            "ResourceGroup" => {
                r.resource_group = Some(resource_group(cx, &p, c));
                seen[5] = true;
            }
            _ => cx.skip(path, c),
        }
    }
    if r.icpn.is_empty() && r.grid.is_empty() {
        return Err(invalid(format!(
            "missing required element {path}/ReleaseId/ICPN or {path}/ReleaseId/GRid"
        )));
    }
    Ok(r)
}

/// ReleaseId of the main release: ICPN and GRid as written.
fn release_id(cx: &mut Cx, path: &str, n: &Node, r: &mut pb::Release) {
    let (mut seen_icpn, mut seen_grid) = (!r.icpn.is_empty(), !r.grid.is_empty());
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "ICPN" => cx.once(&mut r.icpn, &mut seen_icpn, &p, c),
            "GRid" => cx.once(&mut r.grid, &mut seen_grid, &p, c),
            _ => cx.skip(path, c),
        }
    }
}

/// ResourceGroup, recursively (the parser's depth cap bounds the
/// recursion).
fn resource_group(cx: &mut Cx, path: &str, n: &Node) -> pb::ResourceGroup {
    let mut g = pb::ResourceGroup::default();
    let mut seen_seq = false;
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "SequenceNumber" if seen_seq => cx.drop(format!("{p} (a repeat; the first is kept)")),
            "SequenceNumber" => {
                g.sequence_number = cx.num(&p, c);
                seen_seq = true;
            }
            "DisplayTitleText" => g.display_title_text.push(cx.text(&p, c)),
            "ResourceGroup" => g.resource_group.push(resource_group(cx, &p, c)),
            "ResourceGroupContentItem" => g.resource_group_content_item.push(item(cx, &p, c)),
            "LinkedReleaseResourceReference" => {
                g.linked_release_resource_reference.push(cx.leaf(&p, c))
            }
            _ => cx.skip(path, c),
        }
    }
    g
}

fn item(cx: &mut Cx, path: &str, n: &Node) -> pb::ResourceGroupContentItem {
    let mut it = pb::ResourceGroupContentItem::default();
    let (mut seen_seq, mut seen_ref) = (false, false);
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "SequenceNumber" if seen_seq => cx.drop(format!("{p} (a repeat; the first is kept)")),
            "SequenceNumber" => {
                it.sequence_number = cx.num(&p, c);
                seen_seq = true;
            }
            "ReleaseResourceReference" => {
                cx.once(&mut it.release_resource_reference, &mut seen_ref, &p, c)
            }
            _ => cx.skip(path, c),
        }
    }
    it
}

fn track_release(cx: &mut Cx, path: &str, n: &Node) -> pb::TrackRelease {
    let mut t = pb::TrackRelease::default();
    let mut seen = [false; 3];
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "ReleaseReference" => cx.once(&mut t.release_reference, &mut seen[0], &p, c),
            "ReleaseId" => {
                for g in &c.children {
                    match g.name.as_str() {
                        "ISRC" => cx.once(&mut t.isrc, &mut seen[1], &sub(&p, g), g),
                        _ => cx.skip(&p, g),
                    }
                }
            }
            "ReleaseResourceReference" => {
                cx.once(&mut t.release_resource_reference, &mut seen[2], &p, c)
            }
            "ReleaseLabelReference" => t.release_label_reference.push(cx.text(&p, c)),
            "Genre" => t.genre.push(genre(cx, &p, c)),
            _ => cx.skip(path, c),
        }
    }
    t
}
