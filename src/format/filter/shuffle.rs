pub fn unshuffle(_t: usize, s: &[u8], d: &mut [u8]) { d.copy_from_slice(s) }
