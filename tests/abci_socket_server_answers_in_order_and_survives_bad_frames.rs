//! A real `stave start` process, spoken to over its ABCI socket (Unix, and
//! TCP) as CometBFT does: length-prefixed protobuf frames, several requests per
//! write, a Flush at the end. With either server (`threads`, the default, or
//! `tower`), answers come back in request order and each CheckTx of a run
//! gets its own code. With `threads`, a broken frame closes only its own
//! connection and the node goes on serving.

mod inproc;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use inproc::*;
use prost::Message;
use stave::abci::frame::{next_frame, put_frame};
use stave::tx::Code;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use tendermint::v0_38::abci::Request;
use tendermint_proto::v0_38::abci as pb;

fn echo(m: &str) -> pb::Request {
    pb::Request {
        value: Some(pb::request::Value::Echo(pb::RequestEcho {
            message: m.into(),
        })),
    }
}

fn flush() -> pb::Request {
    pb::Request {
        value: Some(pb::request::Value::Flush(pb::RequestFlush {})),
    }
}

fn check(tx: Bytes, recheck: bool) -> pb::Request {
    let kind = if recheck {
        pb::CheckTxType::Recheck
    } else {
        pb::CheckTxType::New
    };
    pb::Request {
        value: Some(pb::request::Value::CheckTx(pb::RequestCheckTx {
            tx,
            r#type: kind as i32,
        })),
    }
}

/// Writes `reqs` in one write and reads back as many answers.
fn exchange<S: Read + Write>(sock: &mut S, reqs: &[pb::Request]) -> Vec<pb::response::Value> {
    let mut wire = Vec::new();
    for r in reqs {
        put_frame(r, &mut wire);
    }
    sock.write_all(&wire).unwrap();
    read_answers(sock, reqs.len())
}

/// Reads exactly `n` answers.
fn read_answers<S: Read>(sock: &mut S, n: usize) -> Vec<pb::response::Value> {
    let mut buf = BytesMut::new();
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        while let Some(f) = next_frame(&mut buf).unwrap() {
            got.push(pb::Response::decode(f).unwrap().value.unwrap());
        }
        if got.len() >= n {
            assert_eq!(got.len(), n, "more answers than requests");
            assert!(buf.is_empty(), "bytes after the last answer");
            return got;
        }
        let r = sock.read(&mut chunk).unwrap();
        assert!(
            r > 0,
            "server closed the connection after {} answers",
            got.len()
        );
        buf.extend_from_slice(&chunk[..r]);
    }
}

fn code(v: &pb::response::Value) -> u32 {
    match v {
        pb::response::Value::CheckTx(c) => c.code,
        other => panic!("expected CheckTx, got {other:?}"),
    }
}

/// A `stave start` child and its log, killed on drop.
struct Stave(Child, std::path::PathBuf);

impl Stave {
    /// Connects to `what` (retrying while the node opens its stores),
    /// failing with the node's log if it exits or never listens.
    fn connect<S>(&mut self, what: &str, dial: impl Fn() -> std::io::Result<S>) -> S {
        match self.try_connect(dial) {
            Ok(s) => s,
            Err(exited) => panic!("{what}: {exited}:\n{}", self.log()),
        }
    }

    /// Like `connect`, but says so when the node exits instead of panicking.
    fn try_connect<S>(&mut self, dial: impl Fn() -> std::io::Result<S>) -> Result<S, String> {
        for _ in 0..1200 {
            if let Ok(s) = dial() {
                return Ok(s);
            }
            if let Some(status) = self.0.try_wait().unwrap() {
                return Err(format!("stave exited ({status})"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err("never came up".into())
    }

    fn unix(&mut self, path: &Path) -> UnixStream {
        let s = self.connect("the ABCI socket", || UnixStream::connect(path));
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.1).unwrap_or_default()
    }

    fn assert_running(&mut self) {
        if let Some(status) = self.0.try_wait().unwrap() {
            panic!("stave exited ({status}):\n{}", self.log());
        }
    }
}

impl Drop for Stave {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `stave init` a home (no gRPC, no metrics; ABCI on `abci`, else the
/// home's Unix socket) with `server`, then start it.
fn start(dir: &Path, server: &str, abci: Option<&str>) -> Stave {
    let bin = env!("CARGO_BIN_EXE_stave");
    let home = dir.join("home");
    let mut init = Command::new(bin);
    init.args([
        "init",
        "--grpc-addr",
        "",
        "--metrics-addr",
        "",
        "--peer-addr",
        "",
        "--home",
    ])
    .arg(&home);
    if let Some(a) = abci {
        init.args(["--abci", a]);
    }
    let out = init.output().unwrap();
    assert!(out.status.success(), "stave init: {out:?}");
    let cfg = home.join("config/stave.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text.replace("server = \"threads\"", &format!("server = \"{server}\""));
    assert!(text.contains(&format!("server = \"{server}\"")), "{text}");
    std::fs::write(&cfg, text).unwrap();
    let log_path = dir.join("stave.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let child = Command::new(bin)
        .arg("start")
        .arg("--home")
        .arg(&home)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    Stave(child, log_path)
}

/// Genesis, then one write holding a run of CheckTx split by an Echo: every
/// answer in order, each tx with its own code, account 1's txs admitted in
/// the order sent.
fn genesis_and_a_checktx_run(sock: &mut UnixStream) {
    let init: pb::Request =
        Request::InitChain(init_chain_request(default_genesis(), vec![])).into();
    let info = pb::Request {
        value: Some(pb::request::Value::Info(pb::RequestInfo::default())),
    };
    let got = exchange(sock, &[echo("first"), init, info, flush()]);
    assert!(matches!(&got[0], pb::response::Value::Echo(e) if e.message == "first"));
    assert!(matches!(&got[1], pb::response::Value::InitChain(r) if r.app_hash.len() == 32));
    assert!(matches!(&got[2], pb::response::Value::Info(i) if i.last_block_height == 0));
    assert!(matches!(&got[3], pb::response::Value::Flush(_)));

    let good0 = signed(1, 0, vec![set("k", "v")]);
    let mut bad_sig = good0.to_vec();
    let last = bad_sig.len() - 1; // the envelope ends with the signature
    bad_sig[last] ^= 0x01;
    let reqs = [
        check(good0, false),
        check(signed(1, 1, vec![set("k", "w")]), false),
        check(Bytes::from_static(b"\xff\xff\x00garbage"), false),
        check(signed(2, 0, vec![set("k", "v")]), false),
        echo("middle"),
        check(signed(1, 3, vec![set("k", "x")]), false),
        check(Bytes::from(bad_sig), false),
        check(signed(2, 1, vec![set("k", "w")]), true),
        flush(),
    ];
    let got = exchange(sock, &reqs);
    let codes: Vec<Option<u32>> = got
        .iter()
        .map(|v| matches!(v, pb::response::Value::CheckTx(_)).then(|| code(v)))
        .collect();
    let c = |k: Code| Some(k.value());
    assert_eq!(
        codes,
        vec![
            c(Code::Ok),
            c(Code::Ok),
            c(Code::Decode),
            c(Code::Ok),
            None,
            c(Code::Nonce),
            c(Code::Signature),
            c(Code::Ok),
            None,
        ]
    );
    assert!(matches!(&got[4], pb::response::Value::Echo(e) if e.message == "middle"));
    assert!(matches!(&got[8], pb::response::Value::Flush(_)));
}

#[test]
fn the_thread_server_answers_in_order_and_survives_broken_connections() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = start(dir.path(), "threads", None);
    let sock_path = dir.path().join("home/abci.sock");
    let mut s = node.unix(&sock_path);
    genesis_and_a_checktx_run(&mut s);

    // A length prefix that never ends closes that connection, unanswered.
    s.write_all(&[0xff; 11]).unwrap();
    let mut rest = Vec::new();
    assert_eq!(
        s.read_to_end(&mut rest).unwrap(),
        0,
        "answered a broken frame: {rest:?}"
    );

    // So does a request with no value (an unset oneof).
    let mut s2 = node.unix(&sock_path);
    let got = exchange(&mut s2, &[echo("still here"), flush()]);
    assert!(matches!(&got[0], pb::response::Value::Echo(e) if e.message == "still here"));
    let mut wire = Vec::new();
    put_frame(&pb::Request { value: None }, &mut wire);
    s2.write_all(&wire).unwrap();
    assert_eq!(s2.read(&mut [0u8; 16]).unwrap(), 0);

    // The node is still up, and still has its genesis.
    let mut s3 = node.unix(&sock_path);
    let got = exchange(&mut s3, &[echo("and still"), flush()]);
    assert!(matches!(&got[0], pb::response::Value::Echo(e) if e.message == "and still"));

    // A new connection that checks txs is a new CometBFT mempool, which is
    // empty: account 1's nonces 0 and 1, pending on the closed connection,
    // are forgotten, so nonce 0 is admitted again (review m7), once.
    let again = |n| check(signed(1, n, vec![set("k", "v")]), false);
    let got = exchange(&mut s3, &[again(0), again(0), again(1), flush()]);
    let codes: Vec<u32> = got.iter().take(3).map(code).collect();
    assert_eq!(
        codes,
        vec![Code::Ok.value(), Code::Nonce.value(), Code::Ok.value()],
        "a new mempool connection starts from committed nonces"
    );
    node.assert_running();
}

#[test]
fn the_thread_server_over_tcp_takes_long_runs_split_and_large_frames() {
    let dir = tempfile::tempdir().unwrap();
    let (mut node, mut s) = start_on_a_free_tcp_port(dir.path());
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let init: pb::Request =
        Request::InitChain(init_chain_request(default_genesis(), vec![])).into();
    let got = exchange(&mut s, &[init, flush()]);
    assert!(matches!(&got[0], pb::response::Value::InitChain(_)));

    // A Flush alone.
    let got = exchange(&mut s, &[flush()]);
    assert!(matches!(&got[0], pb::response::Value::Flush(_)));

    // 300 CheckTx in one write: more than one batch (MAX_BATCH is 256),
    // and one account's nonces 0..300 are admitted in the order sent.
    let mut reqs: Vec<pb::Request> = (0..300)
        .map(|n| check(signed(3, n, vec![set("k", "v")]), false))
        .collect();
    reqs.push(flush());
    let got = exchange(&mut s, &reqs);
    for (n, v) in got.iter().take(300).enumerate() {
        assert_eq!(code(v), Code::Ok.value(), "nonce {n}: {v:?}");
    }

    // A frame split across two writes with a pause between them, then in
    // the second write a frame larger than the server's 64 KiB read (a
    // 200 KiB tx, over the 128 KiB genesis limit) and a Flush.
    let mut first = Vec::new();
    put_frame(
        &check(signed(3, 300, vec![set("k", "w")]), false),
        &mut first,
    );
    let (a, b) = first.split_at(first.len() / 2);
    s.write_all(a).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut second = b.to_vec();
    put_frame(
        &check(Bytes::from(vec![7u8; 200 << 10]), false),
        &mut second,
    );
    put_frame(&flush(), &mut second);
    s.write_all(&second).unwrap();
    let got = read_answers(&mut s, 3);
    assert_eq!(code(&got[0]), Code::Ok.value());
    assert_eq!(code(&got[1]), Code::TxTooLarge.value());
    assert!(matches!(&got[2], pb::response::Value::Flush(_)));
    node.assert_running();
}

/// A free port is found by binding port 0 and letting it go; another process
/// may take it before stave binds it, so a failed start is retried.
fn start_on_a_free_tcp_port(dir: &Path) -> (Stave, std::net::TcpStream) {
    let mut last = String::new();
    for attempt in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let home = dir.join(format!("try{attempt}"));
        std::fs::create_dir_all(&home).unwrap();
        let mut node = start(&home, "threads", Some(&format!("tcp://{addr}")));
        match node.try_connect(|| std::net::TcpStream::connect(&addr)) {
            Ok(s) => return (node, s),
            Err(e) => last = format!("{e}:\n{}", node.log()),
        }
    }
    panic!("stave never listened on a free TCP port: {last}");
}

#[test]
fn the_tower_server_gives_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = start(dir.path(), "tower", None);
    let mut s = node.unix(&dir.path().join("home/abci.sock"));
    genesis_and_a_checktx_run(&mut s);
    node.assert_running();
}
