//! Calls: the import functions, the calls that start a process (their argv, `python -c` code,
//! shell command lines) and the calls whose arguments are paths.

use super::strings::{has_interpolation, one_line, string_value};
use super::{Pass, analyze};
use crate::analyze::facts::{DynamicImport, StringContext};
use crate::analyze::shell;
use tree_sitter::Node;

const IMPORT_FUNCTIONS: &[&str] = &["importlib.import_module", "import_module", "__import__"];

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
    /// `os.environ["X"]`: a variable read by a literal name.
    pub(super) fn environ_subscript(&mut self, node: Node<'_>) {
        if node
            .child_by_field_name("value")
            .is_some_and(|v| ENVIRONS.contains(&self.text(v).as_str()))
            && let Some(key) = node.child_by_field_name("subscript")
            && key.kind() == "string"
            && !has_interpolation(key)
        {
            self.facts.env.push(string_value(key, self.source));
        }
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
        if IMPORT_FUNCTIONS.contains(&function.as_str())
            && let Some(first) = args.first()
        {
            if first.kind() == "string" && !has_interpolation(*first) {
                self.push(
                    line,
                    string_value(*first, self.source),
                    StringContext::ImportCall,
                );
            } else if first.kind() != "keyword_argument" {
                let prefix = self.constant_prefix(*first);
                self.facts.dynamic_imports.push(DynamicImport {
                    line,
                    prefix,
                    text: one_line(&self.text(node)),
                });
            }
        }
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
        if ENV_READS.contains(&function.as_str())
            && let Some(first) = args.first()
            && first.kind() == "string"
            && !has_interpolation(*first)
        {
            self.facts.env.push(string_value(*first, self.source));
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

    /// The literal start of a module name built at run time: `f"shop.plugins.{x}"`,
    /// `"shop.plugins." + x`, `"shop.plugins.%s" % x`, `"shop.plugins.{}".format(x)`. Walks
    /// down the left of the expression in a loop: a generated chain of thousands of `+` must
    /// not recurse.
    pub(super) fn constant_prefix(&self, mut node: Node<'_>) -> String {
        let raw = loop {
            match node.kind() {
                "string" => {
                    let mut cursor = node.walk();
                    let mut out = String::new();
                    for part in node.named_children(&mut cursor) {
                        match part.kind() {
                            "string_content" => out.push_str(&self.text(part)),
                            "interpolation" => break,
                            _ => {}
                        }
                    }
                    break out;
                }
                "binary_operator" => match node.child_by_field_name("left") {
                    Some(left) => node = left,
                    None => break String::new(),
                },
                "call" => match node
                    .child_by_field_name("function")
                    .and_then(|f| f.child_by_field_name("object"))
                    .filter(|o| o.kind() == "string")
                {
                    Some(object) => node = object,
                    None => break String::new(),
                },
                _ => break String::new(),
            }
        };
        let cut = raw.find(['%', '{']).unwrap_or(raw.len());
        raw[..cut].to_string()
    }
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
