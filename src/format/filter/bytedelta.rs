pub fn undo_bytedelta(_t: usize, _d: &mut [u8]) {}
pub fn undo_bytedelta_buggy(_t: usize, _d: &mut [u8]) {}
