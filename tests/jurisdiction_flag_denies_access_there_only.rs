//! `SetFlag` / `ClearFlag` come only from a takedown authority of the group
//! that owns the cid (NOT_TAKEDOWN_AUTHORITY, 203), name an ISO 3166-1 code
//! (UNKNOWN_JURISDICTION, 205), and the access decision denies in a flagged
//! jurisdiction only, until the flag is cleared.

mod inproc;
use inproc::governance_content::*;
use inproc::rights::*;
use stave::proto::rights::PolicyType;
use stave::tx::Code;

const CID: &[u8] = b"bafy-flag-1";

#[tokio::test(flavor = "multi_thread")]
async fn a_flag_denies_in_its_jurisdiction_until_cleared() {
    let mut w = grouped(CID).await;
    w.send(UPLOADER, vec![policy(CID, PolicyType::Public, "", b"")])
        .await
        .ok();
    w.refused(
        OTHER_AUTHORITY,
        vec![set_flag(CID, "DE")],
        Code::NotTakedownAuthority,
    )
    .await;
    w.refused(
        UPLOADER,
        vec![set_flag(CID, "DE")],
        Code::NotTakedownAuthority,
    )
    .await;
    let r = w.send(AUTHORITY, vec![set_flag(CID, "XX")]).await;
    r.is(Code::UnknownJurisdiction);
    w.send(AUTHORITY, vec![set_flag(CID, "DE")]).await.ok();
    assert_eq!(
        access_code(&w, CID, STRANGER, "DE"),
        Some(Code::AccessDenied)
    );
    assert_eq!(
        access_code(&w, CID, UPLOADER, "DE"),
        Some(Code::AccessDenied)
    );
    assert_eq!(access_code(&w, CID, STRANGER, "US"), None);
    w.refused(
        OTHER_AUTHORITY,
        vec![clear_flag(CID, "DE")],
        Code::NotTakedownAuthority,
    )
    .await;
    w.refused(AUTHORITY, vec![clear_flag(CID, "FR")], Code::NotFound)
        .await;
    w.send(AUTHORITY, vec![clear_flag(CID, "DE")]).await.ok();
    assert_eq!(access_code(&w, CID, STRANGER, "DE"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn content_outside_any_group_has_no_takedown_authority() {
    let mut w = World::published(CID).await;
    w.refused(
        AUTHORITY,
        vec![set_flag(CID, "DE")],
        Code::NotTakedownAuthority,
    )
    .await;
    w.refused(AUTHORITY, vec![takedown(CID)], Code::NotTakedownAuthority)
        .await;
}
