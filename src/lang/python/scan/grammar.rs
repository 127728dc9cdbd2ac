//! The fast path's parser: a recursive-descent recogniser of Python 3's statements and
//! expressions over the lexer's tokens, keeping no tree. It accepts only what tree-sitter also
//! reads without an error (anything else is `Unsure`, and tree-sitter reads the file), and on
//! the way it records what facts are made of in a file that names no process, import
//! function, environment, listing or resource: the import statements, the strings and the
//! context they stand in (plain, or a path call's argument or a path keyword's value), the
//! names bound to paths, in the order the tree pass binds and unbinds them, and the module
//! files imports name, for the expressions (`expressions`) to evaluate.

use super::expressions::Expr;
use super::lexer::{Kind, Lexed, Result, Token, Unsure};
use crate::analyze::facts::{Import, PathRef, StringContext};
use crate::analyze::paths::PathValue;
use std::collections::HashMap;

/// How deep an expression may nest before the file goes to tree-sitter: below the evaluator's
/// own limit (`paths::MAX_DEPTH`), so a file the fast path reads never meets it.
pub(super) const MAX_EXPR_DEPTH: u32 = 120;
/// How deep the parser recurses (each level is a few frames) before it gives up.
const MAX_RECURSION: u32 = 100;

pub(super) struct Parser<'s> {
    pub(super) src: &'s [u8],
    /// The same source as text (checked to be UTF-8 once).
    text: &'s str,
    pub(super) lexed: &'s Lexed,
    pub(super) toks: &'s [Token],
    pub(super) pos: usize,
    pub(super) recursion: u32,
    pub(super) context: StringContext,
    pub imports: Vec<Import>,
    /// `(line, value, context)` of every string literal without holes.
    pub strings: Vec<(u32, std::borrow::Cow<'s, str>, StringContext)>,
    /// The paths expressions build, as the tree pass records them: one a parent builds on is
    /// taken back (`None`) when the parent is evaluated.
    pub paths: Vec<Option<PathRef>>,
    /// Inside an f-string hole, whose nodes the tree pass evaluates but does not visit.
    pub(super) in_hole: bool,
    /// Parsing an annotation: tree-sitter reads `X[…]` there as a generic type, which takes
    /// no slice (`b: z[:]` is an error to it).
    pub(super) in_annotation: bool,
    /// Names bound to a value the evaluator reads (`HERE = "data"`), as the tree pass binds
    /// them: in source order, one flat map per file.
    pub(super) names: HashMap<&'s str, PathValue>,
    /// The imports read so far, in order: what `a.__file__` names is worked out from them
    /// when an expression reads it (`module_file`). Kept apart from `names`, as no binding
    /// of a name unbinds them.
    module_imports: Vec<ModuleImport<'s>>,
    /// Every name read as a value, with where it stands: a binding read after the part that
    /// uses it makes that part read again.
    pub(super) used: Vec<(u32, &'s str)>,
    /// Names whose value a binding inside an expression (`:=`, a comprehension's loop, a
    /// lambda's parameters) changed, in the statement being read, once that expression has
    /// ended. The tree pass evaluates an expression when it meets it, before a binding inside
    /// it, and again each time it asks whether a child's parent builds on the child, maybe
    /// after: a use of such a name elsewhere in the statement, before the binding's own
    /// expression or after it, may be read there with either value, so the file goes to
    /// tree-sitter. (No evaluation looks into a `:=`, a comprehension or a lambda, so uses
    /// inside them are read as here.)
    pub(super) bound_inside: Vec<&'s str>,
    /// Names changed by such bindings whose expression has not ended yet.
    pub(super) pending_inside: Vec<&'s str>,
    /// Where the statement being read starts in `used`.
    pub(super) statement_used: usize,
    /// How many bindings were made: one made inside a part read again would be made twice.
    pub(super) binds: u32,
    /// Found something only tree-sitter's pass reads (an environment or import call, an
    /// f-string in a path argument): the file goes there, though it parses. Says what.
    pub defer: Option<String>,
    /// The variables of os's environment read by a literal name (`scan/environ.rs`).
    pub env: Vec<String>,
    /// Reads of the environment gate cannot name: line and the text the tree pass keeps.
    pub env_any: Vec<(u32, String)>,
    /// The last `os.environ` standing alone, and how many no argument list has claimed.
    pub(super) env_alone: Option<(u32, u32)>,
    pub(super) env_unclaimed: u32,
    /// Reading a starred argument after the first of a statement's `print(…)`.
    pub(super) late_print_star: bool,
}

/// Python's hard keywords: a `match` on the text, which compiles to a switch on its length
/// (the parser asks this of nearly every name; a scan of a list was a tenth of its time).
pub(super) fn is_keyword(text: &str) -> bool {
    matches!(
        text,
        "False"
            | "None"
            | "True"
            | "and"
            | "as"
            | "assert"
            | "async"
            | "await"
            | "break"
            | "class"
            | "continue"
            | "def"
            | "del"
            | "elif"
            | "else"
            | "except"
            | "finally"
            | "for"
            | "from"
            | "global"
            | "if"
            | "import"
            | "in"
            | "is"
            | "lambda"
            | "nonlocal"
            | "not"
            | "or"
            | "pass"
            | "raise"
            | "return"
            | "try"
            | "while"
            | "with"
            | "yield"
    )
}

pub(super) const AUGMENTED: &[&str] = &[
    "+=", "-=", "*=", "/=", "//=", "%=", "@=", "&=", "|=", "^=", ">>=", "<<=", "**=",
];

impl<'s> Parser<'s> {
    pub(super) fn new(text: &'s str, lexed: &'s Lexed) -> Parser<'s> {
        Parser {
            src: text.as_bytes(),
            text,
            lexed,
            toks: &lexed.tokens,
            pos: 0,
            recursion: 0,
            context: StringContext::Plain,
            imports: Vec::new(),
            strings: Vec::new(),
            paths: Vec::new(),
            in_hole: false,
            in_annotation: false,
            names: HashMap::new(),
            module_imports: Vec::new(),
            bound_inside: Vec::new(),
            pending_inside: Vec::new(),
            statement_used: 0,
            used: Vec::new(),
            binds: 0,
            defer: None,
            env: Vec::new(),
            env_any: Vec::new(),
            env_alone: None,
            env_unclaimed: 0,
            late_print_star: false,
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
        self.span(t.start, t.end)
    }

    /// The source between two token boundaries (which fall between characters: the file is
    /// UTF-8 and every token starts and ends at an ASCII byte or the file's ends).
    pub(super) fn span(&self, start: u32, end: u32) -> &'s str {
        self.text.get(start as usize..end as usize).unwrap_or("")
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

    /// A name that is not a keyword.
    pub(super) fn name(&mut self) -> Result<&'s str> {
        let t = self.tok();
        if t.kind != Kind::Name {
            return Err(Unsure);
        }
        let text = self.text_of(t);
        if is_keyword(text) {
            return Err(Unsure);
        }
        self.pos += 1;
        Ok(text)
    }

    fn newline(&mut self) -> Result<()> {
        if self.tok().kind != Kind::Newline {
            return Err(Unsure);
        }
        self.pos += 1;
        Ok(())
    }

    pub(super) fn defer_for(&mut self, why: String) {
        self.defer.get_or_insert(why);
    }

    // ---- bindings ----

    pub(super) fn mark(&self) -> Mark {
        Mark {
            pos: self.pos,
            paths: self.paths.len(),
            strings: self.strings.len(),
            used: self.used.len(),
            binds: self.binds,
        }
    }

    /// The tree pass binds where it meets a binding (an assignment, a loop, a `:=`) and then
    /// reads what stands under it; this parser has read that part already (since `mark`). So
    /// `changes` (a name's new value, or none) are made now, and if one changed a name the
    /// part used as a value (anywhere but at `bound`, the places of the names bound), the
    /// part is read again by `again`. `inside`: the binding stands inside an expression.
    pub(super) fn rebind(
        &mut self,
        mark: Mark,
        changes: Vec<(&'s str, Option<PathValue>)>,
        bound: &[u32],
        inside: bool,
        again: fn(&mut Self) -> Result<()>,
    ) -> Result<()> {
        if self.in_hole {
            return Ok(()); // the tree pass does not walk an f-string's holes
        }
        let mut changed = Vec::new();
        for (name, value) in changes {
            let old = match &value {
                Some(v) => self.names.insert(name, v.clone()),
                None => self.names.remove(name),
            };
            if old != value {
                changed.push(name);
            }
        }
        self.binds += 1;
        if inside {
            self.pending_inside.extend(&changed);
        }
        let used = self.used[mark.used..]
            .iter()
            .any(|(at, name)| !bound.contains(at) && changed.contains(name));
        if !used {
            return Ok(());
        }
        if self.binds - 1 > mark.binds {
            self.defer_for("a binding inside a part its own binding changes".into());
            return Ok(());
        }
        let end = self.pos;
        self.pos = mark.pos;
        self.paths.truncate(mark.paths);
        self.strings.truncate(mark.strings);
        self.used.truncate(mark.used);
        again(self)?;
        if self.pos != end {
            return Err(Unsure);
        }
        Ok(())
    }

    /// The names a target binds, with where they stand (`a`, `a, *b`, `[a, (b, c)]`; not the
    /// names inside an attribute or subscript).
    pub(super) fn target_names(&self, target: &Expr) -> Vec<(u32, &'s str)> {
        target
            .name
            .iter()
            .chain(&target.pattern_names)
            .map(|&(start, end)| (start, self.span(start, end)))
            .collect()
    }

    /// A binding inside an expression that began at `since` (an index into `used`) changed
    /// `names`: one used in the statement before that is read by the tree pass with either
    /// value (`bound_inside`); later uses are checked as they come.
    pub(super) fn bound_inside_since(&mut self, since: usize, names: Vec<&'s str>) {
        let before = self.used.get(self.statement_used.min(since)..since);
        if before.is_some_and(|b| b.iter().any(|(_, n)| names.contains(n))) {
            self.defer_for("a name used before a binding inside its statement".into());
        }
        self.bound_inside.extend(names);
    }

    /// What `key` (`a.b.__file__`) names after the imports read so far: the latest import
    /// that binds it, as the tree pass binds them (`analyze::module_files`).
    pub(super) fn module_file(&self, key: &str) -> Option<PathValue> {
        self.module_imports.iter().rev().find_map(|import| {
            let module = match import.name {
                Some(name) => format!("{}.{name}", import.module),
                None => import.module.to_string(),
            };
            crate::lang::python::analyze::module_files(&module, import.alias)
                .into_iter()
                .find_map(|(k, v)| (k == key).then_some(v))
        })
    }

    /// Every name `target` binds, unbound.
    pub(super) fn unbinding(&self, target: &Expr) -> Vec<(&'s str, Option<PathValue>)> {
        self.target_names(target)
            .into_iter()
            .map(|(_, n)| (n, None))
            .collect()
    }

    /// What `target = value` binds: a bare name to a value the evaluator reads, else every
    /// name the target holds to none.
    pub(super) fn binding(
        &self,
        target: &Expr,
        value: Option<PathValue>,
    ) -> Vec<(&'s str, Option<PathValue>)> {
        match (target.name, value) {
            (Some((start, end)), Some(value)) => vec![(self.span(start, end), Some(value))],
            _ => self.unbinding(target),
        }
    }

    /// Names unbound where the parser meets them (imports, `as` targets, parameters): the
    /// tree pass meets them in the same order.
    pub(super) fn unbind_now(&mut self, names: &[&'s str]) {
        if !self.in_hole {
            for name in names {
                self.names.remove(name);
            }
        }
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
        self.bound_inside.clear();
        self.statement_used = self.used.len();
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
        self.bound_inside.clear();
        self.statement_used = self.used.len();
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
        let mark = self.mark();
        let statement = self.statement_parts()?;
        let places =
            |names: Vec<(u32, &'s str)>| names.into_iter().map(|(at, _)| at).collect::<Vec<u32>>();
        let (changes, bound): (Vec<_>, Vec<u32>) = match &statement {
            Statement::Assign(chunks, starts) => {
                let (value, targets) = chunks.split_last().ok_or(Unsure)?;
                let (last, earlier) = targets.split_last().ok_or(Unsure)?;
                let value_used = starts.last().ok_or(Unsure)?;
                let (mut changes, mut bound) = (Vec::new(), Vec::new());
                // `d[x + "/k"] = x = v`: the tree pass binds each target as it meets it, so
                // what an earlier target reads is read before a later one binds.
                for (k, t) in earlier.iter().enumerate() {
                    let own = places(self.target_names(t));
                    let later: Vec<&str> = targets[k + 1..]
                        .iter()
                        .flat_map(|l| self.target_names(l))
                        .map(|(_, n)| n)
                        .collect();
                    let reads_later = self.used[starts[k]..starts[k + 1]]
                        .iter()
                        .any(|(at, n)| !own.contains(at) && later.contains(n));
                    if reads_later {
                        self.defer_for("a chained assignment's target reads a later target".into());
                    }
                }
                // `a = b = v`: the outer assignment's value is an assignment, no path: `a` is
                // unbound before `v` is evaluated for `b`.
                for t in earlier {
                    let names = self.target_names(t);
                    let named = self.used[*value_used..]
                        .iter()
                        .any(|(_, n)| names.iter().any(|(_, m)| m == n));
                    if named {
                        self.defer_for("a chained assignment whose value names a target".into());
                    }
                    changes.extend(self.unbinding(t));
                    bound.extend(places(names));
                }
                changes.extend(self.binding(last, self.value_of(value)));
                bound.extend(places(self.target_names(last)));
                (changes, bound)
            }
            // `x += v` unbinds `x` (an attribute or subscript binds nothing).
            Statement::Augmented(target) => {
                let changes = target
                    .name
                    .map(|(start, end)| (self.span(start, end), None))
                    .into_iter()
                    .collect();
                (changes, places(self.target_names(target)))
            }
            Statement::Annotated(target, value) => (
                self.binding(target, value.clone()),
                places(self.target_names(target)),
            ),
            Statement::Expression => return Ok(()),
        };
        self.rebind(mark, changes, &bound, false, |p| {
            p.statement_parts().map(|_| ())
        })
    }

    /// An expression statement's parts: an assignment's targets and value, an augmented or
    /// annotated one's target, or a plain expression.
    fn statement_parts(&mut self) -> Result<Statement> {
        let start = self.used.len();
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
            let mut chunks = vec![first];
            let mut starts = vec![start];
            while self.eat_op("=") {
                if !chunks.last().is_some_and(|c| c.pattern) {
                    return Err(Unsure);
                }
                starts.push(self.used.len());
                chunks.push(self.assigned_value()?);
            }
            return Ok(Statement::Assign(chunks, starts));
        }
        if AUGMENTED.contains(&op) {
            if !first.single {
                return Err(Unsure);
            }
            self.pos += 1;
            self.assigned_value()?;
            return Ok(Statement::Augmented(first));
        }
        if op == ":" {
            if !first.single {
                return Err(Unsure);
            }
            self.pos += 1;
            self.annotation()?;
            let value = if self.eat_op("=") {
                let value = self.assigned_value()?;
                self.value_of(&value)
            } else {
                None
            };
            return Ok(Statement::Annotated(first, value));
        }
        Ok(Statement::Expression)
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
            let module = self.span(start, end);
            let alias = if self.eat_kw("as") {
                Some(self.name()?)
            } else {
                None
            };
            let bound = alias.unwrap_or_else(|| module.split('.').next().unwrap_or_default());
            self.unbind_now(&[bound]);
            self.module_imports.push(ModuleImport {
                module,
                name: None,
                alias,
            });
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
        let mut from = "";
        let module = if level > 0 && self.is_kw("import") {
            String::new()
        } else {
            let (start, end) = self.dotted()?;
            from = self.span(start, end);
            from.to_string()
        };
        self.expect_kw("import")?;
        let future = level == 0 && module == "__future__";
        if level == 0 && !future && module.split('.').next().map(str::trim) == Some("__future__") {
            // `from __future__.x import y`: tree-sitter reads no module path there.
            return Err(Unsure);
        }
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
                let name = self.span(start, end);
                names.push(name.to_string());
                let bound = if self.eat_kw("as") {
                    self.name()?
                } else {
                    name
                };
                if !future {
                    self.unbind_now(&[bound]);
                }
                if !future && level == 0 {
                    self.module_imports.push(ModuleImport {
                        module: from,
                        name: Some(name),
                        alias: Some(bound),
                    });
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
        self.loop_clause(false)?;
        self.block()?;
        self.else_block()
    }

    /// `target in iterable` of a loop (or of a comprehension, whose iterable is a
    /// disjunction): a bare name looping over a literal list of file names is bound to them
    /// (`{a.json,b.json}`), any other target unbound — before the tree pass reads the iterable.
    pub(super) fn loop_clause(&mut self, comprehension: bool) -> Result<u32> {
        let mark = self.mark();
        let target = self.targets()?;
        self.expect_kw("in")?;
        let iterable = if comprehension {
            self.disjunction()?
        } else {
            self.star_expressions()?
        };
        let value = iterable
            .items
            .map(<[_]>::into_vec)
            .and_then(crate::lang::python::analyze::loop_value);
        let changes = self.binding(&target, value);
        let bound: Vec<u32> = self
            .target_names(&target)
            .iter()
            .map(|(at, _)| *at)
            .collect();
        let again: fn(&mut Self) -> Result<()> = if comprehension {
            |p| {
                p.targets()?;
                p.expect_kw("in")?;
                p.disjunction().map(|_| ())
            }
        } else {
            |p| {
                p.targets()?;
                p.expect_kw("in")?;
                p.star_expressions().map(|_| ())
            }
        };
        self.rebind(mark, changes, &bound, comprehension, again)?;
        Ok(iterable.depth)
    }

    /// Loop targets: patterns up to `in`. A lone bare name is what a loop binds; a tuple's
    /// names are what it unbinds.
    pub(super) fn targets(&mut self) -> Result<Expr> {
        let (mut items, mut only, mut names) = (0, Expr::other(1), Vec::new());
        loop {
            let starred = self.eat_op("*");
            let e = self.bitwise_or()?;
            if !e.pattern || (starred && !e.single) {
                return Err(Unsure);
            }
            items += 1;
            names.extend(e.name.into_iter().chain(e.pattern_names.iter().copied()));
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
        if items == 1 {
            return Ok(only);
        }
        let mut tuple = Expr::other(1);
        tuple.pattern_names = names;
        Ok(tuple)
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
                    let name = self.name()?;
                    self.unbind_now(&[name]);
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
        // `with (a as b, c,):` (3.10): the items in parentheses, read as without them. A
        // parenthesized expression that goes on (`with (a, b) as c:`, `with (a).b:`) is left
        // to tree-sitter.
        if self.eat_op("(") {
            self.with_items(true)?;
            self.expect_op(")")?;
            if !self.is_op(":") {
                return Err(Unsure);
            }
        } else {
            self.with_items(false)?;
        }
        self.block()
    }

    /// `a as b, c`: each `as` target unbinds what it names; a trailing comma only inside
    /// parentheses.
    fn with_items(&mut self, parenthesized: bool) -> Result<()> {
        loop {
            self.expression()?;
            if self.eat_kw("as") {
                let e = self.bitwise_or()?;
                if !e.pattern {
                    return Err(Unsure);
                }
                let names: Vec<&str> = self.target_names(&e).into_iter().map(|(_, n)| n).collect();
                self.unbind_now(&names);
            }
            if !self.eat_op(",") || (parenthesized && self.is_op(")")) {
                return Ok(());
            }
        }
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
            self.annotation()?;
        }
        self.block()
    }

    /// Parameters up to `close` (`)` for a def, `:` for a lambda); annotations only in a def.
    pub(super) fn parameters(&mut self, close: &str, annotated: bool) -> Result<()> {
        // The tree pass unbinds every parameter before it reads any default.
        let names = self.parameter_names(close)?;
        self.unbind_now(&names);
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

    /// The names of the parameters up to `close` (at bracket depth 0), looked ahead.
    pub(super) fn parameter_names(&self, close: &str) -> Result<Vec<&'s str>> {
        let (mut names, mut depth, mut after_separator) = (Vec::new(), 0usize, true);
        for t in &self.toks[self.pos..] {
            let text = self.text_of(*t);
            match t.kind {
                Kind::Op if depth == 0 && text == close => return Ok(names),
                Kind::Op if matches!(text, "(" | "[" | "{") => depth += 1,
                Kind::Op if matches!(text, ")" | "]" | "}") => {
                    depth = depth.checked_sub(1).ok_or(Unsure)?;
                }
                // A lambda in a default: its `:` would end a lambda's parameters here.
                Kind::Name if text == "lambda" => return Err(Unsure),
                Kind::Name if depth == 0 && after_separator => names.push(text),
                Kind::Newline | Kind::End => return Err(Unsure),
                _ => {}
            }
            after_separator = depth == 0 && t.kind == Kind::Op && matches!(text, "," | "*" | "**");
        }
        Err(Unsure)
    }

    /// An annotation: tree-sitter reads `X[…]` there as a generic type, after which only what
    /// ends a type (or `|` of a union) may follow: anything else is left to it.
    fn annotation(&mut self) -> Result<()> {
        let outer = std::mem::replace(&mut self.in_annotation, true);
        let parsed = self.expression();
        self.in_annotation = outer;
        parsed.map(|_| ())
    }

    fn parameter(&mut self, annotated: bool, default: bool) -> Result<()> {
        self.name()?;
        if annotated && self.eat_op(":") {
            self.annotation()?;
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

/// An import as `a.__file__` needs it: `import module as alias`, or `from module import name
/// as alias` (`alias` is `name` when none is given).
struct ModuleImport<'s> {
    module: &'s str,
    name: Option<&'s str>,
    alias: Option<&'s str>,
}

/// Where the parse stood and what it had recorded: where a part is read again from.
pub(super) struct Mark {
    pos: usize,
    paths: usize,
    strings: usize,
    used: usize,
    binds: u32,
}

/// An expression statement, as bindings need it.
enum Statement {
    /// Targets then the value; where each starts in `used`.
    Assign(Vec<Expr>, Vec<usize>),
    Augmented(Expr),
    Annotated(Expr, Option<PathValue>),
    Expression,
}
