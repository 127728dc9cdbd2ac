//! The fast path's parser: a recursive-descent recogniser of Python 3's statements and
//! expressions over the lexer's tokens, keeping no tree. It accepts only what tree-sitter also
//! reads without an error (anything else is `Unsure`, and tree-sitter reads the file), and on
//! the way it records what facts are made of in a file that names no path, process, import
//! function or environment: the import statements, the strings and the context they stand in
//! (plain, or a path keyword's value), and, per logical line, what could make an expression a
//! path (a `+`, `/` or `%`, a `str(…)`, an f-string hole, a name bound to a string).

use super::expressions::Expr;
use super::lexer::{Kind, Lexed, Result, Token, Unsure};
use crate::analyze::facts::{Import, PathRef, StringContext};

/// How deep an expression may nest before the file goes to tree-sitter: below the evaluator's
/// own limit (`paths::MAX_DEPTH`), so a file the fast path reads never meets it.
pub(super) const MAX_EXPR_DEPTH: u32 = 120;
/// How deep the parser recurses (each level is a few frames) before it gives up.
const MAX_RECURSION: u32 = 100;

/// What one logical line holds that could make an expression evaluate to a path.
#[derive(Default)]
pub(super) struct Line<'s> {
    pub strings: bool,
    /// A binary `/`: a join onto whatever its left side evaluates to.
    pub divides: bool,
    /// A binary `+`, `/` or `%`: the evaluator builds text or paths from these.
    pub joins: bool,
    /// A `str(…)` or a template's `.format(…)`: the evaluator reads their arguments.
    pub wraps: bool,
    /// An f-string with holes: its holes are evaluated.
    pub holes: bool,
    pub names: Vec<&'s str>,
    /// Names a plain assignment, loop or `:=` binds.
    pub targets: Vec<&'s str>,
}

pub(super) struct Parser<'s> {
    pub(super) src: &'s [u8],
    pub(super) lexed: &'s Lexed,
    pub(super) toks: &'s [Token],
    pub(super) pos: usize,
    pub(super) recursion: u32,
    pub(super) context: StringContext,
    pub imports: Vec<Import>,
    /// `(line, value, context)` of every string literal without holes.
    pub strings: Vec<(u32, String, StringContext)>,
    /// The paths expressions build, as the tree pass records them: one a parent builds on is
    /// taken back (`None`) when the parent is evaluated.
    pub paths: Vec<Option<PathRef>>,
    /// Inside an f-string hole, whose nodes the tree pass evaluates but does not visit.
    pub(super) in_hole: bool,
    pub line: Line<'s>,
    pub lines: Vec<Line<'s>>,
    /// Found something only tree-sitter's pass reads (a path call, an f-string in a path
    /// argument): the file goes there, though it parses. Says what.
    pub defer: Option<String>,
}

pub(super) const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

pub(super) const AUGMENTED: &[&str] = &[
    "+=", "-=", "*=", "/=", "//=", "%=", "@=", "&=", "|=", "^=", ">>=", "<<=", "**=",
];

impl<'s> Parser<'s> {
    pub(super) fn new(src: &'s [u8], lexed: &'s Lexed) -> Parser<'s> {
        Parser {
            src,
            lexed,
            toks: &lexed.tokens,
            pos: 0,
            recursion: 0,
            context: StringContext::Plain,
            imports: Vec::new(),
            strings: Vec::new(),
            paths: Vec::new(),
            in_hole: false,
            line: Line::default(),
            lines: Vec::new(),
            defer: None,
        }
    }

    // ---- tokens ----

    pub(super) fn tok(&self) -> Token {
        self.toks[self.pos.min(self.toks.len() - 1)]
    }

    pub(super) fn ahead(&self, n: usize) -> Token {
        self.toks[(self.pos + n).min(self.toks.len() - 1)]
    }

    pub(super) fn text_of(&self, t: Token) -> &'s str {
        // The whole file was checked to be UTF-8 and tokens end on ASCII boundaries.
        std::str::from_utf8(&self.src[t.start as usize..t.end as usize]).unwrap_or("")
    }

    pub(super) fn span(&self, start: u32, end: u32) -> &'s str {
        std::str::from_utf8(&self.src[start as usize..end as usize]).unwrap_or("")
    }

    pub(super) fn is_op(&self, op: &str) -> bool {
        let t = self.tok();
        t.kind == Kind::Op && self.text_of(t) == op
    }

    pub(super) fn op_at(&self, n: usize, op: &str) -> bool {
        let t = self.ahead(n);
        t.kind == Kind::Op && self.text_of(t) == op
    }

    pub(super) fn is_kw(&self, kw: &str) -> bool {
        let t = self.tok();
        t.kind == Kind::Name && self.text_of(t) == kw
    }

    pub(super) fn eat_op(&mut self, op: &str) -> bool {
        let yes = self.is_op(op);
        if yes {
            self.pos += 1;
        }
        yes
    }

    pub(super) fn eat_kw(&mut self, kw: &str) -> bool {
        let yes = self.is_kw(kw);
        if yes {
            self.pos += 1;
        }
        yes
    }

    pub(super) fn expect_op(&mut self, op: &str) -> Result<()> {
        if self.eat_op(op) { Ok(()) } else { Err(Unsure) }
    }

    pub(super) fn expect_kw(&mut self, kw: &str) -> Result<()> {
        if self.eat_kw(kw) { Ok(()) } else { Err(Unsure) }
    }

    /// A name that is not a keyword; recorded as used on this line.
    pub(super) fn name(&mut self) -> Result<&'s str> {
        let t = self.tok();
        if t.kind != Kind::Name {
            return Err(Unsure);
        }
        let text = self.text_of(t);
        if KEYWORDS.contains(&text) {
            return Err(Unsure);
        }
        self.pos += 1;
        self.line.names.push(text);
        Ok(text)
    }

    fn newline(&mut self) -> Result<()> {
        if self.tok().kind != Kind::Newline {
            return Err(Unsure);
        }
        self.pos += 1;
        self.lines.push(std::mem::take(&mut self.line));
        Ok(())
    }

    pub(super) fn defer_for(&mut self, why: String) {
        self.defer.get_or_insert(why);
    }

    pub(super) fn enter(&mut self) -> Result<()> {
        self.recursion += 1;
        if self.recursion > MAX_RECURSION {
            return Err(Unsure);
        }
        Ok(())
    }

    pub(super) fn leave(&mut self) {
        self.recursion -= 1;
    }

    // ---- statements ----

    pub(super) fn file(&mut self) -> Result<()> {
        while self.tok().kind != Kind::End {
            self.statement()?;
        }
        Ok(())
    }

    fn statement(&mut self) -> Result<()> {
        let t = self.tok();
        if t.kind != Kind::Name && !self.is_op("@") {
            return self.simple_statements();
        }
        match self.text_of(t) {
            "if" => self.if_statement(),
            "while" => {
                self.pos += 1;
                self.named_expression()?;
                self.block()?;
                self.else_block()
            }
            "for" => self.for_statement(),
            "try" => self.try_statement(),
            "with" => self.with_statement(),
            "def" => self.function(),
            "class" => self.class(),
            "@" => self.decorated(),
            "async" => {
                self.pos += 1;
                match self.text_of(self.tok()) {
                    "def" => self.function(),
                    "for" => self.for_statement(),
                    "with" => self.with_statement(),
                    _ => Err(Unsure),
                }
            }
            _ => self.simple_statements(),
        }
    }

    fn simple_statements(&mut self) -> Result<()> {
        loop {
            self.small_statement()?;
            if !self.eat_op(";") || self.tok().kind == Kind::Newline {
                break;
            }
        }
        self.newline()
    }

    fn small_statement(&mut self) -> Result<()> {
        let t = self.tok();
        let word = if t.kind == Kind::Name {
            self.text_of(t)
        } else {
            ""
        };
        match word {
            "pass" | "break" | "continue" => {
                self.pos += 1;
                Ok(())
            }
            "return" => {
                self.pos += 1;
                if !self.at_statement_end() {
                    self.star_expressions()?;
                }
                Ok(())
            }
            "raise" => {
                self.pos += 1;
                if !self.at_statement_end() {
                    self.expression()?;
                    if self.eat_kw("from") {
                        self.expression()?;
                    }
                }
                Ok(())
            }
            "global" | "nonlocal" => {
                self.pos += 1;
                self.name()?;
                while self.eat_op(",") {
                    self.name()?;
                }
                Ok(())
            }
            "del" => {
                self.pos += 1;
                self.star_expressions().map(|_| ())
            }
            "assert" => {
                self.pos += 1;
                self.expression()?;
                if self.eat_op(",") {
                    self.expression()?;
                }
                Ok(())
            }
            "import" => self.import(),
            "from" => self.import_from(),
            _ => self.expression_statement(),
        }
    }

    fn at_statement_end(&self) -> bool {
        self.tok().kind == Kind::Newline || self.is_op(";")
    }

    fn expression_statement(&mut self) -> Result<()> {
        let first = if self.is_kw("yield") {
            self.yield_expression()?
        } else {
            self.star_expressions()?
        };
        let t = self.tok();
        let op = if t.kind == Kind::Op {
            self.text_of(t)
        } else {
            ""
        };
        if op == "=" {
            let mut target = first;
            while self.eat_op("=") {
                if !target.pattern {
                    return Err(Unsure);
                }
                self.bind(&target);
                target = self.assigned_value()?;
            }
            return Ok(());
        }
        if AUGMENTED.contains(&op) {
            if !first.single {
                return Err(Unsure);
            }
            self.pos += 1;
            self.assigned_value()?;
            return Ok(());
        }
        if op == ":" {
            if !first.single {
                return Err(Unsure);
            }
            self.pos += 1;
            self.expression()?;
            if self.eat_op("=") {
                self.assigned_value()?;
            }
            self.bind(&first);
            return Ok(());
        }
        Ok(())
    }

    /// A bare name assigned, looped over or bound by `:=` may hold a path: weighed with the
    /// line at the end of the file.
    pub(super) fn bind(&mut self, target: &Expr) {
        if let Some((start, end)) = target.name {
            let name = self.span(start, end);
            self.line.targets.push(name);
        }
    }

    fn assigned_value(&mut self) -> Result<Expr> {
        if self.is_kw("yield") {
            self.yield_expression()
        } else {
            self.star_expressions()
        }
    }

    pub(super) fn yield_expression(&mut self) -> Result<Expr> {
        self.expect_kw("yield")?;
        if self.eat_kw("from") {
            let e = self.expression()?;
            return Ok(Expr::other(e.depth + 1));
        }
        if self.at_statement_end() || self.is_op(")") || self.is_op("=") {
            return Ok(Expr::other(1));
        }
        let e = self.star_expressions()?;
        Ok(Expr::other(e.depth + 1))
    }

    fn dotted(&mut self) -> Result<(u32, u32)> {
        let start = self.tok().start;
        self.name()?;
        while self.is_op(".") {
            self.pos += 1;
            self.name()?;
        }
        Ok((start, self.toks[self.pos - 1].end))
    }

    fn import(&mut self) -> Result<()> {
        let line = self.tok().line;
        self.pos += 1;
        loop {
            let (start, end) = self.dotted()?;
            if self.eat_kw("as") {
                self.name()?;
            }
            self.imports.push(Import {
                line,
                level: 0,
                module: self.span(start, end).to_string(),
                names: Vec::new(),
            });
            if !self.eat_op(",") {
                return Ok(());
            }
        }
    }

    fn import_from(&mut self) -> Result<()> {
        let line = self.tok().line;
        self.pos += 1;
        let mut level = 0;
        while self.is_op(".") || self.is_op("...") {
            level += self.text_of(self.tok()).len() as u32;
            self.pos += 1;
        }
        let module = if level > 0 && self.is_kw("import") {
            String::new()
        } else {
            let (start, end) = self.dotted()?;
            self.span(start, end).to_string()
        };
        self.expect_kw("import")?;
        let future = level == 0 && module == "__future__";
        let mut names = Vec::new();
        if self.eat_op("*") {
            if future {
                return Err(Unsure);
            }
            names.push("*".to_string());
        } else {
            let parens = self.eat_op("(");
            loop {
                let (start, end) = self.dotted()?;
                names.push(self.span(start, end).to_string());
                if self.eat_kw("as") {
                    self.name()?;
                }
                if !self.eat_op(",") {
                    break;
                }
                if parens && self.is_op(")") {
                    break;
                }
            }
            if parens {
                self.expect_op(")")?;
            }
        }
        if !future {
            self.imports.push(Import {
                line,
                level,
                module,
                names,
            });
        }
        Ok(())
    }

    /// `:` then a simple statement on the same line, or an indented block.
    fn block(&mut self) -> Result<()> {
        self.expect_op(":")?;
        if self.tok().kind != Kind::Newline {
            return self.simple_statements();
        }
        self.newline()?;
        if self.tok().kind != Kind::Indent {
            return Err(Unsure);
        }
        self.pos += 1;
        while self.tok().kind != Kind::Dedent {
            if self.tok().kind == Kind::End {
                return Err(Unsure);
            }
            self.statement()?;
        }
        self.pos += 1;
        Ok(())
    }

    fn else_block(&mut self) -> Result<()> {
        if self.eat_kw("else") {
            self.block()?;
        }
        Ok(())
    }

    fn if_statement(&mut self) -> Result<()> {
        self.pos += 1;
        self.named_expression()?;
        self.block()?;
        while self.eat_kw("elif") {
            self.named_expression()?;
            self.block()?;
        }
        self.else_block()
    }

    fn for_statement(&mut self) -> Result<()> {
        self.expect_kw("for")?;
        let target = self.targets()?;
        self.expect_kw("in")?;
        self.star_expressions()?;
        self.bind(&target);
        self.block()?;
        self.else_block()
    }

    /// Loop targets: patterns up to `in`. A lone bare name is what the loop binds.
    pub(super) fn targets(&mut self) -> Result<Expr> {
        let (mut items, mut only) = (0, Expr::other(1));
        loop {
            let starred = self.eat_op("*");
            let e = self.bitwise_or()?;
            if !e.pattern || (starred && !e.single) {
                return Err(Unsure);
            }
            items += 1;
            if items == 1 && !starred {
                only = e;
            }
            if !self.eat_op(",") {
                if starred && items == 1 {
                    return Err(Unsure);
                }
                break;
            }
            items += 1; // a trailing comma makes a tuple
            if self.is_kw("in") {
                break;
            }
        }
        Ok(if items == 1 { only } else { Expr::other(1) })
    }

    fn try_statement(&mut self) -> Result<()> {
        self.pos += 1;
        self.block()?;
        let mut handlers = 0;
        while self.eat_kw("except") {
            handlers += 1;
            if self.is_op("*") {
                // `except*` (3.11): read differently by the grammar gate was built with.
                return Err(Unsure);
            }
            if !self.is_op(":") {
                self.expression()?;
                if self.eat_kw("as") {
                    self.name()?;
                } else if self.is_op(",") {
                    return Err(Unsure);
                }
            }
            self.block()?;
        }
        if handlers > 0 {
            self.else_block()?;
        }
        let finally = self.eat_kw("finally");
        if finally {
            self.block()?;
        }
        if handlers == 0 && !finally {
            return Err(Unsure);
        }
        Ok(())
    }

    fn with_statement(&mut self) -> Result<()> {
        self.expect_kw("with")?;
        // `with (a as b, c):` (3.10): read apart, by tree-sitter.
        if self.is_op("(") {
            return Err(Unsure);
        }
        loop {
            self.expression()?;
            if self.eat_kw("as") {
                let e = self.bitwise_or()?;
                if !e.pattern {
                    return Err(Unsure);
                }
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.block()
    }

    fn function(&mut self) -> Result<()> {
        self.expect_kw("def")?;
        self.name()?;
        if self.is_op("[") {
            return Err(Unsure); // type parameters (3.12)
        }
        self.expect_op("(")?;
        self.parameters(")", true)?;
        self.expect_op(")")?;
        if self.eat_op("->") {
            self.expression()?;
        }
        self.block()
    }

    /// Parameters up to `close` (`)` for a def, `:` for a lambda); annotations only in a def.
    pub(super) fn parameters(&mut self, close: &str, annotated: bool) -> Result<()> {
        while !self.is_op(close) {
            if self.eat_op("/") {
            } else if self.eat_op("**") {
                self.parameter(annotated, false)?;
            } else if self.eat_op("*") {
                if !self.is_op(",") && !self.is_op(close) {
                    self.parameter(annotated, false)?;
                }
            } else {
                self.parameter(annotated, true)?;
            }
            if !self.eat_op(",") {
                break;
            }
        }
        Ok(())
    }

    fn parameter(&mut self, annotated: bool, default: bool) -> Result<()> {
        self.name()?;
        if annotated && self.eat_op(":") {
            self.expression()?;
        }
        if default && self.eat_op("=") {
            self.expression()?;
        }
        Ok(())
    }

    fn class(&mut self) -> Result<()> {
        self.expect_kw("class")?;
        self.name()?;
        if self.is_op("[") {
            return Err(Unsure); // type parameters (3.12)
        }
        if self.eat_op("(") {
            self.class_arguments()?;
            self.expect_op(")")?;
        }
        self.block()
    }

    fn decorated(&mut self) -> Result<()> {
        while self.eat_op("@") {
            self.named_expression()?;
            self.newline()?;
        }
        match self.text_of(self.tok()) {
            "def" => self.function(),
            "class" => self.class(),
            "async" => {
                self.pos += 1;
                self.function()
            }
            _ => Err(Unsure),
        }
    }
}
