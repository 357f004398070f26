//! CPU time this process has used (Linux: /proc/self/stat), to state what
//! the tool itself costs per request.

/// User plus system CPU seconds of this process so far, if known.
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after ')'.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // USER_HZ is 100 on every Linux architecture.
    Some((utime + stime) as f64 / 100.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_time_grows() {
        let before = super::process_cpu_seconds().expect("Linux /proc");
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed().as_millis() < 50 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0 && super::process_cpu_seconds().unwrap() >= before);
    }
}
