//! Small valid releases built in code: a single or an album over given
//! cids, with one worldwide deal covering streams and downloads. For tests,
//! benches and examples that need a published cid, not for labels (they
//! import ERN XML: [`super::xml`]).

use sha2::{Digest, Sha256};

use crate::proto::ddex as pb;

/// A valid 13-digit ICPN (EAN-13) derived from `seed`.
pub fn icpn_for(seed: &[u8]) -> String {
    let h = Sha256::digest(seed);
    let body: String = h
        .iter()
        .take(12)
        .map(|b| char::from(b'0' + b % 10))
        .collect();
    let sum: u32 = body
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, c)| u32::from(c - b'0') * if i % 2 == 0 { 3 } else { 1 })
        .sum();
    format!("{body}{}", (10 - sum % 10) % 10)
}

/// A valid ISRC derived from `seed` (country `ZZ`, registrant `STV`).
pub fn isrc_for(seed: &[u8]) -> String {
    let h = Sha256::digest(seed);
    let digits: String = h
        .iter()
        .take(7)
        .map(|b| char::from(b'0' + b % 10))
        .collect();
    format!("ZZSTV{digits}")
}

fn text(v: &str) -> pb::Text {
    pb::Text {
        value: v.to_string(),
        variant: None,
    }
}

fn recording(i: usize, cid: &[u8]) -> pb::SoundRecording {
    pb::SoundRecording {
        resource_reference: format!("A{}", i + 1),
        r#type: "MusicalWorkSoundRecording".into(),
        sound_recording_edition: Some(pb::SoundRecordingEdition {
            isrc: isrc_for(cid),
            ..Default::default()
        }),
        display_title_text: vec![text(&format!("Track {}", i + 1))],
        display_artist_name: vec![text("Stave Test Artist")],
        display_artist: vec![pb::DisplayArtist {
            artist_party_reference: "PArtist".into(),
            display_artist_role: "MainArtist".into(),
            sequence_number: 1,
        }],
        duration: "PT3M0S".into(),
        duration_ms: 180_000,
        cid: cid.to_vec(),
        ..Default::default()
    }
}

fn party(reference: &str, name: &str) -> pb::Party {
    pb::Party {
        party_reference: reference.into(),
        full_name: vec![text(name)],
        party_id: Vec::new(),
    }
}

/// A release of `cids` in one disc, ICPN from `id_seed`, created at
/// `created` (an `xs:dateTime`), with one deal: Worldwide, Stream and
/// Download, SubscriptionModel, no end.
pub fn album_created(cids: &[Vec<u8>], id_seed: &[u8], created: &str) -> pb::NewReleaseMessage {
    let items = (0..cids.len())
        .map(|i| pb::ResourceGroupContentItem {
            sequence_number: u32::try_from(i + 1).unwrap_or(u32::MAX),
            release_resource_reference: format!("A{}", i + 1),
        })
        .collect();
    let single = cids.len() == 1;
    pb::NewReleaseMessage {
        ern_version: "43".into(),
        release_profile_version_id: "Audio".into(),
        language_and_script_code: "en".into(),
        avs_version_id: String::new(),
        message_header: Some(pb::MessageHeader {
            message_thread_id: "stave".into(),
            message_id: icpn_for(id_seed),
            message_created_ms: super::time::date_time_ms(created).unwrap_or(0),
            message_created_date_time: created.into(),
            message_control_type: "LiveMessage".into(),
            ..Default::default()
        }),
        party_list: vec![
            party("PArtist", "Stave Test Artist"),
            party("PLabel", "Stave Test Label"),
        ],
        sound_recording: cids
            .iter()
            .enumerate()
            .map(|(i, c)| recording(i, c))
            .collect(),
        image: Vec::new(),
        release: Some(pb::Release {
            release_reference: "R0".into(),
            release_type: if single { "Single" } else { "Album" }.into(),
            icpn: icpn_for(id_seed),
            display_title_text: vec![text("Stave Test Release")],
            display_artist_name: vec![text("Stave Test Artist")],
            display_artist: vec![pb::DisplayArtist {
                artist_party_reference: "PArtist".into(),
                display_artist_role: "MainArtist".into(),
                sequence_number: 1,
            }],
            release_label_reference: vec![text("PLabel")],
            resource_group: Some(pb::ResourceGroup {
                resource_group_content_item: items,
                ..Default::default()
            }),
            ..Default::default()
        }),
        track_release: Vec::new(),
        release_deal: vec![pb::ReleaseDeal {
            deal_release_reference: vec!["R0".into()],
            deal: vec![pb::Deal {
                deal_terms: Some(pb::DealTerms {
                    territory_code: vec![super::territory::WORLDWIDE.into()],
                    commercial_model_type: vec!["SubscriptionModel".into()],
                    use_type: vec!["Stream".into(), "Download".into()],
                    ..Default::default()
                }),
            }],
        }],
    }
}

/// [`album_created`] created at the epoch (so any block time accepts it,
/// and any later message updates it), ICPN from the first cid.
pub fn album(cids: &[Vec<u8>]) -> pb::NewReleaseMessage {
    let seed = cids.first().cloned().unwrap_or_default();
    album_created(cids, &seed, "1970-01-01T00:00:00Z")
}

/// A one-track release of `cid`.
pub fn single(cid: &[u8]) -> pb::NewReleaseMessage {
    album(&[cid.to_vec()])
}

/// The per-cid deal row (`releases_by_cid/`) of [`album`]'s one deal:
/// every territory, every stream and download use, no end. For benches
/// that write state directly.
pub fn worldwide_deals() -> pb::CidDeals {
    let uses = super::use_type::leaf_bits("Stream") | super::use_type::leaf_bits("Download");
    pb::CidDeals {
        deals: vec![pb::CoveringDeal {
            territories: super::territory::TerritorySet::all().to_bytes(),
            use_types: uses,
            validity_period: Vec::new(),
            commercial_model_type: vec!["SubscriptionModel".into()],
        }],
    }
}
