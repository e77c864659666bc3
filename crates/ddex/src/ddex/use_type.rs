//! The ERN 4.3 UseType tree, as far as Stave reads it.
//!
//! [`TABLE`] lists the DDEX allowed values (AVS `UseType`) a deal may name.
//! Two are parents: `Stream` covers `OnDemandStream`,
//! `NonInteractiveStream` and `ContentInfluencedStream`; `Download` covers
//! `PermanentDownload`, `ConditionalDownload` and `TetheredDownload`. Those
//! six children are the request leaves of [`pb::UseType`]: the only uses a
//! consumer can ask for. Every other listed value is a parent-less type
//! that never grants a request leaf (a `Broadcast` deal is accepted and
//! stored but opens nothing).
//!
//! Deliberately absent: `UserDefined`, `Unknown` and `AsPerContract` (they
//! say nothing checkable), and the values whose place in the tree Stave does
//! not model (`Use`, `Perform`, the `DubFor…` family,
//! `TimeInfluencedStream`, …). A deal naming one of them is refused.
//!
//! The position of a name in [`TABLE`] is its bit in an [`expand`] mask,
//! which is only compared within one message, never stored.

use crate::proto::ddex as pb;

/// One known UseType: its AVS name, the index of its parent in [`TABLE`],
/// and the request leaf it is (`None` for a parent or a parent-less type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub name: &'static str,
    pub parent: Option<usize>,
    pub leaf: Option<pb::UseType>,
}

const fn node(name: &'static str) -> Entry {
    Entry {
        name,
        parent: None,
        leaf: None,
    }
}

const fn leaf(name: &'static str, parent: usize, leaf: pb::UseType) -> Entry {
    Entry {
        name,
        parent: Some(parent),
        leaf: Some(leaf),
    }
}

const STREAM: usize = 0;
const DOWNLOAD: usize = 4;

/// The known UseTypes. At most 64 (the bits of an [`expand`] mask); the
/// order only matters for messages, never for state.
pub const TABLE: [Entry; 36] = [
    node("Stream"),
    leaf("OnDemandStream", STREAM, pb::UseType::OnDemandStream),
    leaf(
        "NonInteractiveStream",
        STREAM,
        pb::UseType::NonInteractiveStream,
    ),
    leaf(
        "ContentInfluencedStream",
        STREAM,
        pb::UseType::ContentInfluencedStream,
    ),
    node("Download"),
    leaf(
        "PermanentDownload",
        DOWNLOAD,
        pb::UseType::PermanentDownload,
    ),
    leaf(
        "ConditionalDownload",
        DOWNLOAD,
        pb::UseType::ConditionalDownload,
    ),
    leaf("TetheredDownload", DOWNLOAD, pb::UseType::TetheredDownload),
    node("Broadcast"),
    node("Cable"),
    node("Display"),
    node("Dub"),
    node("ExtractForInternet"),
    node("KioskDownload"),
    node("Narrowcast"),
    node("PerformAsMusicOnHold"),
    node("PerformInLivePerformance"),
    node("PerformInPublic"),
    node("Playback"),
    node("PlayInPublic"),
    node("Podcast"),
    node("Print"),
    node("PrivateCopy"),
    node("PurchaseAsPhysicalProduct"),
    node("Rent"),
    node("Simulcast"),
    node("UseAsAlertTone"),
    node("UseAsKaraoke"),
    node("UseAsRingbackTone"),
    node("UseAsRingtone"),
    node("UseAsScreensaver"),
    node("UseAsWallpaper"),
    node("UseForIdentification"),
    node("UserMakeAvailableLabelProvided"),
    node("UserMakeAvailableUserProvided"),
    node("Webcast"),
];

fn position(name: &str) -> Option<usize> {
    TABLE.iter().position(|e| e.name == name)
}

/// Bit `i` of a mask is `TABLE[i]`.
fn bit(i: usize) -> u64 {
    1u64.checked_shl(u32::try_from(i).unwrap_or(u32::MAX))
        .unwrap_or(0)
}

/// The mask of `name` and, for a parent, its children; `None` for a name
/// not in [`TABLE`] (case-sensitive, as ERN writes it).
pub fn expand(name: &str) -> Option<u64> {
    let i = position(name)?;
    let children = TABLE
        .iter()
        .enumerate()
        .filter(|(_, e)| e.parent == Some(i))
        .fold(0u64, |m, (c, _)| m | bit(c));
    Some(bit(i) | children)
}

/// The [`pb::UseType`] request leaves `name` covers, as bits
/// `1 << (leaf as i32)`: `Stream` → the three stream leaves,
/// `OnDemandStream` → itself, `Broadcast` or an unknown name → 0.
pub fn leaf_bits(name: &str) -> u32 {
    leaf_bits_of_mask(expand(name).unwrap_or(0))
}

/// The request leaves of an [`expand`] mask (the OR of [`leaf_bits`]).
pub fn leaf_bits_of_mask(mask: u64) -> u32 {
    TABLE
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & bit(*i) != 0)
        .filter_map(|(_, e)| e.leaf)
        .fold(0u32, |m, l| m | leaf_bit(l))
}

fn leaf_bit(l: pb::UseType) -> u32 {
    1u32.checked_shl(u32::try_from(l as i32).unwrap_or(u32::MAX))
        .unwrap_or(0)
}

/// The bit of a requested use. `USE_TYPE_UNSPECIFIED` (0) is an on-demand
/// stream, the common case (a player asking to play a track); an enum value
/// this build does not know is `None` (never granted).
pub fn request_bit(use_type: i32) -> Option<u32> {
    match pb::UseType::try_from(use_type).ok()? {
        pb::UseType::Unspecified => Some(leaf_bit(pb::UseType::OnDemandStream)),
        l => Some(leaf_bit(l)),
    }
}

/// The names of the leaves set in `bits` (bits of [`leaf_bits`]), in
/// [`pb::UseType`] order, for messages.
pub fn leaf_names(bits: u32) -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|e| e.leaf.is_some_and(|l| bits & leaf_bit(l) != 0))
        .map(|e| e.name)
        .collect()
}

/// The name of the lowest [`TABLE`] entry set in `mask`, for messages.
pub fn first_name(mask: u64) -> Option<&'static str> {
    let i = usize::try_from(mask.trailing_zeros()).ok()?;
    TABLE.get(i).map(|e| e.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lb(l: pb::UseType) -> u32 {
        1 << (l as i32)
    }

    #[test]
    fn table_is_unique_and_fits_a_mask() {
        assert!(TABLE.len() <= 64);
        for (i, e) in TABLE.iter().enumerate() {
            assert_eq!(position(e.name), Some(i), "{}", e.name);
            // Parents are parent-less themselves: the tree has two levels.
            if let Some(p) = e.parent {
                assert!(TABLE[p].parent.is_none() && TABLE[p].leaf.is_none());
            }
        }
    }

    #[test]
    fn parents_cover_their_children() {
        let s = expand("Stream").unwrap();
        for c in [
            "OnDemandStream",
            "NonInteractiveStream",
            "ContentInfluencedStream",
        ] {
            let m = expand(c).unwrap();
            assert_eq!(s & m, m, "{c}");
            assert_eq!(m.count_ones(), 1);
        }
        let d = expand("Download").unwrap();
        for c in [
            "PermanentDownload",
            "ConditionalDownload",
            "TetheredDownload",
        ] {
            assert_eq!(d & expand(c).unwrap(), expand(c).unwrap(), "{c}");
        }
        assert_eq!(s & d, 0);
        assert_eq!(expand("Broadcast").unwrap().count_ones(), 1);
        assert_eq!(expand("Broadcast").unwrap() & (s | d), 0);
    }

    #[test]
    fn unknown_names_are_refused() {
        for n in [
            "UserDefined",
            "Unknown",
            "stream",
            "",
            "Use",
            "AsPerContract",
        ] {
            assert_eq!(expand(n), None, "{n}");
            assert_eq!(leaf_bits(n), 0, "{n}");
        }
    }

    #[test]
    fn leaf_bits_follow_the_tree() {
        use pb::UseType::*;
        assert_eq!(
            leaf_bits("Stream"),
            lb(OnDemandStream) | lb(NonInteractiveStream) | lb(ContentInfluencedStream)
        );
        assert_eq!(
            leaf_bits("Download"),
            lb(PermanentDownload) | lb(ConditionalDownload) | lb(TetheredDownload)
        );
        assert_eq!(leaf_bits("OnDemandStream"), lb(OnDemandStream));
        assert_eq!(leaf_bits("TetheredDownload"), lb(TetheredDownload));
        assert_eq!(leaf_bits("Broadcast"), 0);
        assert_eq!(leaf_bits("Webcast"), 0);
        assert_eq!(leaf_names(leaf_bits("Download")).len(), 3);
        assert_eq!(first_name(expand("Download").unwrap()), Some("Download"));
    }

    #[test]
    fn requests() {
        use pb::UseType::*;
        assert_eq!(request_bit(0), Some(lb(OnDemandStream)));
        assert_eq!(request_bit(OnDemandStream as i32), Some(lb(OnDemandStream)));
        assert_eq!(
            request_bit(TetheredDownload as i32),
            Some(lb(TetheredDownload))
        );
        assert_eq!(request_bit(7), None);
        assert_eq!(request_bit(-1), None);
        assert_eq!(request_bit(i32::MAX), None);
    }
}
