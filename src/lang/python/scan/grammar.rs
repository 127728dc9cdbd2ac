//! The fast path's parser: a recursive-descent recogniser of Python 3's statements and
//! expressions over the lexer's tokens, keeping no tree. It accepts only what tree-sitter also
//! reads without an error (anything else is `Unsure`, and tree-sitter reads the file), and on
//! the way it records what facts are made of in a file that names no path, process, import
//! function or environment: the import statements, the strings and the context they stand in
//! (plain, or a path keyword's value), and, per logical line, what could make an expression a
//! path (a `+`, `/` or `%`, a `str(…)`, an f-string hole, a name bound to a string).

use super::lexer::{Kind, Lexed, Result, StrLit, Token, Unsure};
use crate::analyze::facts::{Import, PathRef, StringContext};

/// How deep an expression may nest before the file goes to tree-sitter: below the evaluator's
/// own limit (`paths::MAX_DEPTH`), so a file the fast path reads never meets it.
const MAX_EXPR_DEPTH: u32 = 120;
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
    /// A `str(…)` with arguments: a wrapper the evaluator looks through.
    pub str_call: bool,
    /// An f-string with holes: its holes are evaluated.
    pub holes: bool,
    pub names: Vec<&'s str>,
    /// Names a plain assignment, loop or `:=` binds.
    pub targets: Vec<&'s str>,
}

pub(super) struct Parser<'s> {
    src: &'s [u8],
    lexed: &'s Lexed,
    toks: &'s [Token],
    pos: usize,
    recursion: u32,
    context: StringContext,
    pub imports: Vec<Import>,
    /// `(line, value, context)` of every string literal without holes.
    pub strings: Vec<(u32, String, StringContext)>,
    /// f-strings that read as paths.
    pub paths: Vec<PathRef>,
    pub line: Line<'s>,
    pub lines: Vec<Line<'s>>,
    /// Found something only tree-sitter's pass reads (a path call, an f-string in a path
    /// argument): the file goes there, though it parses. Says what.
    pub defer: Option<String>,
}

/// An expression's shape, as assignment targets need it, and how deep it nests.
#[derive(Clone, Copy)]
struct Expr {
    /// A name, attribute or subscript: a single target.
    single: bool,
    /// A target tree-sitter reads as a pattern: a single one, or a tuple or list of them.
    pattern: bool,
    /// A bare name: what an assignment or loop binds.
    name: Option<(u32, u32)>,
    /// `*x`: valid only among others (`*a, b`, `[*a]`), never alone.
    starred: bool,
    depth: u32,
}

impl Expr {
    fn other(depth: u32) -> Expr {
        Expr {
            single: false,
            pattern: false,
            name: None,
            starred: false,
            depth,
        }
    }
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

const AUGMENTED: &[&str] = &[
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
            line: Line::default(),
            lines: Vec::new(),
            defer: None,
        }
    }

    // ---- tokens ----

    fn tok(&self) -> Token {
        self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn ahead(&self, n: usize) -> Token {
        self.toks[(self.pos + n).min(self.toks.len() - 1)]
    }

    fn text_of(&self, t: Token) -> &'s str {
        // The whole file was checked to be UTF-8 and tokens end on ASCII boundaries.
        std::str::from_utf8(&self.src[t.start as usize..t.end as usize]).unwrap_or("")
    }

    fn span(&self, start: u32, end: u32) -> &'s str {
        std::str::from_utf8(&self.src[start as usize..end as usize]).unwrap_or("")
    }

    fn is_op(&self, op: &str) -> bool {
        let t = self.tok();
        t.kind == Kind::Op && self.text_of(t) == op
    }

    fn op_at(&self, n: usize, op: &str) -> bool {
        let t = self.ahead(n);
        t.kind == Kind::Op && self.text_of(t) == op
    }

    fn is_kw(&self, kw: &str) -> bool {
        let t = self.tok();
        t.kind == Kind::Name && self.text_of(t) == kw
    }

    fn eat_op(&mut self, op: &str) -> bool {
        let yes = self.is_op(op);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        let yes = self.is_kw(kw);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn expect_op(&mut self, op: &str) -> Result<()> {
        if self.eat_op(op) { Ok(()) } else { Err(Unsure) }
    }

    fn expect_kw(&mut self, kw: &str) -> Result<()> {
        if self.eat_kw(kw) { Ok(()) } else { Err(Unsure) }
    }

    /// A name that is not a keyword; recorded as used on this line.
    fn name(&mut self) -> Result<&'s str> {
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

    fn defer_for(&mut self, why: String) {
        self.defer.get_or_insert(why);
    }

    fn enter(&mut self) -> Result<()> {
        self.recursion += 1;
        if self.recursion > MAX_RECURSION {
            return Err(Unsure);
        }
        Ok(())
    }

    fn leave(&mut self) {
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
                self.bind(target);
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
            self.bind(first);
            return Ok(());
        }
        Ok(())
    }

    /// A bare name assigned, looped over or bound by `:=` may hold a path: weighed with the
    /// line at the end of the file.
    fn bind(&mut self, target: Expr) {
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

    fn yield_expression(&mut self) -> Result<Expr> {
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
        self.bind(target);
        self.block()?;
        self.else_block()
    }

    /// Loop targets: patterns up to `in`. A lone bare name is what the loop binds.
    fn targets(&mut self) -> Result<Expr> {
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
    fn parameters(&mut self, close: &str, annotated: bool) -> Result<()> {
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
            self.arguments()?;
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

    // ---- expressions ----

    /// Comma-separated expressions, starred ones allowed; a tuple without parentheses.
    fn star_expressions(&mut self) -> Result<Expr> {
        let first = self.star_expression()?;
        if !self.is_op(",") {
            if first.starred {
                return Err(Unsure);
            }
            return Ok(first);
        }
        let (mut pattern, mut depth) = (first.pattern, first.depth);
        while self.eat_op(",") {
            if self.ends_list() {
                break;
            }
            let e = self.star_expression()?;
            pattern &= e.pattern;
            depth = depth.max(e.depth);
        }
        Ok(Expr {
            single: false,
            pattern,
            name: None,
            starred: false,
            depth: depth + 1,
        })
    }

    /// Whether the token ends a comma list (after a trailing comma).
    fn ends_list(&self) -> bool {
        let t = self.tok();
        matches!(t.kind, Kind::Newline | Kind::End)
            || (t.kind == Kind::Op && matches!(self.text_of(t), ")" | "]" | "}" | "=" | ";" | ":"))
            || AUGMENTED.contains(&self.text_of(t))
            || self.is_kw("in")
    }

    fn star_expression(&mut self) -> Result<Expr> {
        if self.eat_op("*") {
            let e = self.bitwise_or()?;
            return Ok(Expr {
                single: false,
                // A starred target is a name, attribute or subscript (`*rest`), no tuple.
                pattern: e.single,
                name: None,
                starred: true,
                depth: e.depth + 1,
            });
        }
        self.named_expression()
    }

    /// `name := value` or an expression.
    fn named_expression(&mut self) -> Result<Expr> {
        let t = self.tok();
        if t.kind == Kind::Name && self.op_at(1, ":=") {
            self.name()?;
            self.pos += 1;
            let e = self.expression()?;
            self.line.targets.push(self.text_of(t));
            return Ok(Expr::other(e.depth + 1));
        }
        self.expression()
    }

    /// A conditional expression or a lambda.
    fn expression(&mut self) -> Result<Expr> {
        self.enter()?;
        let result = self.expression_inner();
        self.leave();
        let e = result?;
        if e.depth > MAX_EXPR_DEPTH {
            return Err(Unsure);
        }
        Ok(e)
    }

    fn expression_inner(&mut self) -> Result<Expr> {
        if self.eat_kw("lambda") {
            self.parameters(":", false)?;
            self.expect_op(":")?;
            let e = self.expression()?;
            return Ok(Expr::other(e.depth + 1));
        }
        let e = self.disjunction()?;
        if self.eat_kw("if") {
            let c = self.disjunction()?;
            self.expect_kw("else")?;
            let o = self.expression()?;
            return Ok(Expr::other(e.depth.max(c.depth).max(o.depth) + 1));
        }
        Ok(e)
    }

    /// An expression without a top-level conditional (comprehension conditions, `for` ranges).
    fn disjunction(&mut self) -> Result<Expr> {
        let mut e = self.conjunction()?;
        while self.eat_kw("or") {
            let r = self.conjunction()?;
            e = Expr::other(e.depth.max(r.depth) + 1);
        }
        Ok(e)
    }

    fn conjunction(&mut self) -> Result<Expr> {
        let mut e = self.inversion()?;
        while self.eat_kw("and") {
            let r = self.inversion()?;
            e = Expr::other(e.depth.max(r.depth) + 1);
        }
        Ok(e)
    }

    fn inversion(&mut self) -> Result<Expr> {
        if self.eat_kw("not") {
            self.enter()?;
            let e = self.inversion();
            self.leave();
            return Ok(Expr::other(e?.depth + 1));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr> {
        let mut e = self.bitwise_or()?;
        loop {
            let t = self.tok();
            let text = self.text_of(t);
            let compare = match t.kind {
                Kind::Op => matches!(text, "<" | ">" | "==" | ">=" | "<=" | "!="),
                Kind::Name => {
                    matches!(text, "in" | "is")
                        || (text == "not"
                            && self.ahead(1).kind == Kind::Name
                            && self.text_of(self.ahead(1)) == "in")
                }
                _ => false,
            };
            if !compare {
                return Ok(e);
            }
            self.pos += 1;
            if text == "not" || (text == "is" && self.is_kw("not")) {
                self.pos += 1;
            }
            let r = self.bitwise_or()?;
            e = Expr::other(e.depth.max(r.depth) + 1);
        }
    }

    /// The binary operators, loosest first, down to the unary ones.
    fn bitwise_or(&mut self) -> Result<Expr> {
        self.binary(0)
    }

    fn binary(&mut self, level: usize) -> Result<Expr> {
        const LEVELS: &[&[&str]] = &[
            &["|"],
            &["^"],
            &["&"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "//", "%", "@"],
        ];
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let mut e = self.binary(level + 1)?;
        loop {
            let t = self.tok();
            if t.kind != Kind::Op || !ops.contains(&self.text_of(t)) {
                return Ok(e);
            }
            if matches!(self.text_of(t), "+" | "/" | "%") {
                self.line.joins = true;
            }
            if self.text_of(t) == "/" {
                self.line.divides = true;
            }
            self.pos += 1;
            let r = self.binary(level + 1)?;
            e = Expr::other(e.depth.max(r.depth) + 1);
            if e.depth > MAX_EXPR_DEPTH {
                return Err(Unsure);
            }
        }
    }

    fn unary(&mut self) -> Result<Expr> {
        if self.is_op("-") || self.is_op("+") || self.is_op("~") {
            self.pos += 1;
            self.enter()?;
            let e = self.unary();
            self.leave();
            return Ok(Expr::other(e?.depth + 1));
        }
        self.power()
    }

    fn power(&mut self) -> Result<Expr> {
        let e = if self.eat_kw("await") {
            let p = self.primary()?;
            Expr::other(p.depth + 1)
        } else {
            self.primary()?
        };
        if self.eat_op("**") {
            self.enter()?;
            let r = self.unary();
            self.leave();
            return Ok(Expr::other(e.depth.max(r?.depth) + 1));
        }
        Ok(e)
    }

    /// An atom and its trailers: `.name`, `(arguments)`, `[subscript]`.
    fn primary(&mut self) -> Result<Expr> {
        let start = self.tok().start;
        let atom_is_string = self.tok().kind == Kind::Str;
        let mut e = self.atom()?;
        let mut trailers = 0;
        loop {
            if self.eat_op(".") {
                let t = self.tok();
                if t.kind != Kind::Name {
                    return Err(Unsure);
                }
                let attribute = self.text_of(t);
                if KEYWORDS.contains(&attribute) {
                    return Err(Unsure);
                }
                self.pos += 1;
                self.line.names.push(attribute);
                // `"{}/x".format(HERE)`: a template the evaluator fills.
                if attribute == "format" && atom_is_string && trailers == 0 {
                    self.defer_for("a template's .format".into());
                }
                e = Expr {
                    single: true,
                    pattern: true,
                    name: None,
                    starred: false,
                    depth: e.depth + 1,
                };
            } else if self.is_op("(") {
                let function = self.span(start, self.toks[self.pos - 1].end);
                self.pos += 1;
                let has_args = !self.is_op(")");
                if super::call_matters(function, has_args) {
                    self.defer_for(format!("call {function}"));
                }
                if function == "str" && has_args {
                    self.line.str_call = true;
                }
                let d = self.arguments()?;
                self.expect_op(")")?;
                e = Expr::other(e.depth.max(d) + 1);
            } else if self.eat_op("[") {
                let d = self.subscript()?;
                self.expect_op("]")?;
                e = Expr {
                    single: true,
                    pattern: true,
                    name: None,
                    starred: false,
                    depth: e.depth.max(d) + 1,
                };
            } else {
                return Ok(e);
            }
            trailers += 1;
            if e.depth > MAX_EXPR_DEPTH {
                return Err(Unsure);
            }
        }
    }

    /// Call arguments up to `)`: positional, `*a`, `**k`, `name=value`, or one generator.
    fn arguments(&mut self) -> Result<u32> {
        let mut depth = 0;
        let mut count = 0;
        while !self.is_op(")") {
            count += 1;
            let t = self.tok();
            let e = if self.eat_op("**") || self.eat_op("*") {
                self.expression()?
            } else if t.kind == Kind::Name && self.op_at(1, "=") {
                let keyword = self.name()?;
                self.pos += 1;
                let outer = self.context;
                if crate::lang::python::analyze::path_keyword(keyword) {
                    self.context = StringContext::PathArg;
                }
                let e = self.expression();
                self.context = outer;
                e?
            } else {
                let e = self.named_expression()?;
                if self.is_kw("for") || self.is_kw("async") {
                    // A generator as the only argument.
                    if count != 1 {
                        return Err(Unsure);
                    }
                    let d = self.comprehension()?;
                    if !self.is_op(")") {
                        return Err(Unsure);
                    }
                    return Ok(e.depth.max(d) + 1);
                }
                e
            };
            depth = depth.max(e.depth);
            if !self.eat_op(",") {
                break;
            }
        }
        Ok(depth + 1)
    }

    /// The inside of `[…]` after a value: slices and indexes.
    fn subscript(&mut self) -> Result<u32> {
        let mut depth = 0;
        loop {
            depth = depth.max(self.slice()?);
            if !self.eat_op(",") || self.is_op("]") {
                return Ok(depth + 1);
            }
        }
    }

    fn slice(&mut self) -> Result<u32> {
        let mut depth = 0;
        if !self.is_op(":") {
            if self.is_op("*") {
                return Err(Unsure); // `a[*b]` (3.11)
            }
            let e = self.named_expression()?;
            if !self.is_op(":") {
                return Ok(e.depth);
            }
            depth = e.depth;
        }
        // `a:b:c`, each part optional.
        for _ in 0..2 {
            if !self.eat_op(":") {
                break;
            }
            if !self.is_op(":") && !self.is_op(",") && !self.is_op("]") {
                depth = depth.max(self.expression()?.depth);
            }
        }
        Ok(depth + 1)
    }

    /// `for … in … [if …]…`, after a comprehension's element.
    fn comprehension(&mut self) -> Result<u32> {
        let mut depth = 0;
        loop {
            let asynchronous = self.eat_kw("async");
            if !self.eat_kw("for") {
                return if asynchronous { Err(Unsure) } else { Ok(depth) };
            }
            let target = self.targets()?;
            self.expect_kw("in")?;
            depth = depth.max(self.disjunction()?.depth);
            self.bind(target);
            while self.eat_kw("if") {
                depth = depth.max(self.disjunction()?.depth);
            }
            if !self.is_kw("for") && !self.is_kw("async") {
                return Ok(depth + 1);
            }
        }
    }

    fn atom(&mut self) -> Result<Expr> {
        let t = self.tok();
        match t.kind {
            Kind::Name => {
                let text = self.text_of(t);
                if matches!(text, "None" | "True" | "False") {
                    self.pos += 1;
                    return Ok(Expr::other(1));
                }
                self.name()?;
                Ok(Expr {
                    single: true,
                    pattern: true,
                    name: Some((t.start, t.end)),
                    starred: false,
                    depth: 1,
                })
            }
            Kind::Number => {
                self.pos += 1;
                Ok(Expr::other(1))
            }
            Kind::Str => self.strings(),
            Kind::Op => match self.text_of(t) {
                "..." => {
                    self.pos += 1;
                    Ok(Expr::other(1))
                }
                "(" => self.enclosed(")"),
                "[" => self.enclosed("]"),
                "{" => self.braces(),
                _ => Err(Unsure),
            },
            _ => Err(Unsure),
        }
    }

    /// `(…)` or `[…]`: empty, a yield, one expression, a tuple or list, or a comprehension.
    fn enclosed(&mut self, close: &str) -> Result<Expr> {
        self.pos += 1;
        self.enter()?;
        let result = self.enclosed_inner(close);
        self.leave();
        result
    }

    fn enclosed_inner(&mut self, close: &str) -> Result<Expr> {
        if self.eat_op(close) {
            return Ok(Expr::other(1));
        }
        if close == ")" && self.is_kw("yield") {
            let e = self.yield_expression()?;
            self.expect_op(close)?;
            return Ok(Expr::other(e.depth + 1));
        }
        let first = self.star_expression()?;
        if self.is_kw("for") || self.is_kw("async") {
            let d = self.comprehension()?;
            self.expect_op(close)?;
            return Ok(Expr::other(first.depth.max(d) + 1));
        }
        if close == ")" && first.starred && self.is_op(close) {
            return Err(Unsure);
        }
        if close == ")" && self.eat_op(close) {
            // A parenthesized expression: not a pattern tree-sitter reads as a target here.
            return Ok(Expr::other(first.depth + 1));
        }
        let (mut pattern, mut depth) = (first.pattern, first.depth);
        while self.eat_op(",") {
            if self.is_op(close) {
                break;
            }
            let e = self.star_expression()?;
            pattern &= e.pattern;
            depth = depth.max(e.depth);
        }
        self.expect_op(close)?;
        Ok(Expr {
            single: false,
            pattern,
            name: None,
            starred: false,
            depth: depth + 1,
        })
    }

    /// `{…}`: a dict, a set, or a comprehension of either.
    fn braces(&mut self) -> Result<Expr> {
        self.pos += 1;
        self.enter()?;
        let result = self.braces_inner();
        self.leave();
        result
    }

    fn braces_inner(&mut self) -> Result<Expr> {
        if self.eat_op("}") {
            return Ok(Expr::other(1));
        }
        let mut depth = 0;
        let mut dict = None;
        let mut first = true;
        loop {
            let d = if self.eat_op("**") {
                if dict == Some(false) {
                    return Err(Unsure);
                }
                dict = Some(true);
                self.bitwise_or()?.depth
            } else if self.is_op("*") {
                if dict == Some(true) {
                    return Err(Unsure);
                }
                dict = Some(false);
                self.star_expression()?.depth
            } else {
                let key = self.named_expression()?;
                if self.eat_op(":") {
                    if dict == Some(false) {
                        return Err(Unsure);
                    }
                    dict = Some(true);
                    key.depth.max(self.expression()?.depth)
                } else {
                    if dict == Some(true) {
                        return Err(Unsure);
                    }
                    dict = Some(false);
                    key.depth
                }
            };
            depth = depth.max(d);
            if first && (self.is_kw("for") || self.is_kw("async")) {
                depth = depth.max(self.comprehension()?);
                self.expect_op("}")?;
                return Ok(Expr::other(depth + 1));
            }
            first = false;
            if !self.eat_op(",") || self.is_op("}") {
                break;
            }
        }
        self.expect_op("}")?;
        Ok(Expr::other(depth + 1))
    }

    /// Adjacent string literals: one value, or (with an f-string hole) a template.
    fn strings(&mut self) -> Result<Expr> {
        let first = self.tok();
        let mut parts: Vec<&'s StrLit> = Vec::new();
        let mut bytes_kind = None;
        while self.tok().kind == Kind::Str {
            let t = self.tok();
            let lit = &self.lexed.strings[t.aux as usize];
            // Bytes and text literals do not concatenate.
            let is_bytes = self.src[t.start as usize..]
                .iter()
                .take_while(|b| b.is_ascii_alphabetic())
                .any(|b| b | 0x20 == b'b');
            if *bytes_kind.get_or_insert(is_bytes) != is_bytes {
                return Err(Unsure);
            }
            parts.push(lit);
            self.pos += 1;
        }
        self.line.strings = true;
        let holes = parts.iter().any(|p| !p.holes.is_empty());
        if holes {
            self.line.holes = true;
            if self.context != StringContext::Plain {
                self.defer_for("an f-string in a path argument".into());
            }
            for part in &parts {
                for hole in &part.holes {
                    // A hole the evaluator could give a value (a literal, a join) is its.
                    let evaluated = hole.iter().any(|t| {
                        t.kind == Kind::Str
                            || (t.kind == Kind::Op && matches!(self.text_of(*t), "+" | "/" | "%"))
                    });
                    if evaluated {
                        self.defer_for("an f-string hole with a literal or a join".into());
                    }
                    self.hole(hole)?;
                }
            }
            self.template(first, &parts);
            return Ok(Expr::other(2));
        }
        let mut value = String::new();
        for part in &parts {
            value.push_str(self.span(part.content.0, part.content.1));
        }
        self.strings.push((first.line, value, self.context));
        Ok(Expr::other(2))
    }

    /// An f-string whose holes hold nothing the evaluator knows: its text with every hole
    /// unknown, sealed into a glob, is a path when it reads as one (`f"{name}.json/x"`).
    fn template(&mut self, first: Token, parts: &[&StrLit]) {
        let mut text = String::new();
        for part in parts {
            let mut at = part.content.0;
            for &(start, end) in &part.spans {
                text.push_str(self.span(at, start));
                text.push(crate::analyze::paths::UNKNOWN);
                at = end;
            }
            text.push_str(self.span(at, part.content.1));
        }
        let value = crate::analyze::paths::PathValue::Relative(text).seal();
        if let crate::analyze::paths::PathValue::Relative(glob) = &value
            && crate::lang::python::analyze::reads_as_path(glob)
        {
            let source = self.span(first.start, self.toks[self.pos - 1].end);
            self.paths.push(PathRef {
                line: first.line,
                value,
                text: crate::lang::python::analyze::one_line(source),
            });
        }
    }

    /// An f-string hole's expression list, parsed from its own tokens.
    fn hole(&mut self, tokens: &'s [Token]) -> Result<()> {
        let (outer, at) = (self.toks, self.pos);
        self.toks = tokens;
        self.pos = 0;
        self.enter()?;
        let result = self.star_expressions();
        self.leave();
        let ended = self.tok().kind == Kind::End;
        self.toks = outer;
        self.pos = at;
        result?;
        if !ended {
            return Err(Unsure);
        }
        Ok(())
    }
}
