//! `ScheduleUpgrade` on one in-process node with four validators: bad plans
//! and strangers are refused with their codes and change nothing but
//! nonces; each plan has its own proposal, at most 2 live ones per opener;
//! votes over 2/3 of the power schedule the plan; a second plan waits; and
//! at the height the release binary, which knows no migration, returns
//! `UpgradeNeeded` before writing anything. A store already past the
//! binary's rules is refused at load (`VersionAhead`).

mod inproc;

use inproc::governance::*;
use inproc::*;
use stave::app::{App, AppConfig, AppError};
use stave::keyspaces::upgrades::{
    ScheduleUpgrade, UpgradesRead, UpgradesWrite, MAX_PROPOSALS_PER_OPENER,
};
use stave::store::{ChainStore, Overlay, PruneConfig};
use stave::tx::{Action, Code};

fn plan(name: &str, height: u64, app_version: u64) -> Action {
    Action::ScheduleUpgrade(ScheduleUpgrade {
        name: name.into(),
        height,
        app_version,
    })
}

const AT: u64 = 30;

#[tokio::test(flavor = "multi_thread")]
async fn upgrades_pass_by_vote_refuse_bad_plans_and_halt_without_the_migration() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    assert_eq!(c.code(7, set("k", "v")).await, 0);
    let before = state_dump_but_accounts(&c.node.store);
    let refusals = [
        (7, plan("v2", AT, 2), Code::NotValidator),
        (op_seed(0), plan("v2", 1, 2), Code::UpgradeRefused),
        // stateless refusals come before the signer's account is touched
        (7, plan("v2", AT, 1), Code::InvalidArgument),
        (7, plan("Bad Name", AT, 2), Code::InvalidArgument),
        (7, plan("", AT, 2), Code::InvalidArgument),
    ];
    for (seed, action, want) in refusals {
        let r = c.send(seed, vec![action.clone()]).await;
        let t = &r.tx_results[0];
        assert_eq!(t.code.value(), want.value(), "{action:?}: {}", t.log);
        assert!(t.events.is_empty(), "{action:?}");
    }
    assert_eq!(state_dump_but_accounts(&c.node.store), before);

    assert_eq!(c.code(op_seed(0), plan("v2", AT, 2)).await, 0);
    assert!(c.node.store.view().scheduled_upgrade().unwrap().is_none());
    // another plan under the same name is another proposal: no voter can
    // hold a name with a plan the others do not want
    assert_eq!(c.code(op_seed(1), plan("v2", AT + 1, 2)).await, 0);
    let proposals = c.node.store.view().upgrade_proposals().unwrap();
    assert_eq!(proposals.len(), 2);
    // at most MAX_PROPOSALS_PER_OPENER live ones per validator
    for i in 0..MAX_PROPOSALS_PER_OPENER {
        assert_eq!(c.code(op_seed(3), plan("spam", AT + 2 + i, 2)).await, 0);
    }
    let r = c.send(op_seed(3), vec![plan("spam", AT + 100, 2)]).await;
    let t = &r.tx_results[0];
    assert_eq!(t.code.value(), Code::GovernanceCap.value(), "{}", t.log);
    assert!(t.log.contains("opened by one validator"), "{}", t.log);
    assert_eq!(c.node.store.view().upgrade_proposals().unwrap().len(), 4);
    assert_eq!(c.code(op_seed(1), plan("v2", AT, 2)).await, 0);
    assert!(
        c.node.store.view().scheduled_upgrade().unwrap().is_none(),
        "2 of 4 is not over 2/3"
    );
    let r = c.send(op_seed(2), vec![plan("v2", AT, 2)]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    assert!(has_event(&r, "upgrade.scheduled"));
    let s = c
        .node
        .store
        .view()
        .scheduled_upgrade()
        .unwrap()
        .expect("scheduled");
    assert_eq!((s.name.as_str(), s.height, s.app_version), ("v2", AT, 2));
    // one plan at a time
    let r = c.send(op_seed(3), vec![plan("v3", AT + 10, 3)]).await;
    assert_eq!(r.tx_results[0].code.value(), Code::UpgradeRefused.value());
    assert!(
        r.tx_results[0].log.contains("already scheduled"),
        "{}",
        r.tx_results[0].log
    );
    assert_eq!(c.node.store.view().app_version().unwrap(), 1);

    while c.height < AT - 1 {
        c.empty().await;
    }
    let committed = c.node.store.commit_info().unwrap();
    let path = c.node.shutdown();
    let store = ChainStore::open(&path).unwrap();
    let mut app = App::load(store.clone(), AppConfig::default()).unwrap();
    let txs: Vec<Vec<u8>> = Vec::new();
    match app.finalize_block(AT, block_time(AT).unix_timestamp_nanos() as i64, &txs) {
        Err(AppError::UpgradeNeeded(u)) => {
            let msg = u.to_string();
            assert!(msg.starts_with("UPGRADE NEEDED"), "{msg}");
            assert!(
                msg.contains("\"v2\"") && msg.contains(&format!("height {AT}")),
                "{msg}"
            );
            assert!(msg.contains("it knows: "), "{msg}");
        }
        other => panic!("finalize at the upgrade height: {other:?}"),
    }
    assert_eq!(store.commit_info().unwrap(), committed, "nothing written");
    assert!(matches!(app.commit(), Err(AppError::NothingToCommit)));
}

/// A store whose committed state runs a newer app version than this binary
/// knows (a snapshot or backup taken after an upgrade) is refused at load
/// with `VersionAhead`, before anything serves or writes.
#[tokio::test(flavor = "multi_thread")]
async fn a_store_ahead_of_the_binary_is_refused_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    c.empty().await;
    let path = c.node.shutdown();
    let store = ChainStore::open(&path).unwrap();
    let mut o = Overlay::new(store.committed());
    o.put_app_version(99);
    let next = store.commit_info().unwrap().height.unwrap_or(0) + 1;
    let t = block_time(next).unix_timestamp_nanos() as i64;
    let pending = store.prepare(next, t, o.into_changes()).unwrap();
    store.commit(pending, PruneConfig::default()).unwrap();
    let committed = store.commit_info().unwrap();
    match App::load(store.clone(), AppConfig::default()) {
        Err(
            e @ AppError::VersionAhead {
                chain: 99,
                known: 1,
                ..
            },
        ) => {
            let msg = e.to_string();
            assert!(msg.starts_with("UPGRADE NEEDED"), "{msg}");
            assert!(msg.contains("app_version 99"), "{msg}");
        }
        Err(e) => panic!("load of a store at app_version 99: {e}"),
        Ok(_) => panic!("a store at app_version 99 loaded"),
    }
    assert_eq!(store.commit_info().unwrap(), committed, "nothing written");
}
