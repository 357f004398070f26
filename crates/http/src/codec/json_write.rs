//! Low-level JSON output that writes exactly what Triton's writer (RapidJSON
//! through `TritonJson`) writes: compact, strings escaped the RapidJSON way
//! with the bytes otherwise copied as they are (so BYTES elements that are not
//! UTF-8 go out raw, as Triton sends them), and doubles in RapidJSON's
//! notation (`1.0`, `0.1`, `1e300`, `3.4e38`, `Infinity`) with its Grisu2
//! digits.
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
/// `kWriteNanAndInfFlag`: `NaN`, `Infinity`, `-Infinity`, `0.0`, otherwise
/// the Grisu2 digits laid out by RapidJSON's `Prettify`.
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
    let mut value = value;
    if value < 0.0 {
        out.push(b'-');
        value = -value;
    }
    let mut buffer = [0u8; 32];
    let (len, k) = super::dtoa::grisu2(value, &mut buffer);
    prettify(out, &buffer[..len], len as i32 + k);
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
        assert_eq!(f64_text(1e21), "1e21");
        assert_eq!(f64_text(1e22), "1e22");
        assert_eq!(f64_text(1.5e21), "1.5e21");
        // RapidJSON 1.1.0's Grisu2, as Triton writes it (not the shortest).
        assert_eq!(f64_text(1.25e22), "1.2499999999999999e22");
        assert_eq!(f64_text(1.5e22), "1.5e22");
        assert_eq!(f64_text(123.456), "123.456");
        assert_eq!(f64_text(0.001234), "0.001234");
        assert_eq!(f64_text(1e-6), "0.000001");
        assert_eq!(f64_text(1.5e-6), "0.0000015");
        assert_eq!(f64_text(1e-7), "1e-7");
        assert_eq!(f64_text(-1.25e-7), "-1.25e-7");
        assert_eq!(f64_text(5e-324), "5e-324");
        assert_eq!(f64_text(f64::MAX), "1.7976931348623157e308");
        assert_eq!(f64_text(123456789012.5), "123456789012.5");
        // From the REFERENCE captures of Triton 2.51.
        assert_eq!(f64_text(1e-5), "0.00001");
        assert_eq!(f64_text(0.000123), "0.000123");
        assert_eq!(f64_text(123456.789), "123456.789");
        assert_eq!(f64_text(1.5e21), "1.5e21");
        assert_eq!(f64_text(f64::from(1e21f32)), "1.0000000200408774e21");
        assert_eq!(f64_text(f64::from(1e-7f32)), "1.0000000116860974e-7");
        assert_eq!(f64_text(f64::from(123456789.125f32)), "123456792.0");
    }

    #[test]
    fn doubles_as_triton_2_51_writes_them() {
        // (bits, Triton's text) from FP64/FP32 identity round trips through a
        // real Triton 2.51, which agreed on all 8005 values sent. The first
        // ones are where RapidJSON 1.1.0's Grisu2 is not the closest.
        let cases: &[(u64, &str)] = &[
            (0x44852d02c7e14af6, "1.2499999999999999e22"),
            (0x6d752c5d4c73a942, "1.8685528395882078e219"),
            (0x6fe4f1d81fcff454, "1.0161572489726496e231"),
            (0x5dceac72f543bbcf, "7.4808872844515609e143"),
            (0x43f93577175f0cd2, "29063823471623874000.0"),
            (0x5e2146a1fa882692, "2.6965522090880569e145"),
            (0x6b251e7030a1f6d5, "1.3560581157992568e208"),
            (0x2938916e57708107, "4.0863257914713958e-110"),
            (0x54faacfef0b37868, "2.3338634601556076e101"),
            (0x538670da1978cec0, "2.3404940206499036e94"),
            (0x0d8de7b96a1eccda, "2.1898775680650704e-243"),
            (0x300013f4bc90a6ec, "1.7356489160641286e-77"),
            (0x4c49ac46860a7da1, "3.2230345186361128e59"),
            (0x74e194d4b59a5969, "1.0311909086801176e255"),
            (0x5e5c50423764b52e, "3.5355063995473197e146"),
            (0x60c636d0cd4944b6, "1.5249546346493518e158"),
            (0x7d695b620aa25068, "1.2955763805658527e296"),
            (0x7b85746026784184, "1.0209069206977825e287"),
            (0x2cc3dd783aa725cb, "4.7617045978745748e-93"),
            (0x38f97ce2b6307bad, "3.0679864614932229e-34"),
            (0x017fafabc9f0b072, "1.8482244815273622e-301"),
            (0x5b2dc822c5bc647a, "1.6515008092889838e131"),
            (0x419a5dc1adbfb00e, "110588011.43719504"),
            (0x4f98c0217b142708, "2.7987435195652576e75"),
            (0x3fb999999999999a, "0.1"),
            (0x4415af1d78b58c40, "100000000000000000000.0"),
            (0x3e7ad7f29abcaf48, "1e-7"),
            (0x7fefffffffffffff, "1.7976931348623157e308"),
            (0x405edd2f1a9fbe77, "123.456"),
            (0x3fe5555555555555, "0.6666666666666666"),
            (0x4341c37937e08000, "10000000000000000.0"),
            (0x3fd3333333333333, "0.3"),
            (0x4340000000000000, "9007199254740992.0"),
            (0x38de4a60c0000000, "9.115227450488682e-35"),
            (0x4469f35e60000000, "3.829641291159059e21"),
            (0x45cc7031c0000000, "1.7602429809054046e28"),
            (0x4540af95e0000000, "4.03439839082086e25"),
            (0x458224ee20000000, "7.019220024761339e26"),
        ];
        for &(bits, expected) in cases {
            assert_eq!(f64_text(f64::from_bits(bits)), expected, "{bits:016x}");
        }
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
