use super::*;
use crate::proto::local::JobStatus::*;

const ALL: [JobStatus; 6] = [
    Receiving,
    Transcoding,
    Encrypting,
    Seeding,
    Complete,
    Failed,
];

fn jobs(dir: &Path) -> Jobs {
    Jobs::new(
        LocalStore::open(&dir.join("local")).unwrap(),
        std::sync::Arc::new(Kek::from_bytes([8; 32])),
    )
}

fn new_job(id: &[u8], input: &Path) -> NewJob {
    NewJob {
        job_id: id.to_vec(),
        client_pubkey: vec![1; 32],
        raw_audio_path: input.to_path_buf(),
        replication_set: vec![vec![2; 32]],
        dek_holder_set: vec![vec![3; 32]],
        created_at: 1,
    }
}

/// Every file under `dir`, read whole.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn only_the_documented_transitions_are_allowed() {
    let ok = [
        (Receiving, Transcoding),
        (Transcoding, Encrypting),
        (Encrypting, Seeding),
        (Seeding, Complete),
        (Receiving, Failed),
        (Transcoding, Failed),
        (Encrypting, Failed),
        (Seeding, Failed),
    ];
    for from in ALL {
        for to in ALL {
            assert_eq!(
                allowed(from, to),
                ok.contains(&(from, to)),
                "{from:?}→{to:?}"
            );
        }
    }
}

#[test]
fn a_completed_job_leaves_no_raw_dek_in_the_local_store_files() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("raw.wav");
    std::fs::write(&input, b"audio").unwrap();
    let raw;
    {
        let j = jobs(dir.path());
        let dek = j.create(new_job(b"job-1", &input)).unwrap();
        raw = *dek;
        assert_eq!(*j.dek(b"job-1").unwrap(), raw);
        j.advance(b"job-1", Transcoding, |x| x.flac_cid = vec![4; 32])
            .unwrap();
        assert!(matches!(
            j.advance(b"job-1", Seeding, |_| {}),
            Err(LocalError::Transition { .. })
        ));
        j.advance(b"job-1", Encrypting, |_| {}).unwrap();
        j.advance(b"job-1", Seeding, |x| x.encrypted_cid = vec![5; 32])
            .unwrap();
        let done = j.advance(b"job-1", Complete, |_| {}).unwrap();
        assert!(done.sealed_dek.is_empty());
        assert!(j.dek(b"job-1").is_err(), "no DEK after COMPLETE");
        assert!(j.advance(b"job-1", Failed, |_| {}).is_err(), "terminal");
        assert!(!input.exists(), "scratch input removed");
    }
    let files = files_under(&dir.path().join("local"));
    assert!(!files.is_empty());
    for (p, bytes) in files {
        assert!(!contains(&bytes, &raw), "raw DEK found in {}", p.display());
    }
}

#[test]
fn restart_resumes_jobs_with_input_and_fails_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("kept.wav");
    let lost = dir.path().join("lost.wav");
    std::fs::write(&kept, b"a").unwrap();
    std::fs::write(&lost, b"b").unwrap();
    let lost_dek;
    {
        let j = jobs(dir.path());
        j.create(new_job(b"kept", &kept)).unwrap();
        j.advance(b"kept", Transcoding, |_| {}).unwrap();
        j.create(new_job(b"recv", &dir.path().join("recv.wav")))
            .unwrap();
        lost_dek = *j.create(new_job(b"lost", &lost)).unwrap();
        j.advance(b"lost", Transcoding, |_| {}).unwrap();
        j.create(new_job(b"done", &kept)).unwrap();
        j.fail(b"done", "client went away").unwrap();
    }
    std::fs::write(&kept, b"a").unwrap();
    std::fs::remove_file(&lost).unwrap();
    let j = jobs(dir.path());
    let r = j.recover().unwrap();
    assert_eq!(r.resumed, vec![b"kept".to_vec()]);
    assert_eq!(r.failed, vec![b"lost".to_vec(), b"recv".to_vec()]);
    let recv = j.store.job(b"recv").unwrap().unwrap();
    assert!(
        recv.error.starts_with("restarted while receiving"),
        "{}",
        recv.error
    );
    let lost_job = j.store.job(b"lost").unwrap().unwrap();
    assert_eq!(lost_job.status(), Failed);
    assert_eq!(lost_job.error, "input lost at restart");
    assert!(lost_job.sealed_dek.is_empty());
    assert!(j.dek(b"kept").is_ok(), "a resumed job keeps its DEK");
    assert_eq!(
        j.store.job(b"done").unwrap().unwrap().error,
        "client went away"
    );
    drop(j);
    for (p, bytes) in files_under(&dir.path().join("local")) {
        assert!(!contains(&bytes, &lost_dek), "raw DEK in {}", p.display());
    }
}
