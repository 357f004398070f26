//! "Did you mean" hints for misspelled names: fields, enum values, platforms,
//! models and tensors.

/// Up to this many valid names are listed when none is close to the typo.
const MAX_LISTED: usize = 16;

/// Jaro-Winkler similarity above which a name counts as close however many
/// edits apart (a truncated name: `max_batch` for `max_batch_size`).
const MIN_SIMILARITY: f64 = 0.9;

/// The candidate closest to `name` when it is close enough to be a likely typo.
///
/// Case is ignored. A candidate is close when its Damerau-Levenshtein distance
/// (a swap of two neighbouring chars counts once) is at most one edit per three
/// chars, or when its Jaro-Winkler similarity is high; the fewest edits win,
/// ties going to the higher similarity.
pub fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let name = name.to_lowercase();
    let allowed = (name.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|&candidate| {
            let lower = candidate.to_lowercase();
            let distance = strsim::damerau_levenshtein(&name, &lower);
            (candidate, distance, strsim::jaro_winkler(&name, &lower))
        })
        .filter(|&(_, distance, similarity)| distance <= allowed || similarity >= MIN_SIMILARITY)
        .min_by(|a, b| a.1.cmp(&b.1).then(b.2.total_cmp(&a.2)))
        .map(|(candidate, _, _)| candidate)
}

/// A hint to append to an error about the unknown `name`: `; did you mean 'x'?`,
/// else the valid `kind` (e.g. "fields") when there are few, else nothing.
pub(crate) fn hint(name: &str, candidates: &[&str], kind: &str) -> String {
    if let Some(best) = closest(name, candidates) {
        format!("; did you mean '{best}'?")
    } else if candidates.is_empty() {
        format!("; there are no {kind}")
    } else if candidates.len() <= MAX_LISTED {
        format!("; valid {kind}: {}", candidates.join(", "))
    } else {
        String::new()
    }
}

/// `"; did you mean 'x'?"` for the closest candidate, or nothing.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    closest(name, &candidates)
        .map(|c| format!("; did you mean '{c}'?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEP_FIELDS: &[&str] = &[
        "model_name",
        "model_version",
        "input_map",
        "output_map",
        "model_namespace",
    ];

    #[test]
    fn finds_typos_swaps_and_case() {
        assert_eq!(closest("imput_map", STEP_FIELDS), Some("input_map"));
        assert_eq!(closest("INPUT_MAP", STEP_FIELDS), Some("input_map"));
        assert_eq!(
            closest("TYPE_FP23", &["TYPE_FP16", "TYPE_FP32", "TYPE_FP64"]),
            Some("TYPE_FP32")
        );
        assert_eq!(
            closest("maxBatchSize", &["max_batch_size", "name"]),
            Some("max_batch_size")
        );
        assert_eq!(
            closest("max_batch", &["max_batch_size", "name"]),
            Some("max_batch_size")
        );
    }

    #[test]
    fn rejects_names_that_are_not_close() {
        assert_eq!(closest("kind", &["name", "count"]), None);
        assert_eq!(closest("banana", STEP_FIELDS), None);
    }

    #[test]
    fn hint_suggests_else_lists_few_names() {
        assert_eq!(
            hint("model_nmae", STEP_FIELDS, "fields"),
            "; did you mean 'model_name'?"
        );
        assert_eq!(
            hint("banana", &["a_b", "c_d"], "fields"),
            "; valid fields: a_b, c_d"
        );
        assert_eq!(hint("banana", &[], "fields"), "; there are no fields");
        let many: Vec<String> = (0..20).map(|i| format!("field_{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(hint("banana", &many, "fields"), "");
    }
}
