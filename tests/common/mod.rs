//! Helpers shared by the integration tests. Each test file that needs them
//! declares `mod common;`; not every file uses every helper.

#![allow(dead_code)]

pub mod chaos;
pub mod localnet;
pub mod rights;
pub mod upload;
