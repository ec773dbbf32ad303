pub fn decompress(_s: &[u8], _d: &mut [u8]) -> Result<(), super::CodecError> { Err(super::CodecError::Truncated{codec:"stub"}) }
