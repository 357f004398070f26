//! `NaN`, `Infinity` and `-Infinity` literals, which Triton's parser accepts
//! (RapidJSON's `kParseNanAndInfFlag`) and Python's `json.dumps` writes, but
//! serde_json does not: [`rewrite`] turns them into placeholder strings that
//! no valid request holds (a NUL character, then the literal), and [`value`]
//! reads them back.

const LITERALS: [(&[u8], &[u8], f64); 3] = [
    (b"NaN", b"\"\\u0000NaN\"", f64::NAN),
    (b"Infinity", b"\"\\u0000Infinity\"", f64::INFINITY),
    (b"-Infinity", b"\"\\u0000-Infinity\"", f64::NEG_INFINITY),
];

/// A copy of `json` with the literals outside strings replaced; `None`
/// when there are none.
pub(crate) fn rewrite(json: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut in_string = false;
    let mut i = 0;
    while i < json.len() {
        let b = json[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if let Some((literal, placeholder, _)) = LITERALS
            .iter()
            .find(|(literal, _, _)| json[i..].starts_with(literal))
        {
            let out = out.get_or_insert_with(|| Vec::with_capacity(json.len() + 16));
            out.extend_from_slice(&json[copied..i]);
            out.extend_from_slice(placeholder);
            i += literal.len();
            copied = i;
            continue;
        }
        i += 1;
    }
    let mut out = out?;
    out.extend_from_slice(&json[copied..]);
    Some(out)
}

/// The value of a placeholder string.
pub(crate) fn value(s: &str) -> Option<f64> {
    let literal = s.strip_prefix('\0')?.as_bytes();
    LITERALS
        .iter()
        .find(|(l, _, _)| *l == literal)
        .map(|(_, _, value)| *value)
}
