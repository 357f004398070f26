//! A finished trace as Triton mode writes it: per trace id, the records in
//! the order they came, as JSON objects.

use std::fmt::Write;

use crate::{clock::steady_ns, record::Record};

/// The trace's records as comma-separated JSON objects: grouped by trace
/// id, the ids newest first (the order Triton's map of per-id streams
/// gives), each id's records in the order they were made.
pub(crate) fn render(records: &[(u64, Record)]) -> String {
    let mut ids: Vec<u64> = Vec::new();
    for (id, _) in records {
        if !ids.contains(id) {
            ids.push(*id);
        }
    }
    let mut objects = Vec::with_capacity(records.len());
    for id in ids.iter().rev() {
        for (_, record) in records.iter().filter(|(of, _)| of == id) {
            objects.push(object(*id, record));
        }
    }
    objects.join(",")
}

fn object(id: u64, record: &Record) -> String {
    let mut out = String::with_capacity(96);
    match record {
        Record::Model {
            name,
            version,
            request_id,
            parent_id,
        } => {
            let _ = write!(
                out,
                r#"{{"id":{id},"model_name":{},"model_version":{version}"#,
                quoted(name)
            );
            if !request_id.is_empty() {
                let _ = write!(out, r#","request_id":{}"#, quoted(request_id));
            }
            if *parent_id != 0 {
                let _ = write!(out, r#","parent_id":{parent_id}"#);
            }
            out.push('}');
        }
        Record::Timestamp { activity, at } => {
            let _ = write!(
                out,
                r#"{{"id":{id},"timestamps":[{{"name":"{}","ns":{}}}]}}"#,
                activity.name(),
                steady_ns(*at)
            );
        }
        Record::Tensor { activity, tensor } => {
            let _ = write!(
                out,
                r#"{{"id":{id},"activity":"{}","tensor":{{"name":{},"data":{},"shape":"{}","dtype":"{}"}}}}"#,
                activity.name(),
                quoted(&tensor.name),
                quoted(&tensor.data),
                tensor.shape,
                tensor.dtype,
            );
        }
    }
    out
}

/// `text` as a JSON string.
fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::activity::Activity;

    #[test]
    fn records_group_by_id_newest_first() {
        let at = Instant::now();
        let stamp = |activity| Record::Timestamp { activity, at };
        let model = |name: &str, request_id: &str, parent_id| Record::Model {
            name: name.into(),
            version: 1,
            request_id: request_id.into(),
            parent_id,
        };
        let records = vec![
            (3, stamp(Activity::HttpRecvStart)),
            (3, model("ens", "r1", 0)),
            (4, model("step", "", 3)),
            (4, stamp(Activity::QueueStart)),
            (3, stamp(Activity::RequestEnd)),
        ];
        let ns = steady_ns(at);
        let expected = [
            r#"{"id":4,"model_name":"step","model_version":1,"parent_id":3}"#.to_string(),
            format!(r#"{{"id":4,"timestamps":[{{"name":"QUEUE_START","ns":{ns}}}]}}"#),
            format!(r#"{{"id":3,"timestamps":[{{"name":"HTTP_RECV_START","ns":{ns}}}]}}"#),
            r#"{"id":3,"model_name":"ens","model_version":1,"request_id":"r1"}"#.to_string(),
            format!(r#"{{"id":3,"timestamps":[{{"name":"REQUEST_END","ns":{ns}}}]}}"#),
        ]
        .join(",");
        assert_eq!(render(&records), expected);
    }
}
