pub fn undo_delta(_r: Option<&[u8]>, _t: usize, _d: &mut [u8]) {}
