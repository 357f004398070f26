use std::path::Path;

use oxiserve_backend::{NoHost, testing::infer_once};
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelInput, ModelOutput, ModelParameter},
};
use oxiserve_types::{DataType, InferRequest, Tensor, encode_bytes_elements};
use tokenizers::{
    models::wordpiece::WordPiece, pre_tokenizers::bert::BertPreTokenizer,
    processors::bert::BertProcessing,
};

use super::*;

const TYPE_STRING: i32 = 13;
const TYPE_INT64: i32 = 9;
const TYPE_INT32: i32 = 8;

/// A BERT-style WordPiece tokenizer over a tiny vocabulary, saved as
/// `<dir>/1/tokenizer.json`.
fn write_tokenizer(dir: &Path) {
    let tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "##s"];
    std::fs::create_dir_all(dir.join("1")).unwrap();
    let vocab = dir.join("vocab.txt");
    std::fs::write(&vocab, tokens.join("\n")).unwrap();
    let model = WordPiece::from_file(vocab.to_str().unwrap())
        .unk_token("[UNK]".into())
        .build()
        .unwrap();
    let mut tokenizer = Tokenizer::new(model);
    tokenizer.with_pre_tokenizer(Some(BertPreTokenizer));
    tokenizer.with_post_processor(Some(BertProcessing::new(
        ("[SEP]".into(), 3),
        ("[CLS]".into(), 2),
    )));
    tokenizer.save(dir.join("1/tokenizer.json"), false).unwrap();
}

fn config(outputs: &[(&str, i32)], params: &[(&str, &str)]) -> ModelConfig {
    ModelConfig {
        name: "tok".into(),
        backend: "tokenizer".into(),
        max_batch_size: 8,
        input: vec![ModelInput {
            name: "TEXT".into(),
            data_type: TYPE_STRING,
            dims: vec![1],
            ..Default::default()
        }],
        output: outputs
            .iter()
            .map(|&(name, data_type)| ModelOutput {
                name: name.into(),
                data_type,
                dims: vec![-1],
                ..Default::default()
            })
            .collect(),
        parameters: params
            .iter()
            .map(|&(k, v)| {
                let value = ModelParameter {
                    string_value: v.into(),
                };
                (k.to_string(), value)
            })
            .collect(),
        ..Default::default()
    }
}

fn load(dir: &Path, config: ModelConfig) -> Result<Arc<dyn Model>> {
    TokenizerBackend.load(&ModelContext {
        name: config.name.clone(),
        version: 1,
        config: Arc::new(config),
        model_path: dir.to_path_buf(),
        version_path: dir.join("1"),
        host: Arc::new(NoHost),
    })
}

fn texts(texts: &[&[u8]]) -> InferRequest {
    InferRequest {
        inputs: vec![Tensor::new(
            "TEXT",
            DataType::Bytes,
            vec![texts.len() as i64, 1],
            encode_bytes_elements(texts),
        )],
        ..Default::default()
    }
}

fn int64s(tensor: &Tensor) -> Vec<i64> {
    assert_eq!(tensor.datatype, DataType::Int64);
    tensor
        .data
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

const ALL: &[(&str, i32)] = &[
    ("input_ids", TYPE_INT64),
    ("attention_mask", TYPE_INT64),
    ("token_type_ids", TYPE_INT64),
];

#[test]
fn rows_are_padded_to_the_longest_text() {
    let dir = tempfile::tempdir().unwrap();
    write_tokenizer(dir.path());
    let model = load(dir.path(), config(ALL, &[])).unwrap();
    let names = ["input_ids", "attention_mask", "token_type_ids"];
    let response = infer_once(model.as_ref(), texts(&[b"hello worlds", b"hello"]), &names).unwrap();
    let [ids, mask, types] = &response.outputs[..] else {
        panic!("three outputs expected")
    };
    assert_eq!(ids.shape, vec![2, 5]);
    assert_eq!(int64s(ids), [2, 4, 5, 6, 3, 2, 4, 3, 0, 0]);
    assert_eq!(int64s(mask), [1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
    assert_eq!(int64s(types), [0; 10]);
}

#[test]
fn fixed_padding_and_truncation_follow_max_length() {
    let dir = tempfile::tempdir().unwrap();
    write_tokenizer(dir.path());
    let params = [("max_length", "4"), ("padding", "max_length")];
    let model = load(dir.path(), config(&[("input_ids", TYPE_INT32)], &params)).unwrap();
    let response = infer_once(
        model.as_ref(),
        texts(&[b"hello worlds", b""]),
        &["input_ids"],
    )
    .unwrap();
    let ids = &response.outputs[0];
    assert_eq!(
        (ids.datatype, ids.shape.clone()),
        (DataType::Int32, vec![2, 4])
    );
    let values: Vec<i32> = ids
        .data
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(values, [2, 4, 5, 3, 2, 3, 0, 0]);
}

#[test]
fn invalid_utf8_is_refused_naming_the_element() {
    let dir = tempfile::tempdir().unwrap();
    write_tokenizer(dir.path());
    let model = load(dir.path(), config(ALL, &[])).unwrap();
    let error = infer_once(
        model.as_ref(),
        texts(&[b"hello", b"\xff\xfe"]),
        &["input_ids"],
    )
    .unwrap_err();
    assert!(
        error
            .message
            .contains("input 'TEXT' element 1 is not valid UTF-8"),
        "{}",
        error.message
    );
}

#[test]
fn bad_configurations_are_named() {
    let dir = tempfile::tempdir().unwrap();
    write_tokenizer(dir.path());
    let error = |c| load(dir.path(), c).err().unwrap().message;
    assert!(
        error(config(&[("ids", TYPE_INT64)], &[])).contains("output 'ids' is not one of input_ids")
    );
    assert!(
        error(config(ALL, &[("padding", "left")]))
            .contains("'padding' must be 'longest' or 'max_length'")
    );
    assert!(error(config(ALL, &[("max_length", "0")])).contains("'max_length' must be a positive"));
    let missing = tempfile::tempdir().unwrap();
    assert!(
        load(missing.path(), config(ALL, &[]))
            .err()
            .unwrap()
            .message
            .contains("1/tokenizer.json")
    );
    std::fs::write(dir.path().join("1/tokenizer.json"), b"{}").unwrap();
    assert!(error(config(ALL, &[])).contains("is not a tokenizer.json"));
}
