//! The operator's monitoring kit (`deploy/grafana/stave.json`,
//! `deploy/prometheus/stave-alerts.yml`, `deploy/RUNBOOK.md`) against a
//! real 2-validator localnet (base port 20000) and a real Prometheus server
//! (Debian's `prometheus` package, installed by scripts/install-deps.sh):
//!
//! 1. `promtool check rules` and `promtool test rules` pass.
//! 2. Every `stave_*` and `cometbft_*` name a panel or a rule uses is on a
//!    running node's `/metrics` (Stave's and CometBFT's).
//! 3. Prometheus scrapes both nodes and loads the rules; every rule
//!    evaluates without error and, without its final comparison, returns
//!    data (so no label or join matches nothing); every panel query is valid
//!    PromQL that returns data (a query ending in `> 0`, which hides idle
//!    series, must return data without it).
//! 4. Every alert has a runbook section, its own `runbook_url` points to
//!    it, and at least two `promtool test rules` cases (firing and quiet).
//! 5. The new gauges tell the truth: `stave_app_hash_prefix` is the first 6
//!    bytes of the app hash CometBFT's next header commits to, the block
//!    time is recent, the disk size is the file system's; after 3 kv txs
//!    CheckTx latency and the gas counter have moved.
//!
//! Under `CI=true` a missing `promtool`/`prometheus` fails the test.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::localnet::{binaries, in_ci, repo_root, sample, Localnet, LocalnetConfig};

const BASE_PORT: u16 = 20000;
const PROMETHEUS_PORT: u16 = 20090;
const WAIT: Duration = Duration::from_secs(60);

fn deploy(rel: &str) -> PathBuf {
    repo_root().join("deploy").join(rel)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// `tool`'s path, or `None` (after a notice) outside CI.
fn tool(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        let msg = format!(
            "{name} is missing (Debian's prometheus package; scripts/install-deps.sh installs it)"
        );
        assert!(!in_ci(), "{msg}. CI=true: this test must run, not skip");
        eprintln!("NOTICE: skipping: {msg}");
    }
    found
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// Every `stave_*` / `cometbft_*` name in `text`.
fn metric_names(text: &str) -> BTreeSet<String> {
    let re = regex::Regex::new(r"\b(?:stave|cometbft)_[a-zA-Z0-9_]+").unwrap();
    re.find_iter(text).map(|m| m.as_str().to_string()).collect()
}

/// The series names a Prometheus text exposition holds.
fn exposed(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_string)
        .collect()
}

/// Every string under an `expr` key (the panels' queries), anywhere in
/// the dashboard.
fn panel_queries(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("expr", serde_json::Value::String(s)) => out.push(s.clone()),
                    _ => panel_queries(x, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| panel_queries(x, out)),
        _ => {}
    }
}

/// A rule's expression without its final comparison with a number: what
/// it compares must exist even when the alert does not fire.
fn without_threshold(expr: &str) -> &str {
    let re = regex::Regex::new(r"\s*(>=|<=|==|!=|>|<)\s*[0-9.]+\s*$").unwrap();
    re.find(expr).map_or(expr, |m| &expr[..m.start()])
}

/// A panel query as Grafana would send it for "all instances".
fn as_sent(expr: &str) -> String {
    expr.replace("${instance:regex}", ".+")
        .replace("${instance}", ".+")
        .replace("$instance", ".+")
        .replace("$__rate_interval", "1m")
        .replace("$__interval", "5s")
        .replace("$__range", "5m")
}

/// A Prometheus server scraping the localnet; killed on drop (its log is
/// printed if the test is failing).
struct Prometheus {
    child: Child,
    dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(self.dir.path().join("prometheus.log"));
            eprintln!("===== prometheus.log\n{}", log.unwrap_or_default());
        }
    }
}

fn start_prometheus(bin: &Path, net: &Localnet) -> Prometheus {
    let dir = tempfile::tempdir().unwrap();
    // as deploy/prometheus/prometheus.yml: a node's two targets share its
    // name as `instance`, which the rules and panels join on
    let job = |name: &str, off: u16| {
        let targets: String = (0..net.nodes)
            .map(|i| {
                format!(
                    "      - targets: ['127.0.0.1:{}']\n        labels: {{instance: node{i}}}\n",
                    net.port(i) + off
                )
            })
            .collect();
        format!("  - job_name: {name}\n    static_configs:\n{targets}")
    };
    let config = format!(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
         rule_files: ['{}']\nscrape_configs:\n{}{}",
        deploy("prometheus/stave-alerts.yml").display(),
        job("stave", 1),
        job("cometbft", 8),
    );
    let cfg = dir.path().join("prometheus.yml");
    std::fs::write(&cfg, config).unwrap();
    let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
    let child = Command::new(bin)
        .arg(format!("--config.file={}", cfg.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{PROMETHEUS_PORT}"))
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
    Prometheus { child, dir }
}

/// `GET /api/v1/<path>` on the test's Prometheus, as JSON.
async fn api(path: &str, query: Option<&str>) -> Result<serde_json::Value, String> {
    let url = format!("http://127.0.0.1:{PROMETHEUS_PORT}/api/v1/{path}");
    let mut req = reqwest::Client::new()
        .get(&url)
        .timeout(Duration::from_secs(5));
    if let Some(q) = query {
        req = req.query(&[("query", q)]);
    }
    let r = req.send().await.map_err(|e| format!("{url}: {e}"))?;
    r.json().await.map_err(|e| format!("{url}: {e}"))
}

/// Results of an instant query, or the server's error.
async fn query(q: &str) -> Result<Vec<serde_json::Value>, String> {
    let v = api("query", Some(q)).await?;
    if v["status"] != "success" {
        return Err(format!("{q}: {}", v["error"]));
    }
    Ok(v["data"]["result"].as_array().cloned().unwrap_or_default())
}

fn check_runbook(rules: &str) {
    let runbook = read(&deploy("RUNBOOK.md"));
    let alerts: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert:"))
        .map(str::trim)
        .collect();
    assert!(alerts.len() >= 10, "alerts found: {alerts:?}");
    let unit_tests = read(&deploy("prometheus/stave-alerts.test.yml"));
    for a in &alerts {
        assert!(
            runbook.lines().any(|l| l.trim() == format!("## {a}")),
            "deploy/RUNBOOK.md has no `## {a}` section"
        );
        let cases = unit_tests
            .lines()
            .filter(|l| l.trim() == format!("alertname: {a}"))
            .count();
        assert!(
            cases >= 2,
            "stave-alerts.test.yml: {cases} cases for {a}, not firing and quiet"
        );
    }
}

/// Node 0's app-hash prefix, block time and disk gauges against CometBFT's
/// headers, the clock and `statvfs`.
async fn gauges_tell_the_truth(net: &Localnet) {
    let (height, prefix, text) = net
        .wait_for("a scrape at a settled height", WAIT, || async {
            let m = net.metrics(0).await?;
            let h = sample(&m, "stave_block_height").ok_or("no stave_block_height")?;
            let p = sample(&m, "stave_app_hash_prefix").ok_or("no stave_app_hash_prefix")?;
            // both read again: no commit in between (a scrape reads the
            // collectors in no fixed order)
            let m2 = net.metrics(0).await?;
            let again = (
                sample(&m2, "stave_block_height"),
                sample(&m2, "stave_app_hash_prefix"),
            );
            (h >= 2.0 && again == (Some(h), Some(p)))
                .then_some((h as u64, p as i64, m))
                .ok_or(format!("height {h}, then {again:?}"))
        })
        .await;
    net.wait_comet_height(0, height + 1, WAIT).await;
    let header = net
        .block_app_hash(0, height + 1)
        .await
        .unwrap_or_else(|e| net.fail(&e));
    let bytes = hex::decode(&header).unwrap();
    let want = bytes
        .iter()
        .take(6)
        .fold(0i64, |a, b| (a << 8) | i64::from(*b));
    assert_eq!(
        prefix,
        want,
        "stave_app_hash_prefix at {height} vs header {}: {header}",
        height + 1
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as f64;
    let t = sample(&text, "stave_last_block_time_seconds").unwrap();
    assert!(
        (now - 300.0..=now + 60.0).contains(&t),
        "block time {t}, now {now}"
    );
    let fs = rustix::fs::statvfs(net.stave_home(0).as_path()).unwrap();
    let size = sample(&text, "stave_disk_size_bytes{dir=\"chain\"}").unwrap();
    let free = sample(&text, "stave_disk_free_bytes{dir=\"chain\"}").unwrap();
    assert_eq!(
        size,
        (fs.f_blocks * fs.f_frsize) as f64,
        "disk size of chain/"
    );
    assert!(free > 0.0 && free <= size, "free {free} of {size}");
    assert!(sample(&text, "stave_block_max_gas").unwrap() > 0.0);
    assert!(sample(&text, "stave_checktx_seconds_count").unwrap() >= 3.0);
    assert!(sample(&text, "stave_gas_used_total").unwrap() > 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_and_alerts_use_real_metrics() {
    let (Some(promtool), Some(prometheus)) = (tool("promtool"), tool("prometheus")) else {
        return;
    };
    let Some(bins) = binaries("dashboard_and_alerts_use_real_metrics") else {
        return;
    };
    let rules_path = deploy("prometheus/stave-alerts.yml");
    let rules = read(&rules_path);
    run_ok(
        Command::new(&promtool)
            .arg("check")
            .arg("rules")
            .arg(&rules_path),
    );
    run_ok(
        Command::new(&promtool)
            .current_dir(deploy("prometheus"))
            .args(["test", "rules", "stave-alerts.test.yml"]),
    );
    check_runbook(&rules);
    let dashboard_text = read(&deploy("grafana/stave.json"));
    let dashboard: serde_json::Value = serde_json::from_str(&dashboard_text)
        .unwrap_or_else(|e| panic!("deploy/grafana/stave.json: {e}"));
    let mut queries = Vec::new();
    panel_queries(&dashboard, &mut queries);
    assert!(
        queries.len() >= 20,
        "panel queries found: {}",
        queries.len()
    );

    let net = Localnet::new(&bins, LocalnetConfig::new(2, BASE_PORT));
    net.up();
    net.wait_status_ok(WAIT).await;
    net.commit_kv_txs(0, 0x3C, "dash", 3).await;
    let stave = net.metrics(0).await.unwrap_or_else(|e| net.fail(&e));
    let comet_url = format!("http://127.0.0.1:{}/metrics", net.port(0) + 8);
    let comet = reqwest::get(&comet_url)
        .await
        .and_then(|r| r.error_for_status())
        .unwrap_or_else(|e| net.fail(&format!("{comet_url}: {e}")))
        .text()
        .await
        .unwrap();
    let on_node: BTreeSet<String> = exposed(&stave).union(&exposed(&comet)).cloned().collect();
    // names anywhere: panels, templating, descriptions, rules, annotations
    let used: BTreeSet<String> = metric_names(&rules)
        .into_iter()
        .chain(metric_names(&dashboard_text))
        .collect();
    let missing: Vec<&String> = used.difference(&on_node).collect();
    assert!(
        missing.is_empty(),
        "used by a panel or rule but not on node0's /metrics: {missing:?}"
    );
    eprintln!("{} metric names used, all on /metrics", used.len());
    gauges_tell_the_truth(&net).await;

    let _server = start_prometheus(&prometheus, &net);
    let targets = 2 * net.nodes;
    net.wait_for(
        "Prometheus to scrape every target 3 times",
        WAIT,
        || async {
            // rate() needs two samples in its window
            let up = query("count_over_time(up[1m]) >= 3 and up == 1").await?;
            (up.len() == targets)
                .then_some(())
                .ok_or(format!("targets up with 3 samples: {up:?}"))
        },
    )
    .await;
    let groups = api("rules", None).await.unwrap_or_else(|e| net.fail(&e));
    let mut evaluated = 0;
    for g in groups["data"]["groups"].as_array().into_iter().flatten() {
        for r in g["rules"].as_array().into_iter().flatten() {
            let name = r["name"].as_str().unwrap_or_default();
            assert_eq!(r["health"], "ok", "rule {name} failed: {}", r["lastError"]);
            let url = format!("deploy/RUNBOOK.md#{}", name.to_lowercase());
            assert_eq!(r["annotations"]["runbook_url"], url.as_str(), "{name}");
            let expr = r["query"].as_str().unwrap_or_default();
            let series = without_threshold(expr);
            let found = query(series)
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!found.is_empty(), "rule {name}: `{series}` matches nothing");
            evaluated += 1;
        }
    }
    assert_eq!(
        evaluated,
        rules.matches("- alert:").count(),
        "every rule loaded"
    );

    let mut empty = Vec::new();
    for q in &queries {
        let sent = as_sent(q);
        let mut result = query(&sent).await.unwrap_or_else(|e| panic!("{e}"));
        // `… > 0` hides idle series (a panel of 110 codes at zero): the
        // series must be there without the filter
        if let Some(unfiltered) = sent.trim_end().strip_suffix("> 0") {
            if result.is_empty() {
                result = query(unfiltered).await.unwrap_or_else(|e| panic!("{e}"));
            }
        }
        if result.is_empty() {
            empty.push(sent);
        }
    }
    assert!(
        empty.is_empty(),
        "panel queries with no data on a running localnet: {empty:#?}"
    );
    eprintln!(
        "{} panel queries valid, each with data; {evaluated} rules evaluated",
        queries.len()
    );
}
