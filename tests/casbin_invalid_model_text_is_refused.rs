//! A model outside the allowed subset is refused with CASBIN_INVALID_MODEL
//! (or CASBIN_CAP_EXCEEDED past a size cap), in CheckTx and in FinalizeBlock,
//! and nothing is stored.

mod inproc;
use inproc::casbin::*;
use stave::tx::Code;

fn with_matcher(m: &str) -> String {
    RBAC.replace("g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act", m)
}

#[tokio::test(flavor = "multi_thread")]
async fn models_outside_the_subset_are_refused() {
    let mut chain = Chain::new().await;
    let invalid = [
        (
            "division by zero",
            with_matcher("r.sub == p.sub && 1/0 == 1"),
        ),
        ("keyMatch4", with_matcher("keyMatch4(r.obj, p.obj)")),
        ("eval", with_matcher("eval(p.sub)")),
        ("request pattern", with_matcher("regexMatch(p.obj, r.obj)")),
        (
            "bad literal regex",
            with_matcher("regexMatch(r.obj, \"(\")"),
        ),
        (
            "bad literal IP",
            with_matcher("ipMatch(\"300.1.1.1\", p.obj)"),
        ),
        ("unknown section", RBAC.replace("[matchers]", "[scripts]")),
        (
            "unknown effect",
            RBAC.replace("some(where (p.eft == allow))", "max(p.eft)"),
        ),
        ("not a model", "hello".to_string()),
    ];
    for (i, (name, text)) in invalid.iter().enumerate() {
        let id = model_id(1, &format!("m{i}"));
        let (code, log) = chain.check(1, add_model(&id, text)).await;
        assert_eq!(
            code,
            Code::CasbinInvalidModel.value(),
            "{name} in CheckTx: {log}"
        );
        let log = chain
            .refused(1, add_model(&id, text), Code::CasbinInvalidModel)
            .await;
        assert!(log.contains("invalid casbin model text"), "{name}: {log}");
    }
    let huge = format!("{RBAC}{}", "# padding\n".repeat(500));
    chain
        .refused(
            1,
            add_model(&model_id(1, "huge"), &huge),
            Code::CasbinCapExceeded,
        )
        .await;
    let wide = with_matcher(&vec!["r.sub == p.sub"; 40].join(" || "));
    chain
        .refused(
            1,
            add_model(&model_id(1, "wide"), &wide),
            Code::CasbinCapExceeded,
        )
        .await;
    assert!(chain.casbin_dump().is_empty());
    // the node keeps going
    chain.ok(1, add_model(&model_id(1, "fine"), RBAC)).await;
}
