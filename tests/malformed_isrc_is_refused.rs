//! Bad input: a malformed ISRC gets MALFORMED_ISRC; other ERN faults get
//! their own codes (INVALID_ERN, INVALID_TERRITORY, RIGHTS_CAP_EXCEEDED);
//! none changes anything, and the upload can still be published after.

mod inproc;
use inproc::rights::*;
use stave::proto::rights::ErnRelease;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn malformed_isrc_is_refused() {
    let c = b"cid-1";
    let mut w = World::new().await;
    w.send(VALIDATORS[0], vec![upload_action(UPLOADER, manifest(c))])
        .await
        .ok();
    type Break = Box<dyn Fn(&mut ErnRelease)>;
    let cases: Vec<(Break, Code)> = vec![
        (
            Box::new(|e| e.tracks[0].isrc = "US-RC1-76-07839".into()),
            Code::MalformedIsrc,
        ),
        (
            Box::new(|e| e.tracks[0].isrc = "usrc17607839".into()),
            Code::MalformedIsrc,
        ),
        (
            Box::new(|e| e.tracks.push(e.tracks[0].clone())),
            Code::MalformedIsrc,
        ),
        (
            Box::new(|e| e.icpn = "4006381333932".into()),
            Code::InvalidErn,
        ),
        (
            Box::new(|e| e.grid = "A12425GABC1234002M".into()),
            Code::InvalidErn,
        ),
        (
            Box::new(|e| e.release_date = "2026-02-30".into()),
            Code::InvalidErn,
        ),
        (Box::new(|e| e.title.clear()), Code::InvalidErn),
        (Box::new(|e| e.tracks.clear()), Code::InvalidErn),
        (
            Box::new(|e| e.territories = vec!["UK".into()]),
            Code::InvalidTerritory,
        ),
        (
            Box::new(|e| e.label = "x".repeat(5000)),
            Code::RightsCapExceeded,
        ),
    ];
    for (bad, code) in cases {
        let mut e = ern();
        bad(&mut e);
        let nonce = w.nonce(UPLOADER);
        w.refused(UPLOADER, vec![publish(c, e)], code).await;
        assert_eq!(
            w.nonce(UPLOADER),
            nonce,
            "a stateless refusal consumes no nonce"
        );
    }
    // a GRid release id instead of an ICPN is fine
    let mut e = ern();
    e.icpn.clear();
    e.grid = "A12425GABC1234002M".into();
    w.send(UPLOADER, vec![publish(c, e)]).await.ok();
}
