//! Calls: the calls that start a process (their argv, `python -c` code, shell command lines),
//! the calls whose arguments are paths and those that run a file's code. Import calls are read
//! in `import_calls`, environment reads in `environ`.

use super::strings::{has_interpolation, one_line, string_value};
use super::{Pass, analyze};
use crate::analyze::facts::StringContext;
use crate::analyze::shell;
use tree_sitter::Node;

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
pub(crate) fn path_keyword(name: &str) -> bool {
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

/// The context for the strings among the arguments of a call of `function` (its callee's
/// text).
pub(crate) fn argument_context_of(function: &str) -> Option<StringContext> {
    let last = function.rsplit('.').next().unwrap_or(function);
    if is_sys_path_call(function) {
        return Some(StringContext::SysPath);
    }
    if PATH_CALLS.contains(&function) || PATH_CALLS.contains(&last) {
        return Some(StringContext::PathArg);
    }
    if matches!(last, "scenarios" | "scenario") {
        return Some(StringContext::Feature);
    }
    if is_process_call(function) {
        return Some(StringContext::Argv);
    }
    None
}

/// Whether a call of `function` (its callee's text) is one the pass reads, whatever its
/// arguments: it starts a process, imports or runs code, reads the environment, makes an app.
/// (Calls whose arguments are paths are `argument_context_of`'s; those the path evaluator
/// reads, `paths::named_call_value` and `method_value`.)
pub(crate) fn is_read_call(function: &str) -> bool {
    let last = function.rsplit('.').next().unwrap_or(function);
    is_process_call(function)
        || is_sys_path_call(function)
        || super::import_calls::IMPORT_FUNCTIONS.contains(&function)
        || matches!(
            last,
            "run_path"
                | "spec_from_file_location"
                | "SourceFileLoader"
                | "walk_packages"
                | "attach_stub"
        )
        || matches!(
            function,
            "exec" | "compile" | "builtins.exec" | "Flask" | "flask.Flask"
        )
        || super::environ::ENV_READS.contains(&function)
        || super::bindings::is_listing(function)
}

impl Pass<'_> {
    /// The context for the strings among a call's arguments.
    pub(super) fn argument_context(&self, call: Node<'_>) -> Option<StringContext> {
        argument_context_of(&self.text(call.child_by_field_name("function")?))
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
        self.import_call(node, &function, &args, line);
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
        self.env_call(node, &function, &args, line);
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
}

pub(crate) fn is_process_call(function: &str) -> bool {
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
