//! The gas meter of one tx, and [`Metered`], the state wrapper that charges
//! every read and write a tx's actions make.
//!
//! Charges are made per call, whatever serves it (the tx overlay, the block
//! overlay or RocksDB), so gas never depends on caches or on what an earlier
//! tx in the block touched.

use std::cell::Cell;

use super::{GasParams, Work};
use crate::store::{Rows, Space, StateRead, StateWrite, StoreError};

/// Gas used against a limit. Running out is sticky: once a charge does not
/// fit, every later charge fails too and `used` reads as the limit.
#[derive(Debug)]
pub struct GasMeter {
    limit: u64,
    used: Cell<u64>,
    /// The total the first failed charge wanted.
    overrun: Cell<Option<u64>>,
}

impl GasMeter {
    pub fn new(limit: u64) -> Self {
        GasMeter {
            limit,
            used: Cell::new(0),
            overrun: Cell::new(None),
        }
    }

    /// Adds `gas`.
    ///
    /// # Errors
    /// [`StoreError::OutOfGas`] when the limit would be passed (or was).
    pub fn charge(&self, gas: u64) -> Result<(), StoreError> {
        let total = self.used.get().saturating_add(gas);
        if self.overrun.get().is_some() || total > self.limit {
            if self.overrun.get().is_none() {
                self.overrun.set(Some(total));
            }
            self.used.set(self.limit);
            return Err(StoreError::OutOfGas {
                limit: self.limit,
                wanted: total,
            });
        }
        self.used.set(total);
        Ok(())
    }

    pub fn used(&self) -> u64 {
        self.used.get()
    }
    /// Whether a charge ever failed.
    pub fn exhausted(&self) -> bool {
        self.overrun.get().is_some()
    }
    /// The total the first failed charge wanted, if one failed.
    pub fn overrun(&self) -> Option<u64> {
        self.overrun.get()
    }
}

/// A state that charges `meter` for every read and write, by `schedule`.
pub struct Metered<'m, S> {
    inner: S,
    meter: &'m GasMeter,
    schedule: &'m GasParams,
}

impl<'m, S> Metered<'m, S> {
    pub fn new(inner: S, meter: &'m GasMeter, schedule: &'m GasParams) -> Self {
        Metered {
            inner,
            meter,
            schedule,
        }
    }

    pub fn into_inner(self) -> S {
        self.inner
    }

    fn charge(&self, gas: u64) -> Result<(), StoreError> {
        self.meter.charge(gas)
    }

    /// A write's charge. Writes cannot fail; a write past the limit marks the
    /// meter exhausted and the tx ends OUT_OF_GAS (its overlay is dropped).
    fn charge_write(&self, bytes: usize) {
        let g = self.schedule;
        let _ = self.charge(g.write.saturating_add(per(bytes, g.write_byte)));
    }
}

/// `units × rate`, saturating.
fn per(units: usize, rate: u64) -> u64 {
    (units as u64).saturating_mul(rate)
}

fn opt_len(v: &Option<Vec<u8>>) -> usize {
    v.as_ref().map_or(0, Vec::len)
}

impl<S: StateRead> StateRead for Metered<'_, S> {
    /// Unmetered: see [`StateRead::rules_version`].
    fn rules_version(&self) -> Result<u64, StoreError> {
        self.inner.rules_version()
    }

    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let g = self.schedule;
        self.charge(g.read.saturating_add(per(key.len(), g.read_byte)))?;
        let v = self.inner.get_raw(key)?;
        self.charge(per(opt_len(&v), g.read_byte))?;
        Ok(v)
    }

    /// Index rows live outside the tree and a node may rebuild them (state
    /// sync), so their bytes never reach gas: an index read costs `read`
    /// and its key's bytes only.
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let g = self.schedule;
        self.charge(g.read.saturating_add(per(key.len(), g.read_byte)))?;
        self.inner.get_index_raw(key)
    }

    fn prefix_raw(
        &self,
        space: Space,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        let g = self.schedule;
        self.charge(g.read.saturating_add(per(prefix.len(), g.read_byte)))?;
        let rows = self.inner.prefix_raw(space, prefix, after, limit)?;
        // As for `get_index_raw`: an index listing is charged by its rows.
        let bytes: usize = match space {
            Space::State => rows.iter().map(|(k, v)| k.len() + v.len()).sum(),
            Space::Index => 0,
        };
        self.charge(per(rows.len(), g.iter_row).saturating_add(per(bytes, g.read_byte)))?;
        Ok(rows)
    }

    fn charge_gas(&self, work: Work) -> Result<(), StoreError> {
        self.charge(work.gas(self.schedule))
    }
}

impl<S: StateWrite> StateWrite for Metered<'_, S> {
    fn put_raw(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.charge_write(key.len() + value.len());
        self.inner.put_raw(key, value);
    }
    fn delete_raw(&mut self, key: Vec<u8>) {
        self.charge_write(key.len());
        self.inner.delete_raw(key);
    }
    fn put_index_raw(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.charge_write(key.len() + value.len());
        self.inner.put_index_raw(key, value);
    }
    fn delete_index_raw(&mut self, key: Vec<u8>) {
        self.charge_write(key.len());
        self.inner.delete_index_raw(key);
    }
    fn add_index_counter(&mut self, key: Vec<u8>, delta: i64) {
        self.charge_write(key.len() + 8);
        self.inner.add_index_counter(key, delta);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemState, Overlay};

    #[test]
    fn reads_and_writes_are_charged_by_the_schedule_and_exhaustion_sticks() {
        let g = GasParams::default();
        let mut base = MemState::default();
        base.state.insert(b"k".to_vec(), b"vvvv".to_vec());
        let meter = GasMeter::new(u64::MAX);
        let mut m = Metered::new(Overlay::new(&base), &meter, &g);
        assert_eq!(m.get_raw(b"k").unwrap(), Some(b"vvvv".to_vec()));
        let read = g.read + 5 * g.read_byte;
        assert_eq!(meter.used(), read);
        m.put_raw(b"ab".to_vec(), b"cde".to_vec());
        assert_eq!(meter.used(), read + g.write + 5 * g.write_byte);
        // The same read served from the overlay costs the same.
        m.put_raw(b"k".to_vec(), b"wwww".to_vec());
        let before = meter.used();
        m.get_raw(b"k").unwrap();
        assert_eq!(meter.used() - before, read);

        let tight = GasMeter::new(g.read);
        let m = Metered::new(Overlay::new(&base), &tight, &g);
        assert!(matches!(m.get_raw(b"k"), Err(StoreError::OutOfGas { .. })));
        assert!(tight.exhausted());
        assert_eq!(tight.used(), g.read);
        assert!(tight.charge(0).is_err(), "exhaustion is sticky");
    }

    #[test]
    fn the_rules_version_costs_no_gas_at_any_layer() {
        let g = GasParams::default();
        let mut base = MemState::default();
        let key = crate::keyspaces::upgrades::app_version_key();
        let meter = GasMeter::new(u64::MAX);
        let m = Metered::new(Overlay::new(&base), &meter, &g);
        assert_eq!(m.rules_version().unwrap(), 1, "absent: the genesis version");
        base.state.insert(key.clone(), 2u64.to_be_bytes().to_vec());
        let inner = Overlay::new(&base);
        let mut m = Metered::new(Overlay::new(&inner), &meter, &g);
        assert_eq!(m.rules_version().unwrap(), 2);
        m.put_raw(key, 3u64.to_be_bytes().to_vec());
        let before = meter.used();
        assert_eq!(m.rules_version().unwrap(), 3, "a pending write is seen");
        assert_eq!(meter.used(), before);
        assert_eq!(
            before,
            g.write + (20 + 8) * g.write_byte,
            "only the write was charged"
        );
    }
}
