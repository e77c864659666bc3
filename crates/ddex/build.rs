//! Compiles `proto/stave/ddex/v1/ddex.proto` (shared with the node, which
//! refers to these types through `extern_path`). Map-free; every message
//! derives `Eq` because the node's `Action` carries a release.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "../../proto/stave/ddex/v1/ddex.proto";
    println!("cargo:rerun-if-changed={proto}");
    prost_build::Config::new()
        .message_attribute(".stave.ddex.v1", "#[derive(Eq)]")
        .compile_protos(&[proto], &["../../proto"])?;
    Ok(())
}
