#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    blosc2fs_fuzz::harness::listing(data);
});
