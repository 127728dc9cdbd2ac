//! Go modules of a repository: every `go.mod` (nested ones are modules of their own), `replace`
//! directives that point at local folders, `go.work`'s `use` and `replace`, and `vendor/`.
//! Import paths map to package folders through module path prefixes; an import no module of
//! the repository provides is external.

use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Module {
    /// The folder holding `go.mod` (`""` for the repository root).
    pub root: String,
    /// `module` of go.mod (`std` for the Go standard library).
    pub path: String,
}

#[derive(Debug, Default)]
pub(crate) struct GoLayout {
    /// Longest root first, so the first match is the innermost module.
    pub modules: Vec<Module>,
    /// `replace path => ./local` (from go.mod and go.work): extra module path → folder.
    pub replaces: Vec<Module>,
    /// `replace path => ../../elsewhere` or `=> /abs/path`: a local folder outside the
    /// repository, `(the go.mod or go.work, the directive's target)`. Its code is compiled into
    /// the packages that import it, and gate holds none of it.
    pub outside: Vec<(String, String)>,
    /// Folders that hold `.go` files (packages), deleted files' folders included.
    pub packages: BTreeSet<String>,
}

/// The directives of a go.mod or go.work that bear on resolution: `module` and local
/// `replace` targets. go.work's `use` folders hold go.mod files of their own, which are found
/// anyway: every module of the repository resolves (a superset of the workspace: conservative).
#[derive(Debug, Default, PartialEq)]
struct Directives {
    module: Option<String>,
    replaces: Vec<(String, String)>,
}

fn directives(text: &str) -> Directives {
    let mut out = Directives::default();
    let mut block: Option<String> = None;
    for raw in text.lines() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if block.is_some() && line == ")" {
            block = None;
            continue;
        }
        let (verb, rest) = match &block {
            Some(v) => (v.clone(), line.to_string()),
            None => {
                let (v, r) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
                if r.trim() == "(" {
                    block = Some(v.to_string());
                    continue;
                }
                (v.to_string(), r.trim().to_string())
            }
        };
        let unquote = |s: &str| s.trim().trim_matches('"').to_string();
        match verb.as_str() {
            "module" => out.module = Some(unquote(&rest)),
            "replace" => {
                if let Some((left, right)) = rest.split_once("=>") {
                    let from = left
                        .split_whitespace()
                        .next()
                        .map(unquote)
                        .unwrap_or_default();
                    let to = right
                        .split_whitespace()
                        .next()
                        .map(unquote)
                        .unwrap_or_default();
                    // A local path: relative (`./`, `../`) or absolute (Go reads both so).
                    if to.starts_with("./")
                        || to.starts_with("../")
                        || to.starts_with('/')
                        || to == "."
                        || to == ".."
                    {
                        out.replaces.push((from, to));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Folders Go never builds packages from: `testdata`, and names starting with `.` or `_`.
pub(crate) fn ignored_dir(path: &str) -> bool {
    path.split('/')
        .rev()
        .skip(1)
        .any(|d| d == "testdata" || d.starts_with('.') || d.starts_with('_'))
}

pub(crate) fn is_go(path: &str) -> bool {
    path.ends_with(".go")
}

pub(crate) fn is_go_test(path: &str) -> bool {
    path.ends_with("_test.go")
}

/// Non-Go files compiled into a package (cgo, assembly, syso).
pub(crate) fn is_package_source(path: &str) -> bool {
    [
        ".c", ".h", ".s", ".S", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".m", ".f", ".F", ".syso",
    ]
    .iter()
    .any(|e| path.ends_with(e))
}

impl GoLayout {
    pub(crate) fn detect(
        files: &BTreeSet<String>,
        read: &dyn Fn(&str) -> Option<Vec<u8>>,
    ) -> GoLayout {
        let mut layout = GoLayout::default();
        for file in files {
            if is_go(file) && !ignored_dir(file) {
                layout
                    .packages
                    .insert(crate::path::parent(file).to_string());
            }
        }
        if layout.packages.is_empty() {
            return layout;
        }
        for file in files {
            let name = crate::path::file_name(file);
            if !(name == "go.mod" || name == "go.work") || ignored_dir(file) {
                continue;
            }
            if file.split('/').any(|d| d == "vendor") {
                continue;
            }
            let dir = crate::path::parent(file).to_string();
            let Some(bytes) = read(file) else { continue };
            let d = directives(&String::from_utf8_lossy(&bytes));
            for (path, to) in d.replaces {
                let root = crate::path::normalize(&crate::path::join(&dir, &to));
                if to.starts_with('/') || root == ".." || root.starts_with("../") {
                    layout.outside.push((file.clone(), to));
                    continue;
                }
                layout.replaces.push(Module { root, path });
            }
            if let Some(path) = d.module.filter(|_| name == "go.mod") {
                layout.modules.push(Module { root: dir, path });
            }
        }
        layout
            .modules
            .sort_by(|a, b| b.root.len().cmp(&a.root.len()).then(a.root.cmp(&b.root)));
        layout
    }

    /// The innermost module whose folder holds `path`.
    pub(crate) fn module_of(&self, path: &str) -> Option<&Module> {
        self.modules
            .iter()
            .find(|m| m.root.is_empty() || path.starts_with(&format!("{}/", m.root)))
    }

    /// The package folders an import may mean, seen from `from`: a module of the repository
    /// whose path prefixes it (std for dotless paths), a local `replace`, the module's
    /// `vendor/` copy. Several when several apply (conservative); none when it is external.
    pub(crate) fn resolve(&self, from: &str, import: &str) -> Vec<String> {
        let mut out = Vec::new();
        let first = import.split('/').next().unwrap_or(import);
        let std_like = !first.contains('.');
        for m in self.modules.iter().chain(&self.replaces) {
            let rest = if import == m.path {
                Some("")
            } else {
                import
                    .strip_prefix(&m.path)
                    .and_then(|r| r.strip_prefix('/'))
            };
            let rest = match rest {
                Some(r) => Some(r.to_string()),
                None if m.path == "std" && std_like => Some(import.to_string()),
                None => None,
            };
            if let Some(rest) = rest {
                let dir = crate::path::join(&m.root, &rest);
                let dir = dir.trim_end_matches('/').to_string();
                if self.packages.contains(&dir) {
                    out.push(dir);
                }
            }
        }
        if let Some(m) = self.module_of(from) {
            let vendored = crate::path::join(&crate::path::join(&m.root, "vendor"), import);
            if self.packages.contains(&vendored) {
                out.push(vendored);
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The package folders whose tests `go test ./...` runs: not vendored, not ignored.
    pub(crate) fn tested(&self, dir: &str) -> bool {
        !dir.split('/').any(|d| d == "vendor") && !ignored_dir(&format!("{dir}/x"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_mod_and_go_work_directives() {
        let d = directives(
            "module example.com/shop // the shop\n\ngo 1.19\n\nrequire (\n\tgolang.org/x/text v0.3.0\n)\n\
             replace example.com/lib => ../lib\nreplace (\n\tgolang.org/x/net v1.0.0 => ./third_party/net\n\tfoo.org/x => foo.org/y v1.0.0\n)\n",
        );
        assert_eq!(d.module.as_deref(), Some("example.com/shop"));
        assert_eq!(
            d.replaces,
            [
                ("example.com/lib".to_string(), "../lib".to_string()),
                (
                    "golang.org/x/net".to_string(),
                    "./third_party/net".to_string()
                )
            ]
        );
        let w =
            directives("go 1.19\n\nuse (\n\t./shop\n\t./lib\n)\nreplace example.com/x => ./x\n");
        assert_eq!(w.module, None);
        assert_eq!(
            w.replaces,
            [("example.com/x".to_string(), "./x".to_string())]
        );
    }

    #[test]
    fn resolves_modules_std_replace_and_vendor() {
        let files: BTreeSet<String> = [
            "go.mod",
            "money/money.go",
            "cart/cart.go",
            "vendor/golang.org/x/text/t.go",
            "lib/go.mod",
            "lib/util/u.go",
            "std/go.mod",
            "std/fmt/print.go",
            "cart/testdata/x.go",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let read = |p: &str| -> Option<Vec<u8>> {
            Some(
                match p {
                    "go.mod" => "module example.com/shop\nreplace example.com/other => ./lib\nreplace example.com/far => ../far\nreplace example.com/abs => /opt/abs\n",
                    "lib/go.mod" => "module example.com/lib\n",
                    "std/go.mod" => "module std\n",
                    _ => return None,
                }
                .as_bytes()
                .to_vec(),
            )
        };
        let g = GoLayout::detect(&files, &read);
        // A replace that leaves the repository is no folder of it: named, never resolved.
        assert_eq!(
            g.outside,
            [
                ("go.mod".to_string(), "../far".to_string()),
                ("go.mod".to_string(), "/opt/abs".to_string())
            ]
        );
        assert!(g.resolve("cart/cart.go", "example.com/far/x").is_empty());
        assert_eq!(
            g.resolve("cart/cart.go", "example.com/shop/money"),
            ["money"]
        );
        assert_eq!(
            g.resolve("cart/cart.go", "example.com/lib/util"),
            ["lib/util"]
        );
        assert_eq!(
            g.resolve("cart/cart.go", "example.com/other/util"),
            ["lib/util"]
        );
        assert_eq!(
            g.resolve("cart/cart.go", "golang.org/x/text"),
            ["vendor/golang.org/x/text"]
        );
        assert_eq!(g.resolve("cart/cart.go", "fmt"), ["std/fmt"]);
        assert!(g.resolve("cart/cart.go", "github.com/ext/pkg").is_empty());
        assert!(!g.packages.contains("cart/testdata"));
        assert_eq!(
            g.module_of("lib/util/u.go").unwrap().path,
            "example.com/lib"
        );
    }

    /// go.work's own `replace` counts, as go.mod's does: an import of the replaced module
    /// resolves to the local folder.
    #[test]
    fn go_work_replaces_resolve_to_their_folders() {
        let files: BTreeSet<String> = ["go.work", "app/go.mod", "app/main.go", "fork/x/x.go"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let read = |f: &str| -> Option<Vec<u8>> {
            match f {
                "go.work" => {
                    Some(b"go 1.19\nuse ./app\nreplace example.com/dep => ./fork\n".to_vec())
                }
                "app/go.mod" => Some(b"module example.com/app\n".to_vec()),
                _ => None,
            }
        };
        let layout = GoLayout::detect(&files, &read);
        assert_eq!(
            layout.resolve("app/main.go", "example.com/dep/x"),
            ["fork/x"]
        );
    }
}
