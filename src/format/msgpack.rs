//! The msgpack values frames carry (metalayers, vlmetalayers) turned into JSON.
//!
//! JSON cannot hold everything msgpack can, so the mapping is fixed here and
//! documented in the README:
//! nil → null; bool, integers and finite floats as themselves; NaN → "NaN",
//! ±inf → "Infinity" / "-Infinity"; str → string (invalid UTF-8 is replaced);
//! bin → {"base64": "..."}; array → list; map → object with keys as strings;
//! ext 44 (python-blosc2's complex, packed as big-endian f64 pairs)
//! → {"real": r, "imag": i}; any other ext → {"ext": type, "base64": "..."}.

use rmpv::Value;
use serde_json::{json, Map, Value as Json};

use super::error::{PResult, Problem};

/// Deepest nesting accepted (guards against stack exhaustion on hostile input).
const MAX_DEPTH: usize = 64;

/// Parse one msgpack value that must fill `bytes` up to trailing bytes.
pub fn parse(bytes: &[u8], what: &str) -> PResult<Value> {
    let mut cursor = bytes;
    rmpv::decode::read_value_with_max_depth(&mut cursor, MAX_DEPTH)
        .map_err(|e| Problem::corrupt(what, format!("msgpack: {e}")))
}

/// Convert a msgpack value to JSON using the mapping in the module docs.
pub fn to_json(value: &Value) -> Json {
    match value {
        Value::Nil => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::Integer(i) => {
            if let Some(u) = i.as_u64() {
                json!(u)
            } else if let Some(s) = i.as_i64() {
                json!(s)
            } else {
                Json::Null
            }
        }
        Value::F32(f) => float_json(*f as f64),
        Value::F64(f) => float_json(*f),
        Value::String(s) => Json::String(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        Value::Binary(b) => json!({ "base64": base64(b) }),
        Value::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Map(pairs) => {
            let mut map = Map::new();
            for (i, (k, v)) in pairs.iter().enumerate() {
                // Keys are strings in JSON. Scalars become their JSON text;
                // containers are not expanded (stringifying nested keys
                // re-escapes them at every level: exponential in depth).
                let key = match k {
                    Value::String(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
                    Value::Array(_) | Value::Map(_) | Value::Binary(_) | Value::Ext(..) => {
                        format!("<{} key {i}>", kind_name(k))
                    }
                    other => to_json(other).to_string(),
                };
                map.insert(key, to_json(v));
            }
            Json::Object(map)
        }
        Value::Ext(44, data) if data.len() == 16 => {
            let re = f64::from_be_bytes(data[..8].try_into().unwrap_or([0; 8]));
            let im = f64::from_be_bytes(data[8..].try_into().unwrap_or([0; 8]));
            json!({ "real": float_json(re), "imag": float_json(im) })
        }
        Value::Ext(kind, data) => json!({ "ext": kind, "base64": base64(data) }),
    }
}

fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "array",
        Value::Map(_) => "map",
        Value::Binary(_) => "bin",
        Value::Ext(..) => "ext",
        _ => "scalar",
    }
}

fn float_json(f: f64) -> Json {
    if f.is_nan() {
        Json::String("NaN".into())
    } else if f.is_infinite() {
        Json::String(if f > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        serde_json::Number::from_f64(f)
            .map(Json::Number)
            .unwrap_or(Json::Null)
    }
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let n = group.len();
        let b = [
            group[0],
            if n > 1 { group[1] } else { 0 },
            if n > 2 { group[2] } else { 0 },
        ];
        let v = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= n {
                out.push(TABLE[((v >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn maps_special_floats_and_ext() {
        // {"a": NaN, "b": -inf, "c": bin 01 02, "d": ext44 complex(1.5, -2)}
        let mut bytes = vec![0x84, 0xa1, b'a', 0xcb];
        bytes.extend_from_slice(&f64::NAN.to_be_bytes());
        bytes.extend_from_slice(&[0xa1, b'b', 0xcb]);
        bytes.extend_from_slice(&f64::NEG_INFINITY.to_be_bytes());
        bytes.extend_from_slice(&[0xa1, b'c', 0xc4, 2, 1, 2]);
        bytes.extend_from_slice(&[0xa1, b'd', 0xd8, 44]);
        bytes.extend_from_slice(&1.5f64.to_be_bytes());
        bytes.extend_from_slice(&(-2.0f64).to_be_bytes());
        let json = to_json(&parse(&bytes, "test").unwrap());
        assert_eq!(
            json,
            json!({"a": "NaN", "b": "-Infinity", "c": {"base64": "AQI="}, "d": {"real": 1.5, "imag": -2.0}})
        );
    }

    #[test]
    fn container_keys_are_named_not_expanded() {
        // {1: "a", [1]: "b", {"x": 1}: "c"}
        let bytes = [
            0x83, 0x01, 0xa1, b'a', 0x91, 0x01, 0xa1, b'b', 0x81, 0xa1, b'x', 0x01, 0xa1, b'c',
        ];
        let json = to_json(&parse(&bytes, "test").unwrap());
        assert_eq!(
            json,
            json!({"1": "a", "<array key 1>": "b", "<map key 2>": "c"})
        );
    }

    #[test]
    fn truncated_msgpack_is_an_error() {
        assert!(parse(&[0x92, 0x01], "test").is_err());
        assert!(parse(&[], "test").is_err());
    }
}
