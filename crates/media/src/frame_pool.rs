//! FLAC frames encoded on worker threads and handed back in order.
//!
//! Block `k` goes to thread `k mod n`; each thread encodes its blocks in
//! the order it gets them, so reading the threads' answers round-robin
//! gives the frames in stream order. At most `window` blocks are in flight,
//! so memory stays a few blocks whatever the input's length.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use flacenc::component::{BitRepr, Frame, StreamInfo};
use flacenc::error::Verified;
use flacenc::source::{Fill, FrameBuf};

use super::flac::{enc, max_frame_bits};
use super::MediaError;

type Answer = Result<Frame, String>;

/// The encoder's settings: the one the stream uses, and one without
/// prediction (verbatim and constant subframes only) for a block the first
/// codes larger than verbatim.
#[derive(Clone)]
pub(super) struct Configs {
    pub(super) best: Verified<flacenc::config::Encoder>,
    pub(super) verbatim: Verified<flacenc::config::Encoder>,
    /// Bits per sample, for the verbatim bound.
    pub(super) bits: usize,
}

/// Block `n`, coded with the stream's settings unless that comes out
/// larger than [`max_frame_bits`]. flacenc 0.5.1 takes a fixed-predictor
/// coding on its entropy estimate alone, and its Rice-parameter search sums
/// bit costs in `u32`, which wrap for loud 24-bit residuals: fuzzed WAVs of
/// 4.5 KB gave frames of 56 MB and 299 MB, past STREAMINFO's 24-bit frame
/// size, so symphonia read no frames back. Such a block is coded again
/// without prediction: every frame is bounded, and the FLAC stays the same
/// for any thread count (the choice is per block, on an exact bit count).
fn encode_block(
    configs: &Configs,
    framebuf: &FrameBuf,
    n: usize,
    info: &StreamInfo,
) -> Result<Frame, String> {
    let frame = flacenc::encode_fixed_size_frame(&configs.best, framebuf, n, info)
        .map_err(|e| e.to_string())?;
    let bound = max_frame_bits(framebuf.channels(), framebuf.filled_size(), configs.bits);
    if frame.count_bits() <= bound {
        return Ok(frame);
    }
    flacenc::encode_fixed_size_frame(&configs.verbatim, framebuf, n, info)
        .map_err(|e| e.to_string())
}

/// The encoding threads.
pub(super) struct FramePool {
    work: Vec<SyncSender<(usize, Vec<i32>)>>,
    answers: Vec<Receiver<Answer>>,
    threads: Vec<JoinHandle<()>>,
    sent: usize,
    taken: usize,
}

/// One thread: encodes each block it is given, until its queue closes.
fn encode_loop(
    work: &Receiver<(usize, Vec<i32>)>,
    answers: &SyncSender<Answer>,
    configs: &Configs,
    info: &StreamInfo,
    channels: usize,
    block: usize,
) {
    let mut framebuf = match FrameBuf::with_size(channels, block) {
        Ok(f) => f,
        Err(e) => {
            let _ = answers.send(Err(e.to_string()));
            return;
        }
    };
    while let Ok((n, pcm)) = work.recv() {
        let frame = framebuf
            .fill_interleaved(&pcm)
            .map_err(|e| e.to_string())
            .and_then(|_| encode_block(configs, &framebuf, n, info));
        if answers.send(frame).is_err() {
            return;
        }
    }
}

impl FramePool {
    /// `threads` encoders (at least one) for blocks of `block` samples per
    /// channel.
    pub(super) fn new(
        threads: usize,
        configs: &Configs,
        info: &StreamInfo,
        channels: usize,
        block: usize,
    ) -> Result<Self, MediaError> {
        let mut pool = FramePool {
            work: Vec::new(),
            answers: Vec::new(),
            threads: Vec::new(),
            sent: 0,
            taken: 0,
        };
        for i in 0..threads.max(1) {
            let (work_tx, work_rx) = sync_channel(2);
            let (ans_tx, ans_rx) = sync_channel(2);
            let (configs, info) = (configs.clone(), info.clone());
            let t = std::thread::Builder::new()
                .name(format!("flac-{i}"))
                .spawn(move || encode_loop(&work_rx, &ans_tx, &configs, &info, channels, block))
                .map_err(enc)?;
            pool.work.push(work_tx);
            pool.answers.push(ans_rx);
            pool.threads.push(t);
        }
        Ok(pool)
    }

    /// Blocks sent and not yet taken back.
    pub(super) fn in_flight(&self) -> usize {
        self.sent - self.taken
    }

    /// The most blocks in flight before [`FramePool::next`] must be taken.
    pub(super) fn window(&self) -> usize {
        2 * self.work.len()
    }

    /// Hands block number `self.sent` to its thread.
    pub(super) fn submit(&mut self, pcm: Vec<i32>) -> Result<(), MediaError> {
        let n = self.sent;
        let to = self
            .work
            .get(n % self.work.len())
            .ok_or_else(|| enc("no encoder thread"))?;
        to.send((n, pcm))
            .map_err(|_| enc("an encoder thread stopped"))?;
        self.sent += 1;
        Ok(())
    }

    /// The next frame in stream order.
    pub(super) fn next(&mut self) -> Result<Frame, MediaError> {
        let from = self
            .answers
            .get(self.taken % self.answers.len())
            .ok_or_else(|| enc("no encoder thread"))?;
        let frame = from
            .recv()
            .map_err(|_| enc("an encoder thread stopped"))?
            .map_err(enc)?;
        self.taken += 1;
        Ok(frame)
    }
}

impl Drop for FramePool {
    /// Closes the queues and waits for the threads.
    fn drop(&mut self) {
        self.work.clear();
        self.answers.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
