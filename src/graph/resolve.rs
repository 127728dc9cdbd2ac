//! Resolution: what an import, a string or a computed path names among the tree's files.

use super::Tree;
use crate::analyze::facts::Import;
use crate::analyze::paths::PathValue;
use crate::path::{ancestors, is_python, join, normalize, parent};
use std::collections::BTreeSet;
use std::ops::Bound;

pub(super) fn resolve_import(
    tree: &Tree<'_>,
    importer: &str,
    import: &Import,
) -> Vec<(String, String)> {
    let module: Vec<&str> = import.module.split('.').filter(|p| !p.is_empty()).collect();
    let names = import.names.iter().filter(|n| n.as_str() != "*");
    if import.level == 0 {
        let mut out = resolve_absolute(tree, importer, &module);
        for name in names {
            let mut parts = module.clone();
            parts.push(name);
            out.extend(resolve_in(
                tree,
                &[base_dir(tree, importer).to_string()],
                &parts,
                parts.len(),
            ));
            out.extend(resolve_in(tree, tree.roots, &parts, parts.len()));
        }
        star_submodules(tree, import, &mut out);
        out.sort();
        out.dedup();
        return out;
    }
    let mut dir = parent(importer).to_string();
    for _ in 1..import.level {
        dir = parent(&dir).to_string();
    }
    let label =
        |parts: &[&str]| format!("{}{}", ".".repeat(import.level as usize), parts.join("."));
    let mut out = Vec::new();
    for dir in portions(tree, &dir) {
        for k in 1..=module.len() {
            out.extend(
                module_files(tree, &dir, &module[..k])
                    .into_iter()
                    .map(|f| (f, label(&module[..k]))),
            );
        }
        for name in names.clone() {
            let mut parts = module.clone();
            parts.push(name);
            out.extend(
                module_files(tree, &dir, &parts)
                    .into_iter()
                    .map(|f| (f, label(&parts))),
            );
        }
    }
    star_submodules(tree, import, &mut out);
    out
}

/// `from pkg import *` imports the submodules `pkg/__init__.py` lists in `__all__`: the text of
/// the importer cannot say which, so every module directly in the package is one.
fn star_submodules(tree: &Tree<'_>, import: &Import, out: &mut Vec<(String, String)>) {
    if !import.names.iter().any(|n| n == "*") {
        return;
    }
    let last = import.module.rsplit('.').next().unwrap_or_default();
    let packages: Vec<(String, String)> = out
        .iter()
        .filter(|(f, label)| f.ends_with("/__init__.py") && label.rsplit('.').next() == Some(last))
        .map(|(f, label)| (parent(f).to_string(), label.clone()))
        .collect();
    for (dir, label) in packages {
        let prefix = format!("{dir}/");
        let children = tree
            .files
            .range(prefix.clone()..)
            .take_while(|f| f.starts_with(&prefix))
            .filter(|f| {
                let rest = &f[prefix.len()..];
                (!rest.contains('/') && rest.ends_with(".py") && rest != "__init__.py")
                    || rest
                        .strip_suffix("/__init__.py")
                        .is_some_and(|d| !d.contains('/'))
            });
        for child in children {
            let name = child[prefix.len()..]
                .trim_end_matches("/__init__.py")
                .trim_end_matches(".py");
            out.push((child.clone(), format!("{label}.{name}")));
        }
    }
}

/// `a.b.c` runs `a`, `a.b` and `a.b.c`: an edge to every prefix found under any root.
pub(super) fn resolve_absolute(
    tree: &Tree<'_>,
    importer: &str,
    parts: &[&str],
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let own = base_dir(tree, importer);
    let bases = tree.roots.iter().map(String::as_str);
    for base in bases.chain(std::iter::once(own)) {
        // One stem grown part by part: `base/a`, `base/a/b`, … — a lookup each, no joins.
        let mut stem = String::with_capacity(base.len() + 64);
        stem.push_str(base);
        for (k, part) in parts.iter().enumerate() {
            if !stem.is_empty() {
                stem.push('/');
            }
            stem.push_str(part);
            if let Some(found) = module(tree, &stem) {
                let label = parts[..=k].join(".");
                out.extend(found.into_iter().map(|f| (f, label.clone())));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

pub(super) fn resolve_in(
    tree: &Tree<'_>,
    roots: &[String],
    parts: &[&str],
    k: usize,
) -> Vec<(String, String)> {
    roots
        .iter()
        .flat_map(|root| module_files(tree, root, &parts[..k]))
        .map(|f| (f, parts[..k].join(".")))
        .collect()
}

/// The files that define module `parts` under `dir`: `x.py`, `x.pyi`, `x/__init__.py(i)`.
fn module_files(tree: &Tree<'_>, dir: &str, parts: &[&str]) -> Vec<String> {
    if parts.is_empty() {
        return Vec::new();
    }
    let stem = join(dir, &parts.join("/"));
    module(tree, &stem).unwrap_or_default()
}

/// The files of the module at `stem` (a path without `.py`), also when a folder symlink leads
/// to it (`shopalias/cart` with `shopalias -> shop`): then the link is one of them, so a
/// change to the link selects what imports through it.
fn module(tree: &Tree<'_>, stem: &str) -> Option<Vec<String>> {
    // A stub (`x.pyi`) is what a type checker reads, never what a run imports: no import edge
    // leads to one, so a stub's own imports reach only the tests that run a type checker over
    // it (through their subprocess or path edges).
    let run_time = |f: &&&str| !f.ends_with(".pyi");
    if let Some(m) = tree.modules.get(stem) {
        let files: Vec<String> = m
            .files()
            .iter()
            .filter(run_time)
            .map(|f| f.to_string())
            .collect();
        return (!files.is_empty()).then_some(files);
    }
    let Some((real, link)) = tree.through_links(stem) else {
        // Through a link that points at no folder of the tree (repointed, dangling, out of the
        // tree): the import depends on the link, so a change to it selects the importer.
        return tree.leading_link(stem).map(|link| vec![link.to_string()]);
    };
    let mut files: Vec<String> = tree
        .modules
        .get(real.as_str())
        .map(|m| {
            m.files()
                .iter()
                .filter(run_time)
                .map(|f| f.to_string())
                .collect()
        })
        .unwrap_or_default();
    files.push(link.to_string());
    Some(files)
}

/// The directory Python puts on `sys.path` for a file run or collected from its own folder:
/// above the topmost package that contains it (pytest's `rootdir`-less "prepend" import mode).
fn base_dir<'f>(tree: &Tree<'_>, file: &'f str) -> &'f str {
    let mut dir = parent(file);
    while !dir.is_empty() && tree.packages.contains_key(dir) {
        dir = parent(dir);
    }
    dir
}

/// What a path names, tried against each base folder in order (the first that names
/// something wins): a file, every file under a folder, or every file a glob matches. The root
/// itself, a path leaving the repository and the naming file itself name nothing. An import
/// root (`src`) named as a path is where modules come from (`PYTHONPATH=src`), not a read of
/// every file in it — except for a tool run over it (`["mypy", "src"]`, `tool`).
pub(super) fn path_targets(
    tree: &Tree<'_>,
    from: &str,
    bases: &[String],
    value: &str,
    tool: bool,
) -> Vec<String> {
    let value = value.trim_start_matches("./");
    if value.is_empty() || value.starts_with('/') {
        return Vec::new();
    }
    let mut seen = BTreeSet::new();
    for base in bases {
        if !seen.insert(base) {
            continue;
        }
        let path = normalize(&join(base, value));
        if !tool && tree.roots.contains(&path) {
            return Vec::new();
        }
        // The base is a folder's name, not a pattern (`{{cookiecutter.slug}}/tests`): escaped
        // where the value is read as a glob, as written where it is read as a name.
        let escaped = crate::config::glob_literal(base);
        let found = if is_glob(value) && escaped != *base {
            both(tree, &normalize(&join(&escaped, value)), &path)
        } else {
            targets(tree, &path)
        };
        let found: Vec<String> = found.into_iter().filter(|t| t != from).collect();
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// The characters that make a path a glob.
const GLOB_META: [char; 4] = ['*', '?', '[', '{'];

/// Whether a path is read as a glob too: it has a glob's syntax, or an escape (the source's
/// `"a\\b.json"` is the name `a\b.json`, and so it is to a glob).
fn is_glob(path: &str) -> bool {
    path.contains(GLOB_META) || path.contains('\\')
}

/// The files a repository-relative path names. A path with glob characters is read both
/// ways: source text names a file as much as a pattern (`open("data[1].json")`).
fn targets(tree: &Tree<'_>, path: &str) -> Vec<String> {
    if path.is_empty() || path == "." || path.starts_with("..") {
        return Vec::new();
    }
    if is_glob(path) {
        return both(tree, path, path);
    }
    named(tree, path)
}

/// What a path names read every way: `glob`'s matches, the file or folder named `name`, and
/// the one `name` names once the source's escapes in it are read (`caf\u00e9.txt` is
/// `café.txt`; a path's text is kept as the source writes it, and a raw string's is its name).
fn both(tree: &Tree<'_>, glob: &str, name: &str) -> Vec<String> {
    let mut found = glob_targets(tree, glob);
    found.extend(named(tree, name));
    if let Some(plain) = unescaped(name) {
        found.extend(named(tree, &plain));
    }
    found.sort();
    found.dedup();
    found
}

/// `text` with the escapes of a Python or Go string literal read (`\t`, `\\`, `\x41`, octal,
/// `\u00e9`, `\U0001F600`, a line continuation); any other is kept, as Python keeps `\d`
/// (`\N{…}` too: its name is not looked up here). None when `text` holds no escape, or one
/// that names no character.
fn unescaped(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push(c);
            break;
        };
        let mut code = |first: Option<char>, radix: u32, max: usize| {
            let mut digits: String = first.into_iter().collect();
            while digits.len() < max
                && let Some(d) = chars.next_if(|d| d.is_digit(radix))
            {
                digits.push(d);
            }
            u32::from_str_radix(&digits, radix)
                .ok()
                .and_then(char::from_u32)
        };
        match e {
            '\\' | '\'' | '"' => out.push(e),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '\n' => {}
            '0'..='7' => out.push(code(Some(e), 8, 3)?),
            'x' => out.push(code(None, 16, 2)?),
            'u' => out.push(code(None, 16, 4)?),
            'U' => out.push(code(None, 16, 8)?),
            _ => {
                out.push(c);
                out.push(e);
            }
        }
    }
    (out != text).then_some(out)
}

/// The files a path names as written: the file, or those under the folder.
fn named(tree: &Tree<'_>, path: &str) -> Vec<String> {
    if tree.files.contains(path) {
        let mut out = vec![path.to_string()];
        // A folder symlink named as a path reads the folder it points at.
        if let Some(target) = tree.dir_links.get(path) {
            out.extend(under(tree, target));
        }
        return out;
    }
    let found = under(tree, path);
    if !found.is_empty() {
        return found;
    }
    match tree.through_links(path) {
        Some((real, link)) => {
            let mut out = targets(tree, &real);
            if !out.is_empty() {
                out.push(link.to_string());
            }
            out
        }
        None => tree
            .leading_link(path)
            .map(str::to_string)
            .into_iter()
            .collect(),
    }
}

/// The files a glob names: those it matches, and those under the folders it matches. The same
/// glob often comes from many files (a template's holes are `*`): each is walked once. The
/// first few walk the tree's paths; past them a trigram index pays for itself, but a warm
/// patch that meets one glob must not build an index of the whole tree.
fn glob_targets(tree: &Tree<'_>, path: &str) -> Vec<String> {
    const PLAIN_WALKS: usize = 16;
    let walked = {
        let globs = tree.globs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = globs.get(path) {
            return found.clone();
        }
        globs.len()
    };
    let glob = Glob::new(path);
    let found = if walked < PLAIN_WALKS {
        glob.walk(tree)
    } else {
        glob.walk_indexed(tree)
    };
    let mut globs = tree.globs.lock().unwrap_or_else(|e| e.into_inner());
    globs.insert(path.to_string(), found.clone());
    found
}

/// A glob as the tree is walked for it. It is compiled only once a path holds its text: most
/// globs are templates of messages (`"Cannot import '%s'" % name`) that no path holds, and
/// compiling them cost more than walking for them.
struct Glob<'g> {
    text: &'g str,
    /// None once compiled when it is not a glob globset reads: it names nothing.
    matcher: std::cell::OnceCell<Option<globset::GlobMatcher>>,
    /// The literal folder it starts with (`app/` for `app/**/x`), or empty.
    prefix: String,
    /// The paths under `prefix`: from `a/b/` up to `a/b0` (`0` follows `/`), a key range read
    /// without comparing each path with the prefix.
    span: (Bound<String>, Bound<String>),
    /// Without `**` a glob matches at one depth only: a file there, or the folder there that
    /// holds the file (`data/*` names folders too; `data/*.json` not `data/sub/x.json`).
    depth: Option<usize>,
    /// Text every match holds: a path without one of them matches nothing, nor does a folder
    /// above it.
    runs: Vec<String>,
}

impl<'g> Glob<'g> {
    fn new(text: &'g str) -> Glob<'g> {
        // A backslash escapes the next character (`a\\b` is `ab` to the matcher): a folder
        // written with one is not literal text to look up.
        let literal: Vec<&str> = text
            .split('/')
            .take_while(|part| !part.contains(GLOB_META) && !part.contains('\\'))
            .collect();
        let prefix = if literal.is_empty() {
            String::new()
        } else {
            format!("{}/", literal.join("/"))
        };
        let end = prefix
            .strip_suffix('/')
            .map_or(Bound::Unbounded, |dir| Bound::Excluded(format!("{dir}0")));
        Glob {
            text,
            matcher: std::cell::OnceCell::new(),
            span: (Bound::Included(prefix.clone()), end),
            prefix,
            // Braces may hold a `/` (`x/{a,b/c}*`): such a glob has no one depth.
            depth: (!text.contains("**") && !text.contains('{')).then(|| text.split('/').count()),
            runs: required_runs(text),
        }
    }

    fn holds(&self, path: &str) -> bool {
        self.runs.iter().all(|run| path.contains(run.as_str()))
    }

    fn is_match(&self, path: &str) -> bool {
        self.matcher
            .get_or_init(|| Some(crate::config::glob(self.text).ok()?.compile_matcher()))
            .as_ref()
            .is_some_and(|m| m.is_match(path))
    }

    /// Each file under the literal folder: it matches, or its folder at the glob's depth (any
    /// depth with `**`) does.
    fn walk(&self, tree: &Tree<'_>) -> Vec<String> {
        tree.files
            .range(self.span.clone())
            .filter(|f| self.holds(f))
            .filter(|f| {
                self.is_match(f.as_str())
                    || match self.depth {
                        Some(k) => f
                            .match_indices('/')
                            .nth(k - 1)
                            .is_some_and(|(at, _)| self.is_match(&f[..at])),
                        None => ancestors(f)
                            .take_while(|d| d.len() >= self.prefix.len())
                            .any(|d| !d.is_empty() && self.is_match(d)),
                    }
            })
            .cloned()
            .collect()
    }

    /// What `walk` names, read from the tree's index: when the glob's text is three bytes or
    /// more, only the files holding its rarest run are read, and a glob no file holds walks
    /// no folder; each folder is matched once, not once per file below it.
    fn walk_indexed(&self, tree: &Tree<'_>) -> Vec<String> {
        let index = tree.globbing();
        let mut held = false;
        let mut out: Vec<String> = match index.holding(&self.runs) {
            Some(files) => files
                .filter(|f| f.starts_with(&self.prefix) && self.holds(f))
                .inspect(|_| held = true)
                .filter(|f| self.is_match(f))
                .map(str::to_string)
                .collect(),
            None => {
                held = true;
                tree.files
                    .range(self.span.clone())
                    .filter(|f| self.holds(f) && self.is_match(f))
                    .cloned()
                    .collect()
            }
        };
        // A folder holds the text only if the files under it do.
        if !held {
            return out;
        }
        let span = (
            self.span.0.as_ref().map(String::as_str),
            self.span.1.as_ref().map(String::as_str),
        );
        for &dir in index.folders.range::<&str, _>(span) {
            let at_depth = self.depth.is_none_or(|k| dir.matches('/').count() + 1 == k);
            if at_depth && self.holds(dir) && self.is_match(dir) {
                out.extend(under(tree, dir));
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// Text every path a glob matches holds: the literal runs between its wildcards, classes,
/// separators and alternatives, read as globset reads them (`\,` is `,`), and the runs every
/// alternative of a `{…}` holds. Empty when none is known; a glob globset would not read
/// gives what it gives, as it names nothing.
fn required_runs(glob: &str) -> Vec<String> {
    let chars: Vec<char> = glob.chars().collect();
    let mut at = 0;
    let mut runs = sequence_runs(&chars, &mut at, 0).unwrap_or_default();
    runs.sort();
    runs.dedup();
    runs
}

/// How deep braces nest before the text is not read (globset reads 100 levels).
const MAX_NESTING: usize = 100;

/// The runs of the glob from `at` to its end, or inside `depth` braces to the `,` or `}` that
/// ends this alternative. None where the text is not read here (a POSIX class, an unclosed
/// class or brace).
fn sequence_runs(chars: &[char], at: &mut usize, depth: usize) -> Option<Vec<String>> {
    let mut runs = Vec::new();
    let mut run = String::new();
    let end = |run: &mut String, runs: &mut Vec<String>| {
        if !run.is_empty() {
            runs.push(std::mem::take(run));
        }
    };
    while let Some(&c) = chars.get(*at) {
        match c {
            // In braces globset drops an escaped `,` or `{` that a `**` follows (its `**`
            // rule looks at the character before it, not the token): no text of a run.
            '\\' if depth > 0
                && matches!(chars.get(*at + 1), Some(',' | '{'))
                && chars.get(*at + 2..*at + 4) == Some(&['*', '*'][..]) =>
            {
                end(&mut run, &mut runs);
                *at += 2;
            }
            '\\' => {
                run.push(*chars.get(*at + 1)?);
                *at += 2;
            }
            '*' | '?' | '/' => {
                end(&mut run, &mut runs);
                *at += 1;
            }
            '[' => {
                end(&mut run, &mut runs);
                *at = class_end(chars, *at)?;
            }
            '{' if depth < MAX_NESTING => {
                end(&mut run, &mut runs);
                *at += 1;
                let mut alternatives = Vec::new();
                loop {
                    alternatives.push(sequence_runs(chars, at, depth + 1)?);
                    let close = *chars.get(*at)? == '}';
                    *at += 1;
                    if close {
                        break;
                    }
                }
                runs.extend(common_runs(&alternatives));
            }
            ',' | '}' if depth > 0 => break,
            // Deeper than globset reads: not read here.
            '{' => return None,
            c => {
                run.push(c);
                *at += 1;
            }
        }
    }
    end(&mut run, &mut runs);
    Some(runs)
}

/// Where a class opened at `open` ends (past its `]`): a `]` first in it (after `!` or `^`)
/// is a member. None for a POSIX class inside it (`[[:alpha:]]`) or one never closed.
fn class_end(chars: &[char], open: usize) -> Option<usize> {
    let mut at = open + 1;
    if matches!(chars.get(at), Some('!' | '^')) {
        at += 1;
    }
    if chars.get(at) == Some(&']') {
        at += 1;
    }
    loop {
        match chars.get(at)? {
            ']' => return Some(at + 1),
            '[' if chars.get(at + 1) == Some(&':') => return None,
            _ => at += 1,
        }
    }
}

/// The runs of any alternative that every other one holds within one of its runs.
fn common_runs(alternatives: &[Vec<String>]) -> Vec<String> {
    alternatives
        .iter()
        .flatten()
        .filter(|run| {
            alternatives
                .iter()
                .all(|other| other.iter().any(|o| o.contains(run.as_str())))
        })
        .cloned()
        .collect()
}

/// Every file under folder `dir`.
pub(super) fn under(tree: &Tree<'_>, dir: &str) -> Vec<String> {
    let prefix = format!("{dir}/");
    tree.files
        .range(prefix.clone()..)
        .take_while(|f| f.starts_with(&prefix))
        .cloned()
        .collect()
}

/// The files a computed path names.
pub(super) fn value_targets(tree: &Tree<'_>, from: &str, value: &PathValue) -> Vec<String> {
    match value {
        PathValue::File => Vec::new(),
        PathValue::Relative(p) => path_targets(
            tree,
            from,
            &[String::new(), parent(from).to_string()],
            p,
            false,
        ),
        PathValue::FileDir(p) => path_targets(tree, from, &[parent(from).to_string()], p, false),
        PathValue::Package { package, path } => {
            let parts: Vec<&str> = package.split('.').collect();
            let mut dirs: Vec<String> = resolve_absolute(tree, from, &parts)
                .into_iter()
                .filter(|(_, m)| m == package)
                .filter_map(|(f, _)| {
                    f.strip_suffix("/__init__.py")
                        .or_else(|| f.strip_suffix("/__init__.pyi"))
                        .map(str::to_string)
                })
                .collect();
            // A namespace package: a folder without `__init__.py` under a root.
            for root in tree.roots {
                let dir = join(root, &parts.join("/"));
                if !under(tree, &dir).is_empty() {
                    dirs.push(dir);
                }
            }
            dirs.sort();
            dirs.dedup();
            path_targets(tree, from, &dirs, path, false)
        }
        PathValue::ModuleFile(_) => Vec::new(),
        PathValue::ModuleDir { module, path } => {
            // The folder of each file the import resolves to; a module not in the tree is
            // installed, and its folder is outside the repository.
            let parts: Vec<&str> = module.split('.').collect();
            let mut dirs: Vec<String> = resolve_absolute(tree, from, &parts)
                .into_iter()
                .filter(|(_, m)| m == module)
                .map(|(f, _)| parent(&f).to_string())
                .collect();
            dirs.sort();
            dirs.dedup();
            path_targets(tree, from, &dirs, path, false)
        }
    }
}

/// Python modules whose dotted name starts with `prefix` (`shop.plugins.` → every module of
/// the package; `shop.plug` → `shop/plug*`).
/// The modules whose names start with `prefix` (`shop.plugins.`), under every import root and
/// the importer's own top folder (as `resolve_absolute` looks).
pub(super) fn modules_under_prefix(tree: &Tree<'_>, importer: &str, prefix: &str) -> Vec<String> {
    let own = base_dir(tree, importer);
    let bases = tree
        .roots
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(own));
    let mut out: Vec<String> = bases
        .flat_map(|base| files_starting(tree, base, prefix))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The folders a package's submodules are found in: its own and, for a namespace package
/// (PEP 420: no `__init__.py`), the folder of the same dotted name under every import root,
/// whose portions Python merges into one package. (A regular package above confines the
/// search to one portion; searching them all can only widen.)
pub(crate) fn portions(tree: &Tree<'_>, dir: &str) -> Vec<String> {
    let mut out = vec![dir.to_string()];
    if dir.is_empty() || tree.packages.contains_key(dir) {
        return out;
    }
    for root in tree.roots {
        let dotted = match root.as_str() {
            "" => dir,
            root => match dir.strip_prefix(root).and_then(|d| d.strip_prefix('/')) {
                Some(dotted) => dotted,
                None => continue,
            },
        };
        for other in tree.roots {
            let folder = join(other, dotted);
            let prefix = format!("{folder}/");
            let exists = tree
                .files
                .range(prefix.clone()..)
                .next()
                .is_some_and(|f| f.starts_with(&prefix));
            if exists {
                out.push(folder);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The modules a relative run-time name loads in `dir`: with the whole name known, that module
/// and the packages on the way to it; else every module under `dir` whose name starts so.
pub(crate) fn relative_modules(tree: &Tree<'_>, dir: &str, name: &str, exact: bool) -> Vec<String> {
    let mut out = if exact {
        let parts: Vec<&str> = name.split('.').filter(|p| !p.is_empty()).collect();
        (1..=parts.len())
            .flat_map(|k| module_files(tree, dir, &parts[..k]))
            .collect()
    } else {
        files_starting(tree, dir, name)
    };
    out.sort();
    out.dedup();
    out
}

/// The Python files (not stubs) under `base` whose module path starts with `prefix`, and the
/// packages on the way to them: importing `pkg.b.cx` runs `pkg/b/__init__.py` first.
fn files_starting(tree: &Tree<'_>, base: &str, prefix: &str) -> Vec<String> {
    let start = join(base, &prefix.replace('.', "/"));
    let start = if prefix.is_empty() && !base.is_empty() {
        format!("{base}/")
    } else {
        start
    };
    let whole: Vec<&str> = prefix.split('.').collect();
    let packages = &whole[..whole.len() - 1];
    let mut out: Vec<String> = (1..=packages.len())
        .flat_map(|k| module_files(tree, base, &packages[..k]))
        .collect();
    out.extend(
        tree.files
            .range(start.clone()..)
            .take_while(|f| f.starts_with(&start))
            .filter(|f| is_python(f) && !f.ends_with(".pyi"))
            .cloned(),
    );
    out
}

pub(super) fn is_dotted_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|p| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// A glob names the files it matches and the files under the folders it matches, at its
    /// own depth unless it crosses folders (`**`); a path through a folder symlink names the
    /// files it reaches and the link.
    #[test]
    fn globs_folders_and_links_name_what_is_under_them() {
        let files: BTreeSet<String> = [
            "app/a/static/x.css",
            "app/b/c/static/y.css",
            "app/static.txt",
            "data/sub/x.json",
            "data/top.json",
            "data/odd[1].json",
            "data/odd1.json",
            "data/{x}/y.json",
            "t[2]/in1.json",
            "t[2]/test_x.py",
            "tests/café.txt",
            "alias",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let links: BTreeMap<String, String> = [("alias".to_string(), "data".to_string())].into();
        let roots = vec![String::new()];
        let is_test = |_: &str| false;
        let go = Default::default();
        let tree = Tree::new(&files, &links, &roots, &is_test, None, &go);
        assert_eq!(
            targets(&tree, "app/**/static"),
            ["app/a/static/x.css", "app/b/c/static/y.css"]
        );
        // The source's escapes: the name they make is read too.
        assert_eq!(targets(&tree, "tests/caf\\u00e9.txt"), ["tests/café.txt"]);
        assert_eq!(targets(&tree, "tests/caf\\xe9.txt"), ["tests/café.txt"]);
        assert_eq!(
            targets(&tree, "data/*"),
            [
                "data/odd1.json",
                "data/odd[1].json",
                "data/sub/x.json",
                "data/top.json",
                "data/{x}/y.json"
            ]
        );
        assert_eq!(targets(&tree, "app/*/static"), ["app/a/static/x.css"]);
        // An escaped character in the leading folder is that character.
        assert_eq!(targets(&tree, "\\app/*/static"), ["app/a/static/x.css"]);
        // Braces holding a `/` match at more than one depth.
        assert_eq!(
            targets(&tree, "app/{a,b/c}"),
            ["app/a/static/x.css", "app/b/c/static/y.css"]
        );
        assert_eq!(targets(&tree, "alias/top.json"), ["data/top.json", "alias"]);
        // Source text is a name as much as a pattern: `data[1].json` names that file, and
        // the class's reading (`data1.json`) too.
        assert_eq!(
            targets(&tree, "data/odd[1].json"),
            ["data/odd1.json", "data/odd[1].json"]
        );
        assert_eq!(targets(&tree, "data/{x}"), ["data/{x}/y.json"]);
        // The folder a glob is joined onto is a name, not a pattern.
        assert_eq!(
            path_targets(&tree, "t[2]/test_x.py", &["t[2]".into()], "in*.json", false),
            ["t[2]/in1.json"]
        );
        assert_eq!(
            targets(&tree, "alias"),
            [
                "alias",
                "data/odd1.json",
                "data/odd[1].json",
                "data/sub/x.json",
                "data/top.json",
                "data/{x}/y.json"
            ]
        );
    }
}

#[cfg(test)]
mod required_runs_tests {
    use super::required_runs;
    use proptest::prelude::*;

    fn glob_part() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "a",
            "b",
            "ab",
            "x.json",
            "Key ",
            "*",
            "**",
            "?",
            "/",
            "_node",
            ".",
            "-",
            "\\[",
            "\\,",
            "\\{",
            "\\}",
            "\\*",
            "\\\\",
            "[ab]",
            "[!a]",
            "[]a]",
            "[a-c]",
            "[,]",
            "[[:alpha:]]",
            "{a,x}",
            "{,b}",
            "{a{b,c},ab}",
            ",",
            "]",
            "}",
            "[",
        ])
        .prop_map(str::to_string)
    }

    fn glob() -> impl Strategy<Value = String> {
        (
            prop::collection::vec(glob_part(), 1..6),
            prop::option::of((
                prop::collection::vec(glob_part(), 0..3),
                prop::collection::vec(glob_part(), 0..3),
            )),
            prop::collection::vec(glob_part(), 0..4),
        )
            .prop_map(|(head, alts, tail)| {
                let mut g = head.concat();
                if let Some((a, b)) = alts {
                    g.push_str(&format!("{{{},{}}}", a.concat(), b.concat()));
                }
                g.push_str(&tail.concat());
                g
            })
    }

    fn path() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec![
                "a", "b", "ab", "x.json", "Key x", "y_node", "c", "-", "[", "]", ",", "{", "}",
                "*", "\\", "a,b", "[1]", "{x}", "d]a",
            ]),
            1..5,
        )
        .prop_map(|parts| parts.join("/"))
    }

    proptest! {
        /// The text is in every path the glob matches, and in every file under a folder it
        /// matches: filtering on it drops nothing.
        #[test]
        fn every_match_holds_the_required_text(g in glob(), p in path()) {
            let Ok(glob) = crate::config::glob(&g) else { return Ok(()) };
            let m = glob.compile_matcher();
            let runs = required_runs(&g);
            let mut prefix = String::new();
            for part in p.split('/') {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(part);
                if m.is_match(&prefix) {
                    for run in &runs {
                        prop_assert!(p.contains(run), "{g} matches {prefix} but {p} lacks {run:?}");
                    }
                }
            }
        }
    }

    proptest! {
        /// The indexed walk (trigram candidates, each folder matched once) names exactly the
        /// files the plain walk does, and a second ask (from what the first kept) the same.
        #[test]
        fn indexed_globs_name_what_a_plain_walk_names(
            g in glob(),
            files in prop::collection::btree_set(path(), 1..40),
        ) {
            let roots = vec![String::new()];
            let is_test = |_: &str| false;
            let go = Default::default();
            let links = Default::default();
            let tree = super::Tree::new(&files, &links, &roots, &is_test, None, &go);
            // A path without a wildcard is looked up, not walked.
            if !g.contains(super::GLOB_META) {
                return Ok(());
            }
            let glob = super::Glob::new(&g);
            let plain = glob.walk(&tree);
            prop_assert_eq!(glob.walk_indexed(&tree), plain.clone(), "{}", g);
            prop_assert_eq!(super::glob_targets(&tree, &g), plain.clone(), "{}", g);
            prop_assert_eq!(super::glob_targets(&tree, &g), plain, "{} again", g);
        }
    }

    /// A glob and a path built together, piece by piece, each path piece one its glob piece
    /// matches: nearly every pair matches, so the runs are checked against real matches.
    fn glob_and_match() -> impl Strategy<Value = (String, String)> {
        let piece = prop::sample::select(vec![
            ("a", "a"),
            ("ab", "ab"),
            ("Key ", "Key "),
            ("x.json", "x.json"),
            ("/", "/"),
            ("*", ""),
            ("*", "zz"),
            ("*", "a,b"),
            ("?", "q"),
            ("**/", "d/e/"),
            ("\\[", "["),
            ("\\]", "]"),
            ("\\,", ","),
            ("\\{", "{"),
            ("\\*", "*"),
            ("[ab]", "b"),
            ("[!a]", "z"),
            ("[]a]", "]"),
            ("[a-c]", "c"),
            ("[,]", ","),
            ("[\\]", "\\"),
            ("[[:alpha:]]", "k"),
            ("{a,x}", "x"),
            ("{,b}", ""),
            ("{a\\,b,ab}", "a,b"),
            ("{a{b,c},ab}", "ac"),
            ("{x\\,**}", "x/y"),
            ("{\\{**}", "k/"),
            ("{[1],\\[1\\]}", "[1]"),
            ("{[1],\\[1\\]}", "1"),
            (",", ","),
            ("]", "]"),
        ]);
        prop::collection::vec(piece, 1..8).prop_map(|pieces| {
            let glob = pieces.iter().map(|(g, _)| *g).collect::<String>();
            let path = pieces.iter().map(|(_, p)| *p).collect::<String>();
            (glob, path)
        })
    }

    proptest! {
        #[test]
        fn every_built_match_holds_the_runs((g, p) in glob_and_match()) {
            let Ok(glob) = crate::config::glob(&g) else { return Ok(()) };
            if glob.compile_matcher().is_match(&p) {
                for run in required_runs(&g) {
                    prop_assert!(p.contains(&run), "{g} matches {p} but it lacks {run:?}");
                }
            }
        }
    }

    #[test]
    fn templates_and_alternatives_give_their_common_text() {
        assert_eq!(
            required_runs("**/*EventInvokeConfig"),
            ["EventInvokeConfig"]
        );
        assert_eq!(required_runs("{Key *,Key */**/*}"), ["Key "]);
        assert_eq!(required_runs("data/*.json"), [".json", "data"]);
        assert_eq!(required_runs("{a,b}/x"), ["x"]);
        assert!(required_runs("**/*").is_empty());
        assert_eq!(required_runs("a/[xy].json"), [".json", "a"]);
        // Escapes are the characters they escape; a class breaks a run, as a brace does.
        assert_eq!(
            required_runs("{autocomplete_fields\\[*\\],autocomplete_fields\\[*/**/*\\]}"),
            ["]", "autocomplete_fields["]
        );
        assert!(required_runs("**/*{\\[1\\],[1]}").is_empty());
        assert_eq!(required_runs("x\\,y{a\\,b,a}z"), ["a", "x,y", "z"]);
        assert_eq!(required_runs("t[]x]u"), ["t", "u"]);
        // Not read here: nothing is required.
        assert!(required_runs("ab[[:alpha:]]cd").is_empty());
        assert!(required_runs("ab[cd").is_empty());
        assert!(required_runs("ab\\").is_empty());
        assert!(required_runs(&format!("{}ab", "{".repeat(200))).is_empty());
        // globset's quirk: `\,` before `**` in braces is dropped.
        assert_eq!(required_runs("data/{a\\,**}"), ["a", "data"]);
    }

    #[test]
    fn a_name_s_escapes_are_read_as_the_source_reads_them() {
        use super::unescaped;
        assert_eq!(unescaped("caf\\u00e9.txt").as_deref(), Some("café.txt"));
        assert_eq!(
            unescaped("r\\xe9sum\\xe9.txt").as_deref(),
            Some("résumé.txt")
        );
        assert_eq!(unescaped("\\101\\0\\U0001F600").as_deref(), Some("A\0😀"));
        assert_eq!(unescaped("a\\\\b\\tc\\d").as_deref(), Some("a\\b\tc\\d"));
        assert_eq!(unescaped("plain.txt"), None);
        assert_eq!(unescaped("\\ud800"), None);
    }
}
