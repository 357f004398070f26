//! The families backends registered (Python models' `pb_utils.MetricFamily`),
//! written among Triton's own families of the same type, as Triton's
//! registry lists them.

use oxiserve_backend::metrics::{FamilySnapshot, MetricKind, SampleValue};

use super::text::{Buckets, Kind, TextWriter};

/// Writes the families of `kind`, in registration order.
pub fn write(w: &mut TextWriter, families: &[FamilySnapshot], kind: MetricKind) {
    for family in families.iter().filter(|f| f.kind == kind) {
        let text_kind = match kind {
            MetricKind::Counter => Kind::Counter,
            MetricKind::Gauge => Kind::Gauge,
            MetricKind::Histogram => Kind::Histogram,
        };
        w.family(&family.name, &family.help, text_kind);
        for metric in &family.metrics {
            let labels: Vec<(&str, &str)> = metric
                .labels
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            match &metric.value {
                SampleValue::Number(value) => w.sample(&family.name, &labels, *value),
                SampleValue::Histogram {
                    bounds,
                    cumulative,
                    count,
                    sum,
                } => {
                    let buckets = Buckets {
                        bounds,
                        cumulative,
                        count: *count,
                        sum: *sum,
                    };
                    w.histogram(&family.name, &labels, buckets);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_backend::metrics::MetricSnapshot;

    use super::*;

    #[test]
    fn families_of_one_kind_print_as_triton_prints_them() {
        let families = [
            FamilySnapshot {
                name: "requests".into(),
                help: "Requests seen".into(),
                kind: MetricKind::Counter,
                metrics: vec![MetricSnapshot {
                    labels: vec![("a".into(), "x\"y".into()), ("b".into(), "2".into())],
                    value: SampleValue::Number(2023.0),
                }],
            },
            FamilySnapshot {
                name: "sizes".into(),
                help: String::new(),
                kind: MetricKind::Histogram,
                metrics: vec![MetricSnapshot {
                    labels: vec![],
                    value: SampleValue::Histogram {
                        bounds: vec![0.1, 1.0],
                        cumulative: vec![1, 1],
                        count: 3,
                        sum: 7.55,
                    },
                }],
            },
        ];
        let mut w = TextWriter::default();
        write(&mut w, &families, MetricKind::Counter);
        write(&mut w, &families, MetricKind::Gauge);
        write(&mut w, &families, MetricKind::Histogram);
        assert_eq!(
            w.finish(),
            "# HELP requests Requests seen\n\
             # TYPE requests counter\n\
             requests{a=\"x\\\"y\",b=\"2\"} 2023\n\
             # TYPE sizes histogram\n\
             sizes_count 3\n\
             sizes_sum 7.55\n\
             sizes_bucket{le=\"0.1\"} 1\n\
             sizes_bucket{le=\"1\"} 1\n\
             sizes_bucket{le=\"+Inf\"} 3\n"
        );
    }
}
