//! Low-level JSON output that writes exactly what Triton's writer (RapidJSON
//! through `TritonJson`) writes: compact, strings escaped the RapidJSON way
//! with the bytes otherwise copied as they are (so BYTES elements that are not
//! UTF-8 go out raw, as Triton sends them), and doubles in RapidJSON's
//! shortest round-trip notation (`1.0`, `0.1`, `1e300`, `3.4e38`, `Infinity`).
//!
//! serde_json cannot do this: it writes `null` for infinities and NaN, uses
//! other thresholds for exponent notation, lower-case `\u001f` escapes, and
//! only takes `&str`.

/// Appends `bytes` as a JSON string, quotes included. Escapes `"` and `\`
/// and the control characters below 0x20 as RapidJSON does (`\b \t \n \f \r`,
/// the rest as `\u00XX` with upper-case hex); every other byte is copied.
pub(crate) fn write_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x09 => b"\\t",
            0x0A => b"\\n",
            0x0C => b"\\f",
            0x0D => b"\\r",
            0x00..=0x1F => {
                out.extend_from_slice(&bytes[start..i]);
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xF)]);
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(escape);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends `"key":`.
pub(crate) fn write_key(out: &mut Vec<u8>, key: &str) {
    write_string(out, key.as_bytes());
    out.push(b':');
}

/// Appends an unsigned integer.
pub(crate) fn write_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Appends a signed integer.
pub(crate) fn write_i64(out: &mut Vec<u8>, value: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Appends `true` or `false`.
pub(crate) fn write_bool(out: &mut Vec<u8>, value: bool) {
    out.extend_from_slice(if value { b"true" } else { b"false" });
}

/// Appends a double the way RapidJSON's `Writer::Double` does with
/// `kWriteNanAndInfFlag`: `NaN`, `Infinity`, `-Infinity`, `0.0`, otherwise the
/// shortest digits that round-trip laid out by RapidJSON's `Prettify`.
pub(crate) fn write_f64(out: &mut Vec<u8>, value: f64) {
    if value.is_nan() {
        out.extend_from_slice(b"NaN");
        return;
    }
    if value.is_infinite() {
        out.extend_from_slice(if value > 0.0 {
            b"Infinity"
        } else {
            b"-Infinity"
        });
        return;
    }
    if value == 0.0 {
        out.extend_from_slice(if value.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
        return;
    }
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(value).as_bytes();
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    // Shortest significant digits and the decimal exponent `kk`, with
    // 10^(kk-1) <= |value| < 10^kk, recovered from ryu's layout
    // (`123.45`, `0.00123`, `100.0`, `1e-7`, `1.2345e20`).
    let mut digits = [0u8; 24];
    let mut len = 0;
    let kk: i32;
    if let Some(e) = text.iter().position(|&c| c == b'e') {
        for &c in &text[..e] {
            if c != b'.' {
                digits[len] = c;
                len += 1;
            }
        }
        kk = parse_exponent(&text[e + 1..]) + 1;
    } else {
        let dot = text.iter().position(|&c| c == b'.').unwrap_or(text.len());
        let (int_part, frac_part) = (&text[..dot], text.get(dot + 1..).unwrap_or(&[]));
        if int_part == b"0" {
            let zeros = frac_part.iter().take_while(|&&c| c == b'0').count();
            for &c in &frac_part[zeros..] {
                digits[len] = c;
                len += 1;
            }
            kk = -(zeros as i32);
        } else {
            for &c in int_part.iter().chain(frac_part) {
                digits[len] = c;
                len += 1;
            }
            kk = int_part.len() as i32;
        }
    }
    while len > 1 && digits[len - 1] == b'0' {
        len -= 1;
    }
    if negative {
        out.push(b'-');
    }
    prettify(out, &digits[..len], kk);
}

fn parse_exponent(text: &[u8]) -> i32 {
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let value = text
        .iter()
        .fold(0i32, |acc, &c| acc * 10 + i32::from(c - b'0'));
    if negative { -value } else { value }
}

/// RapidJSON's `Prettify(buffer, length, k)` with `kk = length + k`.
fn prettify(out: &mut Vec<u8>, digits: &[u8], kk: i32) {
    let length = digits.len() as i32;
    if length <= kk && kk <= 21 {
        // 1234e7 -> 12340000000.0
        out.extend_from_slice(digits);
        out.resize(out.len() + (kk - length) as usize, b'0');
        out.extend_from_slice(b".0");
    } else if 0 < kk && kk <= 21 {
        // 1234e-2 -> 12.34
        let (int_part, frac_part) = digits.split_at(kk as usize);
        out.extend_from_slice(int_part);
        out.push(b'.');
        out.extend_from_slice(frac_part);
    } else if -6 < kk && kk <= 0 {
        // 1234e-6 -> 0.001234
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-kk) as usize, b'0');
        out.extend_from_slice(digits);
    } else {
        // 1e30, 1.234e-30
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        write_i64(out, i64::from(kk - 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64_text(value: f64) -> String {
        let mut out = Vec::new();
        write_f64(&mut out, value);
        String::from_utf8(out).unwrap()
    }

    fn string_bytes(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_string(&mut out, bytes);
        out
    }

    #[test]
    fn doubles_match_rapidjson() {
        // Values captured from Triton 2.51 responses.
        assert_eq!(f64_text(1.0), "1.0");
        assert_eq!(f64_text(2.0), "2.0");
        assert_eq!(f64_text(f64::from(0.1f32)), "0.10000000149011612");
        assert_eq!(f64_text(f64::from(-3.4e38f32)), "-3.3999999521443644e38");
        assert_eq!(f64_text(f64::from(f32::MAX)), "3.4028234663852887e38");
        assert_eq!(f64_text(f64::from(1e-45f32)), "1.401298464324817e-45");
        assert_eq!(f64_text(0.1), "0.1");
        assert_eq!(f64_text(1e300), "1e300");
        assert_eq!(f64_text(-2.5), "-2.5");
        assert_eq!(f64_text(f64::INFINITY), "Infinity");
        assert_eq!(f64_text(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(f64_text(f64::NAN), "NaN");
        assert_eq!(f64_text(0.0), "0.0");
        assert_eq!(f64_text(-0.0), "-0.0");
        // RapidJSON's thresholds: plain notation up to 21 integer digits and
        // down to 1e-6; exponents without '+'.
        assert_eq!(f64_text(100.0), "100.0");
        assert_eq!(f64_text(1e16), "10000000000000000.0");
        assert_eq!(f64_text(1e20), "100000000000000000000.0");
        assert_eq!(f64_text(1.5e20), "150000000000000000000.0");
        assert_eq!(f64_text(1e21), "1000000000000000000000.0");
        assert_eq!(f64_text(1e22), "1e22");
        assert_eq!(f64_text(1.25e22), "1.25e22");
        assert_eq!(f64_text(123.456), "123.456");
        assert_eq!(f64_text(0.001234), "0.001234");
        assert_eq!(f64_text(1e-6), "0.000001");
        assert_eq!(f64_text(1.5e-6), "0.0000015");
        assert_eq!(f64_text(1e-7), "1e-7");
        assert_eq!(f64_text(-1.25e-7), "-1.25e-7");
        assert_eq!(f64_text(5e-324), "5e-324");
        assert_eq!(f64_text(f64::MAX), "1.7976931348623157e308");
        assert_eq!(f64_text(123456789012.5), "123456789012.5");
    }

    #[test]
    fn doubles_round_trip() {
        for value in [
            0.1,
            1.0 / 3.0,
            -7.25e-12,
            6.02214076e23,
            f64::MIN_POSITIVE,
            12345.678,
            9007199254740993.0,
            1e15,
            1e-5,
        ] {
            let text = f64_text(value);
            assert_eq!(text.parse::<f64>().unwrap(), value, "{text}");
        }
    }

    #[test]
    fn strings_escape_like_rapidjson() {
        assert_eq!(string_bytes(b"plain"), b"\"plain\"");
        assert_eq!(
            string_bytes("a\"b\\c\né\0z".as_bytes()),
            "\"a\\\"b\\\\c\\né\\u0000z\"".as_bytes()
        );
        assert_eq!(
            string_bytes(b"\x08\x09\x0a\x0c\x0d\x1f\x7f/"),
            b"\"\\b\\t\\n\\f\\r\\u001F\x7f/\""
        );
        // Not UTF-8: copied as is, as Triton does.
        assert_eq!(string_bytes(b"\xff\xfe"), b"\"\xff\xfe\"");
        assert_eq!(string_bytes(b""), b"\"\"");
    }

    #[test]
    fn integers() {
        let mut out = Vec::new();
        write_i64(&mut out, i64::MIN);
        out.push(b',');
        write_u64(&mut out, u64::MAX);
        out.push(b',');
        write_bool(&mut out, true);
        assert_eq!(
            out,
            b"-9223372036854775808,18446744073709551615,true".to_vec()
        );
    }
}
