//! Compiles the protobuf definitions in `proto/` with tonic-build.
//! No message here uses `map` fields: their decoded order would not be deterministic.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = [
        "proto/stave/tx/v1/tx.proto",
        "proto/stave/kv/v1/kv.proto",
        "proto/stave/accounts/v1/accounts.proto",
        "proto/stave/genesis/v1/genesis.proto",
        "proto/stave/query/v1/query.proto",
        "proto/stave/local/v1/local.proto",
        "proto/stave/peer/v1/peer.proto",
    ];
    for p in &protos {
        println!("cargo:rerun-if-changed={p}");
    }
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    tonic_build::configure()
        .file_descriptor_set_path(out.join("stave_descriptor.bin"))
        .compile_protos(&protos, &["proto"])?;
    Ok(())
}
