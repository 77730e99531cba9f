//! The shape of `src/`, read from its text: a run folder has one owner (`src/store/`), which alone
//! names its files and columns; the modules import each other without loops, and no stage imports
//! a later one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/`, with its text up to its unit tests (`#[cfg(test)] mod tests`);
/// a module's unit tests in a file of their own (`tests.rs`) are left out whole: tests may write a
/// run folder by hand, and take what they check from any module.
fn sources() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let e = e.unwrap();
        if e.path().extension().is_some_and(|x| x == "rs") && e.file_name() != "tests.rs" {
            let text = std::fs::read_to_string(e.path()).unwrap();
            let code = match text.find("#[cfg(test)]\nmod tests") {
                Some(i) => text[..i].to_string(),
                None => text,
            };
            let rel = e.path().strip_prefix(root.parent().unwrap()).unwrap();
            out.push((rel.to_path_buf(), code));
        }
    }
    out
}

fn owner(path: &Path) -> bool {
    path.starts_with("src/store/")
}

/// What only `src/store/` may write: a path into a run folder built by hand, the names of its
/// files, and a lookup of one of its fixed columns by a literal name.
fn forbidden() -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = vec![(
        "a run folder's path built by hand",
        "run_dir.join(".to_string(),
    )];
    for file in [
        "results.csv",
        "manifest.json",
        "controls.csv",
        "analysis.csv",
        "analysis.json",
        "analysis.md",
        "report.html",
    ] {
        out.push(("a run folder's file by name", format!("\"{file}\"")));
    }
    for dir in ["points", "passes", "charts", "export"] {
        out.push(("a run folder's folder by name", format!(".join(\"{dir}\")")));
    }
    for column in [
        "point_id",
        "index",
        "status",
        "error",
        "build_s",
        "run_s",
        "cached",
        "gpu_index",
        "gpu_name",
        "gpu_uuid",
    ] {
        for call in ["column", "col", "get", "cell", "number"] {
            out.push(("a fixed column by name", format!("{call}(\"{column}\")")));
        }
        out.push(("a fixed column by name", format!("== \"{column}\"")));
    }
    out
}

#[test]
fn only_the_store_names_a_run_folders_files_and_columns() {
    let rules = forbidden();
    let mut found = Vec::new();
    for (path, code) in sources() {
        if owner(&path) {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            for (what, pattern) in &rules {
                if line.contains(pattern.as_str()) {
                    found.push(format!(
                        "{}:{}: {what}: {}",
                        path.display(),
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "name them through `store::RunDir`, `store::schema` or `store::Run`:\n{}",
        found.join("\n")
    );
}

/// The crate's top-level modules and the others each one names (`crate::<module>`).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, code) in sources() {
        let top = path
            .components()
            .nth(1)
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .unwrap();
        if top == "lib" || top == "main" || top == "cli" {
            continue;
        }
        let named = graph.entry(top.clone()).or_default();
        let mut rest = code.as_str();
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != top {
                named.insert(name);
            }
        }
    }
    graph
}

/// The loops of the import graph: its strongly connected parts of two modules or more.
fn loops(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for n in graph.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for m in graph.keys() {
        let part: BTreeSet<String> = graph
            .keys()
            .filter(|n| *n == m || (reached[m].contains(*n) && reached[n].contains(m)))
            .cloned()
            .collect();
        if part.len() > 1 && !out.contains(&part) {
            out.push(part);
        }
    }
    out
}

#[test]
fn the_modules_import_without_loops() {
    let graph = imports();
    let found = loops(&graph);
    assert!(found.is_empty(), "import loops: {found:?}");
    assert!(
        !graph["report"].contains("export"),
        "the report reads runs through `store`, not the exporter"
    );
}

/// The stages in the order the data flows (src/lib.rs): `schema`, the results CSV's columns that
/// the spec checks its names against, lies below them all.
const STAGES: [&str; 10] = [
    "schema", "spec", "points", "render", "compile", "run", "parse", "store", "analyze", "report",
];

#[test]
fn no_stage_imports_a_later_one() {
    let graph = imports();
    let rank = |m: &str| STAGES.iter().position(|s| *s == m);
    let mut found = Vec::new();
    for (module, named) in &graph {
        let Some(r) = rank(module) else { continue };
        for n in named {
            if rank(n).is_some_and(|rn| rn > r) {
                found.push(format!("{module} -> {n}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a stage imports a later one (move what they share down): {}",
        found.join(", ")
    );
}

/// The top-level arguments of the generic list that opens at `text[0]` (`<`), and its length;
/// `None` when it never closes. `->` is no bracket.
fn generic_args(text: &str) -> Option<(Vec<String>, usize)> {
    let (mut depth, mut args, mut arg) = (0i32, Vec::new(), String::new());
    let mut prev = ' ';
    for (i, c) in text.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' if prev == '-' => {}
            '>' | ')' | ']' => depth -= 1,
            _ => {}
        }
        prev = c;
        if depth == 0 {
            args.push(arg.split_whitespace().collect::<Vec<_>>().join(" "));
            return Some((args, i + 1));
        }
        if depth == 1 && c == ',' {
            args.push(arg.split_whitespace().collect::<Vec<_>>().join(" "));
            arg.clear();
        } else if !(depth == 1 && c == '<' && i == 0) {
            arg.push(c);
        }
    }
    None
}

/// Where `code` (one file of `src/`, comments dropped) makes an error a string: a `Result` whose
/// error is `String`, a `FromStr` whose `Err` is, or an error's `reason: String`.
fn string_errors(code: &str) -> Vec<(usize, String)> {
    let code: String = code
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let line = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    for (at, _) in code.match_indices("Result<") {
        let before = code[..at].chars().last().unwrap_or(' ');
        if before.is_ascii_alphanumeric() || before == '_' {
            continue;
        }
        let open = at + "Result".len();
        if let Some((mut args, len)) = generic_args(&code[open..]) {
            // A trailing comma leaves an empty last argument.
            args.retain(|a| !a.is_empty());
            if args.len() == 2 && args[1] == "String" {
                found.push((line(at), code[at..open + len].split_whitespace().collect()));
            }
        }
    }
    for pattern in ["type Err = String;", "reason: String"] {
        for (at, _) in code.match_indices(pattern) {
            found.push((line(at), pattern.to_string()));
        }
    }
    found.sort();
    found
}

#[test]
fn the_scan_for_string_errors_finds_them_across_lines_and_in_nested_types() {
    let code = "fn a() -> Result<(u32, u32), String> {}\nfn b() -> Result<\n    Vec<(String, String)>,\n    String,\n> {}\n// fn c() -> Result<(), String>\nfn d() -> Result<Vec<String>, Error> {}\nfn e() -> io::Result<String> {}\nfn f(x: impl Fn() -> u8) -> Result<u8, E> {}\nstruct E { reason: String }\nimpl FromStr for S { type Err = String; }\n";
    let lines: Vec<usize> = string_errors(code).into_iter().map(|(l, _)| l).collect();
    assert_eq!(lines, [1, 2, 10, 11]);
}

/// Issue 35: errors stay typed until the command line prints them, so each is mapped to its exit
/// code by what it is (`cli::error::CliError::exit_code`), never by where it was caught.
#[test]
fn no_error_is_a_string() {
    let mut found = Vec::new();
    // (`sources` leaves out a unit-test module in a file of its own, `spec/tests.rs`, which
    // compares messages.)
    for (path, code) in sources() {
        for (line, what) in string_errors(&code) {
            found.push(format!("{}:{line}: {what}", path.display()));
        }
    }
    assert!(
        found.is_empty(),
        "an error as a string (hint: a thiserror enum that keeps what went wrong, its cause as \
         its `#[source]`):\n{}",
        found.join("\n")
    );
}
