mod codec;
mod samples;

use samples::{from_stub_samples, tensor, to_stub_samples};

use super::decode::decode;
use super::*;

#[test]
fn to_stub_round_trips() {
    for msg in to_stub_samples() {
        let frame = msg.encode().unwrap();
        assert_eq!(ToStub::decode(&frame).unwrap(), msg);
    }
}

#[test]
fn from_stub_round_trips() {
    for msg in from_stub_samples() {
        let frame = msg.encode().unwrap();
        let len = frame_len(frame[..4].try_into().unwrap()).unwrap();
        assert_eq!(len, frame.len() - 4);
        assert_eq!(decode(&frame[4..]).unwrap(), msg);
    }
}

#[test]
fn encode_into_appends_frames() {
    let mut out = Vec::new();
    let release = ToStub::Release { offsets: vec![64] };
    release.encode_into(&mut out).unwrap();
    ToStub::Finalize.encode_into(&mut out).unwrap();
    let first = release.encode().unwrap();
    assert_eq!(&out[..first.len()], first);
    assert_eq!(
        ToStub::decode(&out[first.len()..]).unwrap(),
        ToStub::Finalize
    );
}

#[test]
fn exact_bytes_of_a_reply_and_a_release() {
    let frame = ToStub::Reply {
        call_id: 0x0102,
        value: true,
    }
    .encode()
    .unwrap();
    let expected: Vec<u8> = [
        &13u32.to_le_bytes()[..],
        &5u32.to_le_bytes(),
        &0x0102u64.to_le_bytes(),
        &[1],
    ]
    .concat();
    assert_eq!(frame, expected);

    let frame = ToStub::Release {
        offsets: vec![64, 128],
    }
    .encode()
    .unwrap();
    let expected: Vec<u8> = [
        &32u32.to_le_bytes()[..],
        &6u32.to_le_bytes(),
        &0u64.to_le_bytes(),
        &2u32.to_le_bytes(),
        &64u64.to_le_bytes(),
        &128u64.to_le_bytes(),
    ]
    .concat();
    assert_eq!(frame, expected);
}

/// A `Send` frame written by hand from python-wire.md.
fn send_frame(dtype: u8, ndim: u8, dims: &[i64], offset: u64, nbytes: u64) -> Vec<u8> {
    let mut body: Vec<u8> = [
        &34u32.to_le_bytes()[..],
        &7u64.to_le_bytes(),   // rid
        &1u32.to_le_bytes(),   // FINAL
        &[1],                  // has_response
        &128u64.to_le_bytes(), // block
        &3u32.to_le_bytes(),   // INVALID_ARG
        &2u32.to_le_bytes(),   // message
        b"no",
        &2u32.to_le_bytes(), // parameters_json
        b"{}",
        &1u16.to_le_bytes(), // one tensor
        &3u32.to_le_bytes(), // name
        b"OUT",
        &[dtype, ndim],
    ]
    .concat();
    for d in dims {
        body.extend_from_slice(&d.to_le_bytes());
    }
    body.extend_from_slice(&offset.to_le_bytes());
    body.extend_from_slice(&nbytes.to_le_bytes());
    body
}

#[test]
fn decodes_a_hand_written_send() {
    let frame = send_frame(11, 2, &[2, 3], 128, 24);
    assert_eq!(
        decode(&frame).unwrap(),
        FromStub::Send {
            rid: 7,
            is_final: true,
            failed: false,
            response: Some(Payload {
                block: 128,
                response: WireResponse {
                    error: Some(Error::invalid_arg("no")),
                    parameters_json: "{}".into(),
                    outputs: vec![tensor("OUT", DataType::Fp32, &[2, 3], 128)],
                },
            }),
        }
    );
}

fn decode_err(frame: &[u8]) -> String {
    let e = decode(frame).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Internal);
    e.message
}

#[test]
fn rejects_malformed_tensors() {
    for (frame, what) in [
        (send_frame(99, 1, &[2], 0, 2), "unknown dtype 99"),
        (send_frame(0, 1, &[2], 0, 2), "unknown dtype 0"),
        (send_frame(11, 65, &[], 0, 0), "65 dims"),
        (send_frame(11, 1, &[-1], 0, 0), "negative dimension"),
        (send_frame(11, 1, &[2], 32, 8), "not 64-byte aligned"),
        (send_frame(11, 1, &[2], 0, 9), "does not take 9 bytes"),
        (send_frame(11, 2, &[i64::MAX, 4], 0, 8), "does not take"),
        (send_frame(11, 3, &[1, 1], 0, 4), "truncated"),
    ] {
        let message = decode_err(&frame);
        assert!(message.contains(what), "{message:?} lacks {what:?}");
        assert!(message.contains("Send frame"), "{message}");
    }
    // BYTES sizes are not implied by the dims.
    assert!(decode(&send_frame(13, 1, &[2], 0, 11)).is_ok());
}

#[test]
fn rejects_malformed_frames() {
    assert!(decode_err(&[]).contains("truncated"));
    assert!(decode_err(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).contains("unknown frame kind 1"));

    let mut frame = FromStub::BlsCancel { bls_id: 1 }.encode().unwrap();
    frame.push(0);
    assert!(decode_err(&frame[4..]).contains("1 unexpected bytes"));

    let log = |level: u8, file: &[u8]| -> Vec<u8> {
        [
            &38u32.to_le_bytes()[..],
            &0u64.to_le_bytes(),
            &[level],
            &(file.len() as u32).to_le_bytes(),
            file,
            &1u32.to_le_bytes(),
            &0u32.to_le_bytes(),
        ]
        .concat()
    };
    assert!(decode(&log(3, b"m.py")).is_ok());
    assert!(decode_err(&log(4, b"m.py")).contains("log level 4"));
    assert!(decode_err(&log(0, b"\xff\xfe")).contains("UTF-8"));

    // A string length past the end.
    let mut frame = log(0, b"m.py");
    frame[13..17].copy_from_slice(&1000u32.to_le_bytes());
    assert!(decode_err(&frame).contains("truncated"));

    // A huge count with nothing behind it fails without a big allocation.
    let frame: Vec<u8> = [
        &39u32.to_le_bytes()[..],
        &0u64.to_le_bytes(),
        &u32::MAX.to_le_bytes(),
    ]
    .concat();
    assert!(decode_err(&frame).contains("truncated"));

    // A bool that is not 0/1.
    let frame: Vec<u8> = [&34u32.to_le_bytes()[..], &0u64.to_le_bytes(), &[0; 4], &[2]].concat();
    assert!(decode_err(&frame).contains("neither 0 nor 1"));
}

#[test]
fn every_truncation_is_an_error() {
    for msg in from_stub_samples() {
        let frame = msg.encode().unwrap();
        let body = &frame[4..];
        for cut in 0..body.len() {
            assert!(decode(&body[..cut]).is_err(), "{msg:?} cut at {cut}");
        }
    }
}

#[test]
fn rejects_bad_correlation_kind() {
    let msg = FromStub::Bls {
        bls_id: 1,
        decoupled: false,
        model_name: "m".into(),
        model_version: 2,
        block: NO_BLOCK,
        request: WireRequest::default(),
        parent_rid: 0,
    };
    let mut frame = msg.encode().unwrap();
    // kind, tag, decoupled, str "m", version, block, flags -> corr_kind
    let at = 4 + 12 + 1 + 5 + 8 + 8 + 4;
    assert_eq!(frame[at], 0);
    frame[at] = 3;
    assert!(decode_err(&frame[4..]).contains("correlation id kind 3"));
}

#[test]
fn frame_len_limits() {
    assert_eq!(frame_len(12u32.to_le_bytes()).unwrap(), 12);
    assert!(frame_len(11u32.to_le_bytes()).is_err());
    assert!(frame_len(u32::MAX.to_le_bytes()).is_err());
}

#[test]
fn encode_rejects_counts_too_large() {
    let mut out = vec![1, 2, 3];
    let msg = ToStub::Init {
        args: vec![(String::new(), String::new()); 70_000],
        model_file: String::new(),
        decoupled: false,
        idle_spin_us: 0,
        lane: String::new(),
    };
    let e = msg.encode_into(&mut out).unwrap_err();
    assert!(e.message.contains("70000 initialize arguments"), "{e}");
    assert_eq!(out, [1, 2, 3]);
}

#[test]
fn dtype_codes() {
    for (i, &t) in DataType::all().iter().enumerate() {
        assert_eq!(dtype_code(t) as usize, i + 1);
        assert_eq!(dtype_from_code(dtype_code(t)), Some(t));
    }
    assert_eq!(dtype_code(DataType::Bytes), 13);
    assert_eq!(dtype_code(DataType::Bf16), 14);
    assert_eq!(dtype_from_code(0), None);
    assert_eq!(dtype_from_code(15), None);
}

#[test]
fn error_codes() {
    use ErrorKind::*;
    for kind in [
        InvalidArg,
        NotFound,
        Unavailable,
        Unsupported,
        AlreadyExists,
        Cancelled,
        Internal,
    ] {
        assert_eq!(error_kind(triton_code(kind)), kind);
    }
    assert_eq!(triton_code(ResourceExhausted), 4);
    assert_eq!(error_kind(0), ErrorKind::Unknown);
    assert_eq!(error_kind(1234), Internal);
}
