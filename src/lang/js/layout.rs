//! A tree's JavaScript and TypeScript as gate reads it: its test projects (`config`), its
//! workspace packages (npm and yarn `workspaces`, `pnpm-workspace.yaml`), the manifests and
//! compiler configurations its imports resolve through, and the edges of one file's imports,
//! resolved as Node and the bundlers resolve them by oxc_resolver over the tree being gated
//! (`fs::TreeFs`), never the disk. A bare specifier that is no workspace package is external:
//! the lock file, a whole-suite input, covers it.

use super::config::{self, Alias, Find, TestProject};
use super::fs::{self, TreeFs};
use crate::analyze::facts::{Facts, Import};
use crate::graph::{EdgeKind, Tree};
use crate::lang::{Found, Layout};
use oxc_resolver::{ResolveError, ResolveOptions, ResolverGeneric, TsconfigDiscovery};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

pub(crate) struct JsLayout {
    pub projects: Vec<TestProject>,
    /// Workspace package name → its folder.
    packages: BTreeMap<String, String>,
    /// Every package a manifest of the tree names (its own, its dependencies of every kind):
    /// a bare specifier naming none of them is no installed package, but what a plugin or an
    /// alias gate did not read resolves.
    declared: BTreeSet<String>,
    /// Manifests and compiler configurations, by path: what the resolver reads.
    texts: BTreeMap<String, Vec<u8>>,
    digest: u64,
    broken: Option<String>,
    /// The values `.gate.toml` states that the load did not use.
    warnings: Vec<String>,
    /// Built the first time a file's imports are resolved: over the tree's files then.
    resolvers: OnceLock<Resolvers>,
}

struct Resolvers {
    /// With the tree's `tsconfig.json` files (`paths`, `extends`, `references`).
    typed: ResolverGeneric<TreeFs>,
    /// Without them: for a file whose tsconfig cannot be read (it extends a package).
    plain: ResolverGeneric<TreeFs>,
}

/// Whether a path is inside an installed package (never the tree's own code).
fn in_node_modules(path: &str) -> bool {
    path.starts_with("node_modules/") || path.contains("/node_modules/")
}

fn is_compiler_config(path: &str) -> bool {
    let name = crate::path::file_name(path);
    (name.starts_with("tsconfig") || name.starts_with("jsconfig")) && name.ends_with(".json")
}

impl JsLayout {
    /// The layout of the tree with `files`, when it has a JavaScript manifest or source, with
    /// the values `given` in `.gate.toml` for what its configurations do not say as literals.
    pub(crate) fn load(
        files: &BTreeSet<String>,
        read: &dyn Fn(&str) -> Option<Vec<u8>>,
        given: &[crate::lang::StatedValue],
    ) -> Option<JsLayout> {
        let manifests: Vec<&String> = files
            .iter()
            .filter(|f| crate::path::file_name(f) == "package.json" && !in_node_modules(f))
            .collect();
        if manifests.is_empty() && !files.iter().any(|f| super::is_js(f)) {
            return None;
        }
        let mut texts = BTreeMap::new();
        let mut broken = None;
        let mut parsed: BTreeMap<String, serde_json::Value> = BTreeMap::new();
        for manifest in &manifests {
            let Some(bytes) = read(manifest) else {
                continue;
            };
            match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(value) => {
                    parsed.insert(crate::path::parent(manifest).to_string(), value);
                }
                // Below another package (a fixture's deliberately broken manifest), its folder
                // is that package's, whose runner collects it; with none above, gate cannot
                // tell what runs its tests.
                Err(e) if !nested(manifest, &manifests) => {
                    broken.get_or_insert(format!(
                        "{manifest}: not JSON ({e}): gate cannot read its package"
                    ));
                }
                Err(_) => {}
            }
            texts.insert((*manifest).clone(), bytes);
        }
        // Compiler configurations, and a committed package's manifest (its `exports`).
        let resolver_reads = |f: &&String| {
            (is_compiler_config(f) && !in_node_modules(f))
                || (in_node_modules(f) && crate::path::file_name(f) == "package.json")
        };
        for config in files.iter().filter(resolver_reads) {
            if let Some(bytes) = read(config) {
                texts.insert(config.clone(), bytes);
            }
        }
        let packages = workspace_packages(&parsed, read);
        let declared = declared(&parsed, &packages);
        let stated = super::stated::Stated::new(given);
        let mut projects = Vec::new();
        for (dir, manifest) in &parsed {
            match config::project(dir, manifest, files, read, &stated) {
                Ok(found) => projects.extend(found),
                Err(why) => {
                    broken.get_or_insert(why);
                }
            }
        }
        // The deepest project holding a file runs it; a folder another's `projects` lists runs
        // from the listing folder (its own configuration is the same project).
        projects.sort_by(|a, b| {
            (b.dir.len(), &a.dir, a.run_dir.len()).cmp(&(a.dir.len(), &b.dir, b.run_dir.len()))
        });
        projects.dedup_by(|later, kept| later.dir == kept.dir && later.config == kept.config);
        let mut hasher = std::hash::DefaultHasher::new();
        texts.hash(&mut hasher);
        stated.hash(&mut hasher);
        for project in &projects {
            if let Some(config) = &project.config
                && let Some(bytes) = read(config)
            {
                (config, bytes).hash(&mut hasher);
            }
        }
        Some(JsLayout {
            projects,
            packages,
            declared,
            texts,
            digest: hasher.finish(),
            warnings: stated.warnings(files, broken.is_some()),
            broken,
            resolvers: OnceLock::new(),
        })
    }

    /// Whether `path` is a test: some project holding it matches it. `owner` picks the first
    /// holding project that matches, else one that does not, so this is the same as asking
    /// `owner`'s project, with each project's globs tried once.
    fn is_test(&self, path: &str) -> bool {
        super::is_js(path)
            && !in_node_modules(path)
            && self
                .projects
                .iter()
                .any(|p| config::under(&p.dir, path).is_some() && p.is_test(path))
    }

    /// The project that runs `path`: the deepest whose folder holds it.
    pub(crate) fn project_of(&self, path: &str) -> Option<&TestProject> {
        owner(&self.projects, path)
    }

    fn resolvers(&self, tree: &Tree<'_>) -> &Resolvers {
        self.resolvers.get_or_init(|| {
            let links = self
                .packages
                .iter()
                .map(|(name, dir)| (format!("node_modules/{name}"), dir.clone()))
                .collect();
            // Committed packages under `node_modules/` too: a bare specifier finds them as
            // Node does.
            let files: BTreeSet<String> = tree.files.clone();
            let tree_fs = TreeFs::new(files, self.texts.clone(), links);
            Resolvers {
                typed: ResolverGeneric::new_with_file_system(
                    tree_fs.clone(),
                    options(Some(TsconfigDiscovery::Auto)),
                ),
                plain: ResolverGeneric::new_with_file_system(tree_fs, options(None)),
            }
        })
    }

    /// The files `spec`, imported by `from`, may load (none when it is external: an installed
    /// package, a Node built-in); `None` when gate cannot tell: a bare specifier that names no
    /// package the tree declares and that nothing gate read resolves.
    fn resolve(&self, tree: &Tree<'_>, from: &str, spec: &str) -> Option<Vec<String>> {
        let aliased = self
            .project_of(from)
            .map(|p| alias(&p.aliases, spec))
            .unwrap_or_default();
        if !aliased.is_empty() {
            let mut out = Vec::new();
            for s in &aliased {
                out.extend(self.resolve_one(tree, from, s)?);
            }
            return Some(out);
        }
        self.resolve_one(tree, from, spec)
    }

    fn resolve_one(&self, tree: &Tree<'_>, from: &str, spec: &str) -> Option<Vec<String>> {
        let resolvers = self.resolvers(tree);
        let file = fs::absolute(from);
        // A `/`-rooted specifier names a file of the project (Vite's root), written as a tree
        // path by an alias.
        let spec_abs;
        let spec = match spec.strip_prefix('/') {
            Some(rest) => {
                spec_abs = fs::absolute(rest).to_string_lossy().into_owned();
                spec_abs.as_str()
            }
            None => spec,
        };
        let found = match resolvers.typed.resolve_file(&file, spec) {
            Err(ResolveError::TsconfigNotFound(_) | ResolveError::TsconfigCircularExtend(_))
            | Err(ResolveError::Json(_)) => resolvers.plain.resolve_file(&file, spec),
            other => other,
        };
        Some(match found {
            Ok(resolution) => match fs::relative(resolution.path()) {
                Some(path) if tree.files.contains(&path) => vec![path],
                _ => self.package_files(tree, spec),
            },
            Err(ResolveError::Builtin { .. }) => Vec::new(),
            // Unknown beats wrong: a relative specifier that did not resolve names what a
            // plain reading of it could, a workspace package's whole folder.
            Err(_) if is_relative(spec) => plain_candidates(tree, from, spec),
            Err(_) if self.declared.contains(package_name(spec)) => self.package_files(tree, spec),
            Err(_) => return None,
        })
    }

    /// Every file of the workspace package `spec` names, when it names one the resolver did
    /// not resolve into the tree (its `exports` point at a build that is not committed).
    fn package_files(&self, tree: &Tree<'_>, spec: &str) -> Vec<String> {
        let name = package_name(spec);
        let Some(dir) = self.packages.get(name) else {
            return Vec::new();
        };
        let prefix = format!("{dir}/");
        tree.files
            .range(prefix.clone()..)
            .take_while(|f| f.starts_with(&prefix))
            .filter(|f| !in_node_modules(f))
            .cloned()
            .collect()
    }
}

/// The packages the tree's manifests name: their own names, their dependencies of every kind,
/// the workspace's packages.
fn declared(
    manifests: &BTreeMap<String, serde_json::Value>,
    packages: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let kinds = [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ];
    let mut out: BTreeSet<String> = packages.keys().cloned().collect();
    for manifest in manifests.values() {
        out.extend(
            manifest
                .get("name")
                .and_then(|n| n.as_str())
                .map(str::to_string),
        );
        for kind in kinds {
            if let Some(deps) = manifest.get(kind).and_then(|d| d.as_object()) {
                out.extend(deps.keys().cloned());
            }
        }
    }
    out
}

/// Whether another manifest sits in a folder above `manifest`'s.
fn nested(manifest: &str, manifests: &[&String]) -> bool {
    let dir = crate::path::parent(manifest);
    manifests.iter().any(|m| {
        let above = crate::path::parent(m);
        m.as_str() != manifest && above != dir && config::under(above, dir).is_some()
    })
}

/// The project that runs `path`: the first (deepest) whose tests it is one of, else the first
/// whose folder holds it (whose aliases its imports resolve through).
fn owner<'p>(projects: &'p [TestProject], path: &str) -> Option<&'p TestProject> {
    let holding = || {
        projects
            .iter()
            .filter(|p| config::under(&p.dir, path).is_some())
    };
    holding()
        .find(|p| p.is_test(path))
        .or_else(|| holding().next())
}

fn is_relative(spec: &str) -> bool {
    spec.starts_with("./")
        || spec.starts_with("../")
        || spec == "."
        || spec == ".."
        || spec.starts_with('/')
}

/// `@org/pkg/sub` → `@org/pkg`; `pkg/sub` → `pkg`.
fn package_name(spec: &str) -> &str {
    let mut parts = spec.splitn(3, '/');
    let first = parts.next().unwrap_or_default();
    if first.starts_with('@') {
        let second = parts.next().unwrap_or_default();
        &spec[..(first.len() + 1 + second.len()).min(spec.len())]
    } else {
        first
    }
}

/// What a relative specifier can name without the resolver: the file, it with a source
/// extension, or an index file of the folder.
fn plain_candidates(tree: &Tree<'_>, from: &str, spec: &str) -> Vec<String> {
    let base = match spec.strip_prefix('/') {
        Some(rest) => crate::path::normalize(rest),
        None => crate::path::normalize(&crate::path::join(crate::path::parent(from), spec)),
    };
    let stem = base
        .strip_suffix(".js")
        .or_else(|| base.strip_suffix(".jsx"))
        .or_else(|| base.strip_suffix(".mjs"))
        .or_else(|| base.strip_suffix(".cjs"))
        .unwrap_or(&base);
    let mut out: Vec<String> = std::iter::once(base.clone())
        .chain(super::EXTENSIONS.iter().map(|e| format!("{stem}{e}")))
        .chain(super::EXTENSIONS.iter().map(|e| format!("{base}/index{e}")))
        .filter(|c| tree.files.contains(c))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The specifiers `spec` becomes under the project's aliases (none when none matches).
fn alias(aliases: &[Alias], spec: &str) -> Vec<String> {
    for a in aliases {
        match &a.find {
            Find::Exact(find) => {
                let rest = if spec == find {
                    Some("")
                } else {
                    spec.strip_prefix(find.as_str())
                        .filter(|r| r.starts_with('/'))
                };
                if let Some(rest) = rest {
                    return a.to.iter().map(|t| format!("{t}{rest}")).collect();
                }
            }
            Find::Regex(re) => {
                if re.is_match(spec) {
                    return a
                        .to
                        .iter()
                        .map(|t| re.replace(spec, t.as_str()).into_owned())
                        .collect();
                }
            }
        }
    }
    Vec::new()
}

fn options(tsconfig: Option<TsconfigDiscovery>) -> ResolveOptions {
    let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    ResolveOptions {
        extensions: strings(&[
            ".ts", ".tsx", ".mts", ".cts", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".json", ".node",
        ]),
        extension_alias: vec![
            (".js".into(), strings(&[".ts", ".tsx", ".js", ".jsx"])),
            (".jsx".into(), strings(&[".tsx", ".jsx"])),
            (".mjs".into(), strings(&[".mts", ".mjs"])),
            (".cjs".into(), strings(&[".cts", ".cjs"])),
        ],
        condition_names: strings(&[
            "types",
            "import",
            "require",
            "node",
            "development",
            "default",
        ]),
        main_fields: strings(&["types", "module", "main"]),
        tsconfig,
        builtin_modules: true,
        node_path: false,
        ..ResolveOptions::default()
    }
}

/// Workspace packages: npm and yarn `workspaces` (an array, or `{ packages }`), pnpm's
/// `pnpm-workspace.yaml` `packages:` list; each folder they match with a named manifest.
fn workspace_packages(
    manifests: &BTreeMap<String, serde_json::Value>,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> BTreeMap<String, String> {
    let mut patterns: Vec<String> = Vec::new();
    if let Some(root) = manifests.get("") {
        let list = root.get("workspaces").and_then(|w| {
            w.as_array()
                .or_else(|| w.get("packages").and_then(|p| p.as_array()))
        });
        patterns.extend(
            list.into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string)),
        );
    }
    if let Some(yaml) = read("pnpm-workspace.yaml") {
        patterns.extend(pnpm_packages(&String::from_utf8_lossy(&yaml)));
    }
    let matchers: Vec<globset::GlobMatcher> = patterns
        .iter()
        .filter(|p| !p.starts_with('!'))
        .filter_map(|p| {
            globset::GlobBuilder::new(p.trim_start_matches("./").trim_end_matches('/'))
                .literal_separator(true)
                .build()
                .ok()
        })
        .map(|g| g.compile_matcher())
        .collect();
    let mut out = BTreeMap::new();
    for (dir, manifest) in manifests {
        let in_workspace = !dir.is_empty() && matchers.iter().any(|m| m.is_match(dir));
        let name = manifest.get("name").and_then(|n| n.as_str());
        if let (true, Some(name)) = (in_workspace, name) {
            out.insert(name.to_string(), dir.clone());
        }
    }
    out
}

/// The `packages:` entries of a `pnpm-workspace.yaml` (a list of quoted or bare strings).
fn pnpm_packages(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if !line.starts_with([' ', '\t', '-']) && !trimmed.is_empty() {
            inside = trimmed.starts_with("packages:");
            continue;
        }
        if let Some(item) = trimmed.strip_prefix('-').filter(|_| inside) {
            let item = item.trim().trim_matches(['"', '\'']);
            if !item.is_empty() {
                out.push(item.to_string());
            }
        }
    }
    out
}

impl Layout for JsLayout {
    /// Every file matched against the projects' tests: what the `test_list` cache keeps, so
    /// a warm selection does not redo it.
    fn tests(&self, files: &BTreeSet<String>) -> BTreeSet<String> {
        files.iter().filter(|f| self.is_test(f)).cloned().collect()
    }

    fn edges(&self, tree: &Tree<'_>, path: &str, facts: &Facts, found: &mut Found<'_>) {
        for import in &facts.imports {
            import_edges(self, tree, path, import, found);
        }
        if self.is_test(path)
            && let Some(project) = self.project_of(path)
        {
            project_edges(self, tree, path, project, found);
        }
    }

    fn digest(&self) -> u64 {
        self.digest
    }

    /// With a test project, a module nothing reaches is untested; without one, the tree's
    /// JavaScript is data to its other languages' tests, whose reads gate may not see.
    fn reads_whole(&self) -> bool {
        !self.projects.is_empty()
    }

    fn broken(&self) -> Option<String> {
        self.broken.clone()
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// One import's edges, by its form (`lang::js::analyze`).
fn import_edges(
    layout: &JsLayout,
    tree: &Tree<'_>,
    path: &str,
    import: &Import,
    found: &mut Found<'_>,
) {
    let form = import.names.first().map_or("import", String::as_str);
    let detail = match form {
        "import" | "export" => import.module.clone(),
        other => format!("{other} {}", import.module),
    };
    let dir = crate::path::parent(path);
    let targets: Vec<String> = match form {
        // Every file under the literal folder of a computed specifier.
        "under" => {
            let folder = crate::path::normalize(&crate::path::join(dir, &import.module));
            let prefix = if folder.is_empty() {
                String::new()
            } else {
                format!("{folder}/")
            };
            tree.files
                .range(prefix.clone()..)
                .take_while(|f| f.starts_with(&prefix))
                .filter(|f| !in_node_modules(f))
                .cloned()
                .collect()
        }
        "glob" => glob_files(tree, layout, path, &import.module),
        _ => match layout.resolve(tree, path, &import.module) {
            Some(targets) => targets,
            // A type is erased before the run: only what runs can be unknown.
            None if form == "type" => Vec::new(),
            None => {
                (found.unbounded)(
                    import.line,
                    format!(
                        "{detail}: no package the tree declares, resolved by nothing gate reads"
                    ),
                );
                return;
            }
        },
    };
    let add = &mut *found.edge;
    for to in targets {
        // A mocked module's `__mocks__` sibling replaces it (Jest and Vitest, with no factory).
        if form == "mock" {
            for m in mocks_of(tree, &to) {
                add(
                    m,
                    EdgeKind::Convention,
                    import.line,
                    format!("__mocks__ of {}", import.module),
                );
            }
        }
        if to != path {
            add(to, EdgeKind::Import, import.line, detail.clone());
        }
    }
}

/// `import.meta.glob`'s pattern, relative to the file (or, `/`-rooted, to its project).
fn glob_files(tree: &Tree<'_>, layout: &JsLayout, path: &str, pattern: &str) -> Vec<String> {
    let full = match pattern.strip_prefix('/') {
        Some(rest) => {
            let dir = layout.project_of(path).map_or("", |p| p.dir.as_str());
            crate::path::join(dir, rest)
        }
        None => crate::path::join(crate::path::parent(path), pattern),
    };
    let full = crate::path::normalize(&full);
    let Ok(glob) = globset::GlobBuilder::new(&full)
        .literal_separator(true)
        .build()
    else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    let literal: String = full
        .chars()
        .take_while(|c| !matches!(c, '*' | '?' | '[' | '{'))
        .collect();
    let start = literal
        .rsplit_once('/')
        .map_or(String::new(), |(d, _)| format!("{d}/"));
    tree.files
        .range(start.clone()..)
        .take_while(|f| f.starts_with(&start))
        .filter(|f| matcher.is_match(f))
        .cloned()
        .collect()
}

/// `dir/__mocks__/name.*` for the module `dir/name.ext`.
fn mocks_of(tree: &Tree<'_>, module: &str) -> Vec<String> {
    let name = crate::path::file_name(module);
    let stem = name.split('.').next().unwrap_or(name);
    let prefix = crate::path::join(crate::path::parent(module), &format!("__mocks__/{stem}."));
    tree.files
        .range(prefix.clone()..)
        .take_while(|f| f.starts_with(&prefix))
        .cloned()
        .collect()
}

/// What a test of `project` needs beyond its imports: the runner's configuration (and what it
/// imports), the setup files every test runs, the project's `__mocks__` of packages, and its
/// own snapshots.
fn project_edges(
    layout: &JsLayout,
    tree: &Tree<'_>,
    path: &str,
    project: &TestProject,
    found: &mut Found<'_>,
) {
    let runner = project.runner.name();
    if let Some(config) = &project.config {
        for spec in &project.config_imports {
            let Some(targets) = layout.resolve(tree, config, spec) else {
                (found.unbounded)(
                    0,
                    format!("{config} imports {spec}, which gate cannot resolve"),
                );
                continue;
            };
            for to in targets {
                (found.edge)(
                    to,
                    EdgeKind::Convention,
                    0,
                    format!("imported by {runner}'s configuration {config}"),
                );
            }
        }
    }
    for setup in &project.setup {
        if tree.files.contains(setup) {
            (found.edge)(
                setup.clone(),
                EdgeKind::Convention,
                0,
                format!("a {runner} setup file"),
            );
        }
    }
    let anchor = project
        .config
        .clone()
        .unwrap_or_else(|| crate::path::join(&project.dir, "package.json"));
    let add = &mut *found.edge;
    for spec in &project.setup_specs {
        for to in layout.resolve(tree, &anchor, spec).unwrap_or_default() {
            add(
                to,
                EdgeKind::Convention,
                0,
                format!("a {runner} setup module ({spec})"),
            );
        }
    }
    let mocks = crate::path::join(&project.dir, "__mocks__/");
    for m in tree
        .files
        .range(mocks.clone()..)
        .take_while(|f| f.starts_with(&mocks))
    {
        add(
            m.clone(),
            EdgeKind::Convention,
            0,
            "a package's mock in the project's __mocks__/".into(),
        );
    }
    let snapshots = crate::path::join(
        crate::path::parent(path),
        &format!("__snapshots__/{}", crate::path::file_name(path)),
    );
    for snap in tree
        .files
        .range(snapshots.clone()..)
        .take_while(|f| f.starts_with(&snapshots))
    {
        add(
            snap.clone(),
            EdgeKind::Convention,
            0,
            "its snapshot file".into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_and_pnpm_lists() {
        assert_eq!(package_name("@org/pkg/sub/x"), "@org/pkg");
        assert_eq!(package_name("pkg/sub"), "pkg");
        assert_eq!(package_name("@org/pkg"), "@org/pkg");
        assert_eq!(
            pnpm_packages("packages:\n  - 'packages/*'\n  - \"apps/**\"\nother:\n  - x\n"),
            vec!["packages/*", "apps/**"]
        );
    }
}

#[cfg(test)]
mod resolution {
    use super::*;

    /// The edges `path`'s imports give in a tree of `files` (path, text).
    fn edges_of(files: &[(&str, &str)], path: &str) -> Vec<(String, String)> {
        let texts: BTreeMap<String, Vec<u8>> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
            .collect();
        let names: BTreeSet<String> = texts.keys().cloned().collect();
        let read = |p: &str| texts.get(p).cloned();
        let layout = JsLayout::load(&names, &read, &[]).expect("a JavaScript tree");
        let layouts = crate::lang::Layouts::single("js", Box::new(layout));
        let (links, roots, go) = (BTreeMap::new(), Vec::new(), Default::default());
        let is_test = |_: &str| false;
        let mut tree = Tree::new(&names, &links, &roots, &is_test, None, &go);
        tree.layouts = &layouts;
        let facts = crate::analyze::facts_of(path, &texts[path]);
        let (mut out, mut unknown) = (Vec::new(), Vec::new());
        let mut found = Found {
            edge: &mut |to, _, _, detail| out.push((to, detail)),
            unbounded: &mut |_, text| unknown.push(("?".to_string(), text)),
        };
        layouts
            .of(path)
            .expect("its layout")
            .edges(&tree, path, &facts, &mut found);
        out.extend(unknown);
        out.sort();
        out
    }

    fn targets(files: &[(&str, &str)], path: &str) -> Vec<String> {
        edges_of(files, path)
            .into_iter()
            .map(|(to, _)| to)
            .collect()
    }

    #[test]
    fn node_and_typescript_rules_resolve_over_the_tree() {
        let files = [
            (
                "package.json",
                r#"{"name":"root","workspaces":["packages/*"],"dependencies":{"left-pad":"1"},"devDependencies":{"vitest":"4"}}"#,
            ),
            (
                "tsconfig.json",
                r#"{ "compilerOptions": { "baseUrl": ".", "paths": { "@/*": ["src/*"] } } }"#,
            ),
            ("src/a.ts", ""),
            ("src/b/index.ts", ""),
            ("src/c.tsx", ""),
            ("src/data.json", "{}"),
            (
                "packages/util/package.json",
                r#"{"name":"@org/util","exports":{".":{"import":"./dist/index.js"}}}"#,
            ),
            ("packages/util/src/index.ts", ""),
            (
                "src/x.test.ts",
                "import { a } from './a.js';\nimport b from '@/b';\nimport c from './c.js';\nimport d from './data.json';\nimport u from '@org/util';\nimport fs from 'node:fs';\nimport ext from 'left-pad';\nimport type { T } from './a';\n",
            ),
        ];
        assert_eq!(
            targets(&files, "src/x.test.ts"),
            vec![
                "packages/util/package.json",
                "packages/util/src/index.ts",
                "src/a.ts",
                "src/a.ts",
                "src/b/index.ts",
                "src/c.tsx",
                "src/data.json",
            ]
        );
    }

    #[test]
    fn a_bare_specifier_no_manifest_declares_is_unknown_not_external() {
        let files = [
            (
                "package.json",
                r#"{"dependencies":{"left-pad":"1"},"devDependencies":{"vitest":"4"}}"#,
            ),
            ("src/x.ts", ""),
            (
                "src/y.test.ts",
                "import 'left-pad';\nimport x from '@/x';\nimport type { T } from '@/types';\n",
            ),
        ];
        let edges = edges_of(&files, "src/y.test.ts");
        assert_eq!(edges.len(), 1, "{edges:?}");
        assert_eq!(edges[0].0, "?");
        assert!(edges[0].1.starts_with("@/x"), "{edges:?}");
    }

    #[test]
    fn a_computed_specifier_is_every_file_under_its_literal_folder() {
        let files = [
            ("package.json", r#"{"devDependencies":{"vitest":"4"}}"#),
            ("src/locale/en.ts", ""),
            ("src/locale/fr/index.ts", ""),
            ("src/other.ts", ""),
            (
                "src/i18n.ts",
                "export const load = (l) => import(`./locale/${l}.js`);\n",
            ),
        ];
        assert_eq!(
            targets(&files, "src/i18n.ts"),
            vec!["src/locale/en.ts", "src/locale/fr/index.ts"]
        );
    }
}

#[cfg(test)]
mod projects {
    use super::*;

    fn load(files: &[(&str, &str)]) -> JsLayout {
        let texts: BTreeMap<String, Vec<u8>> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
            .collect();
        let names: BTreeSet<String> = texts.keys().cloned().collect();
        JsLayout::load(&names, &|p: &str| texts.get(p).cloned(), &[]).expect("a JavaScript tree")
    }

    /// The tests among `files` of their layout.
    fn tests(files: &[(&str, &str)]) -> BTreeSet<String> {
        let names = files.iter().map(|(p, _)| p.to_string()).collect();
        load(files).tests(&names)
    }

    #[test]
    fn a_vitest_configuration_names_the_tests_and_the_setup_files() {
        let files = [
            ("package.json", r#"{"devDependencies":{"vitest":"4"}}"#),
            (
                "vitest.config.ts",
                "import { defineConfig } from 'vitest/config';\nimport path from 'node:path';\nconst setup = './test/setup.ts';\nexport default defineConfig({\n  resolve: { alias: [{ find: /^~(.*)$/, replacement: path.resolve(__dirname, 'src/$1') }] },\n  test: { include: ['test/**/*.spec.ts'], setupFiles: [setup] },\n});\n",
            ),
            ("test/a.spec.ts", ""),
            ("test/b.test.ts", ""),
            ("src/c.spec.ts", ""),
            ("test/setup.ts", ""),
        ];
        let layout = load(&files);
        assert_eq!(tests(&files), ["test/a.spec.ts".to_string()].into());
        let project = &layout.projects[0];
        assert_eq!(project.setup, vec!["test/setup.ts"]);
        assert_eq!(alias(&project.aliases, "~util/x"), vec!["/src/util/x"]);
        assert!(layout.broken().is_none());
    }

    #[test]
    fn a_key_that_is_no_literal_is_a_refusal_naming_file_and_key() {
        let files = [
            ("package.json", r#"{"devDependencies":{"vitest":"4"}}"#),
            (
                "vitest.config.ts",
                "export default defineConfig({ test: { include: globs() } });\n",
            ),
            ("a.test.ts", ""),
        ];
        let layout = load(&files);
        let why = layout.broken().expect("refused");
        assert!(
            why.contains("vitest.config.ts") && why.contains("test.include"),
            "{why}"
        );
        let spread = load(&[
            ("package.json", r#"{"devDependencies":{"vitest":"4"}}"#),
            (
                "vitest.config.mjs",
                "export default { test: { ...shared } };\n",
            ),
        ]);
        let why = spread.broken().expect("refused");
        assert!(why.contains("a spread"), "{why}");
    }

    #[test]
    fn a_jest_project_reads_its_matchers_mapper_and_root_dir_patterns() {
        let files = [
            ("package.json", r#"{"devDependencies":{"jest":"30"}}"#),
            (
                "jest.config.js",
                "module.exports = {\n  testPathIgnorePatterns: ['<rootDir>/dist/'],\n  setupFilesAfterEnv: ['<rootDir>/test/setup.js'],\n  moduleNameMapper: { '^@/(.*)$': '<rootDir>/src/$1' },\n};\n",
            ),
            ("test/a.test.js", ""),
            ("dist/b.test.js", ""),
            ("src/dist/c.test.js", ""),
            ("test/setup.js", ""),
        ];
        let layout = load(&files);
        // `<rootDir>/dist/` ignores the project's dist/ only, as Jest matches it.
        assert_eq!(
            tests(&files),
            [
                "src/dist/c.test.js".to_string(),
                "test/a.test.js".to_string()
            ]
            .into()
        );
        let project = &layout.projects[0];
        assert_eq!(project.setup, vec!["test/setup.js"]);
        assert_eq!(alias(&project.aliases, "@/x/y"), vec!["/src/x/y"]);
    }

    #[test]
    fn vitest_projects_are_each_read_and_run_from_the_listing_folder() {
        let files = [
            ("package.json", r#"{"devDependencies":{"vitest":"4"}}"#),
            (
                "vitest.config.ts",
                "export default defineConfig({ test: { setupFiles: ['./setup.ts'], projects: ['packages/*', '!packages/skip', { extends: true, test: { name: 'unit', include: ['tests/unit/**/*.test.ts'] } }] } });\n",
            ),
            ("setup.ts", ""),
            ("packages/a/package.json", "{}"),
            (
                "packages/a/vitest.config.ts",
                "export default { test: { include: ['spec/**/*.ts'] } };\n",
            ),
            ("packages/a/spec/x.ts", ""),
            ("packages/a/src/y.test.ts", ""),
            ("packages/b/src/z.test.ts", ""),
            ("packages/skip/w.test.ts", ""),
            ("tests/unit/u.test.ts", ""),
            ("tests/e2e/e.test.ts", ""),
        ];
        let layout = load(&files);
        assert!(layout.broken().is_none(), "{:?}", layout.broken());
        assert_eq!(
            tests(&files),
            [
                "packages/a/spec/x.ts".to_string(),
                "packages/b/src/z.test.ts".to_string(),
                "tests/unit/u.test.ts".to_string(),
            ]
            .into()
        );
        for test in tests(&files) {
            let p = layout.project_of(&test).expect("a project");
            assert_eq!(p.run_dir, "", "{test}");
        }
        let unit = layout.project_of("tests/unit/u.test.ts").unwrap();
        assert_eq!(unit.setup, vec!["setup.ts"]);
    }

    #[test]
    fn a_broken_manifest_below_another_package_is_that_packages_fixture() {
        let nested = load(&[
            ("package.json", r#"{"devDependencies":{"vitest":"4"}}"#),
            ("test/fixtures/bad/package.json", "{ not json"),
            ("test/a.test.ts", ""),
        ]);
        assert!(nested.broken().is_none());
        let top = load(&[("package.json", "{ not json"), ("a.test.ts", "")]);
        assert!(top.broken().is_some_and(|w| w.contains("package.json")));
    }
}
