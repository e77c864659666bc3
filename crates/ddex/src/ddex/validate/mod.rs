//! The consensus-side checks of a `NewReleaseMessage` (ERN 4.3, profiles
//! Audio and SimpleAudioSingle), and what the keyspace stores from it.
//!
//! [`validate`] is pure and total: any message gives `Ok` or the first
//! failure, in this order (each step assumes the ones before it passed):
//!
//! 1. **Profile** ([`profile`]): `ern_version` is `"43"`; the profile is
//!    `Audio` or `SimpleAudioSingle`; `MessageHeader` and `Release` are
//!    present; `MessageControlType` is `""` or `LiveMessage`; every
//!    `ReleaseDeal` has a `Deal` and every `Deal` its `DealTerms`; every
//!    integer is re-derived from its text and must match:
//!    `message_created_ms`, each `duration_ms` (0 when the duration is
//!    empty), each `ValidityPeriod`'s `start_secs`/`end_secs` (at most one
//!    text per end; `start < end` when both are set; an end at the epoch is
//!    refused, since 0 means "open").
//! 2. **Caps** ([`caps`]): every collection and every string of the
//!    message against [`Caps`], the `ResourceGroup` tree's depth checked
//!    before each descent.
//! 3. **Identifiers** ([`idents`]): exactly one of ICPN (→ GTIN-14) and
//!    GRid; each `SoundRecording` has an edition with a valid ISRC, no ISRC
//!    twice; `TrackRelease` ISRCs valid when set; each `PartyId` has
//!    exactly one of DPID and ISNI, valid; each party has a `PartyId` or a
//!    non-empty `FullName`; release dates valid when set; recording and
//!    image cids of 1 to 64 bytes, recording cids unique.
//! 4. **References** ([`refs`]): non-empty and unique party, resource and
//!    release references; every artist, contributor, label, content-item,
//!    linked-resource, track-release and deal-release reference resolves;
//!    the release has a group tree with content, and every recording is in
//!    it exactly once.
//! 5. **Tracks** ([`groups`]): `(disc, track)` of every recording from the
//!    group tree, none twice.
//! 6. **Territories** ([`terms`]), every deal in document order: listed
//!    codes or `Worldwide`, no code twice, a non-empty expanded set.
//! 7. **Use types** ([`terms`]), every deal in document order: known, not
//!    empty, none covered twice (`Stream` with `OnDemandStream`); at least
//!    one non-empty `CommercialModelType`, none empty.
//! 8. **Overlap** ([`deals`]): no two deals on a common release grant a
//!    common territory, use and commercial model in overlapping periods.
//! 9. **Coverage** ([`coverage`]): the deals covering each recording, and
//!    the party index keys of the release.

mod caps;
pub mod cover;
mod coverage;
mod deals;
mod groups;
mod idents;
mod profile;
mod refs;
mod terms;
#[cfg(test)]
mod tests;

use super::DdexError;
use crate::proto::ddex as pb;

/// The release id (GTIN-14 of the ICPN, or the GRid) a message names.
///
/// # Errors
/// [`DdexError`] when the message has no release, or its ids are malformed.
pub fn release_id_of(msg: &pb::NewReleaseMessage) -> Result<String, DdexError> {
    let r = msg
        .release
        .as_ref()
        .ok_or_else(|| crate::ddex::invalid("the message has no Release"))?;
    idents::release_id(r)
}

pub use cover::{covering_deal, summary};

/// Genesis caps on a release message (BRIEF §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// SoundRecordings, and content items in the group tree (its groups:
    /// one more).
    pub max_tracks: u32,
    /// Parties, and display artists or contributors of one element.
    pub max_parties: u32,
    pub max_images: u32,
    /// Deal elements over all ReleaseDeals (and ReleaseDeals).
    pub max_deals: u32,
    /// TerritoryCode and ExcludedTerritoryCode of one deal (each).
    pub max_territories_per_deal: u32,
    pub max_periods_per_deal: u32,
    /// UseType and CommercialModelType of one deal (each).
    pub max_use_types_per_deal: u32,
    /// Bytes of every string field.
    pub max_string_bytes: u32,
    /// Repeats of any one repeated Text/Line/Genre/DisplayTitle field, and
    /// of the other small lists (sub-titles, roles, party ids, recipients,
    /// technical details).
    pub max_variants: u32,
    /// `ResourceGroup` nesting levels (the release's top group is level 1).
    pub max_group_depth: u32,
    /// TrackReleases, and DealReleaseReferences of one ReleaseDeal (less 1).
    pub max_track_releases: u32,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            max_tracks: 200,
            max_parties: 200,
            max_images: 4,
            max_deals: 64,
            max_territories_per_deal: 250,
            max_periods_per_deal: 8,
            max_use_types_per_deal: 16,
            max_string_bytes: 1024,
            max_variants: 16,
            max_group_depth: 3,
            max_track_releases: 200,
        }
    }
}

/// What a valid message yields for the keyspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validated {
    /// The ICPN as GTIN-14 (ids::gtin14), or the GRid.
    pub release_id: String,
    /// (disc, track) of every recording of the main release, ordered by
    /// (disc, track).
    pub tracks: Vec<pb::TrackEntry>,
    /// For every recording cid: the deals that cover it (main-release deals
    /// and its TrackRelease's deals), sorted by cid, unique cids.
    pub covering: Vec<(Vec<u8>, pb::CidDeals)>,
    /// Index keys of the parties named as ReleaseLabelReference or
    /// DisplayArtist of the main release: the party's first PartyId
    /// (`dpid:…` / `isni:…`), else `name:` + its first FullName with ASCII
    /// letters lower-cased; sorted, unique.
    pub parties: Vec<String>,
    /// Work units of steps 6 to 9 (expansion, pairwise overlap, coverage),
    /// for gas: grows with the work done.
    pub work: u64,
}

/// Runs the checks of this module's documentation in order and returns
/// what the keyspace stores, or the first failure.
pub fn validate(msg: &pb::NewReleaseMessage, caps: &Caps) -> Result<Validated, DdexError> {
    let release = profile::check(msg)?;
    caps::check(msg, caps)?;
    let release_id = idents::check(msg, release)?;
    refs::check(msg, release, caps.max_group_depth)?;
    let tracks = groups::tracks(msg, release, caps.max_group_depth)?;
    let (terms, expand_work) = terms::expand_all(msg)?;
    let overlap_work = deals::check_overlap(&terms)?;
    let (covering, cover_work) = coverage::covering(msg, release, &terms);
    let parties = coverage::parties(msg, release);
    Ok(Validated {
        release_id,
        tracks,
        covering,
        parties,
        work: expand_work
            .saturating_add(overlap_work)
            .saturating_add(cover_work),
    })
}

/// At most 64 characters of `s`, for messages.
fn shown(s: &str) -> String {
    s.chars().take(64).collect()
}
