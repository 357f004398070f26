//! The Prometheus text exposition format (version 0.0.4), laid out as
//! Triton's prometheus-cpp prints it: `# HELP`, `# TYPE`, then one line per
//! sample with its labels sorted by name.

use std::fmt::Write;

/// A metric family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// Accumulates families and samples into the text of one scrape.
#[derive(Debug, Default)]
pub struct TextWriter {
    out: String,
}

impl TextWriter {
    /// Starts a family: its `# HELP` and `# TYPE` lines.
    pub fn family(&mut self, name: &str, help: &str, kind: Kind) {
        let _ = writeln!(self.out, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.out, "# TYPE {name} {}", kind.name());
    }

    /// One sample `name{labels} value`; labels are sorted by name.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.out.push_str(name);
        if !labels.is_empty() {
            let mut sorted = labels.to_vec();
            sorted.sort_by_key(|(label, _)| *label);
            self.out.push('{');
            for (i, (label, v)) in sorted.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{label}=\"{}\"", escape_value(v));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {}", format_value(value));
    }

    /// The text written so far.
    pub fn finish(self) -> String {
        self.out
    }
}

/// A sample value: integers without a fraction, `NaN`, `+Inf`, `-Inf`.
pub fn format_value(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else {
        // f64's Display is the shortest exact form and prints 3.0 as "3".
        value.to_string()
    }
}

fn escape_help(help: &str) -> String {
    help.replace('\\', "\\\\").replace('\n', "\\n")
}

fn escape_value(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_and_samples_render_as_triton_prints_them() {
        let mut w = TextWriter::default();
        w.family("nv_x", "Number of x, all sizes", Kind::Counter);
        w.sample(
            "nv_x",
            &[("version", "1"), ("reason", "OTHER"), ("model", "m")],
            3.0,
        );
        w.family(
            "nv_cpu_utilization",
            "CPU utilization rate [0.0 - 1.0]",
            Kind::Gauge,
        );
        w.sample("nv_cpu_utilization", &[], 0.5025125628140703);
        assert_eq!(
            w.finish(),
            "# HELP nv_x Number of x, all sizes\n\
             # TYPE nv_x counter\n\
             nv_x{model=\"m\",reason=\"OTHER\",version=\"1\"} 3\n\
             # HELP nv_cpu_utilization CPU utilization rate [0.0 - 1.0]\n\
             # TYPE nv_cpu_utilization gauge\n\
             nv_cpu_utilization 0.5025125628140703\n"
        );
    }

    #[test]
    fn values_and_labels_are_escaped() {
        assert_eq!(format_value(25276502016.0), "25276502016");
        assert_eq!(format_value(f64::INFINITY), "+Inf");
        assert_eq!(format_value(f64::NAN), "NaN");
        let mut w = TextWriter::default();
        w.family("h", "a\\b\nc", Kind::Histogram);
        w.sample("h_bucket", &[("model", "a\"b\\c\nd")], 1.0);
        assert_eq!(
            w.finish(),
            "# HELP h a\\\\b\\nc\n# TYPE h histogram\nh_bucket{model=\"a\\\"b\\\\c\\nd\"} 1\n"
        );
    }
}
