//! Calls: the import functions, the calls that start a process (their argv, `python -c` code,
//! shell command lines) and the calls whose arguments are paths.

use super::strings::{has_interpolation, one_line, string_value};
use super::{Pass, analyze};
use crate::analyze::facts::{Anchor, DynamicImport, StringContext};
use crate::analyze::shell;
use tree_sitter::Node;

/// Calls that import (or run) a module named by their first argument.
const IMPORT_FUNCTIONS: &[&str] = &[
    "importlib.import_module",
    "import_module",
    "__import__",
    "importlib.__import__",
    "builtins.__import__",
    "runpy.run_module",
    "run_module",
];

/// Calls that put a folder on `sys.path`: its argument is an import root, not a data path.
const SYS_PATH_CALLS: &[&str] = &[
    "sys.path.insert",
    "sys.path.append",
    "syspath_prepend",
    "site.addsitedir",
];

/// Whether `function` (a call's callee text) puts a folder on `sys.path`.
pub(super) fn is_sys_path_call(function: &str) -> bool {
    SYS_PATH_CALLS.contains(&function) || function.ends_with(".syspath_prepend")
}

/// Calls that start a process: an argv list, or a command line for a shell.
const PROCESS_CALLS: &[&str] = &[
    "run",
    "call",
    "check_call",
    "check_output",
    "Popen",
    "getoutput",
    "getstatusoutput",
    "create_subprocess_exec",
    "create_subprocess_shell",
    "system",
    "popen",
    "execv",
    "execvp",
    "execl",
    "execlp",
    "spawnv",
    "spawnl",
    "invoke",
];
/// Calls whose string argument is always a shell command line.
const SHELL_CALLS: &[&str] = &[
    "os.system",
    "os.popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "asyncio.create_subprocess_shell",
    "create_subprocess_shell",
];
/// Calls whose string arguments are paths (so a bare `"templates"` may name a folder).
const PATH_CALLS: &[&str] = &[
    "open",
    "io.open",
    "codecs.open",
    "Path",
    "pathlib.Path",
    "PurePath",
    "FileSystemLoader",
    "jinja2.FileSystemLoader",
    "os.listdir",
    "os.scandir",
    "os.walk",
    "glob",
    "glob.glob",
    "glob.iglob",
    "iglob",
    "load_dotenv",
    "run_path",
    "spec_from_file_location",
    "SourceFileLoader",
    "dotenv.load_dotenv",
    "send_from_directory",
    "StaticFiles",
    "Jinja2Templates",
    "shutil.copy",
    "shutil.copyfile",
    "shutil.copytree",
    "os.path.exists",
    "os.path.isfile",
    "os.path.isdir",
];
/// Keyword arguments whose value is a path (`template_folder="templates"`, `cwd=…`).
/// Calls that read an environment variable named by their first argument.
const ENV_READS: &[&str] = &[
    "os.getenv",
    "getenv",
    "os.environ.get",
    "environ.get",
    "os.environ.setdefault",
    "environ.setdefault",
    "os.environb.get",
    "os.environ.pop",
    "environ.pop",
];

/// The objects a subscript reads an environment variable of (`os.environ["X"]`).
const ENVIRONS: &[&str] = &["os.environ", "environ", "os.environb"];

pub(super) fn path_keyword(name: &str) -> bool {
    [
        "folder",
        "dir",
        "dirs",
        "directory",
        "path",
        "file",
        "filename",
        "root",
    ]
    .iter()
    .any(|s| name == *s || name.ends_with(&format!("_{s}")))
}

impl Pass<'_> {
    /// What a node reads of the environment, if anything.
    pub(super) fn environment(&mut self, node: Node<'_>, line: u32) {
        match node.kind() {
            "subscript" => self.environ_subscript(node, line),
            "attribute" | "identifier" => self.environ_use(node, line),
            _ => {}
        }
    }

    /// `os.environ["X"]`: a variable read by a literal name; `os.environ[k]`: by a name gate
    /// cannot know.
    fn environ_subscript(&mut self, node: Node<'_>, line: u32) {
        if !node.child_by_field_name("value").is_some_and(|v| {
            let v = self.text(v);
            ENVIRONS.contains(&v.as_str()) && self.is_os_name(&v)
        }) {
            return;
        }
        match node.child_by_field_name("subscript") {
            Some(key) if key.kind() == "string" && !has_interpolation(key) => {
                self.facts.env.push(string_value(key, self.source));
            }
            _ => self.env_any(node, line),
        }
    }

    /// A use of the environment or of an environment reader other than reading one variable
    /// by a literal name — `dict(os.environ)`, `env=os.environ`, `os.environ.copy()`,
    /// `for k in os.environ`, `get = os.getenv` — reads variables gate cannot name. The forms
    /// that name one (`os.environ["X"]`, `os.environ.get("X")`, `"X" in os.environ`) are read
    /// where they are: by `environ_subscript`, `call` and here.
    fn environ_use(&mut self, node: Node<'_>, line: u32) {
        // The cheap test first: this runs on every name of every file.
        let bytes = &self.source[node.byte_range()];
        let whole = matches!(bytes, b"os.environ" | b"os.environb")
            || (bytes == b"environ" && self.is_os_name("environ"));
        let reader = ENV_READS.iter().any(|r| r.as_bytes() == bytes)
            && self.is_os_name(&String::from_utf8_lossy(bytes));
        if !whole && !reader {
            return;
        }
        let Some(parent) = node.parent() else {
            return;
        };
        // Part of a longer name (`os.environ` inside `os.environ.get`, `environ` in
        // `os.environ`): the longer one is judged.
        if parent.kind() == "attribute"
            && parent
                .child_by_field_name("attribute")
                .is_some_and(|a| a.id() == node.id())
        {
            return;
        }
        let is = |n: Option<Node<'_>>| n.is_some_and(|n| n.id() == node.id());
        let named = match parent.kind() {
            // `os.environ[...]`, `os.getenv(...)`: judged as reads where they are.
            "subscript" => whole && is(parent.child_by_field_name("value")),
            "call" => reader && is(parent.child_by_field_name("function")),
            // `os.environ.get`, `.setdefault`, `.pop`: a reader, judged at its call.
            "attribute" => {
                whole
                    && ENV_READS.contains(&self.text(parent).as_str())
                    && parent.parent().is_some_and(|c| c.kind() == "call")
            }
            // `"X" in os.environ`: a read of X.
            "comparison_operator" => {
                if let Some(name) = parent.named_child(0).filter(|l| {
                    l.kind() == "string" && !has_interpolation(*l) && l.id() != node.id()
                }) {
                    self.facts.env.push(string_value(name, self.source));
                    true
                } else {
                    false
                }
            }
            // `from os import environ, getenv`: the import itself reads nothing.
            "dotted_name" | "aliased_import" | "import_from_statement" => true,
            _ => false,
        };
        if !named {
            self.env_any(parent, line);
        }
    }

    /// Whether `name` (`os.environ`, `environ.get`, `getenv`) is os's: spelled through `os.`,
    /// or its first part bound by `from os import …` — WSGI's `environ` parameter is not.
    fn is_os_name(&self, name: &str) -> bool {
        if name.starts_with("os.") {
            return true;
        }
        let first = name.split('.').next().unwrap_or_default();
        self.facts
            .imports
            .iter()
            .any(|i| i.level == 0 && i.module == "os" && i.names.iter().any(|n| n == first))
    }

    fn env_any(&mut self, node: Node<'_>, line: u32) {
        let text = self.text(node);
        self.facts.env_any.push((
            line,
            text.lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(80)
                .collect(),
        ));
    }

    /// The context for the strings among a call's arguments.
    pub(super) fn argument_context(&self, call: Node<'_>) -> Option<StringContext> {
        let function = self.text(call.child_by_field_name("function")?);
        let last = function.rsplit('.').next().unwrap_or(&function);
        if is_sys_path_call(&function) {
            return Some(StringContext::SysPath);
        }
        if PATH_CALLS.contains(&function.as_str()) || PATH_CALLS.contains(&last) {
            return Some(StringContext::PathArg);
        }
        if matches!(last, "scenarios" | "scenario") {
            return Some(StringContext::Feature);
        }
        if is_process_call(&function) {
            return Some(StringContext::Argv);
        }
        None
    }

    pub(super) fn call(&mut self, node: Node<'_>, line: u32) {
        let Some(function) = node.child_by_field_name("function").map(|f| self.text(f)) else {
            return;
        };
        let args: Vec<Node<'_>> = node
            .child_by_field_name("arguments")
            .map(|a| {
                let mut cursor = a.walk();
                a.named_children(&mut cursor).collect()
            })
            .unwrap_or_default();
        let last = function.rsplit('.').next().unwrap_or(&function).to_string();
        if IMPORT_FUNCTIONS.contains(&function.as_str()) {
            self.import_call(node, &function, &args, line);
        }
        self.file_run(node, &function, &last, &args, line);
        if is_sys_path_call(&function)
            && let Some(folder) = args.iter().rev().find(|a| a.kind() != "keyword_argument")
            && let Some(value) = self.eval(*folder)
        {
            self.facts.sys_paths.push(crate::analyze::facts::PathRef {
                line,
                value,
                text: one_line(&self.text(*folder)),
            });
        }
        if ENV_READS.contains(&function.as_str()) && self.is_os_name(&function) {
            match args.first() {
                Some(first) if first.kind() == "string" && !has_interpolation(*first) => {
                    self.facts.env.push(string_value(*first, self.source));
                }
                _ => self.env_any(node, line),
            }
        }
        if (function == "Flask" || function == "flask.Flask")
            && args.first().is_some_and(|a| self.text(*a) == "__name__")
        {
            self.facts.apps.push(line);
        }
        if !is_process_call(&function) {
            return;
        }
        let shell_kw = args.iter().any(|a| {
            a.kind() == "keyword_argument" && self.text(*a).replace(' ', "") == "shell=True"
        });
        let Some(first) = args.first() else { return };
        match first.kind() {
            "list" | "tuple" => self.argv(*first, line),
            "string" | "concatenated_string"
                if shell_kw || SHELL_CALLS.contains(&function.as_str()) || last == "system" =>
            {
                let command = string_value(*first, self.source);
                self.shell(&command, line);
            }
            _ => {}
        }
    }

    /// An argv list: `-m X` names a module, `-c CODE` is Python (or shell, after `sh`/`bash`).
    pub(super) fn argv(&mut self, list: Node<'_>, line: u32) {
        let mut cursor = list.walk();
        let items: Vec<Node<'_>> = list.named_children(&mut cursor).collect();
        let words: Vec<Option<String>> = items
            .iter()
            .map(|n| (n.kind() == "string").then(|| string_value(*n, self.source)))
            .collect();
        let program = words.first().cloned().flatten().unwrap_or_default();
        let shell_program = matches!(
            program.rsplit('/').next().unwrap_or(&program),
            "sh" | "bash" | "zsh" | "dash"
        );
        for (i, word) in words.iter().enumerate() {
            let (Some(prev), Some(word)) = (i.checked_sub(1).and_then(|p| words[p].as_ref()), word)
            else {
                continue;
            };
            match prev.as_str() {
                // On the word's own line: the walk meets the same string there as argv.
                "-m" => {
                    let at = items[i].start_position().row as u32 + 1;
                    self.push(at, word.clone(), StringContext::RunModule)
                }
                "-c" if shell_program => self.shell(word, line),
                "-c" => self.python_code(word, line),
                _ => {}
            }
        }
    }

    /// Code given to `python -c`: its imports and strings are this file's, on the string's line.
    pub(super) fn python_code(&mut self, code: &str, line: u32) {
        let inner = analyze(code.as_bytes());
        for mut import in inner.imports {
            import.line = line;
            self.facts.imports.push(import);
        }
        for mut s in inner.strings {
            s.line = line;
            self.facts.strings.push(s);
        }
    }

    /// A shell command line: its words may name scripts, files and `python -m` modules.
    pub(super) fn shell(&mut self, command: &str, line: u32) {
        for word in shell::scan(command) {
            let context = if word.module {
                StringContext::RunModule
            } else {
                StringContext::Argv
            };
            self.push(line, word.value, context);
        }
    }

    /// A call of an import function: the module it loads, as exactly as the text says it —
    /// a literal name, a literal start, or a name relative to the file's own module or package
    /// (`import_module(".sub", __name__)`, `f"{__name__}.{x}"`, `__import__(x, globals(),
    /// level=1)`). What cannot be placed is recorded with no prefix and no anchor: unbounded,
    /// never dropped (the verdicts bound it by the tests that run this file: `may_load`).
    fn import_call(&mut self, node: Node<'_>, function: &str, args: &[Node<'_>], line: u32) {
        let positional: Vec<Node<'_>> = args
            .iter()
            .copied()
            .filter(|a| {
                !matches!(
                    a.kind(),
                    "keyword_argument" | "list_splat" | "dictionary_splat"
                )
            })
            .collect();
        let keyword = |name: &str| {
            args.iter()
                .filter(|a| a.kind() == "keyword_argument")
                .find(|a| {
                    a.child_by_field_name("name")
                        .is_some_and(|n| self.text(n) == name)
                })
                .and_then(|a| a.child_by_field_name("value"))
        };
        let argument =
            |at: usize, name: &str| positional.get(at).copied().or_else(|| keyword(name));
        let Some(name) = argument(0, "name").or_else(|| argument(0, "mod_name")) else {
            return;
        };
        let dunder = function.ends_with("__import__");
        let (lead, prefix, exact) = self.module_name(name);
        // The package a name with leading dots (or `__import__`'s level) is resolved in.
        let relative_to = |dots: u32| -> Option<Anchor> {
            if dunder {
                // `__import__` resolves in the caller's package, as `globals()` gives it.
                let globals_ok = argument(1, "globals").is_none_or(|g| self.text(g) == "globals()");
                return globals_ok.then_some(Anchor {
                    own_module: false,
                    up: dots.saturating_sub(1),
                });
            }
            let package = argument(1, "package")?;
            self.anchor_of(package).map(|own_module| Anchor {
                own_module,
                up: dots.saturating_sub(1),
            })
        };
        let mut found: Option<(Option<Anchor>, String, bool)> = match lead {
            Lead::Own | Lead::Package => match prefix.strip_prefix('.') {
                Some(rest) => Some((
                    Some(Anchor {
                        own_module: lead == Lead::Own,
                        up: 0,
                    }),
                    rest.to_string(),
                    exact,
                )),
                // `__name__` alone is the file itself; `f"{__name__}{x}"` is unbounded.
                None if prefix.is_empty() && exact => return,
                None => None,
            },
            Lead::Literal if prefix.starts_with('.') => {
                let dots = prefix.chars().take_while(|&c| c == '.').count() as u32;
                let rest = prefix[dots as usize..].to_string();
                match (dunder, argument(1, "package").and_then(|p| self.literal(p))) {
                    (false, Some(package)) => {
                        absolute(&package, dots, &rest).map(|p| (None, p, exact))
                    }
                    _ => relative_to(dots).map(|a| (Some(a), rest, exact)),
                }
            }
            Lead::Literal if dunder => match argument(4, "level").map(|l| self.text(l)) {
                None => Some((None, prefix, exact)),
                Some(level) if level == "0" => Some((None, prefix, exact)),
                Some(level) => match level.parse::<u32>() {
                    Ok(n) => relative_to(n).map(|a| (Some(a), prefix, exact)),
                    Err(_) => None,
                },
            },
            Lead::Literal => Some((None, prefix, exact)),
        };
        if found
            .as_ref()
            .is_some_and(|(anchor, prefix, _)| anchor.is_none() && prefix.is_empty())
        {
            found = None;
        }
        let text = one_line(&self.text(node));
        let Some((anchor, prefix, exact)) = found else {
            self.dynamic(line, text, None, String::new(), false);
            return;
        };
        let fromlist = argument(3, "fromlist").filter(|_| dunder && exact);
        let subs = fromlist.map_or_else(Vec::new, |l| self.fromlist(l));
        for sub in &subs {
            let name = match sub {
                Some(sub) => format!("{prefix}.{sub}"),
                None => format!("{prefix}."),
            };
            self.module(line, &text, anchor, name, sub.is_some());
        }
        self.module(line, &text, anchor, prefix, exact);
    }

    /// `__import__("pkg", fromlist=["a"])` also loads `pkg.a` when it is a submodule: each
    /// literal name, or none for a name not known (any submodule).
    fn fromlist(&self, list: Node<'_>) -> Vec<Option<String>> {
        if matches!(list.kind(), "list" | "tuple") {
            let mut cursor = list.walk();
            return list
                .named_children(&mut cursor)
                .map(|item| self.literal(item).filter(|n| n != "*"))
                .filter(|n| n.as_deref() != Some(""))
                .collect();
        }
        if self.text(list) == "None" {
            Vec::new()
        } else {
            vec![None]
        }
    }

    /// A call that runs a file's code: `runpy.run_path(p)`, `spec_from_file_location(n, p)`,
    /// `SourceFileLoader(n, p)`, `exec(open(p).read())`; `exec("import x")` is Python code
    /// read as this file's. Whether its path was placed is known once the file is walked.
    fn file_run(
        &mut self,
        node: Node<'_>,
        function: &str,
        last: &str,
        args: &[Node<'_>],
        line: u32,
    ) {
        let text = || one_line(&self.text(node));
        match (function, last) {
            (_, "run_path" | "spec_from_file_location" | "SourceFileLoader") => {
                let at = usize::from(last != "run_path");
                let path = args
                    .iter()
                    .filter(|a| a.kind() != "keyword_argument")
                    .nth(at);
                if path.is_some_and(|p| !self.placed(*p)) {
                    let text = text();
                    self.dynamic(line, text, None, String::new(), false);
                }
            }
            (_, "walk_packages") => self.walk_packages(node, args, line),
            (_, "attach_stub") => self.attach_stub(node, args, line),
            ("exec" | "compile" | "builtins.exec", _) => match args.first() {
                Some(code) if code.kind() == "string" && !has_interpolation(*code) => {
                    let code = string_value(*code, self.source);
                    self.python_code(&code, line);
                }
                Some(code) => {
                    let reads = ["open(", "read_text(", "read_bytes(", ".read("];
                    let source = self.text(*code);
                    if reads.iter().any(|r| source.contains(r)) && !self.placed(*code) {
                        let text = text();
                        self.dynamic(line, text, None, String::new(), false);
                    }
                }
                None => {}
            },
            _ => {}
        }
    }

    /// Whether a path argument (or an expression reading one) names something gate places:
    /// a literal, or a path expression it evaluates, anywhere inside it.
    fn placed(&self, node: Node<'_>) -> bool {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n.kind() == "string" && !has_interpolation(n) {
                return true;
            }
            if matches!(
                n.kind(),
                "call" | "binary_operator" | "attribute" | "identifier" | "string"
            ) && self
                .eval(n)
                .is_some_and(|v| !v.is_anchor() && v.is_specific())
            {
                return true;
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        false
    }

    /// `lazy_loader.attach_stub(name, __file__)` reads the type stub beside the module file at
    /// run time to learn what to load: the stubs in that folder are read, not type
    /// information only.
    fn attach_stub(&mut self, node: Node<'_>, args: &[Node<'_>], line: u32) {
        use crate::analyze::paths::PathValue;
        let file = args
            .iter()
            .filter(|a| a.kind() != "keyword_argument")
            .nth(1);
        let value = match file.and_then(|f| self.eval(*f)) {
            Some(PathValue::File) => PathValue::FileDir("*.pyi".into()),
            Some(PathValue::ModuleFile(module)) => PathValue::ModuleDir {
                module,
                path: "*.pyi".into(),
            },
            _ => return,
        };
        let text = one_line(&self.text(node));
        self.facts
            .paths
            .push(crate::analyze::facts::PathRef { line, value, text });
    }

    /// `pkgutil.walk_packages(path, prefix)` imports every package under `path` to recurse,
    /// by `prefix` + its name: the modules under the prefix (`"lib."`, `__name__ + "."`), or
    /// unbounded when the prefix is not known.
    fn walk_packages(&mut self, node: Node<'_>, args: &[Node<'_>], line: u32) {
        let prefix = args
            .iter()
            .filter(|a| a.kind() != "keyword_argument")
            .nth(1)
            .copied()
            .or_else(|| {
                args.iter()
                    .filter(|a| a.kind() == "keyword_argument")
                    .find(|a| {
                        a.child_by_field_name("name")
                            .is_some_and(|n| self.text(n) == "prefix")
                    })
                    .and_then(|a| a.child_by_field_name("value"))
            });
        let text = one_line(&self.text(node));
        let placed = prefix
            .map(|p| self.module_name(p))
            .and_then(|(lead, name, _)| match lead {
                Lead::Literal if !name.is_empty() && !name.starts_with('.') => Some((None, name)),
                Lead::Own | Lead::Package => name.strip_prefix('.').map(|rest| {
                    let own_module = lead == Lead::Own;
                    (Some(Anchor { own_module, up: 0 }), rest.to_string())
                }),
                Lead::Literal => None,
            });
        match placed {
            Some((anchor, name)) => self.dynamic(line, text, anchor, name, false),
            None => self.dynamic(line, text, None, String::new(), false),
        }
    }

    /// One module an import call loads (`exact`) or may load (a prefix of its name).
    fn module(&mut self, line: u32, text: &str, anchor: Option<Anchor>, name: String, exact: bool) {
        if anchor.is_none() && exact {
            self.push(line, name, StringContext::ImportCall);
        } else {
            self.dynamic(line, text.to_string(), anchor, name, exact);
        }
    }

    pub(super) fn dynamic(
        &mut self,
        line: u32,
        text: String,
        anchor: Option<Anchor>,
        prefix: String,
        exact: bool,
    ) {
        self.facts.dynamic_imports.push(DynamicImport {
            line,
            prefix,
            text,
            anchor,
            exact,
        });
    }

    /// Whether a package argument is the file's own module (`__name__`: true), its package
    /// (`__package__`, `__spec__.parent`: false), or something else (none).
    fn anchor_of(&self, node: Node<'_>) -> Option<bool> {
        match self.text(node).as_str() {
            "__name__" | "__spec__.name" => Some(true),
            "__package__" | "__spec__.parent" => Some(false),
            _ => None,
        }
    }

    /// A plain string literal's value (no interpolation, no escape).
    fn literal(&self, node: Node<'_>) -> Option<String> {
        (node.kind() == "string" && !has_interpolation(node))
            .then(|| string_value(node, self.source))
            .filter(|v| !v.contains('\\'))
    }

    /// What the text says of a module name built at run time: whether it starts with the
    /// file's own module or package name, its literal start after that, and whether that is
    /// all of it. `f"shop.plugins.{x}"`, `"shop.plugins." + x`, `"shop.fmt_%s" % x`,
    /// `"shop.{}".format(x)`, `f"{__name__}.{x}"`, `__name__ + "." + x`. A `+` chain is
    /// flattened in a loop (a generated chain of thousands must not recurse); any other
    /// operator, method or escape ends the literal start where it stands.
    fn module_name(&self, node: Node<'_>) -> (Lead, String, bool) {
        let mut operands = Vec::new();
        let mut right = Vec::new();
        let mut at = node;
        loop {
            match at.kind() {
                "binary_operator"
                    if at
                        .child_by_field_name("operator")
                        .is_some_and(|o| self.text(o) == "+") =>
                {
                    match (
                        at.child_by_field_name("left"),
                        at.child_by_field_name("right"),
                    ) {
                        (Some(l), Some(r)) => {
                            right.push(r);
                            at = l;
                        }
                        _ => break,
                    }
                }
                "parenthesized_expression" => match at.named_child(0) {
                    Some(inner) => at = inner,
                    None => break,
                },
                _ => break,
            }
        }
        operands.push(at);
        operands.extend(right.into_iter().rev());
        let mut lead = Lead::Literal;
        let mut out = String::new();
        for (i, operand) in operands.iter().enumerate() {
            let piece = self.name_piece(*operand, i == 0);
            if i == 0
                && let Some(l) = piece.lead
            {
                lead = l;
            }
            out.push_str(&piece.text);
            if !piece.whole {
                return (lead, cut(&out), false);
            }
        }
        (lead, out, true)
    }

    /// One operand of a module name: its literal text up to the first unknown, whether that
    /// was all of it, and (first operand only) a leading `__name__`/`__package__`.
    fn name_piece(&self, node: Node<'_>, first: bool) -> Piece {
        let anchored = |n: Node<'_>| first.then(|| self.anchor_of(n)).flatten();
        match node.kind() {
            "string" => {
                let mut cursor = node.walk();
                let mut piece = Piece {
                    lead: None,
                    text: String::new(),
                    whole: true,
                };
                for (k, part) in node.named_children(&mut cursor).enumerate() {
                    match part.kind() {
                        "string_content" => piece.text.push_str(&self.text(part)),
                        "interpolation" => {
                            let own = part.child_by_field_name("expression").and_then(&anchored);
                            match own {
                                Some(own)
                                    if k <= 1 && piece.text.is_empty() && piece.lead.is_none() =>
                                {
                                    piece.lead = Some(if own { Lead::Own } else { Lead::Package });
                                }
                                _ => {
                                    piece.whole = false;
                                    break;
                                }
                            }
                        }
                        "string_start" | "string_end" => {}
                        _ => {
                            piece.whole = false;
                            break;
                        }
                    }
                }
                if piece.text.contains(['\\', '{', '}']) {
                    piece.text = cut(&piece.text);
                    piece.whole = false;
                }
                piece
            }
            "binary_operator"
                if node
                    .child_by_field_name("operator")
                    .is_some_and(|o| self.text(o) == "%") =>
            {
                let text = node
                    .child_by_field_name("left")
                    .and_then(|l| self.literal(l))
                    .map(|t| cut(&t))
                    .unwrap_or_default();
                Piece {
                    lead: None,
                    text,
                    whole: false,
                }
            }
            "call" => {
                let function = node.child_by_field_name("function");
                let text = function
                    .filter(|f| f.kind() == "attribute")
                    .filter(|f| {
                        f.child_by_field_name("attribute")
                            .is_some_and(|a| self.text(a) == "format")
                    })
                    .and_then(|f| f.child_by_field_name("object"))
                    .and_then(|o| self.literal(o))
                    .map(|t| cut(&t))
                    .unwrap_or_default();
                Piece {
                    lead: None,
                    text,
                    whole: false,
                }
            }
            _ => match anchored(node) {
                Some(own) => Piece {
                    lead: Some(if own { Lead::Own } else { Lead::Package }),
                    text: String::new(),
                    whole: true,
                },
                None => Piece {
                    lead: None,
                    text: String::new(),
                    whole: false,
                },
            },
        }
    }
}

/// Where a module name built at run time starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lead {
    Literal,
    /// `__name__`: the file's own module.
    Own,
    /// `__package__`: the file's package.
    Package,
}

struct Piece {
    lead: Option<Lead>,
    text: String,
    whole: bool,
}

/// A literal start ends before the first character that formats or escapes (`%`, `{`, `\\`):
/// what follows it is not known.
fn cut(text: &str) -> String {
    let end = text.find(['%', '{', '}', '\\']).unwrap_or(text.len());
    text[..end].to_string()
}

/// A relative name resolved in a literal package (`import_module("..x", "a.b.c")` is `a.b.x`):
/// none when the dots climb past the package's top.
fn absolute(package: &str, dots: u32, rest: &str) -> Option<String> {
    let mut parts: Vec<&str> = package.split('.').filter(|p| !p.is_empty()).collect();
    for _ in 1..dots {
        parts.pop()?;
    }
    if parts.is_empty() {
        return None;
    }
    let base = parts.join(".");
    Some(if rest.is_empty() {
        base
    } else {
        format!("{base}.{rest}")
    })
}

fn is_process_call(function: &str) -> bool {
    let last = function.rsplit('.').next().unwrap_or(function);
    if !PROCESS_CALLS.contains(&last) {
        return false;
    }
    // A bare `run(...)`/`call(...)` is too common a name; those count only when qualified.
    let module = function.rsplit_once('.').map(|(m, _)| m).unwrap_or("");
    matches!(
        module,
        "subprocess" | "os" | "asyncio" | "sp" | "commands" | "pexpect"
    ) || matches!(last, "Popen" | "check_output" | "check_call")
        || (module.is_empty() && matches!(last, "system"))
        || module.ends_with(".subprocess")
}
