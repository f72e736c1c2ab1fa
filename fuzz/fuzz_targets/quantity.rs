//! The Quantity parser: never panics; what parses prints in a form that parses back to
//! the same value.
#![no_main]

use gangpack::Quantity;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(q) = Quantity::parse(text) {
        let printed = q.to_string();
        let back = Quantity::parse(&printed).unwrap_or_else(|e| {
            panic!("{text:?} printed as {printed:?}, which does not parse: {e}")
        });
        assert_eq!(back, q, "{text:?} -> {printed:?}");
    }
});
