//! Where to cut a batch of requests sorted by length into runs (`batch_padding:
//! "buckets"`): each run is padded to its own longest, so short requests stop
//! paying for long ones, at the price of one more model run per cut.

/// The end index of each run of `requests` (`(rows, length)` pairs sorted by
/// length, shortest first) that keeps the padded elements of all runs, plus
/// `run_cost` per run, smallest. A run of rows `i..j` costs its rows times
/// its longest length (the last one's) plus `run_cost`.
pub(crate) fn run_ends(requests: &[(u64, u64)], run_cost: u64) -> Vec<usize> {
    let n = requests.len();
    let mut rows_before = Vec::with_capacity(n + 1);
    rows_before.push(0u64);
    for (rows, _) in requests {
        rows_before.push(rows_before.last().copied().unwrap_or(0) + rows);
    }
    // best[j]: the least cost of the first j requests; start[j]: where the
    // last run of that choice starts.
    let mut best = vec![0u64; n + 1];
    let mut start = vec![0usize; n + 1];
    for j in 1..=n {
        let longest = requests[j - 1].1;
        let (cost, from) = (0..j)
            .map(|i| {
                let padded = (rows_before[j] - rows_before[i]).saturating_mul(longest);
                (best[i].saturating_add(padded).saturating_add(run_cost), i)
            })
            .min()
            .expect("j >= 1");
        best[j] = cost;
        start[j] = from;
    }
    let mut ends = Vec::new();
    let mut j = n;
    while j > 0 {
        ends.push(j);
        j = start[j];
    }
    ends.reverse();
    ends
}

#[cfg(test)]
mod tests {
    use super::run_ends;

    #[test]
    fn equal_lengths_make_one_run() {
        assert_eq!(run_ends(&[(1, 8); 6], 1), vec![6]);
    }

    #[test]
    fn no_requests_no_runs() {
        assert!(run_ends(&[], 32).is_empty());
    }

    #[test]
    fn a_few_long_requests_get_their_own_run() {
        // 6 rows of 10 and 2 of 100: one run pads 800 elements, two runs
        // pad 60 + 200 and pay one more run.
        let requests = [(1, 8), (1, 9), (2, 10), (2, 10), (1, 90), (1, 100)];
        assert_eq!(run_ends(&requests, 32), vec![4, 6]);
        assert_eq!(run_ends(&requests, 1000), vec![6]);
    }

    #[test]
    fn free_runs_split_at_every_length() {
        let requests = [(1, 2), (1, 2), (1, 5), (1, 7), (1, 7)];
        assert_eq!(run_ends(&requests, 0), vec![2, 3, 5]);
    }

    #[test]
    fn rows_weigh_a_request() {
        // One request of 30 rows at length 4 next to one row at 6: padding it
        // costs 60 elements, more than a run of 50.
        assert_eq!(run_ends(&[(30, 4), (1, 6)], 50), vec![1, 2]);
        assert_eq!(run_ends(&[(30, 4), (1, 6)], 70), vec![2]);
    }

    #[test]
    fn the_seed_sentences_split_where_the_tokens_jump() {
        // The embedding benchmark's 8 sentences (token counts), 4 of each in
        // a batch of 32: the short ones and the two long ones run apart.
        let mut requests: Vec<(u64, u64)> = [36, 45, 12, 8, 11, 15, 6, 2]
            .iter()
            .flat_map(|&t| [(1, t); 4])
            .collect();
        requests.sort_by_key(|r| r.1);
        let ends = run_ends(&requests, 32);
        assert!(ends.len() >= 2 && ends.contains(&24), "{ends:?}");
        assert_eq!(ends.last(), Some(&32));
    }
}
