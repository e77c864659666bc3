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
