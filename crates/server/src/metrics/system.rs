//! CPU utilization and memory from /proc, computed as Triton computes them:
//! utilization is busy / (busy + idle) jiffies between two polls of
//! `/proc/stat`; used memory is `MemTotal - MemAvailable` of `/proc/meminfo`.

use parking_lot::Mutex;

use super::text::{Kind, TextWriter};

/// The aggregate `cpu` line of `/proc/stat`, in jiffies.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    busy: u64,
    idle: u64,
}

impl CpuTimes {
    /// Parses the first line of `/proc/stat`.
    pub fn parse(stat: &str) -> Option<Self> {
        let line = stat.lines().next()?.strip_prefix("cpu ")?;
        let v: Vec<u64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        // user nice system idle iowait irq softirq steal [guest guest_nice]
        let field = |i: usize| v.get(i).copied().unwrap_or(0);
        if v.len() < 4 {
            return None;
        }
        Some(Self {
            busy: field(0) + field(1) + field(2) + field(5) + field(6) + field(7),
            idle: field(3) + field(4),
        })
    }

    /// The busy fraction [0.0, 1.0] since `earlier`; 0 when no time passed.
    pub fn utilization_since(&self, earlier: &CpuTimes) -> f64 {
        let busy = self.busy.saturating_sub(earlier.busy);
        let idle = self.idle.saturating_sub(earlier.idle);
        if busy + idle == 0 {
            return 0.0;
        }
        busy as f64 / (busy + idle) as f64
    }
}

/// `(total, used)` bytes from `/proc/meminfo`.
pub fn parse_meminfo(meminfo: &str) -> Option<(u64, u64)> {
    let kib = |key: &str| {
        meminfo.lines().find_map(|line| {
            let rest = line.strip_prefix(key)?.strip_prefix(':')?;
            rest.split_whitespace().next()?.parse::<u64>().ok()
        })
    };
    let total = kib("MemTotal")? * 1024;
    let available = kib("MemAvailable")? * 1024;
    (available <= total).then(|| (total, total - available))
}

/// The latest CPU and memory readings, refreshed by [`SystemGauges::poll`].
#[derive(Debug, Default)]
pub struct SystemGauges {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    last_cpu: Option<CpuTimes>,
    utilization: f64,
    memory_total: u64,
    memory_used: u64,
}

impl SystemGauges {
    /// Reads /proc and updates the readings; a reading that fails shows 0.
    pub fn poll(&self) {
        let cpu = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| CpuTimes::parse(&s));
        let memory = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| parse_meminfo(&s));
        self.update(cpu, memory);
    }

    fn update(&self, cpu: Option<CpuTimes>, memory: Option<(u64, u64)>) {
        let mut state = self.state.lock();
        state.utilization = match (cpu, state.last_cpu) {
            (Some(now), Some(before)) => now.utilization_since(&before),
            _ => 0.0,
        };
        if cpu.is_some() {
            state.last_cpu = cpu;
        }
        (state.memory_total, state.memory_used) = memory.unwrap_or_default();
    }

    /// Writes Triton's three CPU families.
    pub fn write(&self, w: &mut TextWriter) {
        let state = self.state.lock();
        let gauges = [
            (
                "nv_cpu_utilization",
                "CPU utilization rate [0.0 - 1.0]",
                state.utilization,
            ),
            (
                "nv_cpu_memory_total_bytes",
                "CPU total memory (RAM), in bytes",
                state.memory_total as f64,
            ),
            (
                "nv_cpu_memory_used_bytes",
                "CPU used memory (RAM), in bytes",
                state.memory_used as f64,
            ),
        ];
        for (name, help, value) in gauges {
            w.family(name, help, Kind::Gauge);
            w.sample(name, &[], value);
        }
    }
}

/// Writes Triton's two pinned memory pool families, in Triton's place (after
/// the per-model families, before the CPU ones, whatever
/// `--allow-cpu-metrics` says). Nothing here allocates pinned memory: the
/// pool is never used, and its total is the size asked for, as Triton
/// reports it on a machine without GPUs (0 with
/// `--pinned-memory-pool-byte-size=0`).
pub fn write_pinned_memory(w: &mut TextWriter, pool_bytes: u64) {
    let gauges = [
        (
            "nv_pinned_memory_pool_total_bytes",
            "Pinned memory pool total memory size, in bytes",
            pool_bytes,
        ),
        (
            "nv_pinned_memory_pool_used_bytes",
            "Pinned memory pool used memory size, in bytes",
            0,
        ),
    ];
    for (name, help, value) in gauges {
        w.family(name, help, Kind::Gauge);
        w.sample(name, &[], value as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 10 50 800 40 5 5 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n";

    #[test]
    fn cpu_times_split_busy_and_idle_as_triton_does() {
        let before = CpuTimes::parse(STAT).unwrap();
        assert_eq!((before.busy, before.idle), (170, 840));
        let after = CpuTimes::parse("cpu  150 10 100 850 40 5 5 0 0 0\n").unwrap();
        assert_eq!(after.utilization_since(&before), 100.0 / 150.0);
        assert_eq!(before.utilization_since(&before), 0.0);
        assert_eq!(CpuTimes::parse("cpu0 1 2 3 4\n"), None);
        assert_eq!(CpuTimes::parse("cpu  1 x 3 4\n"), None);
    }

    #[test]
    fn memory_used_is_total_minus_available() {
        let meminfo =
            "MemTotal:       24684084 kB\nMemFree:  100 kB\nMemAvailable:   23725576 kB\n";
        assert_eq!(
            parse_meminfo(meminfo),
            Some((24684084 * 1024, (24684084 - 23725576) * 1024))
        );
        assert_eq!(parse_meminfo("MemTotal: 10 kB\n"), None);
        assert_eq!(
            parse_meminfo("MemTotal: 10 kB\nMemAvailable: 11 kB\n"),
            None
        );
    }

    #[test]
    fn the_pinned_pool_is_the_size_asked_for_and_unused() {
        let mut w = TextWriter::default();
        write_pinned_memory(&mut w, 268_435_456);
        assert_eq!(
            w.finish(),
            "# HELP nv_pinned_memory_pool_total_bytes Pinned memory pool total memory size, in \
             bytes\n# TYPE nv_pinned_memory_pool_total_bytes gauge\n\
             nv_pinned_memory_pool_total_bytes 268435456\n\
             # HELP nv_pinned_memory_pool_used_bytes Pinned memory pool used memory size, in \
             bytes\n# TYPE nv_pinned_memory_pool_used_bytes gauge\n\
             nv_pinned_memory_pool_used_bytes 0\n"
        );
    }

    #[test]
    fn utilization_needs_two_polls() {
        let gauges = SystemGauges::default();
        let first = CpuTimes::parse(STAT);
        gauges.update(first, Some((1000, 400)));
        let mut w = TextWriter::default();
        gauges.write(&mut w);
        let text = w.finish();
        assert!(text.contains("\nnv_cpu_utilization 0\n"), "{text}");
        assert!(text.contains("\nnv_cpu_memory_used_bytes 400\n"), "{text}");
        gauges.update(CpuTimes::parse("cpu  200 10 50 900 40 5 5 0 0 0\n"), None);
        let mut w = TextWriter::default();
        gauges.write(&mut w);
        let text = w.finish();
        assert!(text.contains("\nnv_cpu_utilization 0.5\n"), "{text}");
        assert!(text.contains("\nnv_cpu_memory_total_bytes 0\n"), "{text}");
    }
}
