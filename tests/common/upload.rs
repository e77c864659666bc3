//! Set-up shared by the localnet tests that upload through the pipeline.

use std::path::Path;

use ed25519_dalek::SigningKey;

use super::localnet::Localnet;
use super::rights::{operator, set_key, submit};

/// The publisher group `group` with `member` in it: applied for by the
/// member, admitted by validators 0..3 (nodes take grouped uploads only).
/// Returns the group's takedown authority.
pub async fn admit_group(net: &Localnet, group: &str, member: &SigningKey) -> SigningKey {
    use stave::keyspaces::groups::{ApplyGroup, VoteGroup};
    use stave::tx::Action;
    let authority = SigningKey::generate(&mut rand::rngs::OsRng);
    let apply = Action::ApplyGroup(ApplyGroup {
        group_id: group.into(),
        takedown_authorities: vec![set_key(&authority)],
        members: vec![set_key(member)],
    });
    submit(net, 0, member, vec![apply], "ApplyGroup").await;
    for i in 0..3 {
        let vote = Action::VoteGroup(VoteGroup {
            group_id: group.into(),
            kind: stave::proto::governance::ElectionKind::Admit as i32,
            approve: true,
        });
        let what = format!("VoteGroup admit by validator {i}");
        submit(net, i, &operator(net, i), vec![vote], &what).await;
    }
    authority
}

/// `secs` of a music-like 44.1 kHz, 16-bit stereo signal.
pub fn write_wav(path: &Path, secs: u64) {
    let samples = stave::media::wav::music_like(44_100, 2, 16, secs * 44_100);
    std::fs::write(path, stave::media::wav::wav_bytes(44_100, 2, 16, &samples)).expect("wav");
}

/// Uploads a WAV of `secs` through node 0 with `stave content upload` (the
/// keyring `label` in `dir`), `copies` replicas in `group`; publishes it
/// and grants `fan` CONSUMER access in GB, both signed by `uploader`
/// through node 1. Returns the flac cid.
pub async fn upload_published(
    net: &Localnet,
    (dir, uploader): (&Path, &SigningKey),
    fan: &[u8; 32],
    (secs, copies, group): (u64, u32, &str),
) -> Vec<u8> {
    use stave::proto::rights as pb;
    use stave::tx::Action;
    let wav = dir.join(format!("track{secs}.wav"));
    write_wav(&wav, secs);
    let copies = copies.to_string();
    let j = net.stave_json(
        "stave content upload",
        &[
            "content",
            "upload",
            wav.to_str().expect("utf-8"),
            "--from",
            "label",
            "--keyring-dir",
            dir.to_str().expect("utf-8"),
            "--node",
            &net.grpc_url(0),
            "--copies",
            &copies,
            "--group",
            group,
        ],
    );
    let cid = j["flac_cid"]
        .as_str()
        .and_then(|s| hex::decode(s).ok())
        .unwrap_or_else(|| net.fail(&format!("no flac_cid in {j}")));
    let publish = super::rights::publish_single(&cid);
    submit(net, 1, uploader, vec![publish], "PublishRelease").await;
    let grant = Action::GrantEntitlement(stave::keyspaces::entitlements::GrantEntitlement {
        cid: cid.clone(),
        pubkey: fan.to_vec(),
        role: pb::Role::Consumer,
        scope: Some(pb::Scope {
            territories: vec!["GB".into()],
            ..Default::default()
        }),
    });
    submit(net, 1, uploader, vec![grant], "GrantEntitlement").await;
    cid
}
