//! What a `go test` run read outside the tree: the files of every package its test binaries
//! linked that the main module does not hold — the module cache's, the standard library's, a
//! `replace`d folder's — as `go list -deps -test` names them once the run is over. The ledger
//! hashes them by content: a module cache edited in place (its `go.sum` line unchanged) or a
//! patched standard library is another input, and the pass is not reused. One list per
//! command, each of its packages' units sharing it: a superset of what each linked.

use super::gotest::GoCommand;
use crate::graph;
use crate::repo::checkout::Workspace;
use crate::run::events::{Event, Sink};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One package as `go list -json` lists it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Listed {
    dir: String,
    module: Option<Module>,
    #[serde(default)]
    for_test: String,
    #[serde(default)]
    go_files: Vec<String>,
    #[serde(default)]
    cgo_files: Vec<String>,
    #[serde(default, rename = "CFiles")]
    c_files: Vec<String>,
    #[serde(default, rename = "CXXFiles")]
    cxx_files: Vec<String>,
    #[serde(default, rename = "HFiles")]
    h_files: Vec<String>,
    #[serde(default, rename = "SFiles")]
    s_files: Vec<String>,
    #[serde(default)]
    syso_files: Vec<String>,
    #[serde(default)]
    embed_files: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Module {
    #[serde(default)]
    main: bool,
}

const FIELDS: &str =
    "-json=Dir,Module,ForTest,GoFiles,CgoFiles,CFiles,CXXFiles,HFiles,SFiles,SysoFiles,EmbedFiles";

/// Lists what `command`'s packages linked outside the main module, to `sink`, once its tests
/// ran in `module`'s folder of the checkout at `tree`. Nothing is said when go cannot list
/// them: the units' reads are then not known, and no pass of theirs is entered.
pub(super) fn list(
    command: &GoCommand,
    env: &BTreeMap<String, String>,
    (module, tree): (&Workspace, &Path),
    root: &Path,
    sink: &mut dyn Sink,
) {
    let (flags, packages): (Vec<&String>, Vec<&String>) =
        command.argv[2..].iter().partition(|a| a.starts_with('-'));
    // The build flags that choose what is compiled (`-tags`, `-mod`, `-race` …) choose what
    // `go list` names too; the test's own flags (`-run`, `-v`) are no business of its.
    let build = flags.into_iter().filter(|f| is_build_flag(f));
    let argv: Vec<String> = ["go", "list", "-e", "-deps", "-test", FIELDS]
        .into_iter()
        .map(str::to_string)
        .chain(build.cloned())
        .chain(packages.into_iter().cloned())
        .collect();
    let Some(mut cmd) = crate::run::command(&argv, env, module, root) else {
        return;
    };
    cmd.stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let Ok(out) = cmd.output() else {
        return;
    };
    // go names folders from its working folder as given, or with links followed.
    let real = tree.canonicalize().unwrap_or_else(|_| tree.to_path_buf());
    let trees = [tree, real.as_path()];
    let Some((files, units)) = read(&out.stdout, &trees).filter(|_| out.status.success()) else {
        return;
    };
    let at: BTreeMap<String, usize> = units.into_iter().map(|u| (u, files.len())).collect();
    sink.event(Event::Outside {
        files: &files,
        at: &at,
    });
}

/// `go build`'s flags that change which files a package compiles or which packages a test
/// binary links (given as `-flag` or `-flag=value`, as gate requires of a value).
fn is_build_flag(flag: &str) -> bool {
    let name = flag.trim_start_matches('-');
    let name = name.split_once('=').map_or(name, |(n, _)| n);
    matches!(
        name,
        "tags"
            | "mod"
            | "modfile"
            | "overlay"
            | "race"
            | "msan"
            | "asan"
            | "cover"
            | "covermode"
            | "coverpkg"
            | "pgo"
            | "buildmode"
            | "compiler"
            | "linkshared"
            | "installsuffix"
            | "pkgdir"
            | "trimpath"
    )
}

/// From `go list`'s stream: every file of a package outside the main module (repository-
/// relative under the checkout, spelled as one of `trees`; absolute elsewhere), and the units
/// of the main module's packages.
fn read(stdout: &[u8], trees: &[&Path]) -> Option<(Vec<String>, BTreeSet<String>)> {
    let mut files = BTreeSet::new();
    let mut units = BTreeSet::new();
    for listed in serde_json::Deserializer::from_slice(stdout).into_iter::<Listed>() {
        let listed = listed.ok()?;
        let dir = Path::new(&listed.dir);
        let inside = trees
            .iter()
            .find_map(|t| dir.strip_prefix(t).ok())
            .and_then(Path::to_str);
        if listed.module.as_ref().is_some_and(|m| m.main) {
            if let Some(rel) = inside
                && listed.for_test.is_empty()
            {
                units.insert(graph::go_tests(rel));
            }
            continue;
        }
        let named = [
            &listed.go_files,
            &listed.cgo_files,
            &listed.c_files,
            &listed.cxx_files,
            &listed.h_files,
            &listed.s_files,
            &listed.syso_files,
            &listed.embed_files,
        ];
        for name in named.into_iter().flatten() {
            files.insert(match inside {
                Some(rel) => crate::path::join(rel, name),
                None => dir.join(name).to_string_lossy().into_owned(),
            });
        }
    }
    Some((files.into_iter().collect(), units))
}

#[cfg(test)]
mod tests {
    /// The main module's packages are units, not reads; another module's files (inside the
    /// tree or out) and the standard library's are reads.
    #[test]
    fn what_go_list_names_outside_the_main_module() {
        let stream = br#"{"Dir": "/r/go/calc", "Module": {"Main": true}, "GoFiles": ["calc.go"]}
{"Dir": "/r/go/calc", "Module": {"Main": true}, "ForTest": "example.com/x/calc", "GoFiles": ["calc.go"]}
{"Dir": "/usr/lib/go/src/os", "Standard": true, "GoFiles": ["file.go"], "SFiles": ["a.s"]}
{"Dir": "/root/go/pkg/mod/example.com/dep@v1.0.0", "Module": {"Main": false}, "GoFiles": ["dep.go"], "EmbedFiles": ["data/x.txt"]}
{"Dir": "/r/go/helper", "Module": {"Main": false}, "GoFiles": ["h.go"]}"#;
        let r = std::path::Path::new("/r");
        let (files, units) = super::read(stream, &[r]).unwrap();
        assert_eq!(
            files,
            [
                "/root/go/pkg/mod/example.com/dep@v1.0.0/data/x.txt",
                "/root/go/pkg/mod/example.com/dep@v1.0.0/dep.go",
                "/usr/lib/go/src/os/a.s",
                "/usr/lib/go/src/os/file.go",
                "go/helper/h.go",
            ]
        );
        assert_eq!(units.into_iter().collect::<Vec<_>>(), ["./go/calc"]);
        assert!(super::read(b"{not json", &[r]).is_none());
        for (flag, build) in [
            ("-tags=integration", true),
            ("-race", true),
            ("-v", false),
            ("-run=X", false),
        ] {
            assert_eq!(super::is_build_flag(flag), build, "{flag}");
        }
    }
}
