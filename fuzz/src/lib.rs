//! What the fuzz targets share: [`Input`], which reads a target's
//! structured input (numbers, strings, then the rest as bytes) from the
//! fuzzer's bytes. Each target's file says how it reads its input; the seed
//! corpora in `corpus/<target>/` are written that way. [`model`] is the
//! configuration the targets that validate requests check them against.

use std::sync::OnceLock;

use oxiserve_config::{ModelConfig, normalize, parse_config};

/// The fuzzer's bytes, read front to back. Reads past the end give zeros
/// (or fewer bytes), so that every input means something.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// Reads `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// The next `len` bytes, or fewer at the end.
    fn bytes(&mut self, len: usize) -> &'a [u8] {
        let (head, tail) = self.data.split_at(len.min(self.data.len()));
        self.data = tail;
        head
    }

    /// The next byte.
    pub fn u8(&mut self) -> u8 {
        self.array::<1>()[0]
    }

    /// The next 4 bytes, little-endian.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    /// The next 8 bytes, little-endian.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }

    /// A string: a length byte, then that many bytes (lossily UTF-8).
    pub fn string(&mut self) -> String {
        let len = usize::from(self.u8());
        String::from_utf8_lossy(self.bytes(len)).into_owned()
    }

    /// Everything not read yet.
    pub fn rest(self) -> &'a [u8] {
        self.data
    }

    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        let head = self.bytes(N);
        out[..head.len()].copy_from_slice(head);
        out
    }
}

/// The model the core's checks run against in the targets that validate
/// requests: a batching model with an INT32 input, an optional BYTES input
/// and an optional FP16 input with a `reshape`.
pub fn model() -> &'static ModelConfig {
    static MODEL: OnceLock<ModelConfig> = OnceLock::new();
    MODEL.get_or_init(|| {
        let text = r#"
            name: "model" backend: "identity" max_batch_size: 8
            input [
              { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] },
              { name: "TEXT" data_type: TYPE_STRING dims: [ -1 ] optional: true },
              { name: "IMAGE" data_type: TYPE_FP16 dims: [ 2, -1 ]
                reshape: { shape: [ -1, 2 ] } optional: true }
            ]
            output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]"#;
        let mut config = parse_config(text, "config.pbtxt".as_ref())
            .expect("the targets' model configuration parses")
            .config;
        normalize(&mut config, &[]);
        config
    })
}
