#![cfg(not(target_arch = "wasm32"))]
//! The core's layers point down only.
//!
//! `core/src` is one folder per layer, bottom up: `model`, `cel`, `cluster`, `allocate`,
//! `validate`, `gang`, `scheduler` (see `docs/ARCHITECTURE.md`). A layer may use the
//! layers before it in that list, except the validator, which is the independent judge
//! of the allocator's and the placer's decisions and so may use only `model`, `cel` and
//! `cluster`. This test reads every source file, finds every `crate::` and `super::`
//! path in its code (comments and string literals are skipped; a path to a name the crate
//! root re-exports, like `crate::Quantity`, counts as a use of the layer that defines
//! it), and fails with the file, line and path of each use that points up.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Every layer, bottom up, with the layers it may use.
const LAYERS: &[(&str, &[&str])] = &[
    ("model", &[]),
    ("cel", &["model"]),
    ("cluster", &["model", "cel"]),
    ("allocate", &["model", "cel", "cluster"]),
    ("validate", &["model", "cel", "cluster"]),
    ("gang", &["model", "cel", "cluster", "allocate", "validate"]),
    (
        "scheduler",
        &["model", "cel", "cluster", "allocate", "validate", "gang"],
    ),
    (
        "testing",
        &[
            "model",
            "cel",
            "cluster",
            "allocate",
            "validate",
            "gang",
            "scheduler",
        ],
    ),
];

/// Root modules every layer may use: they belong to no layer.
const SHARED: &[&str] = &["alloc_prelude"];

/// One use of a module of another layer.
#[derive(Debug, PartialEq, Eq)]
struct Use {
    line: usize,
    /// The path as written, e.g. `crate::gang::placer::Gang`.
    path: String,
    /// The module it names at the crate root (`gang`), or the root name (`Quantity`).
    root: String,
}

// --------------------------------------------------------------------- lexing

/// `src` with comments, string and character literals blanked out (newlines kept, so
/// line numbers stay right).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend(bytes.iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }));
    };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, &b[i..end]);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            let mut j = i;
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &b[i..j.min(b.len())]);
            i = j.min(b.len());
        } else if let Some(end) = raw_string_end(b, i) {
            blank(&mut out, &b[i..end]);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            blank(&mut out, &b[i..end]);
            i = end;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}'), not a lifetime ('a).
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p + 1)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 3)
            } else {
                None
            };
            if let Some(end) = end {
                blank(&mut out, &b[i..end]);
                i = end;
            } else {
                out.push(b[i]);
                i += 1;
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8 (only ASCII is replaced)")
}

/// The end of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) starting at `i`.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let body = j + 1;
    let end = b[body..]
        .windows(close.len())
        .position(|w| w == close.as_slice())
        .map_or(b.len(), |p| body + p + close.len());
    Some(end)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Other,
}

/// Identifiers, `::`, `{`, `}` and `,`, each with its line; everything else is `Other`.
fn tokens(code: &str) -> Vec<(usize, Tok)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((line, Tok::Ident(code[start..i].to_owned())));
        } else if b[i..].starts_with(b"::") {
            out.push((line, Tok::PathSep));
            i += 2;
        } else {
            out.push((
                line,
                match c {
                    b'{' => Tok::Open,
                    b'}' => Tok::Close,
                    b',' => Tok::Comma,
                    _ => Tok::Other,
                },
            ));
            i += 1;
        }
    }
    out
}

// --------------------------------------------------------------------- paths

/// Every path that starts with `crate::` or `super::` in `code`, use trees expanded
/// (`crate::{a::X, b::{Y, Z}}` gives `crate::a::X`, `crate::b::Y`, `crate::b::Z`), with
/// the line each starts on.
fn paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let toks = tokens(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let (line, ref t) = toks[i];
        let starts = matches!(t, Tok::Ident(s) if s == "crate" || s == "super")
            && (i == 0 || toks[i - 1].1 != Tok::PathSep);
        if starts {
            let mut found = Vec::new();
            let end = tree(&toks, i, Vec::new(), &mut found);
            out.extend(found.into_iter().map(|p| (line, p)));
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// Reads one path (or use tree) starting at `toks[i]` with `prefix` before it, pushing
/// every complete path to `out`; returns the index just past it.
fn tree(
    toks: &[(usize, Tok)],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        match toks.get(i).map(|t| &t.1) {
            Some(Tok::Ident(s)) => {
                prefix.push(s.clone());
                i += 1;
                if toks.get(i).map(|t| &t.1) == Some(&Tok::PathSep) {
                    i += 1;
                    continue;
                }
                out.push(prefix);
                return i;
            }
            Some(Tok::Open) => {
                i += 1;
                loop {
                    match toks.get(i).map(|t| &t.1) {
                        Some(Tok::Close) => return i + 1,
                        Some(Tok::Comma) => i += 1,
                        Some(Tok::Ident(_) | Tok::Open) => i = tree(toks, i, prefix.clone(), out),
                        // `*` (a glob) and anything unexpected end this element.
                        Some(_) => {
                            out.push(prefix.clone());
                            i += 1;
                        }
                        None => return i,
                    }
                }
            }
            _ => {
                if !prefix.is_empty() {
                    out.push(prefix);
                }
                return i;
            }
        }
    }
}

/// The module path of a source file below `src`: `cluster/nodes.rs` is
/// `["cluster", "nodes"]`, `cluster/mod.rs` is `["cluster"]`, `lib.rs` is `[]`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap_or_default();
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_owned());
    }
    parts
}

/// What a path names at the crate root: the first segment after `crate`, or after the
/// `super`s climb out of `module`. `None` when it stays inside the file's own top-level
/// module.
fn root_of(module: &[String], path: &[String]) -> Option<String> {
    let (first, rest) = path.split_first()?;
    if first == "crate" {
        return rest.first().cloned();
    }
    let mut at = module.to_vec();
    let mut rest = path;
    while rest.first().is_some_and(|s| s == "super") {
        at.pop()?;
        rest = &rest[1..];
    }
    if at.is_empty() {
        rest.first().cloned()
    } else {
        None
    }
}

/// Every use in `src` (a file at module path `module`) of something at the crate root
/// outside the file's own layer.
fn uses(module: &[String], src: &str) -> Vec<Use> {
    let own = module.first();
    paths(&code_only(src))
        .into_iter()
        .filter_map(|(line, path)| {
            let root = root_of(module, &path)?;
            (Some(&root) != own).then(|| Use {
                line,
                path: path.join("::"),
                root,
            })
        })
        .collect()
}

// --------------------------------------------------------------------- the crate root

/// The layer of every name `lib.rs` re-exports (`Quantity` → `model`), of the layer
/// modules themselves and of the public modules defined in `lib.rs` (`limits`).
fn root_names(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for &(layer, _) in LAYERS {
        names.insert(layer.to_owned(), layer.to_owned());
    }
    let code = code_only(lib);
    let toks = tokens(&code);
    // `pub use <layer>::…::{names};` at the root.
    for w in 0..toks.len() {
        let is_use = matches!(&toks[w].1, Tok::Ident(s) if s == "use")
            && w > 0
            && matches!(&toks[w - 1].1, Tok::Ident(s) if s == "pub");
        if !is_use {
            continue;
        }
        let mut found = Vec::new();
        tree(&toks, w + 1, Vec::new(), &mut found);
        for path in found {
            let (Some(first), Some(last)) = (path.first(), path.last()) else {
                continue;
            };
            let layer = if first == "crate" {
                path.get(1)
            } else {
                Some(first)
            };
            if let Some(layer) = layer.filter(|l| LAYERS.iter().any(|(n, _)| n == l)) {
                names.entry(last.clone()).or_insert_with(|| layer.clone());
            }
        }
    }
    // `pub mod limits { pub use crate::model::…; }`: a module of re-exports belongs to
    // the highest layer it re-exports from.
    for (module, body) in inline_modules(&code) {
        let mut found = Vec::new();
        for (_, path) in paths(&body) {
            if let Some(layer) = path.get(1) {
                found.push(layer.clone());
            }
        }
        let highest = LAYERS
            .iter()
            .rev()
            .find(|(n, _)| found.iter().any(|f| f == n))
            .map(|(n, _)| (*n).to_owned());
        if let Some(layer) = highest {
            names.insert(module, layer);
        }
    }
    names
}

/// The `mod name { … }` blocks of `code`, with their bodies.
fn inline_modules(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("mod ") {
        let after = &rest[at + 4..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let tail = after[name.len()..].trim_start();
        if !name.is_empty() && tail.starts_with('{') {
            let open = after.len() - tail.len();
            let mut depth = 0;
            let mut end = open;
            for (k, c) in after[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + k;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            out.push((name, after[open + 1..end].to_owned()));
            rest = &after[end..];
        } else {
            rest = after;
        }
    }
    out
}

// --------------------------------------------------------------------- the check

/// The layer rule broken by `u` in a file of `layer`, if any.
fn violation(layer: &str, u: &Use, names: &BTreeMap<String, String>) -> Option<String> {
    if SHARED.contains(&u.root.as_str()) {
        return None;
    }
    let allowed = LAYERS.iter().find(|(n, _)| *n == layer)?.1;
    match names.get(&u.root) {
        Some(target) if target == layer || allowed.contains(&target.as_str()) => None,
        Some(target) => Some(format!("{layer} uses {target} through `{}`", u.path)),
        None => Some(format!(
            "{layer} uses `{}`, which is neither a layer nor a name the crate root re-exports \
             from one (add the module to LAYERS or SHARED in this test)",
            u.path
        )),
    }
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            source_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn lower_layers_never_use_higher_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("core/src/lib.rs");
    let names = root_names(&lib);
    let mut files = Vec::new();
    source_files(&src, &mut files);

    let mut report = String::new();
    let mut checked = 0;
    for file in &files {
        let rel = file.strip_prefix(&src).expect("below src");
        let module = module_of(rel);
        let Some(layer) = module.first() else {
            continue; // lib.rs: the root re-exports every layer
        };
        if SHARED.contains(&layer.as_str()) {
            continue;
        }
        assert!(
            LAYERS.iter().any(|(n, _)| n == layer),
            "core/src/{}: `{layer}` is not a layer; add it to LAYERS (with what it may use) \
             or to SHARED",
            rel.display()
        );
        let text = std::fs::read_to_string(file).expect("readable source");
        for u in uses(&module, &text) {
            checked += 1;
            if let Some(why) = violation(layer, &u, &names) {
                writeln!(report, "core/src/{}:{}: {why}", rel.display(), u.line).unwrap();
            }
        }
    }
    assert!(
        report.is_empty(),
        "a lower layer uses a higher one (see core/tests/layering.rs for the rule):\n{report}"
    );
    // The walk saw the tree: every layer has files, and the crate does use its layers.
    for &(layer, _) in LAYERS {
        assert!(
            files
                .iter()
                .any(|f| f.strip_prefix(&src).unwrap().starts_with(layer)),
            "no files for layer {layer}"
        );
    }
    assert!(checked > 100, "only {checked} cross-layer paths found");
}

// --------------------------------------------------------------------- the gang's stages

/// The gang layer's stages (`core/src/gang/mod.rs`), bottom up: a file (or folder) may
/// use the gang modules of its own stage or below, never above.
const GANG_STAGES: &[(&str, u8)] = &[
    ("options", 0),
    ("scoring", 0),
    ("apply", 0),
    ("intake", 1),
    ("filter", 2),
    ("count_memo", 2),
    ("counts", 3),
    ("ranking", 3),
    ("search", 4),
    ("placer", 5),
    ("explain", 6),
    ("composite", 7),
    ("capacity_report", 7),
];

fn gang_stage(module: &str) -> Option<u8> {
    GANG_STAGES
        .iter()
        .find(|(m, _)| *m == module)
        .map(|(_, s)| *s)
}

/// The gang module (`intake`, `explain`, ...) `path`, written in a file of module
/// `module`, names: through `crate::gang::…`, `super::…`, or a name the crate root
/// re-exports from the gang layer (`crate::GangOptions`: `roots`).
fn gang_target(
    module: &[String],
    path: &[String],
    roots: &BTreeMap<String, String>,
) -> Option<String> {
    let (first, rest) = path.split_first()?;
    let absolute: Vec<String> = if first == "crate" {
        rest.to_vec()
    } else {
        let mut at = module.to_vec();
        let mut rest = path;
        while rest.first().is_some_and(|s| s == "super") {
            at.pop()?;
            rest = &rest[1..];
        }
        at.extend(rest.iter().cloned());
        at
    };
    match absolute.as_slice() {
        [g, m, ..] if g == "gang" => Some(m.clone()),
        [name, ..] => roots.get(name).cloned(),
        [] => None,
    }
}

/// The gang module each name `lib.rs` re-exports from the gang layer comes from
/// (`GangOptions` → `placer`, as `pub use gang::placer::{…}` says).
fn gang_roots(lib: &str) -> BTreeMap<String, String> {
    let code = code_only(lib);
    let toks = tokens(&code);
    let mut out = BTreeMap::new();
    for w in 1..toks.len() {
        let is_use = matches!(&toks[w].1, Tok::Ident(s) if s == "use")
            && matches!(&toks[w - 1].1, Tok::Ident(s) if s == "pub");
        if !is_use {
            continue;
        }
        let mut found = Vec::new();
        tree(&toks, w + 1, Vec::new(), &mut found);
        for path in found {
            if let [g, m, .., name] = path.as_slice()
                && g == "gang"
            {
                out.insert(name.clone(), m.clone());
            }
        }
    }
    out
}

#[test]
fn the_gang_stages_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("core/src/lib.rs");
    let roots = gang_roots(&lib);
    let mut files = Vec::new();
    source_files(&src.join("gang"), &mut files);
    let mut report = String::new();
    let mut checked = 0;
    for file in &files {
        let rel = file.strip_prefix(&src).expect("below src");
        let module = module_of(rel);
        let Some(own) = module.get(1) else {
            continue; // gang/mod.rs declares the stages
        };
        let stage = gang_stage(own).unwrap_or_else(|| {
            panic!(
                "core/src/{}: `{own}` has no gang stage; add it to GANG_STAGES (and to the \
                 table in core/src/gang/mod.rs)",
                rel.display()
            )
        });
        let text = std::fs::read_to_string(file).expect("readable source");
        for (line, path) in paths(&code_only(&text)) {
            let Some(target) = gang_target(&module, &path, &roots) else {
                continue;
            };
            if &target == own {
                continue;
            }
            checked += 1;
            let Some(at) = gang_stage(&target) else {
                continue;
            };
            if at > stage {
                writeln!(
                    report,
                    "core/src/{}:{line}: {own} (stage {stage}) uses {target} (stage {at}) \
                     through `{}`",
                    rel.display(),
                    path.join("::")
                )
                .unwrap();
            }
        }
    }
    assert!(
        report.is_empty(),
        "a gang stage uses a later one (see GANG_STAGES in core/tests/layering.rs):\n{report}"
    );
    assert!(
        checked > 20,
        "only {checked} paths between gang stages found"
    );
    // Every gang file is under 1,000 lines (issue 32).
    for file in &files {
        let lines = std::fs::read_to_string(file).unwrap().lines().count();
        assert!(
            lines <= 1000,
            "{}: {lines} lines; split it along its stage",
            file.display()
        );
    }
}

#[test]
fn the_stage_check_resolves_paths() {
    let roots: BTreeMap<String, String> = [("GangOptions".to_owned(), "placer".to_owned())]
        .into_iter()
        .collect();
    let m = |s: &str| -> Vec<String> { s.split('/').map(str::to_owned).collect() };
    let p = |s: &str| -> Vec<String> { s.split("::").map(str::to_owned).collect() };
    assert_eq!(
        gang_target(
            &m("gang/explain/diagnose"),
            &p("super::facts::Fact"),
            &roots
        ),
        Some("explain".to_owned())
    );
    assert_eq!(
        gang_target(&m("gang/intake"), &p("super::counts::X"), &roots),
        Some("counts".to_owned())
    );
    assert_eq!(
        gang_target(&m("gang/intake"), &p("crate::gang::search::Search"), &roots),
        Some("search".to_owned())
    );
    assert_eq!(
        gang_target(&m("gang/intake"), &p("crate::GangOptions"), &roots),
        Some("placer".to_owned())
    );
    assert_eq!(
        gang_target(&m("gang/intake"), &p("crate::Quantity"), &roots),
        None
    );
}

// --------------------------------------------------------------------- the checker itself

fn names_for_tests() -> BTreeMap<String, String> {
    root_names(
        "pub use model::quantity::{Format, Quantity};\n\
         pub use gang::placer::{GangOptions, GangOutcome};\n\
         pub use validate::{Violation, validate_placement};\n\
         pub mod limits { pub use crate::model::claim::{MAX_REQUESTS}; }\n",
    )
}

fn found(module: &str, src: &str) -> Vec<String> {
    let module: Vec<String> = module.split('/').map(str::to_owned).collect();
    let layer = module[0].clone();
    let names = names_for_tests();
    uses(&module, src)
        .iter()
        .filter_map(|u| violation(&layer, u, &names))
        .collect()
}

#[test]
fn checker_finds_upward_uses_in_every_form() {
    // A plain path, a nested use tree, a root re-export, an inline path in code, and a
    // `super::` that climbs to the root.
    let src = "use crate::gang::placer::Gang;\n\
               use crate::{model::node::Node, validate::{Violation}};\n\
               use crate::GangOptions;\n\
               fn f() { let _ = crate::scheduler::Scheduler::new(); }\n\
               use super::super::gang::scoring;\n";
    let v = found("cluster/nodes", src);
    assert_eq!(
        v,
        [
            "cluster uses gang through `crate::gang::placer::Gang`",
            "cluster uses validate through `crate::validate::Violation`",
            "cluster uses gang through `crate::GangOptions`",
            "cluster uses scheduler through `crate::scheduler::Scheduler::new`",
            "cluster uses gang through `super::super::gang::scoring`",
        ]
    );
}

#[test]
fn checker_allows_downward_and_same_layer_uses() {
    let src = "use crate::alloc_prelude::*;\n\
               use crate::{Quantity, model::claim::ResourceClaim, cluster::Cluster};\n\
               use crate::limits::MAX_REQUESTS;\n\
               use super::placer::Gang;\n\
               use crate::gang::scoring::ScoringPolicy;\n";
    assert!(found("gang/search", src).is_empty());
    // The validator may not use the allocator, though it sits above it.
    assert_eq!(
        found("validate/claims", "use crate::allocate::Picked;"),
        ["validate uses allocate through `crate::allocate::Picked`"]
    );
    // The model uses nothing above it, not even the validator's types by root name.
    assert_eq!(
        found("model/claim", "fn f(v: crate::Violation) {}"),
        ["model uses validate through `crate::Violation`"]
    );
}

#[test]
fn checker_skips_comments_strings_and_unknown_roots_are_errors() {
    let src = "// use crate::gang::placer::Gang;\n\
               /// See [`x`](crate::scheduler::Scheduler).\n\
               /* crate::gang */\n\
               const S: &str = \"crate::gang::placer\";\n\
               const R: &str = r#\"crate::scheduler\"#;\n\
               fn f<'a>(c: char) -> bool { c == '\"' }\n";
    assert!(found("model/node", src).is_empty());
    let v = found("model/node", "use crate::placer::Gang;");
    assert_eq!(v.len(), 1);
    assert!(v[0].contains("neither a layer nor a name"), "{v:?}");
}

#[test]
fn line_numbers_point_at_the_use() {
    let module = ["cluster".to_owned(), "nodes".to_owned()];
    let u = uses(
        &module,
        "//! docs\n\nuse crate::{\n    gang::placer::Gang,\n};\n",
    );
    assert_eq!(u.len(), 1);
    assert_eq!(u[0].line, 3);
    assert_eq!(u[0].root, "gang");
}
