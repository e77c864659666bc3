//! kvdb: every operation on its type, WRONGTYPE on another, counters that
//! fail on overflow instead of wrapping, and the reads.

mod inproc;
use inproc::kv::*;
use inproc::*;
use stave::keyspaces::kv::db::query as dbq;
use stave::keyspaces::kv::{KvType, KvdbOp as Op};
use stave::tx::Code;

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_type_supports_its_operations_and_refuses_others() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let ops = vec![
        kvdb(
            "app",
            "v",
            Op::Set {
                value: b("hello"),
                ttl_ms: 0,
            },
        ),
        kvdb(
            "app",
            "h",
            Op::HSet {
                field: b("f1"),
                value: b("x"),
            },
        ),
        kvdb(
            "app",
            "h",
            Op::HSet {
                field: b("f2"),
                value: b("y"),
            },
        ),
        kvdb(
            "app",
            "h",
            Op::HSet {
                field: b("f1"),
                value: b("x2"),
            },
        ),
        kvdb("app", "s", Op::SAdd(vec![b("a"), b("b"), b("c")])),
        kvdb("app", "s", Op::SRem(vec![b("b"), b("zz")])),
        kvdb(
            "app",
            "z",
            Op::ZAdd {
                member: b("m1"),
                score: "2.5".into(),
            },
        ),
        kvdb(
            "app",
            "z",
            Op::ZAdd {
                member: b("m2"),
                score: "-1".into(),
            },
        ),
        kvdb(
            "app",
            "z",
            Op::ZAdd {
                member: b("m3"),
                score: "10".into(),
            },
        ),
        kvdb(
            "app",
            "z",
            Op::ZAdd {
                member: b("m1"),
                score: "11".into(),
            },
        ),
        kvdb(
            "app",
            "l",
            Op::Push {
                values: vec![b("2"), b("3")],
                left: false,
            },
        ),
        kvdb(
            "app",
            "l",
            Op::Push {
                values: vec![b("1"), b("0")],
                left: true,
            },
        ),
        kvdb("app", "l", Op::Pop { left: false }),
        kvdb("app", "c", Op::IncrBy(5)),
        kvdb("app", "c", Op::IncrBy(-7)),
    ];
    let (_, r) = node.block(1, vec![signed(1, 0, ops)]).await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);

    let o = owner(1);
    let v = node.store.view();
    let now = committed_ms(&node);
    assert_eq!(
        dbq::get(&v, at(&o, "app", "v"), now).unwrap(),
        Some(b("hello"))
    );
    assert_eq!(
        dbq::get(&v, at(&o, "app", "c"), now).unwrap(),
        Some(b("-2"))
    );
    assert_eq!(
        dbq::entry(&v, at(&o, "app", "h"), now)
            .unwrap()
            .unwrap()
            .kind,
        KvType::Hash
    );
    let (hall, _) = dbq::members(&v, at(&o, "app", "h"), now, KvType::Hash, &[], 100).unwrap();
    assert_eq!(hall, vec![(b("f1"), b("x2")), (b("f2"), b("y"))]);
    assert_eq!(
        dbq::len(&v, at(&o, "app", "h"), now, KvType::Hash).unwrap(),
        2
    );
    let (smem, _) = dbq::members(&v, at(&o, "app", "s"), now, KvType::Set, &[], 100).unwrap();
    assert_eq!(
        smem.into_iter().map(|(m, _)| m).collect::<Vec<_>>(),
        vec![b("a"), b("c")]
    );
    assert!(dbq::member(&v, at(&o, "app", "s"), now, KvType::Set, b"a")
        .unwrap()
        .is_some());
    assert!(dbq::member(&v, at(&o, "app", "s"), now, KvType::Set, b"b")
        .unwrap()
        .is_none());
    assert_eq!(
        dbq::zscore(&v, at(&o, "app", "z"), now, b"m1").unwrap(),
        Some("11".into())
    );
    let zr = dbq::zrange_by_score(
        &v,
        at(&o, "app", "z"),
        now,
        -10_000_000_000_000_000_000,
        10_500_000_000_000_000_000,
        100,
    )
    .unwrap();
    assert_eq!(
        zr,
        vec![(b("m2"), "-1".to_string()), (b("m3"), "10".to_string())]
    );
    assert_eq!(
        dbq::len(&v, at(&o, "app", "z"), now, KvType::ZSet).unwrap(),
        3
    );
    assert_eq!(
        dbq::lrange(&v, at(&o, "app", "l"), now, 0, -1).unwrap(),
        vec![b("0"), b("1"), b("2")]
    );
    assert_eq!(
        dbq::lrange(&v, at(&o, "app", "l"), now, -2, 5).unwrap(),
        vec![b("1"), b("2")]
    );
    assert_eq!(dbq::ttl(&v, at(&o, "app", "v"), now).unwrap(), -1);
    assert_eq!(dbq::ttl(&v, at(&o, "app", "nope"), now).unwrap(), -2);
    let (keys, _) = dbq::keys_page(&v, &o, "app", &[], 100, now).unwrap();
    assert_eq!(keys, vec![b("c"), b("h"), b("l"), b("s"), b("v"), b("z")]);
    // Reads of the wrong type are WRONGTYPE too.
    assert!(dbq::get(&v, at(&o, "app", "h"), now).is_err());
    drop(v);

    // WRONGTYPE on writes: each fails alone and changes nothing but the nonce.
    let wrong = [
        kvdb(
            "app",
            "v",
            Op::HSet {
                field: b("f"),
                value: b("x"),
            },
        ),
        kvdb("app", "h", Op::SAdd(vec![b("a")])),
        kvdb(
            "app",
            "s",
            Op::ZAdd {
                member: b("a"),
                score: "1".into(),
            },
        ),
        kvdb(
            "app",
            "z",
            Op::Push {
                values: vec![b("a")],
                left: true,
            },
        ),
        kvdb("app", "l", Op::IncrBy(1)),
        kvdb("app", "c", Op::HDel { field: b("f") }),
    ];
    for (i, op) in wrong.into_iter().enumerate() {
        let (_, r) = node
            .block(2 + i as u64, vec![signed(1, 1 + i as u64, vec![op])])
            .await;
        assert_eq!(
            code(&r, 0),
            Code::KvWrongType.value(),
            "{}",
            r.tx_results[0].log
        );
    }
    // SET replaces any type; DEL removes; a missing key is NOT_FOUND.
    let (_, r) = node
        .block(
            8,
            vec![signed(
                1,
                7,
                vec![
                    kvdb(
                        "app",
                        "h",
                        Op::Set {
                            value: b("flat"),
                            ttl_ms: 0,
                        },
                    ),
                    kvdb("app", "s", Op::Del),
                ],
            )],
        )
        .await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
    let v = node.store.view();
    assert_eq!(
        dbq::get(&v, at(&o, "app", "h"), committed_ms(&node)).unwrap(),
        Some(b("flat"))
    );
    assert!(dbq::entry(&v, at(&o, "app", "s"), committed_ms(&node))
        .unwrap()
        .is_none());
    drop(v);
    let (_, r) = node
        .block(9, vec![signed(1, 8, vec![kvdb("app", "s", Op::Del)])])
        .await;
    assert_eq!(code(&r, 0), Code::NotFound.value());
}

#[tokio::test(flavor = "multi_thread")]
async fn counters_fail_on_overflow_instead_of_wrapping() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let (_, r) = node
        .block(
            1,
            vec![signed(1, 0, vec![kvdb("d", "c", Op::IncrBy(i64::MAX - 1))])],
        )
        .await;
    assert_eq!(code(&r, 0), 0);
    let (_, r) = node
        .block(
            2,
            vec![signed(
                1,
                1,
                vec![kvdb("d", "c", Op::IncrBy(1)), kvdb("d", "c", Op::IncrBy(1))],
            )],
        )
        .await;
    assert_eq!(
        code(&r, 0),
        Code::KvOverflow.value(),
        "{}",
        r.tx_results[0].log
    );
    let o = owner(1);
    let get =
        |node: &Node| dbq::get(&node.store.view(), at(&o, "d", "c"), committed_ms(node)).unwrap();
    assert_eq!(
        get(&node),
        Some((i64::MAX - 1).to_string().into_bytes()),
        "the failed tx changed nothing"
    );
    let (_, r) = node
        .block(
            3,
            vec![signed(
                1,
                2,
                vec![
                    kvdb("d", "n", Op::IncrBy(i64::MIN)),
                    kvdb("d", "n", Op::IncrBy(-1)),
                ],
            )],
        )
        .await;
    assert_eq!(code(&r, 0), Code::KvOverflow.value());
    let (_, r) = node
        .block(4, vec![signed(1, 3, vec![kvdb("d", "c", Op::IncrBy(1))])])
        .await;
    assert_eq!(code(&r, 0), 0);
    assert_eq!(get(&node), Some(i64::MAX.to_string().into_bytes()));
}

#[tokio::test(flavor = "multi_thread")]
async fn kv_set_and_delete_are_kvdb_set_and_del_on_the_default_database() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    node.block(1, vec![signed(1, 0, vec![set("song", "la")])])
        .await;
    let o = owner(1);
    let v = node.store.view();
    assert_eq!(
        dbq::get(&v, at(&o, "default", "song"), committed_ms(&node)).unwrap(),
        Some(b("la"))
    );
    drop(v);
    let (_, r) = node
        .block(
            2,
            vec![signed(
                1,
                1,
                vec![kvdb(
                    "default",
                    "song",
                    Op::HSet {
                        field: b("f"),
                        value: b("v"),
                    },
                )],
            )],
        )
        .await;
    assert_eq!(code(&r, 0), Code::KvWrongType.value());
    node.block(3, vec![signed(1, 2, vec![del("song")])]).await;
    assert_eq!(ttl(&node, 1, "default", "song"), -2);
}

/// Review m10: a small pop tx must not make a large event. A popped element
/// over 1 KiB is shown by its length and first 1 KiB, marked truncated.
#[tokio::test(flavor = "multi_thread")]
async fn a_pop_event_carries_at_most_one_kib_of_the_element() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let long = vec![b'x'; 3000];
    let ops = vec![
        kvdb(
            "app",
            "l",
            Op::Push {
                values: vec![long.clone(), b("ab")],
                left: false,
            },
        ),
        kvdb("app", "l", Op::Pop { left: true }),
        kvdb("app", "l", Op::Pop { left: true }),
    ];
    let (_, r) = node.block(1, vec![signed(1, 0, ops)]).await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
    let pops: Vec<Vec<(String, String)>> = r.tx_results[0]
        .events
        .iter()
        .filter(|e| e.kind == "kvdb.lpop")
        .map(|e| {
            e.attributes
                .iter()
                .filter_map(|a| Some((a.key_str().ok()?.into(), a.value_str().ok()?.into())))
                .filter(|(k, _): &(String, String)| {
                    ["value", "value_len", "truncated"].contains(&k.as_str())
                })
                .collect()
        })
        .collect();
    let kv = |k: &str, v: String| (k.to_string(), v);
    assert_eq!(
        pops,
        vec![
            vec![
                kv("value", hex::encode(&long[..1024])),
                kv("value_len", "3000".into()),
                kv("truncated", "true".into()),
            ],
            vec![kv("value", hex::encode(b"ab")), kv("value_len", "2".into())],
        ]
    );
}
