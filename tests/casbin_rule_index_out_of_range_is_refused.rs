//! Rule slots are 0..max_rules_per_model: an index outside is refused with
//! CASBIN_RULE_INDEX_OUT_OF_RANGE, in CheckTx and in FinalizeBlock.

mod inproc;
use inproc::casbin::*;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn indexes_past_the_cap_are_refused() {
    let mut chain = Chain::new().await;
    let m = model_id(1, "rbac");
    chain.ok(1, add_model(&m, RBAC)).await;
    for index in [256, 257, u32::MAX] {
        let (code, log) = chain.check(1, add_rule(&m, index, "g", &["a", "b"])).await;
        assert_eq!(code, Code::CasbinRuleIndexOutOfRange.value(), "{log}");
        let log = chain
            .refused(
                1,
                add_rule(&m, index, "g", &["a", "b"]),
                Code::CasbinRuleIndexOutOfRange,
            )
            .await;
        assert!(
            log.contains(&index.to_string()) && log.contains("0..256"),
            "{log}"
        );
        chain
            .refused(1, remove_rule(&m, index), Code::CasbinRuleIndexOutOfRange)
            .await;
    }
    // the last slot is in range
    chain.ok(1, add_rule(&m, 255, "g", &["a", "b"])).await;
    chain.ok(1, remove_rule(&m, 255)).await;
}
