//! Bad input: a malformed ISRC gets MALFORMED_ISRC; other release faults
//! get their own codes (INVALID_ERN, INVALID_TERRITORY, OVERLAPPING_DEALS,
//! RIGHTS_CAP_EXCEEDED). Each is refused statelessly, so none consumes a
//! nonce or changes anything, and the upload can still be published after.

mod inproc;
use inproc::rights::*;
use stave::proto::ddex::NewReleaseMessage;
use stave::tx::Code;

fn isrc(m: &mut NewReleaseMessage, v: &str) {
    m.sound_recording[0]
        .sound_recording_edition
        .as_mut()
        .unwrap()
        .isrc = v.into();
}

fn terms(m: &mut NewReleaseMessage) -> &mut stave::proto::ddex::DealTerms {
    m.release_deal[0].deal[0].deal_terms.as_mut().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_isrc_is_refused() {
    let c = b"cid-1";
    let mut w = World::new().await;
    w.send(VALIDATORS[0], vec![upload_action(UPLOADER, manifest(c))])
        .await
        .ok();
    type Break = Box<dyn Fn(&mut NewReleaseMessage)>;
    let cases: Vec<(Break, Code)> = vec![
        (
            Box::new(|m| isrc(m, "US-RC1-76-07839")),
            Code::MalformedIsrc,
        ),
        (Box::new(|m| isrc(m, "usrc17607839")), Code::MalformedIsrc),
        (
            Box::new(|m| {
                let mut twin = m.sound_recording[0].clone();
                twin.resource_reference = "A2".into();
                twin.cid = vec![7; 32];
                m.sound_recording.push(twin);
            }),
            Code::MalformedIsrc,
        ),
        (
            Box::new(|m| m.release.as_mut().unwrap().icpn = "4006381333932".into()),
            Code::InvalidErn,
        ),
        (
            Box::new(|m| {
                let r = m.release.as_mut().unwrap();
                r.icpn.clear();
                r.grid = "A12425GABC1234002N".into();
            }),
            Code::InvalidErn,
        ),
        (
            Box::new(|m| m.release.as_mut().unwrap().release_date = "2026-02-30".into()),
            Code::InvalidErn,
        ),
        (
            Box::new(|m| m.release_profile_version_id = "Video".into()),
            Code::InvalidErn,
        ),
        (
            Box::new(|m| {
                m.release.as_mut().unwrap().display_artist[0].artist_party_reference = "P9".into()
            }),
            Code::InvalidErn,
        ),
        (
            Box::new(|m| terms(m).territory_code = vec!["UK".into()]),
            Code::InvalidTerritory,
        ),
        (
            Box::new(|m| {
                let twin = m.release_deal[0].deal[0].clone();
                m.release_deal[0].deal.push(twin);
            }),
            Code::OverlappingDeals,
        ),
        (
            Box::new(|m| m.party_list[0].full_name[0].value = "x".repeat(5000)),
            Code::RightsCapExceeded,
        ),
    ];
    for (i, (bad, code)) in cases.into_iter().enumerate() {
        let mut m = release_of(c);
        bad(&mut m);
        let nonce = w.nonce(UPLOADER);
        w.refused(UPLOADER, vec![publish_msg(m)], code).await;
        assert_eq!(
            w.nonce(UPLOADER),
            nonce,
            "case {i}: a stateless refusal consumes no nonce"
        );
    }
    // a GRid release id instead of an ICPN is fine
    let mut m = release_of(c);
    let r = m.release.as_mut().unwrap();
    r.icpn.clear();
    r.grid = "A12425GABC1234002M".into();
    w.send(UPLOADER, vec![publish_msg(m)]).await.ok();
}
