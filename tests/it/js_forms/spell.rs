//! How a member spells its pieces: Node's modules imported or required under every name real
//! code gives them, the file's own folder, path expressions, readers; comments, parentheses
//! and line breaks around arguments.

use crate::support::Rng;

pub(super) struct Gen<'r> {
    pub(super) rng: &'r mut Rng,
    pub(super) esm: bool,
    /// The member's folder (`esm/m12`) and whether its file is in `sub/` below it.
    pub(super) dir: String,
    pub(super) sub: bool,
    pub(super) head: Vec<String>,
    pub(super) body: Vec<String>,
    pub(super) files: Vec<(String, String)>,
    pub(super) tags: Vec<String>,
    pub(super) opaque: bool,
    pub(super) names: usize,
    pub(super) fs_style: &'static str,
    pub(super) path_style: &'static str,
    pub(super) url_style: &'static str,
    pub(super) anchor: Option<String>,
    /// Whether the last path expression is a `URL` (no string wrapper takes it).
    pub(super) is_url: bool,
}

impl Gen<'_> {
    pub(super) fn tag(&mut self, tag: impl Into<String>) {
        self.tags.push(tag.into());
    }

    pub(super) fn head(&mut self, line: String) {
        if !self.head.contains(&line) {
            self.head.push(line);
        }
    }

    pub(super) fn line(&mut self, line: String) {
        self.body.push(line);
    }

    /// A file of the member's folder, `rel` below it.
    pub(super) fn file(&mut self, rel: &str, content: &str) {
        let path = format!("{}/{rel}", self.dir);
        if !self.files.iter().any(|(p, _)| *p == path) {
            self.files.push((path, content.to_string()));
        }
    }

    /// `rel` (below the member's folder) as a specifier relative to the member's file.
    pub(super) fn spec(&self, rel: &str) -> String {
        if self.sub {
            format!("../{rel}")
        } else {
            format!("./{rel}")
        }
    }

    /// `rel` as a path relative to the member's file's folder, without `./`.
    pub(super) fn local(&self, rel: &str) -> String {
        if self.sub {
            format!("../{rel}")
        } else {
            rel.to_string()
        }
    }

    /// `rel` from the working folder (the repository's root).
    pub(super) fn cwd(&self, rel: &str) -> String {
        format!("{}/{rel}", self.dir)
    }

    pub(super) fn fresh(&mut self, stem: &str) -> String {
        self.names += 1;
        format!("{stem}{}", self.names)
    }

    /// A string literal of `s`, in one of the three quotes.
    pub(super) fn quote(&mut self, s: &str) -> String {
        match self.rng.below(5) {
            0 => format!("'{s}'"),
            1 => format!("`{s}`"),
            _ => format!("\"{s}\""),
        }
    }

    /// An argument as code writes it: plain, in parentheses, after a comment, on its own line.
    pub(super) fn deco(&mut self, e: &str) -> String {
        match self.rng.below(10) {
            0 => {
                self.tag("parens");
                format!("({e})")
            }
            1 => {
                self.tag("comment");
                format!("/* {} */ {e}", "webpackChunkName: \"x\"")
            }
            2 => {
                self.tag("newline");
                format!("\n    {e}\n  ")
            }
            3 => {
                self.tag("trailing_comment");
                format!("{e} /* end */")
            }
            _ => e.to_string(),
        }
    }

    /// How an `fs` function is called, with what the file needs for it.
    pub(super) fn fs(&mut self, f: &str) -> String {
        let style = self.fs_style;
        match (self.esm, style) {
            (true, "default") => self.head("import fs from \"node:fs\";".into()),
            (true, "namespace") => self.head("import * as fs from \"fs\";".into()),
            (true, "named") => {
                self.head(format!("import {{ {f} }} from \"node:fs\";"));
                return f.to_string();
            }
            (true, "renamed") => {
                self.head(format!("import {{ {f} as my_{f} }} from \"fs\";"));
                return format!("my_{f}");
            }
            (true, "alias") => {
                self.head("import nodeFs from \"fs\";".into());
                return format!("nodeFs.{f}");
            }
            (true, "dynamic") => {
                self.head("const fsModule = await import(\"node:fs\");".into());
                return format!("fsModule.{f}");
            }
            (true, "destructured") => {
                self.head(format!("const {{ {f}: d_{f} }} = await import(\"fs\");"));
                return format!("d_{f}");
            }
            (true, _) => {
                self.head("import fs from \"node:fs\";".into());
                self.head(format!("const my_{f} = fs.{f};"));
                return format!("my_{f}");
            }
            (false, "default") => self.head("const fs = require(\"fs\");".into()),
            (false, "namespace") => self.head("const fs = require(\"node:fs\");".into()),
            (false, "named") => {
                self.head(format!("const {{ {f} }} = require(\"fs\");"));
                return f.to_string();
            }
            (false, "renamed") => {
                self.head(format!("const {{ {f}: my_{f} }} = require(\"node:fs\");"));
                return format!("my_{f}");
            }
            (false, "alias") => {
                self.head("const nodeFs = require(\"fs\");".into());
                return format!("nodeFs.{f}");
            }
            (false, "dynamic") => return format!("require(\"fs\").{f}"),
            (false, "destructured") => {
                self.head("const fs = require(\"fs\");".into());
                self.head(format!("const {{ {f}: d_{f} }} = fs;"));
                return format!("d_{f}");
            }
            (false, _) => {
                self.head("const fs = require(\"fs\");".into());
                self.head(format!("const my_{f} = fs.{f};"));
                return format!("my_{f}");
            }
        }
        format!("fs.{f}")
    }

    /// How a promise-returning `fs` function is called.
    pub(super) fn fsp(&mut self, f: &str) -> String {
        match (self.esm, self.rng.below(3)) {
            (true, 0) => {
                self.head("import fsp from \"node:fs/promises\";".into());
                format!("fsp.{f}")
            }
            (true, 1) => {
                self.head(format!("import {{ {f} as p_{f} }} from \"fs/promises\";"));
                format!("p_{f}")
            }
            (false, 0) => {
                self.head("const fsp = require(\"fs/promises\");".into());
                format!("fsp.{f}")
            }
            (false, 1) => {
                self.head(format!(
                    "const {{ {f}: p_{f} }} = require(\"node:fs/promises\");"
                ));
                format!("p_{f}")
            }
            _ => {
                let fs = self.fs("promises");
                format!("{fs}.{f}")
            }
        }
    }

    /// How a `path` function is called.
    pub(super) fn path(&mut self, f: &str) -> String {
        match (self.esm, self.path_style) {
            (true, "default") => self.head("import path from \"node:path\";".into()),
            (true, "namespace") => self.head("import * as path from \"path\";".into()),
            (true, "alias") => {
                self.head("import p from \"node:path\";".into());
                return format!("p.{f}");
            }
            (true, "named") => {
                self.head(format!("import {{ {f} }} from \"node:path\";"));
                return f.to_string();
            }
            (true, "renamed") => {
                self.head(format!("import {{ {f} as my_{f} }} from \"path\";"));
                return format!("my_{f}");
            }
            (true, "posix") => {
                self.head("import path from \"node:path\";".into());
                return format!("path.posix.{f}");
            }
            (true, "destructured") => {
                self.head("import path from \"node:path\";".into());
                self.head(format!("const {{ {f}: pj_{f} }} = path;"));
                return format!("pj_{f}");
            }
            (true, _) => {
                self.head("const pathModule = await import(\"node:path\");".into());
                return format!("pathModule.{f}");
            }
            (false, "default") => self.head("const path = require(\"path\");".into()),
            (false, "namespace") => self.head("const path = require(\"node:path\");".into()),
            (false, "alias") => {
                self.head("const p = require(\"path\");".into());
                return format!("p.{f}");
            }
            (false, "named") => {
                self.head(format!("const {{ {f} }} = require(\"path\");"));
                return f.to_string();
            }
            (false, "renamed") => {
                self.head(format!("const {{ {f}: my_{f} }} = require(\"node:path\");"));
                return format!("my_{f}");
            }
            (false, "posix") => {
                self.head("const path = require(\"path\");".into());
                return format!("path.posix.{f}");
            }
            (false, "destructured") => {
                self.head("const path = require(\"path\");".into());
                self.head(format!("const {{ {f}: pj_{f} }} = path;"));
                return format!("pj_{f}");
            }
            (false, _) => return format!("require(\"path\").{f}"),
        }
        format!("path.{f}")
    }

    /// How `fileURLToPath` or `pathToFileURL` is called.
    pub(super) fn url(&mut self, f: &str) -> String {
        let module = if self.url_style == "named" {
            "node:url"
        } else {
            "url"
        };
        match (self.esm, self.url_style) {
            (true, "named" | "named_bare") => {
                self.head(format!("import {{ {f} }} from \"{module}\";"));
                f.to_string()
            }
            (true, "default") => {
                self.head("import url from \"node:url\";".into());
                format!("url.{f}")
            }
            (true, "namespace") => {
                self.head("import * as u from \"url\";".into());
                format!("u.{f}")
            }
            (true, _) => {
                self.head(format!("import {{ {f} as my_{f} }} from \"url\";"));
                format!("my_{f}")
            }
            (false, "named" | "named_bare") => {
                self.head(format!("const {{ {f} }} = require(\"{module}\");"));
                f.to_string()
            }
            (false, "default") => {
                self.head("const url = require(\"url\");".into());
                format!("url.{f}")
            }
            (false, _) => format!("require(\"url\").{f}"),
        }
    }

    /// The member file's folder, as an expression (absolute at run time).
    pub(super) fn anchor(&mut self) -> String {
        if let Some(a) = &self.anchor {
            return a.clone();
        }
        let plain = if self.esm {
            match self.rng.below(5) {
                0 => "import.meta.dirname«!»".to_string(),
                1 => {
                    let (d, f) = (self.path("dirname"), self.url("fileURLToPath"));
                    format!("{d}({f}(import.meta.url))")
                }
                2 => {
                    let f = self.url("fileURLToPath");
                    format!("{f}(new URL(\".\", import.meta.url))")
                }
                3 => {
                    let d = self.path("dirname");
                    format!("{d}(import.meta.filename«!»)")
                }
                _ => {
                    let d = self.path("dirname");
                    let f = self.url("fileURLToPath");
                    self.head(format!(
                        "const __filename«: string» = {f}(import.meta.url);"
                    ));
                    self.head(format!("const __dirname«: string» = {d}(__filename);"));
                    "__dirname".to_string()
                }
            }
        } else {
            match self.rng.below(4) {
                0 => {
                    let d = self.path("dirname");
                    format!("{d}(__filename)")
                }
                1 => {
                    let r = self.path("resolve");
                    format!("{r}(__dirname)")
                }
                2 => {
                    let j = self.path("join");
                    format!("{j}(__dirname, \".\")")
                }
                _ => "__dirname".to_string(),
            }
        };
        let anchor = if plain != "__dirname" && self.rng.chance(3) {
            self.tag("anchor:bound");
            self.head(format!("const HERE«: string» = {plain};"));
            "HERE".to_string()
        } else {
            plain
        };
        self.anchor = Some(anchor.clone());
        anchor
    }

    /// `rel` (below the member's folder; its last segment a name) split into string arguments.
    pub(super) fn parts(&mut self, rel: &str) -> Vec<String> {
        let segments: Vec<&str> = rel.split('/').collect();
        let mut out: Vec<String> = Vec::new();
        for s in segments {
            match out.last_mut() {
                Some(last) if self.rng.chance(2) => {
                    last.push('/');
                    last.push_str(s);
                }
                _ => out.push(s.to_string()),
            }
        }
        out.into_iter().map(|s| self.quote(&s)).collect()
    }

    /// A path expression naming `rel` (a path below the member's folder), in any of the forms
    /// real code builds one: a string, or a `URL` when `url` allows.
    pub(super) fn path_expr(&mut self, rel: &str, url: bool, cwd: bool) -> String {
        let mut forms = vec!["join", "resolve", "concat", "template"];
        if cwd {
            forms.extend(["cwd", "cwd_join", "cwd_concat"]);
        }
        if self.esm {
            forms.extend(["url_path", "url_pathname"]);
        }
        if self.esm && url {
            forms.push("url");
        }
        let form = self.rng.pick(&forms);
        self.tag(format!("path:{form}"));
        self.is_url = form == "url";
        let local = self.local(rel);
        match form {
            "join" => {
                let (a, j) = (self.anchor(), self.path("join"));
                let parts = self.parts(&local);
                format!("{j}({a}, {})", parts.join(", "))
            }
            "resolve" => {
                let (a, r) = (self.anchor(), self.path("resolve"));
                let parts = self.parts(&local);
                format!("{r}({a}, {})", parts.join(", "))
            }
            "concat" => {
                let a = self.anchor();
                if self.rng.chance(2) {
                    format!("{a} + \"/{local}\"")
                } else {
                    format!("{a} + \"/\" + \"{local}\"")
                }
            }
            "template" => {
                let a = self.anchor();
                format!("`${{{a}}}/{local}`")
            }
            "cwd" => {
                let rel = self.cwd(rel);
                match self.rng.below(3) {
                    0 => self.quote(&format!("./{rel}")),
                    1 => {
                        let r = self.path("resolve");
                        format!("{r}(\"{rel}\")")
                    }
                    _ => self.quote(&rel),
                }
            }
            "cwd_join" => {
                let rel = self.cwd(rel);
                let j = self.path("join");
                if self.rng.chance(2) {
                    format!("{j}(process.cwd(), \"{rel}\")")
                } else {
                    let parts = self.parts(&rel);
                    format!("{j}({})", parts.join(", "))
                }
            }
            "cwd_concat" => {
                let rel = self.cwd(rel);
                if self.rng.chance(2) {
                    format!("process.cwd() + \"/{rel}\"")
                } else {
                    format!("`${{process.cwd()}}/{rel}`")
                }
            }
            "url" | "url_path" | "url_pathname" => {
                let spec = if self.sub || self.rng.chance(2) {
                    self.spec(rel)
                } else {
                    rel.to_string()
                };
                let u = format!("new URL({}, import.meta.url)", self.quote(&spec));
                match form {
                    "url" => u,
                    "url_pathname" => format!("{u}.pathname"),
                    _ => {
                        let f = self.url("fileURLToPath");
                        format!("{f}({u})")
                    }
                }
            }
            _ => unreachable!(),
        }
    }

    /// A statement reading the file (or listing the folder, `dir`) that `p` names.
    pub(super) fn read(&mut self, p: &str, dir: bool) -> String {
        // A string path passed through a wrapper first.
        let p = match self.rng.below(if self.is_url { 1 } else { 12 }) {
            1 => {
                self.tag("wrap:normalize");
                format!("{}({p})", self.path("normalize"))
            }
            2 => {
                self.tag("wrap:String");
                format!("String({p})")
            }
            3 => {
                self.tag("wrap:template");
                format!("`${{{p}}}`")
            }
            4 => {
                self.tag("wrap:toString");
                format!("({p}).toString()")
            }
            _ => p.to_string(),
        };
        self.is_url = false;
        let p = self.deco(&p);
        // Where a copy goes: outside the repository.
        let copy = "globalThis.__gateCopy()";
        if dir {
            let form = self.rng.below(4);
            self.tag(
                [
                    "reader:readdirSync",
                    "reader:readdir",
                    "reader:opendirSync",
                    "reader:cpSync",
                ][form],
            );
            return match form {
                0 => format!("{}({p});", self.fs("readdirSync")),
                1 => format!("await {}({p});", self.fsp("readdir")),
                2 => format!("{}({p}).closeSync();", self.fs("opendirSync")),
                _ => format!(
                    "{}({p}, {copy}, {{ recursive: true, force: true }});",
                    self.fs("cpSync")
                ),
            };
        }
        if self.rng.chance(12) {
            self.tag("reader:copyFileSync");
            return format!("{}({p}, {copy});", self.fs("copyFileSync"));
        }
        let form = self.rng.below(9);
        let name = [
            "readFileSync",
            "readFileSync_json",
            "promises",
            "callback",
            "existsSync",
            "statSync",
            "open",
            "stream",
            "accessSync",
        ][form];
        self.tag(format!("reader:{name}"));
        match form {
            0 => format!("{}({p});", self.fs("readFileSync")),
            1 => format!("JSON.parse({}({p}, \"utf8\"));", self.fs("readFileSync")),
            2 => format!("await {}({p});", self.fsp("readFile")),
            3 => format!(
                "await new Promise((ok, no) => {}({p}, (e«: any») => (e ? no(e) : ok(null))));",
                self.fs("readFile")
            ),
            4 => format!("{}({p});", self.fs("existsSync")),
            5 => format!("{}({p});", self.fs("statSync")),
            6 => {
                let close = self.fs("closeSync");
                format!("{close}({}({p}, \"r\"));", self.fs("openSync"))
            }
            7 => format!(
                "await new Promise((ok, no) => {}({p}).on(\"error\", no).on(\"close\", ok).resume());",
                self.fs("createReadStream")
            ),
            _ => format!("{}({p});", self.fs("accessSync")),
        }
    }
}
