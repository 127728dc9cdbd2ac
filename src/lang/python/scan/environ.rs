//! os's environment read fast: the forms of `os.environ`, `os.environb` and `os.getenv` whose
//! reading by the tree pass (`analyze/environ.rs`) depends only on the tokens around them — a
//! subscript, a reader's call, another method, the whole of an argument. Any other use (a
//! name spelled with spaces, inside an f-string's hole or an annotation, a comparison, an
//! operand) sends the file to tree-sitter.

use super::expressions::{Arguments, Expr};
use super::grammar::Parser;
use super::lexer::{Kind, Token};
use crate::lang::python::analyze::ENV_READS;

/// A primary that starts with one of os's environment names, as its trailers are read.
#[derive(Clone, Copy)]
pub(super) struct EnvTrail {
    /// `os.getenv` (a reader, to be called), else `os.environ` or `os.environb` (a mapping).
    getenv: bool,
    /// The trailers read so far, the current one included (the name's own `.x` is the first).
    pub trailers: u32,
    /// The second trailer named a reader (`.get`, `.setdefault`, `.pop`).
    reader: bool,
}

impl EnvTrail {
    /// At the trailer after the name: a mapping's or the reader's.
    fn next(self, getenv: bool) -> bool {
        self.trailers == 2 && self.getenv == getenv
    }
}

impl<'s> Parser<'s> {
    /// Whether the primary that started at `start` with atom `e` is `os.environ`,
    /// `os.environb` or `os.getenv`, written as the tree pass reads it (no spaces around the
    /// dot); one written otherwise, inside an f-string's hole or in an annotation, sends the
    /// file to tree-sitter.
    pub(super) fn env_start(&mut self, start: Token, e: &Expr) -> Option<EnvTrail> {
        if start.kind != Kind::Name
            || self.text_of(start) != "os"
            || e.name != Some((start.start, start.end))
            || !self.is_op(".")
        {
            return None;
        }
        let name = self.ahead(1);
        let getenv = match self.text_of(name) {
            "environ" | "environb" => false,
            "getenv" => true,
            _ => return None,
        };
        let dot = self.tok();
        // In an annotation tree-sitter reads `X[…]` and `X.y` as types, not subscripts and
        // attributes.
        if self.in_hole || self.in_annotation || start.end != dot.start || dot.end != name.start {
            self.defer_for(format!("name {}", self.text_of(name)));
            return None;
        }
        Some(EnvTrail {
            getenv,
            trailers: 0,
            reader: false,
        })
    }

    /// The text the tree pass keeps of a node that reads variables gate cannot name: its
    /// first line, at most 80 characters.
    fn env_any(&mut self, line: u32, start: u32, end: u32) {
        let text = self
            .span(start, end)
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(80)
            .collect();
        self.env_any.push((line, text));
    }

    /// `os.environ.name` (the primary from `start` up to the name `t`): a reader
    /// (`.get`, `.setdefault`, `.pop`) must be called, which `env_called` reads; any other
    /// method or attribute reads what gate cannot name.
    pub(super) fn env_attribute(&mut self, env: Option<&mut EnvTrail>, start: Token, t: Token) {
        let Some(env) = env.filter(|e| e.trailers == 2) else {
            return;
        };
        let text = self.span(start.start, t.end);
        if env.getenv {
            self.defer_for("an attribute of os.getenv".into());
        } else if ENV_READS.contains(&text) {
            env.reader = true;
            if !self.is_op("(") {
                self.defer_for(format!("an uncalled {text}"));
            }
        } else {
            self.env_any(start.line, start.start, t.end);
        }
    }

    /// Whether the call about to be read is of an environment reader (`os.getenv(…)`,
    /// `os.environ.get(…)`); a call of the mapping itself sends the file to tree-sitter.
    pub(super) fn env_reader_called(&mut self, env: Option<EnvTrail>) -> bool {
        let Some(env) = env else {
            return false;
        };
        if env.next(false) {
            self.defer_for("a call of os.environ".into());
        }
        env.next(true) || (env.trailers == 3 && env.reader)
    }

    /// After a call's `)` (its `(` at `open`; the primary from `start`): a reader's call
    /// names the variable of its first argument when that is a single literal with no comment
    /// before it, else reads one gate cannot name; and an `os.environ` that is a whole
    /// argument reads what gate cannot name, kept as the argument list's text.
    pub(super) fn env_called(
        &mut self,
        reader: bool,
        start: Token,
        open: usize,
        args: &Arguments<'_>,
    ) {
        if reader {
            if args.generator {
                self.defer_for("a generator given to an environment reader".into());
            }
            let after = self.toks[open + 2];
            let first = self
                .literal_at(open + 1)
                .filter(|_| after.kind == Kind::Op && matches!(self.text_of(after), "," | ")"))
                .filter(|_| !self.has_comment(self.toks[open].end, self.toks[open + 1].start));
            match first {
                Some(name) => self.env.push(name.to_string()),
                None => self.env_any(start.line, start.start, self.last().end),
            }
        }
        self.env_arguments(open, &args.env_lines);
    }

    /// `os.environ[key]` (the primary from `start`; the key's tokens from `at` to the `]`
    /// just read): a variable named by a single literal, or one gate cannot name. The tree
    /// pass reads the first of several keys (`os.environ['A', 'B']` names `A`).
    pub(super) fn env_subscript(&mut self, env: Option<EnvTrail>, start: Token, at: usize) {
        let Some(env) = env.filter(|e| e.trailers == 2) else {
            return;
        };
        if env.getenv {
            self.defer_for("a subscript of os.getenv".into());
            return;
        }
        let close = self.pos - 1;
        let after = self.toks[at + 1];
        let first_key = at + 1 == close || (after.kind == Kind::Op && self.text_of(after) == ",");
        match self.literal_at(at).filter(|_| first_key) {
            Some(name) => self.env.push(name.to_string()),
            None => self.env_any(start.line, start.start, self.last().end),
        }
    }

    /// A single string literal without holes at token `at` (not one of several adjacent
    /// ones): its content.
    fn literal_at(&self, at: usize) -> Option<&'s str> {
        let t = *self.toks.get(at)?;
        let next = self.toks.get(at + 1).map(|n| n.kind);
        if t.kind != Kind::Str || next == Some(Kind::Str) {
            return None;
        }
        let literal = &self.lexed.strings[t.aux as usize];
        literal
            .holes
            .is_empty()
            .then(|| self.span(literal.content.0, literal.content.1))
    }

    /// The primary `e` ended after the name: `os.environ` standing alone is read by what
    /// holds it, counted until an argument list claims it (`claim_env`; one left unclaimed
    /// sends the file to tree-sitter); `os.getenv` uncalled sends the file there.
    pub(super) fn env_alone(&mut self, env: Option<EnvTrail>, e: &Expr) {
        match env {
            Some(env) if env.next(false) => {
                self.env_alone = Some((e.start, e.end));
                self.env_unclaimed += 1;
            }
            Some(env) if env.next(true) => self.defer_for("os.getenv uncalled".into()),
            _ => {}
        }
    }

    /// Whether the argument `e` is the whole of an `os.environ` standing alone: the tree pass
    /// then keeps the text of the argument list (or of the keyword argument) that holds it.
    pub(super) fn claim_env(&mut self, e: &Expr) -> bool {
        if self.env_alone != Some((e.start, e.end)) {
            return false;
        }
        self.env_alone = None;
        self.env_unclaimed -= 1;
        true
    }

    /// A keyword argument `keyword=os.environ`, the keyword's token at `keyword`.
    pub(super) fn env_keyword(&mut self, keyword: Token, e: &Expr) {
        self.env_any(e.line, keyword.start, e.end);
    }

    /// An argument list from `open` to the `)` just read holding `os.environ` arguments on
    /// `lines`.
    pub(super) fn env_arguments(&mut self, open: usize, lines: &[u32]) {
        for &line in lines {
            self.env_any(line, self.toks[open].start, self.last().end);
        }
    }
}
