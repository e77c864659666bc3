//! Compiles the protobuf definitions in `proto/` with tonic-build.
//! No message here uses `map` fields: their decoded order would not be deterministic.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = [
        "proto/stave/tx/v1/tx.proto",
        "proto/stave/kv/v1/kv.proto",
        "proto/stave/kv/v1/kv_service.proto",
        "proto/stave/accounts/v1/accounts.proto",
        "proto/stave/genesis/v1/genesis.proto",
        "proto/stave/query/v1/query.proto",
        "proto/stave/governance/v1/governance.proto",
        "proto/stave/governance/v1/query.proto",
        "proto/stave/casbin/v1/params.proto",
        "proto/stave/casbin/v1/casbin.proto",
        "proto/stave/rights/v1/rights.proto",
        "proto/stave/content/v1/content.proto",
        "proto/stave/local/v1/local.proto",
        "proto/stave/replica/v1/replica.proto",
        "proto/stave/peer/v1/peer.proto",
        "proto/stave/snapshot/v1/snapshot.proto",
        "proto/stave/proof/v1/proof.proto",
    ];
    for p in &protos {
        println!("cargo:rerun-if-changed={p}");
    }
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    let mut cfg = tonic_build::configure();
    // Rights messages carried inside domain actions (which derive Eq).
    for m in [
        "Scope",
        "Condition",
        "UploadManifest",
        "AudioFacts",
        "WrappedDek",
    ] {
        cfg = cfg.type_attribute(format!("stave.rights.v1.{m}"), "#[derive(Eq)]");
    }
    // Governance actions used directly as domain types inside `Action`.
    for m in [
        "ApplyGroup",
        "VoteGroup",
        "RotateTakedownAuthority",
        "SetGroupMember",
        "TakedownRequest",
        "CounterNotice",
        "TakedownResolve",
        "SetFlag",
        "ClearFlag",
    ] {
        cfg = cfg.type_attribute(format!("stave.governance.v1.{m}"), "#[derive(Eq)]");
    }
    // The release model (stave.ddex.v1) is compiled by the stave-ddex crate.
    cfg = cfg.extern_path(".stave.ddex.v1", "::stave_ddex::proto::ddex");
    cfg.file_descriptor_set_path(out.join("stave_descriptor.bin"))
        .compile_protos(&protos, &["proto"])?;
    Ok(())
}
