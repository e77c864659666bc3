//! Resident set size of this process, for the benches that report it.

/// A `kB` field of `/proc/self/status`, in MiB (0 if unreadable).
fn status_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

/// Peak RSS (`VmHWM`), in MiB.
pub fn peak_rss_mib() -> f64 {
    status_mib("VmHWM:")
}

/// Current RSS (`VmRSS`), in MiB.
#[allow(dead_code)] // not every bench that includes this file reports it
pub fn current_rss_mib() -> f64 {
    status_mib("VmRSS:")
}
