use super::*;

fn read(datatype: DataType, shape: &[i64], raw: &str) -> Result<Vec<u8>, Error> {
    read_with(datatype, shape, raw, false)
}

fn read_with(
    datatype: DataType,
    shape: &[i64],
    raw: &str,
    specials: bool,
) -> Result<Vec<u8>, Error> {
    let target = DataTarget {
        model: "m",
        name: "IN",
        datatype,
        expected: oxiserve_types::element_count(shape).unwrap(),
        specials,
        json_len: raw.len(),
    };
    read_json_data(&target, raw)
}

fn write(datatype: DataType, count: usize, data: &[u8]) -> Result<String, Error> {
    let mut out = Vec::new();
    write_json_data(&mut out, "OUT", datatype, count, data)?;
    Ok(String::from_utf8(out).unwrap())
}

fn le<T: LeInt>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        v.put(&mut out);
    }
    out
}

#[test]
fn reads_every_json_datatype() {
    assert_eq!(
        read(DataType::Bool, &[3], "[true,false,true]").unwrap(),
        [1, 0, 1]
    );
    assert_eq!(
        read(DataType::Uint8, &[3], "[0,1,255]").unwrap(),
        [0, 1, 255]
    );
    assert_eq!(
        read(DataType::Uint16, &[3], "[0,1,65535]").unwrap(),
        le(&[0u16, 1, 65535])
    );
    assert_eq!(
        read(DataType::Uint32, &[2], "[0,4294967295]").unwrap(),
        le(&[0u32, u32::MAX])
    );
    assert_eq!(
        read(DataType::Uint64, &[2], "[0,18446744073709551615]").unwrap(),
        le(&[0u64, u64::MAX])
    );
    assert_eq!(
        read(DataType::Int8, &[3], "[-128,0,127]").unwrap(),
        le(&[-128i8, 0, 127])
    );
    assert_eq!(
        read(DataType::Int16, &[2], "[-32768,32767]").unwrap(),
        le(&[i16::MIN, i16::MAX])
    );
    assert_eq!(
        read(DataType::Int32, &[2], "[-2147483648,2147483647]").unwrap(),
        le(&[i32::MIN, i32::MAX])
    );
    assert_eq!(
        read(
            DataType::Int64,
            &[2],
            "[-9223372036854775808,9223372036854775807]"
        )
        .unwrap(),
        le(&[i64::MIN, i64::MAX])
    );
    let fp32: Vec<u8> = [1.5f32, 0.1, 2.0, f32::INFINITY]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(
        read(DataType::Fp32, &[4], "[1.5,0.1,2,1e40]").unwrap(),
        fp32
    );
    let fp64: Vec<u8> = [0.1f64, 1e300, -2.5, -3.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(
        read(DataType::Fp64, &[4], "[0.1,1e300,-2.5,-3]").unwrap(),
        fp64
    );
    assert_eq!(
        read(DataType::Bytes, &[3], r#"["안녕", "", "a\"\u0000"]"#).unwrap(),
        oxiserve_types::encode_bytes_elements(["안녕".as_bytes(), b"", b"a\"\0"]).to_vec()
    );
}

#[test]
fn flattens_nested_arrays_as_triton_does() {
    let flat = read(DataType::Int32, &[2, 3], "[1,2,3,4,5,6]").unwrap();
    for raw in [
        "[[1,2,3],[4,5,6]]",
        "[[1,2],[3,4],[5,6]]",
        "[[1,2,3],4,5,6]",
        "[[[1,2,3]],[[4,5,6]]]",
        "[ [1, 2, 3] , [4, [5, [6]]] ]",
    ] {
        assert_eq!(read(DataType::Int32, &[2, 3], raw).unwrap(), flat, "{raw}");
    }
    assert_eq!(
        read(DataType::Bytes, &[2, 1], r#"[["a"],["bc"]]"#).unwrap(),
        oxiserve_types::encode_bytes_elements(["a", "bc"]).to_vec()
    );
    assert_eq!(
        read(DataType::Fp32, &[1, 0], "[]").unwrap(),
        Vec::<u8>::new()
    );
    assert_eq!(
        read(DataType::Fp32, &[0, 3], "[[]]").unwrap(),
        Vec::<u8>::new()
    );
}

#[test]
fn refuses_wrong_json_types_naming_the_input() {
    for (datatype, raw, got) in [
        (DataType::Bool, "[true,0]", "got 0 at element 1"),
        (DataType::Bool, r#"["true"]"#, "got a string at element 0"),
        (DataType::Int32, "[1.5]", "got 1.5 at element 0"),
        (DataType::Int32, "[2.0]", "got 2.0 at element 0"),
        (DataType::Uint64, "[null]", "got null at element 0"),
        (DataType::Fp32, "[true]", "got true at element 0"),
        (DataType::Fp32, r#"["1.5"]"#, "got a string at element 0"),
        (DataType::Fp64, r#"[{"a":1}]"#, "got an object at element 0"),
        (DataType::Bytes, "[5]", "got 5 at element 0"),
    ] {
        let count = raw.matches(',').count() as i64 + 1;
        let err = read(datatype, &[count], raw).unwrap_err();
        assert!(err.message.contains("input 'IN'"), "{err}");
        assert!(err.message.contains(got), "{raw}: {err}");
        assert!(err.message.contains(datatype.wire_name()), "{err}");
    }
    let err = read(DataType::Fp32, &[1], "5").unwrap_err();
    assert_eq!(
        err.message,
        "Unable to parse 'data' of input 'IN': expected an array of numbers"
    );
    let err = read(DataType::Fp32, &[1], r#"{"a":[1]}"#).unwrap_err();
    assert!(err.message.contains("expected an array"), "{err}");
}

#[test]
fn refuses_integers_out_of_range() {
    for (datatype, raw, value) in [
        (DataType::Uint8, "[300]", "300"),
        (DataType::Uint16, "[65536]", "65536"),
        (DataType::Uint32, "[4294967296]", "4294967296"),
        (DataType::Int8, "[200]", "200"),
        (DataType::Int8, "[-129]", "-129"),
        (DataType::Int16, "[40000]", "40000"),
        (DataType::Int32, "[3000000000]", "3000000000"),
        (
            DataType::Int64,
            "[9223372036854775808]",
            "9223372036854775808",
        ),
    ] {
        let err = read(datatype, &[1], raw).unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "Unable to parse 'data' of input 'IN': value {value} at element 0 is out of \
                 range for {datatype}"
            )
        );
        // Triton truncates these; refusing them is our own check.
        assert_eq!(err.kind, oxiserve_types::ErrorKind::InvalidArg);
    }
    // Negative values for unsigned types are JSON type errors, as in
    // Triton (internal, HTTP 500).
    for datatype in [DataType::Uint8, DataType::Uint64] {
        let err = read(datatype, &[1], "[-1]").unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "Unable to parse 'data' of input 'IN': {datatype} elements must be \
                 non-negative integers, got -1 at element 0"
            )
        );
        assert_eq!(err.kind, oxiserve_types::ErrorKind::Internal);
    }
}

#[test]
fn counts_elements_against_the_shape() {
    let err = read(DataType::Fp32, &[1, 3], "[1,2]").unwrap_err();
    let triton = "Unable to parse 'data': Shape does not match true shape of 'data' field";
    assert_eq!(err.message, triton);
    let err = read(DataType::Fp32, &[1, 3], "[[1,2],[3,4]]").unwrap_err();
    assert_eq!(err.message, triton);
    // BYTES counts: the words of Triton's core, which finds these.
    let err = read(DataType::Bytes, &[2], r#"["a"]"#).unwrap_err();
    assert_eq!(
        err.message,
        "expected 2 string elements for inference input 'IN' for model 'm', got 1"
    );
    let err = read(DataType::Bytes, &[1], r#"["a","b"]"#).unwrap_err();
    assert_eq!(
        err.message,
        "unexpected number of string elements 2 for inference input 'IN' for model 'm', \
         expecting 1"
    );
    // Elements past the shape are counted, never kept.
    let err = read(DataType::Int64, &[1], "[1,2,3,4,5,6,7,8,9,10]").unwrap_err();
    assert_eq!(err.message, triton);
    // A bad element past the shape's count is not looked at: the count is
    // what is wrong, not the element's type.
    let err = read(DataType::Uint8, &[1], "[1,\"x\"]").unwrap_err();
    assert_eq!(err.message, triton);
}

#[test]
fn special_literals_round_trip() {
    use special_literals::{rewrite, value};
    assert_eq!(rewrite(br#"{"a":[1,2],"s":"NaN"}"#), None);
    let rewritten = rewrite(br#"{"s":"x\"NaN","d":[NaN,-Infinity,Infinity,1]}"#).unwrap();
    assert_eq!(
        String::from_utf8(rewritten).unwrap(),
        r#"{"s":"x\"NaN","d":["\u0000NaN","\u0000-Infinity","\u0000Infinity",1]}"#
    );
    assert!(value("\0NaN").unwrap().is_nan());
    assert_eq!(value("\0-Infinity"), Some(f64::NEG_INFINITY));
    assert_eq!(value("NaN"), None);

    let raw = r#"["\u0000NaN","\u0000Infinity","\u0000-Infinity"]"#;
    let data = read_with(DataType::Fp32, &[3], raw, true).unwrap();
    let values: Vec<f32> = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert!(values[0].is_nan());
    assert_eq!(values[1..], [f32::INFINITY, f32::NEG_INFINITY]);
    let data = read_with(DataType::Fp64, &[1], r#"["\u0000-Infinity"]"#, true).unwrap();
    assert_eq!(data, f64::NEG_INFINITY.to_le_bytes());
    // Without the rewrite they are strings; integers and BYTES refuse them.
    assert!(read_with(DataType::Fp32, &[1], r#"["\u0000NaN"]"#, false).is_err());
    let err = read_with(DataType::Int32, &[1], r#"["\u0000NaN"]"#, true).unwrap_err();
    assert!(err.message.contains("got NaN at element 0"), "{err}");
    let err = read_with(DataType::Bytes, &[1], r#"["\u0000Infinity"]"#, true).unwrap_err();
    assert!(err.message.contains("got Infinity at element 0"), "{err}");
}

#[test]
fn fp16_and_bf16_are_refused_as_triton_does() {
    for datatype in [DataType::Fp16, DataType::Bf16] {
        let err = read(datatype, &[2], "[1.0,2.0]").unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "receiving {datatype} data via JSON is not supported. Please use the binary \
                 data format for input IN"
            )
        );
        let err = write(datatype, 1, &[0, 0x3c]).unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "sending {datatype} data via JSON is not supported. Please use the binary \
                 data format for output OUT"
            )
        );
    }
}

#[test]
fn writes_every_json_datatype() {
    assert_eq!(
        write(DataType::Bool, 3, &[1, 0, 7]).unwrap(),
        "[true,false,true]"
    );
    assert_eq!(
        write(DataType::Uint8, 3, &[0, 1, 255]).unwrap(),
        "[0,1,255]"
    );
    assert_eq!(
        write(DataType::Uint16, 2, &le(&[1u16, 65535])).unwrap(),
        "[1,65535]"
    );
    assert_eq!(
        write(DataType::Uint32, 2, &le(&[0u32, u32::MAX])).unwrap(),
        "[0,4294967295]"
    );
    assert_eq!(
        write(DataType::Uint64, 2, &le(&[0u64, u64::MAX])).unwrap(),
        "[0,18446744073709551615]"
    );
    assert_eq!(
        write(DataType::Int8, 2, &le(&[-128i8, 127])).unwrap(),
        "[-128,127]"
    );
    assert_eq!(
        write(DataType::Int16, 1, &le(&[-32768i16])).unwrap(),
        "[-32768]"
    );
    assert_eq!(
        write(DataType::Int32, 3, &le(&[i32::MIN, 0, i32::MAX])).unwrap(),
        "[-2147483648,0,2147483647]"
    );
    assert_eq!(
        write(DataType::Int64, 2, &le(&[i64::MIN, i64::MAX])).unwrap(),
        "[-9223372036854775808,9223372036854775807]"
    );
    let fp32: Vec<u8> = [1.5f32, 0.1, -3.4e38, f32::INFINITY]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(
        write(DataType::Fp32, 4, &fp32).unwrap(),
        "[1.5,0.10000000149011612,-3.3999999521443644e38,Infinity]"
    );
    let fp64: Vec<u8> = [0.1f64, 1e300, -2.5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(write(DataType::Fp64, 3, &fp64).unwrap(), "[0.1,1e300,-2.5]");
    let bytes = oxiserve_types::encode_bytes_elements(["안녕하세요", "hello", ""]);
    assert_eq!(
        write(DataType::Bytes, 3, &bytes).unwrap(),
        r#"["안녕하세요","hello",""]"#
    );
    assert_eq!(write(DataType::Fp32, 0, &[]).unwrap(), "[]");
}

#[test]
fn writes_non_utf8_bytes_raw() {
    let bytes = oxiserve_types::encode_bytes_elements([b"\xff\xfe".as_slice()]);
    let mut out = Vec::new();
    write_json_data(&mut out, "OUT", DataType::Bytes, 1, &bytes).unwrap();
    assert_eq!(out, b"[\"\xff\xfe\"]");
}

#[test]
fn write_checks_sizes() {
    let err = write(DataType::Int32, 2, &[0; 4]).unwrap_err();
    assert_eq!(
        err.message,
        "output tensor shape does not match size of output for 'OUT'"
    );
    let bytes = oxiserve_types::encode_bytes_elements(["a"]);
    assert!(write(DataType::Bytes, 2, &bytes).is_err());
    assert!(write(DataType::Bytes, 1, &bytes[..4]).is_err());
}

#[test]
fn json_round_trips_every_datatype() {
    for (datatype, raw) in crate::codec::tests::JSON_SAMPLES {
        let data = read(datatype, &[3], raw).unwrap();
        assert_eq!(write(datatype, 3, &data).unwrap(), raw, "{datatype}");
    }
}
