use std::sync::atomic::{AtomicUsize, Ordering};

use oxiserve_types::{
    DataType, ErrorKind, InferRequest, ParameterValue, Parameters, RequestedOutput, Tensor,
};

use super::*;

/// A POSIX shared memory object made for one test (what `shm_open` +
/// `ftruncate` create), removed when dropped.
struct ShmObject {
    key: String,
    path: std::path::PathBuf,
}

impl ShmObject {
    fn new(size: u64) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("oxiserve_core_test_{}_{n}", std::process::id());
        let path = std::path::Path::new("/dev/shm").join(&name);
        std::fs::File::create(&path).unwrap().set_len(size).unwrap();
        Self {
            key: format!("/{name}"),
            path,
        }
    }

    fn write(&self, offset: u64, data: &[u8]) {
        use std::os::unix::fs::FileExt;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.path)
            .unwrap();
        file.write_all_at(data, offset).unwrap();
    }

    fn read(&self, offset: usize, len: usize) -> Vec<u8> {
        std::fs::read(&self.path).unwrap()[offset..offset + len].to_vec()
    }
}

impl Drop for ShmObject {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn shm_parameters(region: &str, byte_size: u64, offset: Option<u64>) -> Parameters {
    let mut parameters = Parameters::new();
    parameters.insert(REGION_KEY.into(), ParameterValue::String(region.into()));
    parameters.insert(
        "shared_memory_byte_size".into(),
        ParameterValue::Uint(byte_size),
    );
    if let Some(offset) = offset {
        parameters.insert(
            "shared_memory_offset".into(),
            ParameterValue::Int(offset as i64),
        );
    }
    parameters
}

const REGION_KEY: &str = "shared_memory_region";

#[test]
fn register_status_unregister() {
    let object = ShmObject::new(64);
    let registry = SharedMemoryRegistry::default();
    registry.register("b", &object.key, 0, 64).unwrap();
    registry.register("a", &object.key, 16, 8).unwrap();
    let all = registry.status(None).unwrap();
    let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(
        registry.status(Some("a")).unwrap(),
        vec![RegionStatus {
            name: "a".into(),
            key: object.key.clone(),
            offset: 16,
            byte_size: 8,
        }]
    );
    registry.unregister("a").unwrap();
    registry.unregister("never registered").unwrap();
    let err = registry.status(Some("a")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    assert_eq!(
        err.message,
        "Unable to find system shared memory region: 'a'"
    );
    registry.unregister_all().unwrap();
    assert!(registry.status(None).unwrap().is_empty());
}

#[test]
fn register_errors_are_tritons() {
    let object = ShmObject::new(64);
    let registry = SharedMemoryRegistry::default();
    registry.register("r", &object.key, 0, 64).unwrap();
    let err = registry.register("r", &object.key, 0, 8).unwrap_err();
    assert_eq!(err.kind, ErrorKind::AlreadyExists);
    assert_eq!(err.message, "shared memory region 'r' already in manager");

    let err = registry
        .register("x", "/oxiserve_no_such_object", 0, 8)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Internal);
    assert!(
        err.message
            .starts_with("Unable to open shared memory region: '/oxiserve_no_such_object'"),
        "{err}"
    );
    for key in ["/../../etc/passwd", "a/b", "/", ".."] {
        let err = registry.register("x", key, 0, 8).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Internal, "{key}: {err}");
    }
    for (offset, byte_size) in [(0, 65), (64, 1), (60, 8), (0, 0), (u64::MAX, 2)] {
        let err = registry
            .register("x", &object.key, offset, byte_size)
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidArg, "{offset} {byte_size}");
        assert!(
            err.message
                .starts_with("failed to register shared memory region 'x': invalid args"),
            "{err}"
        );
    }
    assert_eq!(registry.status(None).unwrap().len(), 1);
}

#[test]
fn inputs_are_read_from_regions_and_outputs_written() {
    let object = ShmObject::new(4096 + 64);
    object.write(4096 + 4, &[1, 2, 3, 4, 5, 6, 7, 8]);
    let registry = SharedMemoryRegistry::default();
    // An offset that is not a multiple of the page size.
    registry.register("in", &object.key, 4096 + 4, 32).unwrap();
    registry
        .register("out", &object.key, 4096 + 40, 24)
        .unwrap();
    let mut input = Tensor::new("IN", DataType::Uint8, vec![4], bytes::Bytes::new());
    input.parameters = shm_parameters("in", 4, Some(2));
    input
        .parameters
        .insert("other".into(), ParameterValue::Bool(true));
    let mut request = InferRequest {
        inputs: vec![input],
        outputs: vec![RequestedOutput {
            name: "OUT".into(),
            parameters: shm_parameters("out", 8, Some(4)),
            ..Default::default()
        }],
        ..Default::default()
    };
    let held = registry.resolve(&mut request).unwrap();
    // The input's region, then the output's.
    let [input_region, output_region] = &held[..] else {
        panic!("{held:?}");
    };
    assert_eq!(input_region.output_name(), None);
    assert_eq!(&request.inputs[0].data[..], &[3, 4, 5, 6]);
    assert_eq!(
        request.inputs[0].parameters.keys().collect::<Vec<_>>(),
        ["other"]
    );
    let mut output = Tensor::new("OUT", DataType::Uint8, vec![3], vec![9, 8, 7].into());
    output_region.write(&mut output).unwrap();
    assert!(output.data.is_empty());
    assert_eq!(output.parameters, shm_parameters("out", 8, Some(4)));
    assert_eq!(object.read(4096 + 44, 4), [9, 8, 7, 0]);

    let mut big = Tensor::new("OUT", DataType::Uint8, vec![9], vec![0; 9].into());
    let err = output_region.write(&mut big).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Internal);
    assert_eq!(
        err.message,
        "shared memory size specified with the request for output 'OUT' (8 bytes) should be at \
         least 9 bytes to hold the results"
    );
}

/// A request holds every region it names, inputs' included, until what
/// `resolve` returned is dropped (its final response): unregistering one is
/// Triton's internal error meanwhile, and unregistering all of them leaves
/// exactly those.
#[test]
fn regions_in_use_are_not_unregistered() {
    let object = ShmObject::new(64);
    let registry = SharedMemoryRegistry::default();
    for name in ["in", "out", "idle", "also idle"] {
        registry.register(name, &object.key, 0, 32).unwrap();
    }
    let mut request = InferRequest {
        inputs: vec![Tensor {
            parameters: shm_parameters("in", 4, None),
            ..Tensor::new("IN", DataType::Uint8, vec![4], bytes::Bytes::new())
        }],
        outputs: vec![RequestedOutput {
            name: "OUT".into(),
            parameters: shm_parameters("out", 8, None),
            ..Default::default()
        }],
        ..Default::default()
    };
    let held = registry.resolve(&mut request).unwrap();
    assert_eq!(
        held.iter()
            .map(OutputRegion::output_name)
            .collect::<Vec<_>>(),
        [None, Some("OUT")]
    );
    for name in ["in", "out"] {
        let err = registry.unregister(name).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Internal);
        assert_eq!(
            err.message,
            format!("Cannot unregister shared memory region '{name}', it is currently in use.")
        );
    }
    let err = registry.unregister_all().unwrap_err();
    assert_eq!(err.kind, ErrorKind::Internal);
    assert_eq!(
        err.message,
        "Failed to unregister the following system shared memory regions: in ,out ,"
    );
    let left: Vec<String> = registry
        .status(None)
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(left, ["in", "out"]);

    // A copy (a cloned response path) holds the regions too.
    let copy = held.clone();
    drop(held);
    assert!(registry.unregister("in").is_err());
    // Writing into an output's region after an unregistration was refused.
    let mut output = Tensor::new("OUT", DataType::Uint8, vec![2], vec![5, 6].into());
    copy[1].write(&mut output).unwrap();
    assert_eq!(object.read(0, 2), [5, 6]);
    drop(copy);
    registry.unregister("in").unwrap();
    registry.unregister_all().unwrap();
    assert!(registry.status(None).unwrap().is_empty());

    // A request refused while resolving holds nothing.
    registry.register("r", &object.key, 0, 32).unwrap();
    let mut bad = InferRequest {
        inputs: vec![Tensor {
            parameters: shm_parameters("r", 4, None),
            ..Tensor::new("IN", DataType::Uint8, vec![4], bytes::Bytes::new())
        }],
        outputs: vec![RequestedOutput {
            name: "OUT".into(),
            parameters: shm_parameters("no such region", 8, None),
            ..Default::default()
        }],
        ..Default::default()
    };
    assert!(registry.resolve(&mut bad).is_err());
    registry.unregister("r").unwrap();
}

#[test]
fn cuda_regions_cannot_be_registered_without_gpus() {
    let object = ShmObject::new(64);
    let registry = SharedMemoryRegistry::default();
    let err = registry.cuda_register("c").unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArg);
    assert_eq!(
        err.message,
        "failed to register shared memory region: invalid args"
    );
    let err = registry.cuda_status(Some("c")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    assert_eq!(err.message, "Unable to find cuda shared memory region: 'c'");
    registry.cuda_status(None).unwrap();
    // CUDA and system regions share their names, as in Triton.
    registry.register("sys", &object.key, 0, 8).unwrap();
    let err = registry.cuda_register("sys").unwrap_err();
    assert_eq!(err.kind, ErrorKind::AlreadyExists);
    assert_eq!(err.message, "shared memory region 'sys' already in manager");
    let err = registry.cuda_status(Some("sys")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    assert_eq!(
        err.message,
        "The region named 'sys' is registered as system shared memory, not CUDA shared memory"
    );
}

#[test]
fn request_spans_are_checked() {
    let object = ShmObject::new(16);
    let registry = SharedMemoryRegistry::default();
    registry.register("r", &object.key, 0, 16).unwrap();
    let request = |parameters: Parameters| InferRequest {
        inputs: vec![Tensor {
            parameters,
            ..Tensor::new("IN", DataType::Fp32, vec![1], bytes::Bytes::new())
        }],
        ..Default::default()
    };
    let cases = [
        (
            shm_parameters("nope", 4, None),
            ErrorKind::NotFound,
            "Unable to find shared memory region: 'nope'",
        ),
        (
            shm_parameters("r", 4, Some(16)),
            ErrorKind::InvalidArg,
            "Invalid offset for shared memory region: 'r' (input 'IN'",
        ),
        (
            shm_parameters("r", 8, Some(12)),
            ErrorKind::InvalidArg,
            "Invalid offset + byte size for shared memory region: 'r' (input 'IN'",
        ),
        (
            shm_parameters("r", 0, None),
            ErrorKind::InvalidArg,
            "Invalid offset + byte size",
        ),
    ];
    for (parameters, kind, message) in cases {
        let err = registry.resolve(&mut request(parameters)).unwrap_err();
        assert_eq!(err.kind, kind, "{err}");
        assert!(err.message.starts_with(message), "{err}");
    }
    let mut bad = shm_parameters("r", 4, None);
    bad.insert(REGION_KEY.into(), ParameterValue::Int(3));
    let err = registry.resolve(&mut request(bad)).unwrap_err();
    assert!(err.message.contains("must be a string"), "{err}");

    let mut classified = InferRequest {
        outputs: vec![RequestedOutput {
            name: "OUT".into(),
            class_count: 2,
            parameters: shm_parameters("r", 4, None),
        }],
        ..Default::default()
    };
    let err = registry.resolve(&mut classified).unwrap_err();
    assert_eq!(
        err.message,
        "Output can't set both 'shared_memory_region' and 'classification'"
    );
}

#[test]
fn a_shrunk_object_is_an_error_not_a_crash() {
    let object = ShmObject::new(8192);
    let registry = SharedMemoryRegistry::default();
    registry.register("r", &object.key, 4096, 4096).unwrap();
    let mut request = InferRequest {
        inputs: vec![Tensor {
            parameters: shm_parameters("r", 8, Some(8)),
            ..Tensor::new("IN", DataType::Uint8, vec![8], bytes::Bytes::new())
        }],
        outputs: vec![RequestedOutput {
            name: "OUT".into(),
            parameters: shm_parameters("r", 8, Some(64)),
            ..Default::default()
        }],
        ..Default::default()
    };
    let held = registry.resolve(&mut request.clone()).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&object.path)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let err = registry.resolve(&mut request).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Internal);
    assert!(err.message.contains("is no longer backed"), "{err}");
    let mut output = Tensor::new("OUT", DataType::Uint8, vec![1], vec![1].into());
    let err = held[1].write(&mut output).unwrap_err();
    assert!(err.message.contains("is 4096 bytes now"), "{err}");
}

#[test]
fn an_object_shrinking_during_copies_never_crashes() {
    // With the region mapped, a copy racing the shrink touched pages past
    // the object's end and the process died of SIGBUS.
    const SIZE: u64 = 1 << 20;
    let object = ShmObject::new(SIZE);
    let registry = SharedMemoryRegistry::default();
    registry.register("r", &object.key, 0, SIZE).unwrap();
    let region = registry.lease("r").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let resizer = {
        let (path, stop) = (object.path.clone(), stop.clone());
        std::thread::spawn(move || {
            let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            while !stop.load(Ordering::Relaxed) {
                file.set_len(SIZE / 3).unwrap();
                file.set_len(SIZE).unwrap();
            }
        })
    };
    let mut failed = 0;
    for _ in 0..300 {
        match region.read(0, SIZE) {
            Ok(data) => assert_eq!(data.len() as u64, SIZE),
            Err(e) => {
                assert!(e.message.contains("is no longer backed"), "{e}");
                failed += 1;
            }
        }
        let _ = region.write(0, &vec![7; SIZE as usize]);
    }
    stop.store(true, Ordering::Relaxed);
    resizer.join().unwrap();
    eprintln!("{failed} of 300 copies met a shrunk object");
}

#[test]
fn a_symbolic_link_is_not_followed() {
    let target = tempfile::NamedTempFile::new().unwrap();
    target.as_file().set_len(64).unwrap();
    let name = format!("oxiserve_core_test_link_{}", std::process::id());
    let link = std::path::Path::new("/dev/shm").join(&name);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(target.path(), &link).unwrap();
    let registry = SharedMemoryRegistry::default();
    let err = registry
        .register("r", &format!("/{name}"), 0, 8)
        .unwrap_err();
    std::fs::remove_file(&link).unwrap();
    assert_eq!(err.kind, ErrorKind::Internal);
    assert!(err.message.contains("is a symbolic link"), "{err}");
    assert!(registry.status(None).unwrap().is_empty());
}

#[test]
fn regions_of_one_object_share_its_descriptor() {
    let object = ShmObject::new(64);
    let other = ShmObject::new(64);
    let registry = SharedMemoryRegistry::default();
    for i in 0..100 {
        registry
            .register(&format!("r{i}"), &object.key, 0, 8)
            .unwrap();
    }
    registry.register("other", &other.key, 0, 8).unwrap();
    let first = registry.lease("r0").unwrap();
    assert!((1..100).all(|i| first.same_object(&registry.lease(&format!("r{i}")).unwrap())));
    assert!(!first.same_object(&registry.lease("other").unwrap()));
}

#[test]
fn registrations_past_the_limit_are_refused() {
    let object = ShmObject::new(64);
    let registry = SharedMemoryRegistry::new(2);
    registry.register("a", &object.key, 0, 8).unwrap();
    registry.register("b", &object.key, 0, 8).unwrap();
    let err = registry.register("c", &object.key, 0, 8).unwrap_err();
    assert_eq!(err.kind, ErrorKind::ResourceExhausted);
    assert!(
        err.message.contains("--shared-memory-region-limit"),
        "{err}"
    );
    registry.unregister("a").unwrap();
    registry.register("c", &object.key, 0, 8).unwrap();
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A span is read iff it lies in its region, whatever the numbers,
        /// and what is read is that part of the object.
        #[test]
        fn spans_are_read_iff_they_fit_the_region(
            (region_offset, region_size) in (0u64..32).prop_flat_map(|o| (Just(o), 1u64..=64 - o)),
            offset in prop_oneof![0u64..80, any::<u64>()],
            byte_size in prop_oneof![0u64..80, any::<u64>()],
        ) {
            let object = ShmObject::new(64);
            let contents: Vec<u8> = (0..64).collect();
            object.write(0, &contents);
            let registry = SharedMemoryRegistry::default();
            registry.register("r", &object.key, region_offset, region_size).unwrap();
            let mut tensor = Tensor::new("IN", DataType::Uint8, vec![-1], bytes::Bytes::new());
            tensor.parameters = shm_parameters("r", byte_size, Some(offset));
            let mut request = InferRequest { inputs: vec![tensor], ..InferRequest::default() };
            let fits = byte_size > 0
                && offset.checked_add(byte_size).is_some_and(|end| end <= region_size);
            let result = registry.resolve(&mut request);
            prop_assert_eq!(result.is_ok(), fits, "{:?}", result.err());
            if fits {
                let start = (region_offset + offset) as usize;
                let expected = &contents[start..start + byte_size as usize];
                prop_assert_eq!(&request.inputs[0].data[..], expected);
            }
        }
    }
}
