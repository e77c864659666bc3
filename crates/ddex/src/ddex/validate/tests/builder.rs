//! Messages built in Rust: a valid 3-track, 2-disc album and a single.

use crate::ddex::time;
use crate::proto::ddex as pb;

pub fn text(v: &str) -> pb::Text {
    pb::Text {
        value: v.to_string(),
        variant: None,
    }
}

pub fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn party(reference: &str, name: &str, id: Option<pb::PartyId>) -> pb::Party {
    pb::Party {
        party_reference: reference.to_string(),
        full_name: vec![text(name)],
        party_id: id.into_iter().collect(),
    }
}

pub fn isni(isni: &str) -> Option<pb::PartyId> {
    Some(pb::PartyId {
        dpid: String::new(),
        isni: isni.to_string(),
    })
}

pub fn dpid(dpid: &str) -> Option<pb::PartyId> {
    Some(pb::PartyId {
        dpid: dpid.to_string(),
        isni: String::new(),
    })
}

pub fn artist(reference: &str) -> pb::DisplayArtist {
    pb::DisplayArtist {
        artist_party_reference: reference.to_string(),
        display_artist_role: "MainArtist".to_string(),
        sequence_number: 0,
    }
}

pub fn recording(reference: &str, isrc: &str, cid: u8) -> pb::SoundRecording {
    pb::SoundRecording {
        resource_reference: reference.to_string(),
        r#type: "MusicalWorkSoundRecording".to_string(),
        sound_recording_edition: Some(pb::SoundRecordingEdition {
            isrc: isrc.to_string(),
            ..Default::default()
        }),
        display_title_text: vec![text(&format!("Song {reference}"))],
        display_artist: vec![artist("P1")],
        contributor: vec![pb::Contributor {
            contributor_party_reference: "P4".to_string(),
            role: strings(&["Composer"]),
            sequence_number: 0,
        }],
        duration: "PT3M30S".to_string(),
        duration_ms: 210_000,
        cid: vec![cid; 32],
        ..Default::default()
    }
}

pub fn item(seq: u32, reference: &str) -> pb::ResourceGroupContentItem {
    pb::ResourceGroupContentItem {
        sequence_number: seq,
        release_resource_reference: reference.to_string(),
    }
}

pub fn disc(seq: u32, items: Vec<pb::ResourceGroupContentItem>) -> pb::ResourceGroup {
    pb::ResourceGroup {
        sequence_number: seq,
        resource_group_content_item: items,
        ..Default::default()
    }
}

/// A period from the start of `start` to the end of `end` ("" = open).
pub fn period(start: &str, end: &str) -> pb::ValidityPeriod {
    pb::ValidityPeriod {
        start_date: start.to_string(),
        end_date: end.to_string(),
        start_secs: if start.is_empty() {
            0
        } else {
            time::date_start_secs(start).unwrap()
        },
        end_secs: if end.is_empty() {
            0
        } else {
            time::date_end_secs(end).unwrap()
        },
        ..Default::default()
    }
}

pub fn deal(
    territories: &[&str],
    uses: &[&str],
    models: &[&str],
    periods: Vec<pb::ValidityPeriod>,
) -> pb::Deal {
    pb::Deal {
        deal_terms: Some(pb::DealTerms {
            territory_code: strings(territories),
            excluded_territory_code: vec![],
            validity_period: periods,
            commercial_model_type: strings(models),
            use_type: strings(uses),
        }),
    }
}

pub fn release_deal(refs: &[&str], deals: Vec<pb::Deal>) -> pb::ReleaseDeal {
    pb::ReleaseDeal {
        deal_release_reference: strings(refs),
        deal: deals,
    }
}

fn header() -> pb::MessageHeader {
    pb::MessageHeader {
        message_thread_id: "T1".to_string(),
        message_id: "M1".to_string(),
        message_sender: Some(pb::MessageParty {
            party_id: "PADPIDA2014120301U".to_string(),
            full_name: "Label".to_string(),
        }),
        message_recipient: vec![],
        message_created_date_time: "2024-03-01T00:00:00Z".to_string(),
        message_created_ms: 1_709_251_200_000,
        message_control_type: "LiveMessage".to_string(),
    }
}

pub const ICPN: &str = "4006381333931";
pub const GTIN: &str = "04006381333931";
pub const GRID: &str = "A12425GABC1234002M";

/// Album R0 (ICPN), discs 1: A1 A2 and 2: A3, cover A4, TrackRelease R1
/// for A1. Deals: R0 Worldwide Stream subscription from 2024-03-01, R0 GB
/// PermanentDownload pay-as-you-go from 2024-03-01, R1 Worldwide Stream
/// ad-supported always.
pub fn album() -> pb::NewReleaseMessage {
    let mut top = pb::ResourceGroup {
        resource_group: vec![
            disc(1, vec![item(1, "A1"), item(2, "A2")]),
            disc(2, vec![item(1, "A3")]),
        ],
        linked_release_resource_reference: strings(&["A4"]),
        ..Default::default()
    };
    top.display_title_text = vec![text("Album")];
    pb::NewReleaseMessage {
        ern_version: "43".to_string(),
        release_profile_version_id: "Audio".to_string(),
        language_and_script_code: "en".to_string(),
        avs_version_id: "6".to_string(),
        message_header: Some(header()),
        party_list: vec![
            party("P1", "Artist One", isni("0000000121032683")),
            party("P2", "A Label", dpid("PADPIDA2014120301U")),
            party("P3", "The Band", None),
            party("P4", "Jane Doe", None),
        ],
        sound_recording: vec![
            recording("A1", "USRC17607839", 1),
            recording("A2", "USRC17607840", 2),
            recording("A3", "USRC17607841", 3),
        ],
        image: vec![pb::Image {
            resource_reference: "A4".to_string(),
            r#type: "FrontCoverImage".to_string(),
            cid: vec![4; 32],
            ..Default::default()
        }],
        release: Some(pb::Release {
            release_reference: "R0".to_string(),
            release_type: "Album".to_string(),
            icpn: ICPN.to_string(),
            display_title_text: vec![text("Album")],
            display_artist: vec![artist("P1"), artist("P3")],
            release_label_reference: vec![text("P2")],
            release_date: "2024-03-01".to_string(),
            duration: "PT10M30S".to_string(),
            duration_ms: 630_000,
            resource_group: Some(top),
            ..Default::default()
        }),
        track_release: vec![pb::TrackRelease {
            release_reference: "R1".to_string(),
            isrc: "USRC17607839".to_string(),
            release_resource_reference: "A1".to_string(),
            release_label_reference: vec![text("P2")],
            genre: vec![],
        }],
        release_deal: vec![
            release_deal(
                &["R0"],
                vec![
                    deal(
                        &["Worldwide"],
                        &["Stream"],
                        &["SubscriptionModel"],
                        vec![period("2024-03-01", "")],
                    ),
                    deal(
                        &["GB"],
                        &["PermanentDownload"],
                        &["PayAsYouGoModel"],
                        vec![period("2024-03-01", "")],
                    ),
                ],
            ),
            release_deal(
                &["R1"],
                vec![deal(
                    &["Worldwide"],
                    &["Stream"],
                    &["AdvertisementSupportedModel"],
                    vec![],
                )],
            ),
        ],
    }
}

/// Single R0 (GRid) with one recording S1 directly in the top group.
pub fn single() -> pb::NewReleaseMessage {
    let mut m = album();
    m.release_profile_version_id = "SimpleAudioSingle".to_string();
    m.sound_recording = vec![recording("S1", "GBAYE0000351", 9)];
    m.image.clear();
    m.track_release.clear();
    let r = m.release.as_mut().unwrap();
    r.release_type = "Single".to_string();
    r.icpn.clear();
    r.grid = GRID.to_string();
    r.duration.clear();
    r.duration_ms = 0;
    r.resource_group = Some(disc(0, vec![item(0, "S1")]));
    m.release_deal = vec![release_deal(
        &["R0"],
        vec![deal(
            &["Worldwide"],
            &["OnDemandStream"],
            &["SubscriptionModel"],
            vec![],
        )],
    )];
    m
}
