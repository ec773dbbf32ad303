//! JSON documents as presented files (`meta.json`, `.zarray`, `.stats`, what
//! `blosc2fs info` prints): one rule for all of them, pretty-printed with
//! two-space indents and ending in a newline, so `cat` leaves the prompt on
//! a line of its own.

use serde_json::Value as Json;

/// `doc` as a presented file's bytes: pretty-printed, ending in a newline.
pub fn json_bytes(doc: &Json) -> Vec<u8> {
    let mut text = serde_json::to_vec_pretty(doc).unwrap_or_default();
    text.push(b'\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_files_end_in_a_newline() {
        assert_eq!(
            json_bytes(&json!({"a": [1, 2]})),
            b"{\n  \"a\": [\n    1,\n    2\n  ]\n}\n"
        );
    }
}
