//! Where each field of a parsed message was written.

use std::collections::BTreeMap;

use super::error::Position;

/// Where each field of the parsed message was written: field path -> position of the field NAME token.
///
/// Paths: top-level field `max_batch_size`; nested `dynamic_batching.max_queue_delay_microseconds`;
/// repeated message elements by index `input[0].dims`, `instance_group[1].kind`;
/// map entries by key `parameters["EXECUTION_ENV_PATH"].string_value`,
/// `ensemble_scheduling.step[0].input_map["INPUT0"]` (the path of the map entry itself points at
/// the entry's position); integer map keys are written bare (`priority_queue_policy[1]`).
/// For repeated scalars the path is the field (`input[0].dims`), pointing at its first occurrence.
/// An element written in list form (`input [ { ... } ]`) points at its opening brace.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    positions: BTreeMap<String, Position>,
}

impl SourceMap {
    /// The position recorded for exactly `path`.
    pub fn get(&self, path: &str) -> Option<Position> {
        self.positions.get(path).copied()
    }

    /// The position of `path` or of its nearest recorded ancestor (strip trailing ".x" / "[i]" segments until found).
    pub fn nearest(&self, path: &str) -> Option<Position> {
        let starts = segment_starts(path);
        std::iter::once(path.len())
            .chain(starts.into_iter().rev())
            .find_map(|end| self.get(&path[..end]))
    }

    /// Records `path` at `position` unless it was recorded before.
    pub(super) fn record(&mut self, path: String, position: Position) {
        self.positions.entry(path).or_insert(position);
    }

    /// Records a map entry parsed with its own source map `entry` (paths
    /// `key`, `value`, `value.x`, ...) under `entry_path`, replacing what an
    /// earlier entry with the same key recorded: the last entry wins.
    pub(super) fn record_map_entry(
        &mut self,
        entry_path: &str,
        position: Position,
        entry: SourceMap,
    ) {
        self.positions.retain(|path, _| {
            path.strip_prefix(entry_path)
                .is_none_or(|rest| !(rest.is_empty() || rest.starts_with(['.', '['])))
        });
        self.positions.insert(entry_path.to_owned(), position);
        for (path, position) in entry.positions {
            if let Some(rest) = path
                .strip_prefix("value")
                .filter(|rest| rest.starts_with('.'))
            {
                self.positions
                    .insert(format!("{entry_path}{rest}"), position);
            }
        }
    }
}

/// Byte offsets where the segments after the first start (at a `.` or `[`),
/// skipping quoted map keys, which may contain both.
fn segment_starts(path: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut in_quotes = false;
    let mut escaped = false;
    for (at, c) in path.char_indices() {
        if in_quotes {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_quotes = false,
                _ => {}
            }
        } else {
            match c {
                '.' | '[' if at > 0 => starts.push(at),
                '"' => in_quotes = true,
                _ => {}
            }
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32, column: u32) -> Position {
        Position { line, column }
    }

    #[test]
    fn first_record_wins() {
        let mut map = SourceMap::default();
        map.record("input[0].dims".to_owned(), at(3, 3));
        map.record("input[0].dims".to_owned(), at(3, 12));
        assert_eq!(map.get("input[0].dims"), Some(at(3, 3)));
        assert_eq!(map.get("input"), None);
    }

    #[test]
    fn nearest_strips_segments_until_found() {
        let mut map = SourceMap::default();
        map.record("input".to_owned(), at(2, 1));
        map.record("input[1]".to_owned(), at(5, 1));
        map.record("parameters[\"a.b[0]\"]".to_owned(), at(9, 1));
        assert_eq!(map.nearest("input[1].reshape.shape"), Some(at(5, 1)));
        assert_eq!(map.nearest("input[2].dims"), Some(at(2, 1)));
        assert_eq!(
            map.nearest("parameters[\"a.b[0]\"].string_value"),
            Some(at(9, 1))
        );
        assert_eq!(map.nearest("parameters[\"x\\\".y\"]"), None);
        assert_eq!(map.nearest("output[0].dims"), None);
        assert_eq!(map.nearest(""), None);
    }

    #[test]
    fn map_entry_replaces_an_earlier_entry_with_the_same_key() {
        let mut first = SourceMap::default();
        first.record("key".to_owned(), at(1, 14));
        first.record("value".to_owned(), at(1, 23));
        first.record("value.string_value".to_owned(), at(1, 31));
        let mut map = SourceMap::default();
        map.record("parameters[\"k\"]x".to_owned(), at(7, 1));
        map.record_map_entry("parameters[\"k\"]", at(1, 1), first);
        assert_eq!(map.get("parameters[\"k\"]"), Some(at(1, 1)));
        assert_eq!(map.get("parameters[\"k\"].string_value"), Some(at(1, 31)));
        assert_eq!(map.get("parameters[\"k\"].key"), None);

        map.record_map_entry("parameters[\"k\"]", at(2, 1), SourceMap::default());
        assert_eq!(map.get("parameters[\"k\"]"), Some(at(2, 1)));
        assert_eq!(map.get("parameters[\"k\"].string_value"), None);
        assert_eq!(map.get("parameters[\"k\"]x"), Some(at(7, 1)));
    }
}
