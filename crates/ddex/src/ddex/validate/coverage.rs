//! Step 9: what the access decision and the party index read.
//!
//! - Coverage: for each recording, every deal whose DealReleaseReferences
//!   name the main release, or a TrackRelease of that recording, as a
//!   [`pb::CoveringDeal`] (territory bits, request-leaf bits, periods and
//!   models copied). A deal granting no request leaf (only `Broadcast`,
//!   say) is listed all the same; it opens nothing.
//! - Parties: the index keys of the release's display artists and labels:
//!   `dpid:…` or `isni:…` from the first PartyId, else `name:` and the
//!   first FullName with ASCII letters lower-cased (only ASCII: Unicode
//!   case tables change between Rust releases, and every node must agree).

use std::collections::{BTreeMap, BTreeSet};

use super::terms::Term;
use crate::ddex::use_type;
use crate::proto::ddex as pb;

/// The covering deals of every recording cid, sorted by cid, and the work
/// units (per recording: the track releases scanned and the deals tested).
pub(super) fn covering(
    msg: &pb::NewReleaseMessage,
    r: &pb::Release,
    terms: &[Term],
) -> (Vec<(Vec<u8>, pb::CidDeals)>, u64) {
    let mut out = BTreeMap::new();
    let mut work = 0u64;
    let per_recording = (msg.track_release.len() as u64).saturating_add(terms.len() as u64);
    for s in &msg.sound_recording {
        work = work.saturating_add(per_recording);
        let products: BTreeSet<&str> = msg
            .track_release
            .iter()
            .filter(|t| t.release_resource_reference == s.resource_reference)
            .map(|t| t.release_reference.as_str())
            .chain(std::iter::once(r.release_reference.as_str()))
            .collect();
        let deals = terms
            .iter()
            .filter(|t| t.refs.intersection(&products).next().is_some())
            .map(covering_deal)
            .collect();
        out.insert(s.cid.clone(), pb::CidDeals { deals });
    }
    (out.into_iter().collect(), work)
}

fn covering_deal(t: &Term) -> pb::CoveringDeal {
    pb::CoveringDeal {
        territories: t.territories.to_bytes(),
        use_types: use_type::leaf_bits_of_mask(t.uses),
        validity_period: t.terms.validity_period.clone(),
        commercial_model_type: t.terms.commercial_model_type.clone(),
    }
}

/// The index keys of the release's display artists and labels, sorted and
/// unique (step 4 resolved every reference; an unresolved one is skipped).
pub(super) fn parties(msg: &pb::NewReleaseMessage, r: &pb::Release) -> Vec<String> {
    let by_ref: BTreeMap<&str, &pb::Party> = msg
        .party_list
        .iter()
        .map(|p| (p.party_reference.as_str(), p))
        .collect();
    let artists = r.display_artist.iter().map(|a| &a.artist_party_reference);
    let labels = r.release_label_reference.iter().map(|l| &l.value);
    let keys: BTreeSet<String> = artists
        .chain(labels)
        .filter_map(|reference| by_ref.get(reference.as_str()))
        .map(|p| party_key(p))
        .collect();
    keys.into_iter().collect()
}

/// `dpid:…` / `isni:…` from the first PartyId, else `name:` + the first
/// FullName, ASCII lower-cased.
pub(super) fn party_key(p: &pb::Party) -> String {
    match p.party_id.first() {
        Some(id) if !id.dpid.is_empty() => format!("dpid:{}", id.dpid),
        Some(id) => format!("isni:{}", id.isni),
        None => {
            let name = p.full_name.first().map(|n| n.value.as_str()).unwrap_or("");
            format!("name:{}", name.to_ascii_lowercase())
        }
    }
}
