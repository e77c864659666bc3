//! Empty: this package exists only to pin and fetch the QuickJS-ng sources.
