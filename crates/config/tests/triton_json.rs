//! The JSON form of completed configurations equals what real Triton 2.51
//! returned from `GET /v2/models/{m}/config` for the same config.pbtxt files
//! (captured with ../shared/tools/real-triton.sh; see fixtures/triton_json).

use std::{fs, path::Path};

use oxiserve_config::{ModelFolder, complete_config, parse_config, to_json};
use serde_json::Value;

/// Numbers compare by value (`1` equals `1.0`), as a JSON client reads them.
fn normalize_numbers(value: &mut Value) {
    match value {
        Value::Number(n) => *value = serde_json::json!(n.as_f64().expect("finite number")),
        Value::Array(items) => items.iter_mut().for_each(normalize_numbers),
        Value::Object(map) => map.values_mut().for_each(normalize_numbers),
        _ => {}
    }
}

fn check(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/triton_json")
        .join(name);
    let config_path = dir.join("config.pbtxt");
    let text = fs::read_to_string(&config_path).unwrap();
    let parsed = parse_config(&text, &config_path).unwrap_or_else(|e| panic!("{e}"));
    let is_ensemble = parsed.config.platform == "ensemble";
    let folder = ModelFolder {
        name: name.to_string(),
        first_version: Some(if is_ensemble {
            Default::default()
        } else {
            [("model.py".to_string(), false)].into()
        }),
        gpus: vec![],
    };
    let config = complete_config(parsed.config, &folder).unwrap_or_else(|e| panic!("{e:?}"));
    let mut ours = to_json(&config);
    let mut triton: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("triton_2.51.json")).unwrap()).unwrap();
    normalize_numbers(&mut ours);
    normalize_numbers(&mut triton);
    if ours != triton {
        let mut diffs = Vec::new();
        diff("", &ours, &triton, &mut diffs);
        panic!("{name}: JSON differs from Triton's:\n{}", diffs.join("\n"));
    }
}

fn diff(path: &str, ours: &Value, triton: &Value, out: &mut Vec<String>) {
    match (ours, triton) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let p = format!("{path}.{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => diff(&p, x, y, out),
                    (x, y) => out.push(format!("{p}: ours {x:?}, triton {y:?}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), x, y, out);
            }
        }
        (x, y) if x != y => out.push(format!("{path}: ours {x}, triton {y}")),
        _ => {}
    }
}

#[test]
fn minimal_python_model() {
    check("minimal");
}

#[test]
fn rich_config_with_dynamic_batching_queue_policies_and_groups() {
    check("rich");
}

#[test]
fn sequence_batching_oldest_with_controls() {
    check("seq");
}

#[test]
fn sequence_batching_direct() {
    check("seqdirect");
}

#[test]
fn decoupled_with_latest_two() {
    check("decoupled");
}

#[test]
fn model_warmup_and_default_preferred_batch() {
    check("warm");
}

#[test]
fn ensemble() {
    check("ens");
}
