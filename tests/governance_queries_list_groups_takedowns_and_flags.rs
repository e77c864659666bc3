//! The governance queries for groups, takedowns and flags
//! (`GovernanceService.Group`, `Groups`, `Takedown`, `Flags`) read the
//! latest committed records: found and not found, their contents, and
//! paging with `next`.

mod inproc;
use inproc::governance_content::*;
use inproc::rights::*;
use stave::grpc::governance::GovernanceServiceImpl;
use stave::keyspaces::groups::GroupStatus;
use stave::keyspaces::takedowns::TakedownStatus;
use stave::proto::governance as gpb;
use stave::proto::governance::governance_service_server::GovernanceService;
use tonic::Request;

const CID: &[u8] = b"bafy-queries-1";

#[tokio::test(flavor = "multi_thread")]
async fn governance_queries_list_groups_takedowns_and_flags() {
    let mut w = grouped(CID).await;
    // a second admitted group, so that groups page
    w.send(
        STRANGER,
        vec![apply_group("zz-label", OTHER_AUTHORITY, &[STRANGER])],
    )
    .await
    .ok();
    for v in &VALIDATORS[..3] {
        w.send(
            *v,
            vec![vote_group("zz-label", gpb::ElectionKind::Admit, true)],
        )
        .await
        .ok();
    }
    for j in ["DE", "FR", "US"] {
        w.send(AUTHORITY, vec![set_flag(CID, j)]).await.ok();
    }
    w.send(AUTHORITY, vec![takedown(CID)]).await.ok();
    let svc = GovernanceServiceImpl {
        store: w.node.store.clone(),
    };

    let g = svc
        .group(Request::new(gpb::GroupRequest {
            group_id: GROUP.into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    let rec = g.group.expect("the group");
    assert!(g.found && g.height == w.height);
    assert_eq!(GroupStatus::of(rec.status), Some(GroupStatus::Active));
    assert_eq!(rec.takedown_authorities, vec![pk(AUTHORITY).to_vec()]);
    assert_eq!(rec.members, vec![pk(UPLOADER).to_vec()]);
    let none = svc
        .group(Request::new(gpb::GroupRequest {
            group_id: "nope".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(!none.found && none.group.is_none());

    let groups = |start_after: &str, limit| gpb::GroupsRequest {
        start_after: start_after.into(),
        limit,
    };
    let p1 = svc
        .groups(Request::new(groups("", 1)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(p1.groups.len(), 1);
    assert_eq!(
        (p1.groups[0].group_id.as_str(), p1.next.as_str()),
        (GROUP, GROUP)
    );
    let p2 = svc
        .groups(Request::new(groups(&p1.next, 1)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(p2.groups.len(), 1);
    assert_eq!(
        (p2.groups[0].group_id.as_str(), p2.next.as_str()),
        ("zz-label", "")
    );

    let t = svc
        .takedown(Request::new(gpb::GetTakedownRequest {
            cid: label_cid(CID),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    let rec = t.takedown.expect("the takedown");
    assert!(t.found);
    assert_eq!(
        TakedownStatus::of(rec.status),
        Some(TakedownStatus::Pending)
    );
    assert_eq!(rec.takedown_authority_pubkey, pk(AUTHORITY).to_vec());
    let none = svc
        .takedown(Request::new(gpb::GetTakedownRequest {
            cid: b"other".to_vec(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(!none.found);

    let flags = |start_after: &str, limit| gpb::FlagsRequest {
        cid: label_cid(CID),
        start_after: start_after.into(),
        limit,
    };
    let f1 = svc
        .flags(Request::new(flags("", 2)))
        .await
        .unwrap()
        .into_inner();
    let js: Vec<_> = f1.flags.iter().map(|f| f.jurisdiction.as_str()).collect();
    assert_eq!((js, f1.next.as_str()), (vec!["DE", "FR"], "FR"));
    let f2 = svc
        .flags(Request::new(flags(&f1.next, 2)))
        .await
        .unwrap()
        .into_inner();
    let js: Vec<_> = f2.flags.iter().map(|f| f.jurisdiction.as_str()).collect();
    assert_eq!((js, f2.next.as_str()), (vec!["US"], ""));
    let all = svc
        .flags(Request::new(flags("", 0)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(all.flags.len(), 3);
    assert!(all.flags.iter().all(|f| f.cid == label_cid(CID)));
}
