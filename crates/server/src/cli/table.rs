//! Triton's ASCII tables: the start-up options table and the renderer that
//! also draws the model and backend tables.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::options::ServerOptions;

/// Headers of the start-up options table.
pub const OPTIONS_TABLE_HEADERS: [&str; 2] = ["Option", "Value"];

/// Total width Triton's table printer shares among columns when its output
/// is not a terminal (the case for logs).
const TABLE_WIDTH: usize = 500;

/// Draws a table as Triton logs it:
///
/// ```text
/// +-------+---------+
/// | Model | Version |
/// +-------+---------+
/// | add   | 1       |
/// +-------+---------+
/// ```
///
/// Columns share 500 characters as Triton shares them; a cell longer than
/// its column continues on the next lines. Missing cells are blank. The
/// result ends with a newline and has no leading one (Triton logs one).
pub fn render_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let widths = column_widths(headers, rows);
    let border = widths.iter().fold("+".to_string(), |mut line, width| {
        line.push_str(&"-".repeat(width + 2));
        line.push('+');
        line
    }) + "\n";
    let mut table = border.clone();
    push_row(&mut table, headers, &widths);
    table.push_str(&border);
    for row in rows {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        push_row(&mut table, &cells, &widths);
    }
    table.push_str(&border);
    table
}

/// Triton's fair share: every column starts with an equal share; from the
/// narrowest column up, a column that needs less gives the rest to the
/// wider ones. Computed in `f32` like Triton, so widths match exactly.
fn column_widths(headers: &[&str], rows: &[Vec<String>]) -> Vec<usize> {
    let columns = headers.len();
    let longest: Vec<usize> = (0..columns)
        .map(|i| {
            let cells = rows.iter().filter_map(|row| row.get(i)).map(String::as_str);
            std::iter::once(headers[i])
                .chain(cells)
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let room = TABLE_WIDTH.saturating_sub(3 * columns + 1);
    let mut shares = vec![(room / columns.max(1)) as f32; columns];
    let mut order: Vec<usize> = (0..columns).collect();
    order.sort_by_key(|&i| longest[i]);
    for (position, &i) in order.iter().enumerate() {
        let need = longest[i] as f32;
        let wider = &order[position + 1..];
        if need < shares[i] {
            let excess = shares[i] - need;
            shares[i] = need;
            if wider.is_empty() {
                break;
            }
            for &j in wider {
                shares[j] += excess / wider.len() as f32;
            }
        }
    }
    shares
        .iter()
        .map(|&share| (share as usize).max(1))
        .collect()
}

/// Appends one record, wrapping long cells onto extra lines.
fn push_row(table: &mut String, cells: &[&str], widths: &[usize]) {
    let cells: Vec<Vec<char>> = (0..widths.len())
        .map(|i| {
            cells
                .get(i)
                .map_or_else(Vec::new, |cell| cell.chars().collect())
        })
        .collect();
    let lines = cells
        .iter()
        .zip(widths)
        .map(|(cell, width)| cell.len().div_ceil(*width))
        .max();
    for line in 0..lines.unwrap_or(0).max(1) {
        table.push('|');
        for (cell, &width) in cells.iter().zip(widths) {
            let start = (line * width).min(cell.len());
            let end = (start + width).min(cell.len());
            let piece: String = cell[start..end].iter().collect();
            let _ = write!(table, " {piece:<width$} |");
        }
        table.push('\n');
    }
}

impl ServerOptions {
    /// The rows of the options table Triton logs at start-up (headers
    /// [`OPTIONS_TABLE_HEADERS`]), in Triton's order. The CLI does not know
    /// the server's version and protocol extensions, so they are passed in.
    pub fn options_table(
        &self,
        server_version: &str,
        server_extensions: &[&str],
    ) -> Vec<(String, String)> {
        let (repository, memory) = (&self.repository, &self.memory);
        let bit = |yes: bool| u8::from(yes).to_string();
        let mut rows = Vec::new();
        let mut add = |name: &str, value: String| rows.push((name.to_string(), value));
        add("server_id", self.id.clone());
        add("server_version", server_version.to_string());
        add("server_extensions", server_extensions.join(" "));
        for (i, path) in repository.model_repository.iter().enumerate() {
            add(
                &format!("model_repository_path[{i}]"),
                path.display().to_string(),
            );
        }
        add(
            "model_control_mode",
            repository.model_control_mode.table_name().into(),
        );
        for (i, model) in repository.load_model.iter().enumerate() {
            add(&format!("startup_models_{i}"), model.clone());
        }
        add("strict_model_config", bit(repository.strict_model_config));
        add(
            "model_config_name",
            repository.model_config_name.clone().unwrap_or_default(),
        );
        add(
            "rate_limit",
            self.rate_limiter.rate_limit.table_name().into(),
        );
        let mut resources: Vec<_> = self.rate_limiter.rate_limit_resource.iter().collect();
        resources.sort_by_key(|r| (r.device.map_or(-1, i64::from), r.name.clone()));
        for (i, resource) in resources.iter().enumerate() {
            add(&format!("rate_limit_resource[{i}]"), resource.to_string());
        }
        add(
            "pinned_memory_pool_byte_size",
            memory.pinned_memory_pool_byte_size.to_string(),
        );
        let cuda_pools: BTreeMap<u32, u64> = (memory.cuda_memory_pool_byte_size.iter())
            .map(|pool| (pool.device, pool.value))
            .collect();
        for (device, bytes) in cuda_pools {
            add(
                &format!("cuda_memory_pool_byte_size{{{device}}}"),
                bytes.to_string(),
            );
        }
        let capability = format!("{:.1}", memory.min_supported_compute_capability);
        add("min_supported_compute_capability", capability);
        add("strict_readiness", bit(repository.strict_readiness));
        add("exit_timeout", self.exit_timeout_secs.to_string());
        add("cache_enabled", bit(self.cache.cache_enabled()));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|cell| cell.to_string()).collect()
    }

    #[test]
    fn renders_rows_between_borders() {
        let rows = [
            strings(&["add", "1", "READY"]),
            strings(&["identity_fp32", "12", "UNAVAILABLE: bad"]),
        ];
        let expected = "\
+---------------+---------+------------------+
| Model         | Version | Status           |
+---------------+---------+------------------+
| add           | 1       | READY            |
| identity_fp32 | 12      | UNAVAILABLE: bad |
+---------------+---------+------------------+
";
        assert_eq!(
            render_table(&["Model", "Version", "Status"], &rows),
            expected
        );
    }

    #[test]
    fn renders_an_empty_table_like_triton() {
        let expected = "\
+------------------+------+
| Repository Agent | Path |
+------------------+------+
+------------------+------+
";
        assert_eq!(render_table(&["Repository Agent", "Path"], &[]), expected);
    }

    #[test]
    fn blank_and_missing_cells_are_padded() {
        let expected = "\
+---+---+
| a | b |
+---+---+
|   |   |
| x |   |
+---+---+
";
        assert_eq!(
            render_table(&["a", "b"], &[strings(&["", ""]), strings(&["x"])]),
            expected
        );
    }

    #[test]
    fn long_cells_wrap_at_the_column_share() {
        // Two columns get 246 of the 493 characters each (Triton drops the odd
        // one); "Model" needs 5 and hands 241 to "Status": 487.
        let status = "x".repeat(600);
        let table = render_table(&["Model", "Status"], &[strings(&["m", &status])]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[3], format!("| m     | {} |", "x".repeat(487)));
        assert_eq!(
            lines[4],
            format!("|       | {}{} |", "x".repeat(113), " ".repeat(374))
        );
        assert_eq!(lines.len(), 6);
    }
}
