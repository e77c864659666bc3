//! `stave release import FILE.xml`: a DDEX ERN 4.3 message, parsed at the
//! client's edge (never in consensus), its tracks mapped to flac cids, sent
//! as one `PublishRelease`; and `stave query release ID` / `stave query
//! releases --cid|--party`: reads, with `--ern` rendering ERN 4.3 XML.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};

use super::rights::unhex;
use super::rights_query::{PageOpts, QOpts};
use super::tx::{submit, TxOpts};
use super::Output;
use crate::client::StaveClient;
use crate::ddex::xml::{self, ImportOptions};
use crate::keyspaces::releases::PublishRelease;
use crate::proto::ddex as dpb;
use crate::proto::rights as pb;
use crate::tx::Action;

#[derive(clap::Subcommand, Debug)]
pub enum ReleaseCmd {
    /// Import an ERN 4.3 NewReleaseMessage and publish it (or, for a
    /// release id already on chain, update it).
    Import(ImportArgs),
}

#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// The ERN 4.3 XML file (at most 16 MiB).
    pub file: PathBuf,
    /// `ISRC=CID`: the flac cid (hex) of a SoundRecording, repeated. Needed
    /// for every recording without a `stave:cid` ProprietaryId.
    #[arg(long = "map", value_name = "ISRC=CID")]
    pub map: Vec<String>,
    /// A file of `ISRC=CID` lines (blank lines and `#` comments skipped).
    #[arg(long)]
    pub map_file: Option<PathBuf>,
    /// The cover image's cid (hex).
    #[arg(long)]
    pub cover: Option<String>,
    /// Parse and print what would be sent; submit nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub opts: TxOpts,
}

/// Parses `ISRC=CID` pairs.
fn cid_map(args: &ImportArgs) -> anyhow::Result<BTreeMap<String, Vec<u8>>> {
    let mut lines: Vec<String> = args.map.clone();
    if let Some(f) = &args.map_file {
        let text = std::fs::read_to_string(f)
            .map_err(|e| anyhow::anyhow!("map file {}: {e}", f.display()))?;
        lines.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(String::from),
        );
    }
    let mut out = BTreeMap::new();
    for l in lines {
        let (isrc, cid) = l
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("map entry {l:?} is not ISRC=CID"))?;
        out.insert(isrc.trim().to_string(), unhex("cid", cid.trim())?);
    }
    Ok(out)
}

/// Reads and imports the file, printing what was skipped and dropped to
/// stderr.
pub fn import_file(args: &ImportArgs) -> anyhow::Result<xml::Imported> {
    let opts = ImportOptions {
        cids: cid_map(args)?,
        cover: args
            .cover
            .as_deref()
            .map(|c| unhex("cover", c))
            .transpose()?,
        ..ImportOptions::default()
    };
    let f = std::fs::File::open(&args.file)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    let imported = xml::import_reader(f, &opts)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    for p in &imported.skipped {
        eprintln!("skipped (outside Stave's subset): {p}");
    }
    for d in &imported.dropped {
        eprintln!("dropped: {d}");
    }
    Ok(imported)
}

pub async fn run(cmd: ReleaseCmd, out: Output) -> anyhow::Result<()> {
    match cmd {
        ReleaseCmd::Import(args) => {
            let imported = import_file(&args)?;
            if args.dry_run {
                // what CheckTx would answer, under the default caps
                let caps = crate::keyspaces::rights::RightsParams::default().release_caps();
                let verdict = match crate::ddex::validate::validate(&imported.message, &caps) {
                    Ok(v) => json!({"release_id": v.release_id, "valid": true}),
                    Err(e) => json!({"valid": false, "error": e.to_string()}),
                };
                out.print(&json!({"check": verdict, "message": message_json(&imported.message)}));
                return Ok(());
            }
            // Left unsigned: the tx builder signs it as publisher with the
            // `--from` key, over the chain id the submit reads anyway.
            let action = Action::PublishRelease(PublishRelease::unsigned(imported.message));
            submit(vec![action], &args.opts, out).await
        }
    }
}

/// `--use` values: the request leaves of the ERN UseType tree.
pub fn parse_use(s: &str) -> Result<i32, String> {
    let name = s.to_ascii_uppercase().replace('-', "_");
    dpb::UseType::from_str_name(&name)
        .filter(|u| *u != dpb::UseType::Unspecified)
        .map(|u| u as i32)
        .ok_or_else(|| {
            format!("use {s:?}: one of on-demand-stream, non-interactive-stream, content-influenced-stream, permanent-download, conditional-download, tethered-download")
        })
}

fn texts(v: &[dpb::Text]) -> Vec<String> {
    v.iter().map(|t| t.value.clone()).collect()
}

fn deals_json(m: &dpb::NewReleaseMessage) -> Vec<Value> {
    let mut out = Vec::new();
    for rd in &m.release_deal {
        for d in &rd.deal {
            let t = d.deal_terms.clone().unwrap_or_default();
            let periods: Vec<Value> = t
                .validity_period
                .iter()
                .map(|p| {
                    json!({"start_secs": p.start_secs, "end_secs": p.end_secs,
                    "start": format!("{}{}", p.start_date, p.start_date_time),
                    "end": format!("{}{}", p.end_date, p.end_date_time)})
                })
                .collect();
            out.push(
                json!({"releases": rd.deal_release_reference, "territories": t.territory_code,
                "excluded_territories": t.excluded_territory_code, "use_types": t.use_type,
                "commercial_model_types": t.commercial_model_type, "validity": periods}),
            );
        }
    }
    out
}

/// A message as JSON: the fields a reader checks.
pub fn message_json(m: &dpb::NewReleaseMessage) -> Value {
    let r = m.release.clone().unwrap_or_default();
    let recs: Vec<Value> = m
        .sound_recording
        .iter()
        .map(|s| {
            let isrc = s.sound_recording_edition.as_ref().map(|e| e.isrc.clone());
            json!({"reference": s.resource_reference, "isrc": isrc, "title": texts(&s.display_title_text),
                "duration_ms": s.duration_ms, "cid": hex::encode(&s.cid)})
        })
        .collect();
    json!({"profile": m.release_profile_version_id,
        "created": m.message_header.as_ref().map(|h| h.message_created_date_time.clone()),
        "icpn": r.icpn, "grid": r.grid, "type": r.release_type, "title": texts(&r.display_title_text),
        "artist": texts(&r.display_artist_name), "label": texts(&r.release_label_reference),
        "recordings": recs, "deals": deals_json(m)})
}

/// A stored record as JSON.
pub fn record_json(r: &dpb::ReleaseRecord) -> Value {
    let m = r.message.clone().unwrap_or_default();
    let tracks: Vec<Value> = r
        .tracks
        .iter()
        .map(|t| json!({"disc": t.disc, "track": t.track, "isrc": t.isrc, "cid": hex::encode(&t.cid)}))
        .collect();
    json!({"release_id": r.release_id, "version": r.version, "publisher": hex::encode(&r.publisher),
        "signer": hex::encode(&r.signer), "height": r.height, "timestamp": r.timestamp,
        "parties": r.parties, "tracks": tracks, "message": message_json(&m),
        "publisher_signature": hex::encode(&r.publisher_signature)})
}

/// `stave query release ID`.
#[derive(clap::Args, Debug)]
pub struct ReleaseQuery {
    /// The release id: the ICPN as a 14-digit GTIN (12 or 13 digits are
    /// padded), or the GRid.
    pub id: String,
    /// Print the release as ERN 4.3 XML.
    #[arg(long)]
    pub ern: bool,
    /// Print only its deals.
    #[arg(long, conflicts_with = "ern")]
    pub deals: bool,
    /// List its earlier versions.
    #[arg(long, conflicts_with_all = ["ern", "deals"])]
    pub versions: bool,
    #[command(flatten)]
    pub q: QOpts,
}

/// `stave query releases --cid CID | --party PARTY`.
#[derive(clap::Args, Debug)]
pub struct ReleasesQuery {
    /// The releases a flac cid (hex) is in.
    #[arg(long, conflicts_with = "party", required_unless_present = "party")]
    pub cid: Option<String>,
    /// The releases naming a party as label or display artist:
    /// `dpid:PADPIDA…`, `isni:…` or `name:` and the lower-cased name.
    #[arg(long)]
    pub party: Option<String>,
    #[command(flatten)]
    pub p: PageOpts,
    #[command(flatten)]
    pub q: QOpts,
}

fn normalise_id(id: &str) -> String {
    crate::ddex::ids::gtin14(id).unwrap_or_else(|_| id.to_string())
}

pub async fn query_release(a: ReleaseQuery, out: Output) -> anyhow::Result<()> {
    let mut c = StaveClient::connect(&a.q.node).await?;
    let id = normalise_id(&a.id);
    let req = pb::ReleaseRequest {
        release_id: id.clone(),
        prove: a.q.v.verify,
    };
    if a.versions {
        anyhow::ensure!(!a.q.v.verify, "--verify: --versions is not a proven read");
        let mut all = Vec::new();
        let mut cursor = Vec::new();
        let height = loop {
            let page = pb::ListVersionsRequest {
                release_id: id.clone(),
                cursor,
                limit: 0,
            };
            let r = c.rights.release_versions(page).await?.into_inner();
            all.extend(r.releases.iter().map(record_json));
            if r.next_cursor.is_empty() {
                break r.height;
            }
            cursor = r.next_cursor;
        };
        out.print(&json!({"release_id": id, "versions": all, "height": height}));
        return Ok(());
    }
    let r = c.rights.get_release(req.clone()).await?.into_inner();
    let ok =
        a.q.v
            .check(&req, &r, crate::grpc::answers::get_release)
            .await?;
    let Some(rec) = r.release.filter(|_| r.found) else {
        anyhow::bail!("release {id} not found at height {}", r.height);
    };
    check_publisher(ok.as_ref(), std::slice::from_ref(&rec))?;
    let m = rec.message.clone().unwrap_or_default();
    if a.ern {
        if let Some(ok) = &ok {
            eprintln!(
                "verified at height {} (app hash {})",
                ok.height, ok.app_hash
            );
        }
        print!("{}", xml::export(&m));
    } else if a.deals {
        out.print(&super::verify::with_verified(
            json!({"release_id": id, "deals": deals_json(&m), "height": r.height}),
            ok,
        ));
    } else {
        out.print(&super::verify::with_verified(
            json!({"release": record_json(&rec), "height": r.height}),
            ok,
        ));
    }
    Ok(())
}

/// With `--verify`: beyond the proofs, each record's publisher signature
/// by its signer over its message, on the verified chain id.
fn check_publisher(
    ok: Option<&crate::proof::Verified>,
    records: &[dpb::ReleaseRecord],
) -> anyhow::Result<()> {
    let Some(ok) = ok else {
        return Ok(());
    };
    for rec in records {
        crate::keyspaces::releases::sign::verify_record(&ok.chain_id, rec)
            .map_err(|e| anyhow::anyhow!("verification failed: {e}"))?;
    }
    Ok(())
}

pub async fn query_releases(a: ReleasesQuery, out: Output) -> anyhow::Result<()> {
    let mut c = StaveClient::connect(&a.q.node).await?;
    let cursor = unhex("cursor", &a.p.cursor)?;
    let mut ok = None;
    let r = match (a.cid, a.party) {
        (Some(cid), _) => {
            let req = pb::ListByCidRequest {
                cid: unhex("cid", &cid)?,
                cursor,
                limit: a.p.limit,
                prove: a.q.v.verify,
            };
            let r = c.rights.releases_by_cid(req.clone()).await?.into_inner();
            ok =
                a.q.v
                    .check(&req, &r, crate::grpc::answers::releases_by_cid)
                    .await?;
            check_publisher(ok.as_ref(), &r.releases)?;
            r
        }
        (None, Some(_)) if a.q.v.verify => {
            anyhow::bail!("--verify: --party reads an index only, not a proven read")
        }
        (None, Some(party)) => {
            let req = pb::ListByPartyRequest {
                party,
                cursor,
                limit: a.p.limit,
            };
            c.rights.releases_by_party(req).await?.into_inner()
        }
        (None, None) => anyhow::bail!("give --cid or --party"),
    };
    let v: Vec<Value> = r.releases.iter().map(record_json).collect();
    out.print(&super::verify::with_verified(
        json!({"releases": v, "next_cursor": hex::encode(r.next_cursor), "height": r.height}),
        ok,
    ));
    Ok(())
}
