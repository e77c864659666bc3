//! DDEX ERN 4.3: the release model Stave keeps (`stave.ddex.v1`), the XML
//! importer and exporter that run at the client's edge ([`xml`], never in
//! consensus), and the pure checks consensus runs on the protobuf
//! ([`validate`]): identifiers, references, territories, use types, deals
//! that must not overlap, and the genesis caps.
//!
//! ```text
//!  ERN XML ──xml::import──▶ NewReleaseMessage ──PublishRelease tx──▶ validate ──▶ releases/ keyspace
//!     ▲                                                                             │
//!     └───────────────────────xml::export◀──────── stored ReleaseRecord ◀───────────┘
//! ```
//!
//! Everything here is pure: no store, no clock, no I/O.

pub mod build;
mod error;
pub mod fuzz_fixtures;
pub mod ids;
pub mod territory;
pub mod time;
pub mod use_type;
pub mod validate;
pub mod xml;

pub use error::{cap, invalid, DdexError};
