//! Readers for the composites a SoundRecording and a Release share:
//! DisplayTitle, DisplayArtist, Contributor, PLine/CLine and Genre.

use super::cx::{at, sub, Cx};
use super::parse::Node;
use crate::ddex::time::duration_ms;
use crate::ddex::DdexError;
use crate::proto::ddex as pb;

/// DisplayTitle: TitleText and SubTitle (repeat), with its variant.
pub(super) fn display_title(cx: &mut Cx, path: &str, n: &Node) -> pb::DisplayTitle {
    let mut t = pb::DisplayTitle {
        variant: cx.variant(path, n),
        ..Default::default()
    };
    let mut seen = false;
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "TitleText" => cx.once(&mut t.title_text, &mut seen, &p, c),
            "SubTitle" => t.sub_title.push(cx.leaf(&p, c)),
            _ => cx.skip(path, c),
        }
    }
    t
}

/// DisplayArtist: ArtistPartyReference, DisplayArtistRole and the
/// SequenceNumber attribute.
pub(super) fn display_artist(cx: &mut Cx, path: &str, n: &Node) -> pb::DisplayArtist {
    let mut a = pb::DisplayArtist {
        sequence_number: cx.seq_attr(path, n),
        ..Default::default()
    };
    let (mut seen_ref, mut seen_role) = (false, false);
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "ArtistPartyReference" => cx.once(&mut a.artist_party_reference, &mut seen_ref, &p, c),
            "DisplayArtistRole" => cx.once(&mut a.display_artist_role, &mut seen_role, &p, c),
            _ => cx.skip(path, c),
        }
    }
    a
}

/// Contributor: ContributorPartyReference, Role (repeat) and the
/// SequenceNumber attribute.
pub(super) fn contributor(cx: &mut Cx, path: &str, n: &Node) -> pb::Contributor {
    let mut a = pb::Contributor {
        sequence_number: cx.seq_attr(path, n),
        ..Default::default()
    };
    let mut seen = false;
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "ContributorPartyReference" => {
                cx.once(&mut a.contributor_party_reference, &mut seen, &p, c)
            }
            "Role" => a.role.push(cx.leaf(&p, c)),
            _ => cx.skip(path, c),
        }
    }
    a
}

/// PLine or CLine: Year and `text_name` (PLineText or CLineText).
pub(super) fn line(cx: &mut Cx, path: &str, n: &Node, text_name: &str) -> pb::Line {
    let mut l = pb::Line {
        variant: cx.variant(path, n),
        ..Default::default()
    };
    let (mut seen_year, mut seen_text) = (false, false);
    for c in &n.children {
        let p = sub(path, c);
        if c.name == "Year" {
            let year = cx.num(&p, c);
            if seen_year {
                cx.drop(format!("{p} {year} (a repeat; the first is kept)"));
            } else {
                l.year = year;
                seen_year = true;
            }
        } else if c.name == text_name {
            cx.once(&mut l.text, &mut seen_text, &p, c);
        } else {
            cx.skip(path, c);
        }
    }
    l
}

/// Genre: GenreText and SubGenre, with its variant.
pub(super) fn genre(cx: &mut Cx, path: &str, n: &Node) -> pb::Genre {
    let mut g = pb::Genre {
        variant: cx.variant(path, n),
        ..Default::default()
    };
    let (mut seen_text, mut seen_sub) = (false, false);
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "GenreText" => cx.once(&mut g.genre_text, &mut seen_text, &p, c),
            "SubGenre" => cx.once(&mut g.sub_genre, &mut seen_sub, &p, c),
            _ => cx.skip(path, c),
        }
    }
    g
}

/// A Duration element: its text and milliseconds (refused if unparseable).
pub(super) fn duration(cx: &mut Cx, path: &str, n: &Node) -> Result<(String, u64), DdexError> {
    let text = cx.leaf(path, n);
    let ms = duration_ms(&text).map_err(|e| at(path, e))?;
    Ok((text, ms))
}
