use super::*;
use crate::fuzz_fixtures::common::Noise;

#[test]
fn seeds_reach_deep_and_pseudo_random_inputs_pass() {
    let (mut rules, mut allows, mut denies) = (0, 0, 0);
    for (name, s) in seeds() {
        let r = run(&s);
        if name.starts_with("grammar") {
            assert!(r.evaluated && r.rules > 0, "{name}: {r:?}");
        }
        (rules, allows, denies) = (rules + r.rules, allows + r.allows, denies + r.denies);
    }
    assert!(
        rules >= 4 && allows > 0 && denies > 0,
        "{rules} {allows} {denies}"
    );
    let mut x = Noise::new(0x2545_f491_4f6c_dd1d);
    for n in 0..2000 {
        casbin_case(&x.bytes(n % 160));
    }
}
