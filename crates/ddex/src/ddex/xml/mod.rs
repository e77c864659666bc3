//! DDEX ERN 4.3 XML ⇄ [`pb::NewReleaseMessage`], at the client's edge
//! (never in consensus: consensus sees only the protobuf).
//!
//! # What the importer keeps
//!
//! The subset `stave.ddex.v1` models, for the profiles `Audio` and
//! `SimpleAudioSingle` of `http://ddex.net/xml/ern/43` (`ern_version` =
//! `"43"`): the root's `ReleaseProfileVersionId`, `LanguageAndScriptCode`
//! and `AvsVersionId`; MessageHeader; PartyList (names per language,
//! DPID/ISNI ids); each SoundRecording with its one NonImmersive
//! SoundRecordingEdition (ISRC, PLine, TechnicalDetails) and its cid; each
//! Image and its cid; the one Release with its ResourceGroup tree; the
//! TrackReleases; and the DealList's terms. Texts are kept as written,
//! trimmed of XML whitespace; the integers beside them (`*_ms`, `*_secs`)
//! are derived by the rules in [`crate::ddex::time`]. Child elements are
//! matched unqualified (as ERN writes them) or in the ERN namespace.
//!
//! A recording's cid is the user's `--map ISRC=CID` ([`ImportOptions::cids`]),
//! else a `<ProprietaryId Namespace="stave:cid">` (lower-case hex) in its
//! ResourceId; the FrontCoverImage's is `--cover` ([`ImportOptions::cover`]),
//! else the same ProprietaryId.
//!
//! # What it skips and drops
//!
//! Every element outside the subset (PriceInformation, RightsClaimPolicy,
//! ReleaseVisibility, MarketingComment, Keywords, Synopsis,
//! ResourceRightsController, CueSheetList, ChapterList, ...) is skipped
//! and its path listed in [`Imported::skipped`]: never refused. Things the
//! subset accepts but keeps only once are dropped and listed in
//! [`Imported::dropped`]: an ImmersiveEdition, a second NonImmersive
//! edition, a repeat of a single-valued element (the first is kept), a
//! number a `u32` cannot hold, an `IsDefault` that is not a boolean.
//! Comments and processing instructions are ignored.
//!
//! # What it refuses
//!
//! Input over `max_bytes` (checked before parsing), nesting deeper than
//! `max_depth`, more than `max_elements` elements, malformed XML, input
//! that is not UTF-8 (or UTF-16 with a byte-order mark), any DOCTYPE, any
//! entity reference other than the five predefined ones and character
//! references; a root other than `NewReleaseMessage` in the ERN 4.3
//! namespace (ern/42, ern/431, ern/382... are refused naming the
//! namespace); a profile other than Audio or SimpleAudioSingle, any
//! ReleaseProfileVariantVersionId; a TestMessage; a ClipRelease; a missing
//! required element (MessageHeader, MessageId, MessageCreatedDateTime,
//! ResourceList with a SoundRecording, each SoundRecording's
//! ResourceReference and NonImmersive ResourceId/ISRC, ReleaseList/Release
//! with ReleaseReference and an ICPN or GRid, DealList); an unparseable
//! MessageCreatedDateTime, validity date or duration; a missing cid.
//! Identifier formats, references, territories and deal overlaps are left
//! to consensus ([`crate::ddex::validate`]).
//!
//! # Export
//!
//! [`export`] writes deterministic ERN 4.3 (UTF-8, 2-space indentation,
//! one element per line, ERN sequence order, empty fields omitted) that
//! re-imports to the same message without a map: each cid is rendered as
//! a `stave:cid` ProprietaryId.

mod common;
mod cx;
mod deals;
mod header;
mod parse;
mod release;
mod resources;
#[cfg(test)]
mod tests;
mod write;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Read;

use crate::ddex::{invalid, DdexError};
use crate::proto::ddex as pb;
use cx::{req, sub, Cx};
use parse::Node;

pub use write::export;

/// The largest input the importer reads: 16 MiB.
pub const MAX_BYTES: usize = 16 << 20;

/// The one namespace accepted: ERN 4.3.
pub const ERN_NAMESPACE: &str = "http://ddex.net/xml/ern/43";

/// The ProprietaryId Namespace that carries a resource's cid (hex).
pub const CID_NAMESPACE: &str = "stave:cid";

/// The importer's caps and the user's cid overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// Inputs longer than this are refused before parsing.
    pub max_bytes: usize,
    /// The deepest element nesting accepted (the root is level 1). The
    /// walk recurses once per level, so keep it small.
    pub max_depth: usize,
    /// The most elements accepted.
    pub max_elements: usize,
    /// ISRC -> flac cid (the user's --map ISRC=CID); overrides a ProprietaryId.
    pub cids: BTreeMap<String, Vec<u8>>,
    /// The cover image's cid (the user's --cover); overrides a ProprietaryId.
    pub cover: Option<Vec<u8>>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            max_bytes: MAX_BYTES,
            max_depth: 32,
            max_elements: 200_000,
            cids: BTreeMap::new(),
            cover: None,
        }
    }
}

/// An imported message and what the import left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The message, ready for a PublishRelease transaction.
    pub message: pb::NewReleaseMessage,
    /// Element paths skipped because they are outside the subset, e.g. "/NewReleaseMessage/DealList/ReleaseDeal/Deal/DealTerms/PriceInformation", sorted, unique.
    pub skipped: Vec<String>,
    /// Things accepted but dropped by rule (e.g. "ImmersiveEdition of A3"), in document order.
    pub dropped: Vec<String>,
}

/// Imports an ERN 4.3 NewReleaseMessage (see the module documentation for
/// what is kept, skipped and refused).
pub fn import(xml: &[u8], opts: &ImportOptions) -> Result<Imported, DdexError> {
    if xml.len() > opts.max_bytes {
        return Err(too_big(opts));
    }
    let text = decode(xml)?;
    let root = parse::parse(&text, opts)?;
    let mut cx = Cx::new(opts);
    let message = message(&mut cx, &root)?;
    Ok(Imported {
        message,
        skipped: cx.skipped.into_iter().collect(),
        dropped: cx.dropped,
    })
}

/// Reads at most opts.max_bytes + 1 bytes and refuses a larger input before parsing.
pub fn import_reader<R: Read>(r: R, opts: &ImportOptions) -> Result<Imported, DdexError> {
    let limit = u64::try_from(opts.max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut buf = Vec::new();
    r.take(limit)
        .read_to_end(&mut buf)
        .map_err(|e| invalid(format!("cannot read the ERN input: {e}")))?;
    if buf.len() > opts.max_bytes {
        return Err(too_big(opts));
    }
    import(&buf, opts)
}

fn too_big(opts: &ImportOptions) -> DdexError {
    invalid(format!(
        "the ERN input is over {} bytes (the importer's cap)",
        opts.max_bytes
    ))
}

/// The input as text: UTF-8 (a BOM is skipped) or UTF-16 with a BOM.
fn decode(xml: &[u8]) -> Result<Cow<'_, str>, DdexError> {
    let utf16 = |bytes: &[u8], be: bool| {
        let units = bytes.chunks(2).map(|p| match (p.first(), p.get(1), be) {
            (Some(a), Some(b), true) => u16::from_be_bytes([*a, *b]),
            (Some(a), Some(b), false) => u16::from_le_bytes([*a, *b]),
            _ => 0xD800, // an odd trailing byte: an unpaired surrogate
        });
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .map(Cow::Owned)
            .map_err(|e| invalid(format!("the ERN input is not valid UTF-16: {e}")))
    };
    if let Some(rest) = xml.strip_prefix(b"\xEF\xBB\xBF") {
        return utf8(rest);
    }
    if let Some(rest) = xml.strip_prefix(b"\xFF\xFE") {
        return utf16(rest, false);
    }
    if let Some(rest) = xml.strip_prefix(b"\xFE\xFF") {
        return utf16(rest, true);
    }
    utf8(xml)
}

fn utf8(xml: &[u8]) -> Result<Cow<'_, str>, DdexError> {
    std::str::from_utf8(xml).map(Cow::Borrowed).map_err(|e| {
        invalid(format!(
            "the ERN input is not UTF-8 (byte {})",
            e.valid_up_to()
        ))
    })
}

/// The root element → the message, with the required lists checked.
fn message(cx: &mut Cx, root: &Node) -> Result<pb::NewReleaseMessage, DdexError> {
    let path = "/NewReleaseMessage";
    let mut m = pb::NewReleaseMessage {
        ern_version: "43".to_string(),
        ..Default::default()
    };
    header::root_attrs(root, &mut m)?;
    for name in ["MessageHeader", "ResourceList", "ReleaseList", "DealList"] {
        req(root, path, name)?;
    }
    for c in &root.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "MessageHeader" if m.message_header.is_some() => {
                cx.drop(format!("{p} (a repeat; the first is kept)"))
            }
            "MessageHeader" => m.message_header = Some(header::header(cx, &p, c)?),
            "PartyList" => m.party_list.extend(header::party_list(cx, &p, c)),
            "ResourceList" => resources::resource_list(cx, &p, c, &mut m)?,
            "ReleaseList" => release::release_list(cx, &p, c, &mut m)?,
            "DealList" => m.release_deal.extend(deals::deal_list(cx, &p, c)?),
            _ => cx.skip(path, c),
        }
    }
    if m.sound_recording.is_empty() {
        return Err(invalid(format!(
            "missing required element {path}/ResourceList/SoundRecording (at least one)"
        )));
    }
    if m.release.is_none() {
        return Err(invalid(format!(
            "missing required element {path}/ReleaseList/Release"
        )));
    }
    Ok(m)
}
