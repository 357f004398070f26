//! The Prometheus text exposition format (version 0.0.4), laid out as
//! Triton's prometheus-cpp prints it: `# HELP` (left out when empty),
//! `# TYPE`, then one line per sample with its labels sorted by name; a
//! histogram's `le` and a summary's `quantile` come last, after `_count`
//! and `_sum`. Values print as C's `%.16g` does.

use std::fmt::Write;

/// A metric family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
    Summary,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
            Kind::Summary => "summary",
        }
    }
}

/// A histogram's values: upper bounds (without `+Inf`), the cumulative
/// count at each, the number and the sum of the observations.
#[derive(Debug, Clone, Copy)]
pub struct Buckets<'a> {
    pub bounds: &'a [f64],
    pub cumulative: &'a [u64],
    pub count: u64,
    pub sum: f64,
}

/// A summary's values: `(quantile, estimate)` pairs, the number and the sum
/// of the observations.
#[derive(Debug, Clone, Copy)]
pub struct Quantiles<'a> {
    pub estimates: &'a [(f64, f64)],
    pub count: u64,
    pub sum: f64,
}

/// Accumulates families and samples into the text of one scrape.
#[derive(Debug, Default)]
pub struct TextWriter {
    out: String,
}

impl TextWriter {
    /// Starts a family: its `# HELP` (when `help` is not empty) and `# TYPE` lines.
    pub fn family(&mut self, name: &str, help: &str, kind: Kind) {
        if !help.is_empty() {
            let _ = writeln!(self.out, "# HELP {name} {}", escape_help(help));
        }
        let _ = writeln!(self.out, "# TYPE {name} {}", kind.name());
    }

    /// One sample `name{labels} value`; labels are sorted by name.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.head(name, labels, None);
        let _ = writeln!(self.out, "{}", format_value(value));
    }

    /// A histogram's `_count`, `_sum` and cumulative `_bucket` samples.
    pub fn histogram(&mut self, name: &str, labels: &[(&str, &str)], buckets: Buckets<'_>) {
        self.totals(name, labels, buckets.count, buckets.sum);
        let bucket = format!("{name}_bucket");
        for (bound, count) in buckets.bounds.iter().zip(buckets.cumulative) {
            self.head(&bucket, labels, Some(("le", &format_value(*bound))));
            let _ = writeln!(self.out, "{count}");
        }
        self.head(&bucket, labels, Some(("le", "+Inf")));
        let _ = writeln!(self.out, "{}", buckets.count);
    }

    /// A summary's `_count`, `_sum` and one sample per quantile.
    pub fn summary(&mut self, name: &str, labels: &[(&str, &str)], quantiles: Quantiles<'_>) {
        self.totals(name, labels, quantiles.count, quantiles.sum);
        for (quantile, estimate) in quantiles.estimates {
            self.head(name, labels, Some(("quantile", &format_value(*quantile))));
            let _ = writeln!(self.out, "{}", format_value(*estimate));
        }
    }

    /// The text written so far.
    pub fn finish(self) -> String {
        self.out
    }

    fn totals(&mut self, name: &str, labels: &[(&str, &str)], count: u64, sum: f64) {
        self.head(&format!("{name}_count"), labels, None);
        let _ = writeln!(self.out, "{count}");
        self.sample(&format!("{name}_sum"), labels, sum);
    }

    /// `name{labels,extra} ` with the labels sorted and `extra` last.
    fn head(&mut self, name: &str, labels: &[(&str, &str)], extra: Option<(&str, &str)>) {
        self.out.push_str(name);
        if !labels.is_empty() || extra.is_some() {
            let mut sorted = labels.to_vec();
            sorted.sort_by_key(|(label, _)| *label);
            self.out.push('{');
            for (i, (label, v)) in sorted.iter().chain(&extra).enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{label}=\"{}\"", escape_value(v));
            }
            self.out.push('}');
        }
        self.out.push(' ');
    }
}

/// A sample value as prometheus-cpp prints it (C's `%.16g`): `Nan`, `+Inf`,
/// `-Inf`, integers without a fraction, exponents past 16 digits.
pub fn format_value(value: f64) -> String {
    if value.is_nan() {
        return "Nan".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    const DIGITS: i32 = 16;
    // 16 significant digits, in scientific form: "d.ddd...e<exp>".
    let scientific = format!("{:.*e}", DIGITS as usize - 1, value);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..DIGITS).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            trim_fraction(mantissa),
            exponent.unsigned_abs()
        )
    } else {
        let decimals = (DIGITS - 1 - exponent) as usize;
        trim_fraction(&format!("{value:.decimals$}")).to_string()
    }
}

/// `1.2500` -> `1.25`, `3.000` -> `3`.
fn trim_fraction(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
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
        w.family("no_help", "", Kind::Gauge);
        assert_eq!(
            w.finish(),
            "# HELP nv_x Number of x, all sizes\n\
             # TYPE nv_x counter\n\
             nv_x{model=\"m\",reason=\"OTHER\",version=\"1\"} 3\n\
             # HELP nv_cpu_utilization CPU utilization rate [0.0 - 1.0]\n\
             # TYPE nv_cpu_utilization gauge\n\
             nv_cpu_utilization 0.5025125628140703\n\
             # TYPE no_help gauge\n"
        );
    }

    #[test]
    fn values_print_as_percent_16g() {
        for (value, text) in [
            (25276502016.0, "25276502016"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::NAN, "Nan"),
            (-0.0, "-0"),
            (0.1 + 0.2, "0.3"),
            (1.0 / 3.0, "0.3333333333333333"),
            (123456789012345678.0, "1.234567890123457e+17"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000"),
            (9007199254740992.0, "9007199254740992"),
            (1e-7, "1e-07"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (123456.7, "123456.7"),
            (-2.5, "-2.5"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
        ] {
            assert_eq!(format_value(value), text, "{value:?}");
        }
    }

    #[test]
    fn histograms_and_summaries_put_le_and_quantile_last() {
        let mut w = TextWriter::default();
        let labels = [("version", "1"), ("model", "m")];
        let buckets = Buckets {
            bounds: &[0.1, 2.5],
            cumulative: &[1, 2],
            count: 3,
            sum: 5.3,
        };
        w.histogram("h", &labels, buckets);
        let quantiles = Quantiles {
            estimates: &[(0.5, 345.0), (0.999, f64::NAN)],
            count: 2,
            sum: 20218.0,
        };
        w.summary("s", &labels, quantiles);
        assert_eq!(
            w.finish(),
            "h_count{model=\"m\",version=\"1\"} 3\n\
             h_sum{model=\"m\",version=\"1\"} 5.3\n\
             h_bucket{model=\"m\",version=\"1\",le=\"0.1\"} 1\n\
             h_bucket{model=\"m\",version=\"1\",le=\"2.5\"} 2\n\
             h_bucket{model=\"m\",version=\"1\",le=\"+Inf\"} 3\n\
             s_count{model=\"m\",version=\"1\"} 2\n\
             s_sum{model=\"m\",version=\"1\"} 20218\n\
             s{model=\"m\",version=\"1\",quantile=\"0.5\"} 345\n\
             s{model=\"m\",version=\"1\",quantile=\"0.999\"} Nan\n"
        );
        let mut w = TextWriter::default();
        let empty = Buckets {
            bounds: &[],
            cumulative: &[],
            count: 1,
            sum: 3.0,
        };
        w.histogram("h", &[], empty);
        assert_eq!(w.finish(), "h_count 1\nh_sum 3\nh_bucket{le=\"+Inf\"} 1\n");
    }

    #[test]
    fn labels_are_escaped() {
        let mut w = TextWriter::default();
        w.family("h", "a\\b\nc", Kind::Histogram);
        w.sample("h_bucket", &[("model", "a\"b\\c\nd")], 1.0);
        assert_eq!(
            w.finish(),
            "# HELP h a\\\\b\\nc\n# TYPE h histogram\nh_bucket{model=\"a\\\"b\\\\c\\nd\"} 1\n"
        );
    }
}
