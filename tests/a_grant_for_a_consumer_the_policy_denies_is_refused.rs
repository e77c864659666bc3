//! Bad input: `RecordGrant` for a consumer the access decision denies gets
//! ACCESS_DENIED (outside the scope's territory or window, no entitlement)
//! or UNSUPPORTED_POLICY_TYPE (PROGRAMMABLE) and changes nothing.

mod inproc;
use inproc::rights::*;
use stave::proto::rights::{PolicyType as T, Role, Scope};
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn a_grant_for_a_consumer_the_policy_denies_is_refused() {
    let c = b"cid-1";
    let mut w = World::published(c).await;
    let v = VALIDATORS[0];
    // no entitlement under the default DIRECT_GRANT policy
    w.refused(v, vec![record(c, CONSUMER, "GB")], Code::AccessDenied)
        .await;
    w.send(
        UPLOADER,
        vec![grant(
            c,
            CONSUMER,
            Role::Consumer,
            territories(&["GB", "IE"]),
        )],
    )
    .await
    .ok();
    w.refused(v, vec![record(c, CONSUMER, "US")], Code::AccessDenied)
        .await;
    w.send(v, vec![record(c, CONSUMER, "IE")]).await.ok();

    // a window that has ended (block times are 1_700_000_000 + height)
    let ended = Scope {
        not_before: 0,
        not_after: 1_600_000_000,
        ..Default::default()
    };
    w.send(
        UPLOADER,
        vec![grant(c, CONSUMER, Role::Consumer, Some(ended))],
    )
    .await
    .ok();
    w.refused(v, vec![record(c, CONSUMER, "GB")], Code::AccessDenied)
        .await;
    // a window that has not started
    let later = Scope {
        not_before: 1_900_000_000,
        not_after: 0,
        ..Default::default()
    };
    w.send(
        UPLOADER,
        vec![grant(c, CONSUMER, Role::Consumer, Some(later))],
    )
    .await
    .ok();
    w.refused(v, vec![record(c, CONSUMER, "GB")], Code::AccessDenied)
        .await;

    // PUBLIC allows anyone; PROGRAMMABLE is unsupported, never allow or deny
    w.send(UPLOADER, vec![policy(c, T::Public, "", b"")])
        .await
        .ok();
    w.send(v, vec![record(c, STRANGER, "JP")]).await.ok();
    w.send(UPLOADER, vec![policy(c, T::Programmable, "", b"script")])
        .await
        .ok();
    w.refused(
        v,
        vec![record(c, STRANGER, "JP")],
        Code::UnsupportedPolicyType,
    )
    .await;
}
