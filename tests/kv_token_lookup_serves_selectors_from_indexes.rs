//! Lookup (BRC-35 §3.5): tag `all`/`any`, combined selectors intersect,
//! paging with limit and skip, sort by creation, live tokens only.

mod inproc;
use inproc::kv::*;
use inproc::*;
use stave::keyspaces::kv::token::query::{self, Lookup};

async fn seeded() -> (tempfile::TempDir, Node) {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    // Controller 1: k0..k5; controller 2: k0, k1. Tags vary.
    let b1 = vec![
        signed(
            1,
            0,
            vec![
                create(1, "k0", "1-0", &["red", "big"], 1),
                create(1, "k1", "1-1", &["red"], 1),
            ],
        ),
        signed(2, 0, vec![create(2, "k0", "2-0", &["red", "big"], 1)]),
    ];
    node.block(1, b1).await;
    let b2 = vec![
        signed(
            1,
            1,
            vec![
                create(1, "k2", "1-2", &["blue"], 1),
                create(1, "k3", "1-3", &["big"], 1),
            ],
        ),
        signed(2, 1, vec![create(2, "k1", "2-1", &["blue", "big"], 1)]),
        signed(
            1,
            2,
            vec![
                create(1, "k4", "1-4", &[], 1),
                create(1, "k5", "1-5", &["red", "blue"], 1),
            ],
        ),
    ];
    node.block(2, b2).await;
    (dir, node)
}

fn q() -> Lookup {
    Lookup::default()
}

#[tokio::test(flavor = "multi_thread")]
async fn tag_modes_combined_selectors_paging_and_sort() {
    let (_dir, mut node) = seeded().await;
    let tags = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    let all = lookup(
        &node,
        &Lookup {
            tags: tags(&["red", "big"]),
            ..q()
        },
    );
    assert_eq!(values(&all), ["1-0", "2-0"]);
    let any = lookup(
        &node,
        &Lookup {
            tags: tags(&["red", "big"]),
            any: true,
            ..q()
        },
    );
    assert_eq!(values(&any), ["1-0", "1-1", "2-0", "1-3", "2-1", "1-5"]);
    let blue_any_desc = lookup(
        &node,
        &Lookup {
            tags: tags(&["blue", "nothing"]),
            any: true,
            desc: true,
            ..q()
        },
    );
    assert_eq!(values(&blue_any_desc), ["1-5", "2-1", "1-2"]);

    // Combined selectors intersect.
    let c2_big = lookup(
        &node,
        &Lookup {
            controller: Some(controller(2)),
            tags: tags(&["big"]),
            ..q()
        },
    );
    assert_eq!(values(&c2_big), ["2-0", "2-1"]);
    let k0 = lookup(
        &node,
        &Lookup {
            key: Some("k0".into()),
            ..q()
        },
    );
    assert_eq!(values(&k0), ["1-0", "2-0"]);
    let k0_c1 = lookup(
        &node,
        &Lookup {
            key: Some("k0".into()),
            controller: Some(controller(1)),
            protocol_id: Some(PID.into()),
            ..q()
        },
    );
    assert_eq!(values(&k0_c1), ["1-0"]);
    let c1_any = lookup(
        &node,
        &Lookup {
            controller: Some(controller(1)),
            tags: tags(&["blue", "big"]),
            any: true,
            ..q()
        },
    );
    assert_eq!(values(&c1_any), ["1-0", "1-2", "1-3", "1-5"]);
    let none = lookup(
        &node,
        &Lookup {
            protocol_id: Some("[1,\"other proto\"]".into()),
            ..q()
        },
    );
    assert!(none.is_empty());

    // Paging and sort: by creation height and position.
    let by_proto = |limit, skip, desc| Lookup {
        protocol_id: Some(PID.into()),
        limit,
        skip,
        desc,
        ..q()
    };
    assert_eq!(
        values(&lookup(&node, &by_proto(0, 0, false))),
        ["1-0", "1-1", "2-0", "1-2", "1-3", "2-1", "1-4", "1-5"]
    );
    assert_eq!(
        values(&lookup(&node, &by_proto(3, 2, false))),
        ["2-0", "1-2", "1-3"]
    );
    assert_eq!(
        values(&lookup(&node, &by_proto(2, 1, true))),
        ["1-4", "2-1"]
    );
    assert_eq!(
        values(&lookup(
            &node,
            &Lookup {
                tags: tags(&["red"]),
                limit: 1,
                skip: 2,
                ..q()
            }
        )),
        ["2-0"]
    );
    let red_c1_paged = Lookup {
        tags: tags(&["red"]),
        controller: Some(controller(1)),
        limit: 1,
        skip: 1,
        ..q()
    };
    assert_eq!(values(&lookup(&node, &red_c1_paged)), ["1-1"]);

    // Errors: no selector (an empty tag list is none), limit over 1000.
    let view = node.store.view();
    assert!(matches!(
        query::lookup(&view, &q()),
        Err(query::LookupError::NoSelector)
    ));
    assert!(matches!(
        query::lookup(
            &view,
            &Lookup {
                key: Some("k0".into()),
                limit: 1001,
                ..q()
            }
        ),
        Err(query::LookupError::LimitTooLarge(1001))
    ));
    drop(view);

    // Live tokens only: after an update and a delete, old versions vanish.
    let t = live(&node, 1, "k0").unwrap();
    let t5 = live(&node, 1, "k5").unwrap();
    node.block(
        3,
        vec![signed(
            1,
            3,
            vec![
                update(1, "k0", "1-0b", &["green"], 2, t.id),
                delete(1, "k5", 2, t5.id),
            ],
        )],
    )
    .await;
    let red = lookup(
        &node,
        &Lookup {
            tags: tags(&["red"]),
            ..q()
        },
    );
    assert_eq!(values(&red), ["1-1", "2-0"]);
    let green = lookup(
        &node,
        &Lookup {
            tags: tags(&["green"]),
            ..q()
        },
    );
    assert_eq!(values(&green), ["1-0b"]);
    assert_eq!(green[0].token.signature.len(), 64);
}
