//! Names for people: natural order (`worker-2` before `worker-10`, `n9` before
//! `n10`), and the names nearest a misspelt one ("did you mean").
//!
//! Presentation only: the scheduler takes units and breaks ties in its own (byte)
//! order, which this never changes.

/// Compares two names in natural order: runs of ASCII digits compare as numbers
/// (`worker-2` < `worker-10`), everything else byte by byte; the order is total and
/// agrees with `==`. The core's comparator ([`gangpack::natural_cmp`], which the
/// explanations and the node table use), so every list of the command agrees with them.
///
/// ```
/// use gangpack_k8s::natural_cmp;
///
/// let mut pods = vec!["worker-10", "worker-2", "worker-1", "worker-100", "worker-0"];
/// pods.sort_by(|a, b| natural_cmp(a, b));
/// assert_eq!(pods, ["worker-0", "worker-1", "worker-2", "worker-10", "worker-100"]);
/// ```
pub use gangpack::natural_cmp;

/// Sorts names in natural order ([`natural_cmp`]).
pub fn natural_sort<S: AsRef<str>>(names: &mut [S]) {
    names.sort_by(|a, b| natural_cmp(a.as_ref(), b.as_ref()));
}

/// Levenshtein distance between two strings, in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The candidates nearest `wanted`, in natural order, at most `max`: those at the
/// smallest edit distance found, if it is within an edit distance of a third of `wanted`'s length (at least 2),
/// comparing whole `namespace/name`s, or names alone when `wanted` has no namespace
/// of its own (`traning` finds `ml/training`).
///
/// ```
/// use gangpack_k8s::closest_names;
///
/// let groups = ["ml/training", "ml/serving", "ops/trainer"];
/// assert_eq!(closest_names("ml/traning", groups, 3), ["ml/training"]);
/// assert_eq!(closest_names("trainin", groups, 3), ["ml/training"]);
/// assert_eq!(closest_names("ops/trainr", groups, 3), ["ops/trainer"]);
/// assert!(closest_names("ml/zzz", groups, 3).is_empty());
/// ```
pub fn closest_names<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    let limit = (wanted.chars().count() / 3).max(2);
    let bare = !wanted.contains('/');
    let mut near: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let whole = edit_distance(wanted, c);
            let d = match c.split_once('/') {
                Some((_, name)) if bare => whole.min(edit_distance(wanted, name)),
                _ => whole,
            };
            (d <= limit).then_some((d, c))
        })
        .collect();
    near.sort_by(|(d, a), (e, b)| d.cmp(e).then_with(|| natural_cmp(a, b)));
    near.dedup_by(|a, b| a.1 == b.1);
    let best = near.first().map_or(0, |(d, _)| *d);
    near.into_iter()
        .take_while(|(d, _)| *d == best)
        .take(max)
        .map(|(_, c)| c)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use super::{edit_distance, natural_cmp};

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("worker-1", "worker-1"), 0);
        assert_eq!(edit_distance("worker-1", "worker-10"), 1);
        assert_eq!(edit_distance("wroker-1", "worker-1"), 2);
        assert_eq!(edit_distance("traning", "training"), 1);
        assert_eq!(edit_distance("worker-O", "worker-0"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn numbers_compare_as_numbers() {
        let mut v = vec![
            "n10",
            "n2",
            "n1",
            "node-b",
            "node-a",
            "n9",
            "worker-100",
            "worker-10",
            "worker-9",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "n1",
                "n2",
                "n9",
                "n10",
                "node-a",
                "node-b",
                "worker-9",
                "worker-10",
                "worker-100"
            ]
        );
        // Several numbers: each in turn.
        assert_eq!(natural_cmp("rack-2/n10", "rack-10/n1"), Ordering::Less);
        assert_eq!(natural_cmp("gpu-1-2", "gpu-1-10"), Ordering::Less);
        // Numbers longer than any integer type.
        assert_eq!(
            natural_cmp("n99999999999999999999999", "n100000000000000000000000"),
            Ordering::Less
        );
    }

    #[test]
    fn the_order_is_total_and_agrees_with_equality() {
        let names = [
            "n01", "n1", "n001", "n1a", "n01b", "n", "n0", "n00", "a", "",
        ];
        for a in names {
            assert_eq!(natural_cmp(a, a), Ordering::Equal);
            for b in names {
                assert_eq!(natural_cmp(a, b), natural_cmp(b, a).reverse(), "{a} {b}");
                assert_eq!(natural_cmp(a, b) == Ordering::Equal, a == b, "{a} {b}");
                for c in names {
                    if natural_cmp(a, b).is_lt() && natural_cmp(b, c).is_lt() {
                        assert!(natural_cmp(a, c).is_lt(), "{a} {b} {c}");
                    }
                }
            }
        }
        // Equal but for leading zeros: byte order, as the playground's natural.js.
        assert_eq!(natural_cmp("n01", "n1"), Ordering::Less);
        assert_eq!(natural_cmp("n01b", "n1a"), Ordering::Greater);
    }
}
