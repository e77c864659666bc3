//! The parent's reading of a worker's reply: the child decoded untrusted
//! input and may be anyone's by then, so its stdout is untrusted too. The
//! invariants are `stave_media::fuzz_fixtures::reply_case`.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use stave_media::fuzz_fixtures::{reply_case, worker_run};
use stave_media::worker::{WorkerJob, WorkerOutput};

#[path = "scratch.rs"]
mod scratch;

fn run() -> &'static (WorkerJob, WorkerOutput) {
    static RUN: OnceLock<(WorkerJob, WorkerOutput)> = OnceLock::new();
    RUN.get_or_init(|| {
        let (job, out) = worker_run(scratch::dir());
        (job, out.expect("the fixture run transcodes"))
    })
}

fuzz_target!(|data: &[u8]| reply_case(run(), data));
