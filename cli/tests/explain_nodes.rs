//! `gangpack explain UNIT --nodes`: every node for one pod, with the filter that
//! rejects it in the explanation's words, as text and as JSON.

mod common;

use common::run;

const DIR: &str = "cli/tests/fixtures/explanations";

/// Catches: a node missing from the table or out of natural order, a reason worded
/// apart from `explain`'s fact, JSON that is not the table's object, a `--nodes`
/// without a unit that does not fail cleanly.
#[test]
fn explain_nodes_lists_every_node_in_the_explanations_words() {
    let cluster = format!("{DIR}/example-driver.yaml");
    let scenario = format!("{DIR}/selector-nomatch.yaml");
    let files = ["-f", cluster.as_str(), "-f", scenario.as_str()];
    let mut args = vec!["explain"];
    args.extend(files);
    args.extend(["--pod", "default/train-0"]);
    let explain = run(&args);
    assert!(explain.err.is_empty(), "{}", explain.err);
    args.push("--nodes");
    let text = run(&args);
    assert_eq!(text.code, 0, "{}", text.err);
    assert!(
        text.out
            .starts_with("Pod default/train-0 (PodGroup default/train)\n"),
        "{}",
        text.out
    );
    let header = text.out.lines().nth(2).unwrap();
    assert!(header.starts_with("NODE"), "{header}");
    assert!(
        header.contains("RESULT") && header.contains("REASON"),
        "{header}"
    );
    // The selector's fact, as explain words it for gpu-a and gpu-b together, is each
    // node's reason for that node alone.
    let fact = "claim default/train-0-gpu-wp9ch, request gpu: on ";
    assert!(explain.out.contains(fact));
    for node in ["gpu-a", "gpu-b"] {
        let line = text
            .out
            .lines()
            .find(|l| l.starts_with(node))
            .unwrap_or_else(|| panic!("no row for {node}:\n{}", text.out));
        assert!(line.contains("DynamicResources"), "{line}");
        assert!(line.contains(&format!("{fact}1 node ({node}), ")), "{line}");
    }
    args.extend(["-o", "json"]);
    let json = run(&args);
    assert_eq!(json.code, 0, "{}", json.err);
    let table: serde_json::Value = serde_json::from_str(&json.out).unwrap();
    assert_eq!(table["pod"], "default/train-0");
    assert_eq!(table["group"], "default/train");
    let rows = table["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["node"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort_by(|a, b| gangpack::natural_cmp(a, b));
    assert_eq!(names, sorted);
    // Every node of the text table is a row of the JSON, in the same order.
    let text_names: Vec<&str> = text
        .out
        .lines()
        .skip(3)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(text_names, names);
    for r in rows {
        assert_eq!(r["feasible"], false, "{r}");
        assert!(
            r["reason"]
                .as_str()
                .unwrap()
                .contains(r["node"].as_str().unwrap())
                || r["filter"] == "OutOfScope"
        );
    }
    // Without a unit: a clean error, exit 2.
    let mut none = vec!["explain"];
    none.extend(files);
    none.push("--nodes");
    let bad = run(&none);
    assert_eq!(bad.code, 2);
    assert!(bad.err.contains("--nodes needs a unit"), "{}", bad.err);
    // A misspelt unit: explain's error, with its "did you mean".
    let mut typo = vec!["explain"];
    typo.extend(files);
    typo.extend(["--pod", "default/trian-0", "--nodes"]);
    let typo = run(&typo);
    assert_eq!(typo.code, 2, "{}", typo.err);
    assert!(
        typo.err
            .contains("Pod default/trian-0 not found in the input; did you mean default/train-0?"),
        "{}",
        typo.err
    );
}
