//! `stave transcode-worker`: the child process the upload pipeline starts
//! to decode untrusted audio (`media::worker`). Not for direct use.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::media::image::ImageLimits;
use crate::media::worker::{reexec_limited, worker_main, WorkerJob, WorkerLimits};
use crate::media::Limits;

#[derive(Args, Debug)]
pub struct TranscodeWorkerArgs {
    /// The received audio file.
    #[arg(long)]
    input: PathBuf,
    /// Where to write the FLAC (`--output` is the global output format).
    #[arg(long)]
    flac: PathBuf,
    #[arg(long)]
    max_input_bytes: u64,
    #[arg(long)]
    max_frames: u64,
    /// Threads encoding FLAC frames.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    #[arg(long)]
    max_image_input_bytes: u64,
    #[arg(long)]
    max_image_side: u32,
    #[arg(long)]
    max_image_bytes: u64,
    /// A received image (repeated; each with its `--png`).
    #[arg(long)]
    image: Vec<PathBuf>,
    /// Where to write the PNG of the `--image` in the same position.
    #[arg(long)]
    png: Vec<PathBuf>,
    /// RLIMIT_AS in bytes.
    #[arg(long)]
    address_space: u64,
    /// RLIMIT_CPU in seconds.
    #[arg(long)]
    cpu_secs: u64,
    /// RLIMIT_FSIZE in bytes.
    #[arg(long)]
    file_size: u64,
    /// Set by the worker itself when it re-executes under its limits.
    #[arg(long, hide = true)]
    limited: bool,
}

/// Runs the worker; no async runtime, no tracing. The first run lowers its
/// limits and executes itself again, so the limits hold from the new
/// image's first allocation (the allocator reserves address space once,
/// at start-up, and a limit set after that would bound nothing).
pub fn run(a: &TranscodeWorkerArgs) -> ExitCode {
    let limits = Limits {
        max_input_bytes: a.max_input_bytes,
        max_frames: a.max_frames,
        threads: a.threads.clamp(1, crate::media::transcode::MAX_THREADS),
    };
    let wl = WorkerLimits {
        address_space: a.address_space,
        cpu_secs: a.cpu_secs,
        file_size: a.file_size,
        wall: Duration::ZERO,
    };
    if a.image.len() != a.png.len() {
        eprintln!("transcode-worker: one --png for each --image");
        return ExitCode::FAILURE;
    }
    if a.limited {
        let job = WorkerJob {
            input: a.input.clone(),
            flac: a.flac.clone(),
            images: a.image.iter().cloned().zip(a.png.iter().cloned()).collect(),
            limits,
            image_limits: ImageLimits {
                max_input_bytes: a.max_image_input_bytes,
                max_side: a.max_image_side,
                max_output_bytes: a.max_image_bytes,
            },
        };
        return worker_main(&job);
    }
    reexec_limited(&wl)
}
