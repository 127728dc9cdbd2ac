//! The fast path's expressions: Python's precedence levels, each giving the shape assignment
//! targets need, how deep it nests, and what the path evaluator makes of it — the same shared
//! functions (`paths::binary_value`, `percent_value`, `format_value`, `named_call_value`,
//! `method_value`, `attribute_value`, `parents_value`, `assemble`) on the values of literals,
//! `__file__`, names, joins, templates, wrappers and path methods. A node that evaluates to a
//! path is recorded where the tree pass records one: a call, binary operator, attribute or
//! subscript whose parent does not build on it.

use super::grammar::{AUGMENTED, MAX_EXPR_DEPTH, Parser, is_keyword};
use super::lexer::{Kind, Result, StrLit, Token, Unsure};
use crate::analyze::facts::{PathRef, StringContext};
use crate::analyze::paths::{self, Chunk, PathValue, UNKNOWN};

/// An expression: its shape as a target, how deep it nests, and its value as a path.
#[derive(Clone)]
pub(super) struct Expr {
    /// A name, attribute or subscript: a single target.
    pub single: bool,
    /// A target tree-sitter reads as a pattern: a single one, or a tuple or list of them.
    pub pattern: bool,
    /// A bare name: what an assignment or loop binds.
    pub name: Option<(u32, u32)>,
    /// `*x`: valid only among others (`*a, b`, `[*a]`), never alone.
    pub starred: bool,
    pub depth: u32,
    /// What the evaluator makes of it, not sealed: a literal's text, a join, a template.
    /// Boxed, as `elements` is: a value is met far less often than an `Expr` is moved.
    pub value: Option<Box<PathValue>>,
    /// A single string without holes: its content, a `%` or `.format` template.
    template: Option<(u32, u32)>,
    /// A parenthesized tuple: its elements' values, and whether a comment stands among them
    /// (the tree pass counts a comment as an element).
    /// Boxed, as most expressions are none: every `Expr` is moved up each level it passes.
    elements: Option<Box<(Vec<Option<PathValue>>, bool)>>,
    /// The path this node recorded, taken back if its parent builds on it.
    candidate: Option<u32>,
    /// As a target, the names a tuple, list or starred target binds (a bare name is `name`).
    pub pattern_names: Vec<(u32, u32)>,
    /// A list or tuple literal: each item's value where it is a single string without holes
    /// (what a loop over it binds its name to).
    pub items: Option<Box<[Option<String>]>>,
    pub start: u32,
    pub end: u32,
    pub line: u32,
}

impl Expr {
    /// Takes what the evaluator made of this node; whether it made anything.
    fn set_value(&mut self, value: Option<PathValue>) -> bool {
        self.value = value.map(Box::new);
        self.value.is_some()
    }

    pub(super) fn other(depth: u32) -> Expr {
        Expr {
            single: false,
            pattern: false,
            name: None,
            starred: false,
            depth,
            value: None,
            template: None,
            elements: None,
            candidate: None,
            pattern_names: Vec::new(),
            items: None,
            start: 0,
            end: 0,
            line: 0,
        }
    }

    /// A node of its own (an operator applied, a call) from `start` to `end`.
    fn node(depth: u32, start: Token, end: Token) -> Expr {
        Expr {
            start: start.start,
            end: end.end,
            line: start.line,
            ..Expr::other(depth)
        }
    }
}

impl<'s> Parser<'s> {
    pub(super) fn last(&self) -> Token {
        self.toks[self.pos - 1]
    }

    /// What the evaluator makes of `e`: a single literal's content is read here, when needed.
    pub(super) fn value_of(&self, e: &Expr) -> Option<PathValue> {
        match (&e.value, e.template) {
            (Some(v), _) => Some(PathValue::clone(v)),
            (None, Some((start, end))) => {
                Some(PathValue::Relative(self.span(start, end).to_string()))
            }
            (None, None) => None,
        }
    }

    /// A node that may be a path where the tree pass looks for one (a call, binary operator,
    /// attribute or subscript): recorded unless a parent builds on it, which takes it back.
    fn record(&mut self, e: &mut Expr) {
        if self.in_hole {
            return;
        }
        let Some(value) = self.value_of(e).map(PathValue::seal) else {
            return;
        };
        if matches!(&value, PathValue::Relative(p) if !p.contains('/') || p.starts_with('/'))
            || value.is_anchor()
            || !value.is_specific()
        {
            return;
        }
        let text = crate::lang::python::analyze::one_line(self.span(e.start, e.end));
        e.candidate = Some(self.paths.len() as u32);
        self.paths.push(Some(PathRef {
            line: e.line,
            value,
            text,
        }));
    }

    /// A parent that evaluates to a path builds on its child: the child's path is not one.
    fn built_on(&mut self, child: &Expr) {
        if let Some(i) = child.candidate {
            self.paths[i as usize] = None;
        }
    }

    /// Comma-separated expressions, starred ones allowed; a tuple without parentheses.
    pub(super) fn star_expressions(&mut self) -> Result<Expr> {
        let start = self.tok();
        let first = self.star_expression()?;
        if !self.is_op(",") {
            if first.starred {
                return Err(Unsure);
            }
            return Ok(first);
        }
        let (mut pattern, mut depth) = (first.pattern, first.depth);
        let mut starred = first.starred;
        let mut names = target_names(&first);
        while self.eat_op(",") {
            if self.ends_list() {
                break;
            }
            let e = self.star_expression()?;
            pattern &= e.pattern;
            starred |= e.starred;
            depth = depth.max(e.depth);
            names.extend(target_names(&e));
        }
        // A starred item of a bare list is read by tree-sitter as a target's pattern only
        // (`a, *b = x`); as a value (`x = *'a', b`) its grammar may not take it.
        if starred && !self.is_op("=") {
            return Err(Unsure);
        }
        Ok(Expr {
            pattern,
            pattern_names: names,
            ..Expr::node(depth + 1, start, self.last())
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
        let start = self.tok();
        if self.eat_op("*") {
            let e = self.bitwise_or()?;
            return Ok(Expr {
                // A starred target is a name, attribute or subscript (`*rest`), no tuple.
                pattern: e.single,
                starred: true,
                pattern_names: target_names(&e),
                ..Expr::node(e.depth + 1, start, self.last())
            });
        }
        self.named_expression()
    }

    /// `name := value` or an expression.
    pub(super) fn named_expression(&mut self) -> Result<Expr> {
        let t = self.tok();
        if t.kind == Kind::Name && self.op_at(1, ":=") {
            // The tree pass binds at the `:=`, then reads the value.
            let mark = self.mark();
            let since = self.used.len();
            self.atom()?;
            self.pos += 1;
            let e = self.expression()?;
            let changes = vec![(self.text_of(t), self.value_of(&e))];
            self.rebind(mark, changes, &[t.start], true, |p| {
                p.atom()?;
                p.pos += 1;
                p.expression().map(|_| ())
            })?;
            let changed: Vec<&str> = self.pending_inside.drain(..).collect();
            self.bound_inside_since(since, changed);
            return Ok(Expr::node(e.depth + 1, t, self.last()));
        }
        self.expression()
    }

    /// A conditional expression or a lambda.
    pub(super) fn expression(&mut self) -> Result<Expr> {
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
        let start = self.tok();
        let since = self.used.len();
        if self.eat_kw("lambda") {
            let mut names = self.parameter_names(":")?;
            names.retain(|n| !self.in_hole && self.names.contains_key(n));
            self.parameters(":", false)?;
            self.expect_op(":")?;
            let e = self.expression()?;
            self.bound_inside_since(since, names);
            return Ok(Expr::node(e.depth + 1, start, self.last()));
        }
        let e = self.disjunction()?;
        if self.eat_kw("if") {
            let c = self.disjunction()?;
            self.expect_kw("else")?;
            let o = self.expression()?;
            let depth = e.depth.max(c.depth).max(o.depth) + 1;
            return Ok(Expr::node(depth, start, self.last()));
        }
        Ok(e)
    }

    /// An expression without a top-level conditional (comprehension conditions).
    pub(super) fn disjunction(&mut self) -> Result<Expr> {
        let start = self.tok();
        let mut e = self.conjunction()?;
        while self.eat_kw("or") {
            let r = self.conjunction()?;
            e = Expr::node(e.depth.max(r.depth) + 1, start, self.last());
        }
        Ok(e)
    }

    // The levels that mostly hand their operand up (`conjunction` to `power`) are inlined
    // into their callers: an `Expr` returned through each level was copied at each, which
    // with the value unboxed was a fifth of the fast path's time on Django.
    #[inline(always)]
    fn conjunction(&mut self) -> Result<Expr> {
        let start = self.tok();
        let mut e = self.inversion()?;
        while self.eat_kw("and") {
            let r = self.inversion()?;
            e = Expr::node(e.depth.max(r.depth) + 1, start, self.last());
        }
        Ok(e)
    }

    #[inline(always)]
    fn inversion(&mut self) -> Result<Expr> {
        let start = self.tok();
        if self.eat_kw("not") {
            self.enter()?;
            let e = self.inversion();
            self.leave();
            return Ok(Expr::node(e?.depth + 1, start, self.last()));
        }
        self.comparison()
    }

    #[inline(always)]
    fn comparison(&mut self) -> Result<Expr> {
        let start = self.tok();
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
            e = Expr::node(e.depth.max(r.depth) + 1, start, self.last());
        }
    }

    /// The binary operators, loosest first, down to the unary ones.
    #[inline(always)]
    pub(super) fn bitwise_or(&mut self) -> Result<Expr> {
        self.binary(0)
    }

    /// Operators binding at `min` or tighter, by precedence climbing: one call for a chain,
    /// not one per level (each level moved every operand's `Expr` up once more).
    fn binary(&mut self, min: usize) -> Result<Expr> {
        /// The levels, loosest first.
        const LEVELS: &[&[&str]] = &[
            &["|"],
            &["^"],
            &["&"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "//", "%", "@"],
        ];
        let start = self.tok();
        let mut e = self.unary()?;
        loop {
            let t = self.tok();
            let op = self.text_of(t);
            let level = match LEVELS.iter().position(|ops| ops.contains(&op)) {
                Some(level) if t.kind == Kind::Op && level >= min => level,
                _ => return Ok(e),
            };
            self.pos += 1;
            let r = self.binary(level + 1)?;
            let mut node = Expr::node(e.depth.max(r.depth) + 1, start, self.last());
            let value = match op {
                "+" | "/" => paths::binary_value(op, self.value_of(&e), self.value_of(&r)),
                "%" => self.percent(&e, &r),
                _ => None,
            };
            if node.set_value(value) {
                self.built_on(&e);
                self.built_on(&r);
            }
            self.record(&mut node);
            e = node;
            if e.depth > MAX_EXPR_DEPTH {
                return Err(Unsure);
            }
        }
    }

    /// `template % values`: a single string's holes filled from a tuple's elements or the one
    /// value.
    fn percent(&mut self, template: &Expr, values: &Expr) -> Option<PathValue> {
        let (start, end) = template.template?;
        let template = self.span(start, end);
        match values.elements.as_deref() {
            Some((_, true)) => {
                self.defer_for("a % template over a tuple with a comment".into());
                None
            }
            Some((elements, false)) => {
                let mut elements = elements.iter();
                paths::percent_value(template, || elements.next().cloned().flatten())
            }
            None => {
                let mut one = std::iter::once(self.value_of(values));
                paths::percent_value(template, || one.next().flatten())
            }
        }
    }

    #[inline(always)]
    fn unary(&mut self) -> Result<Expr> {
        let start = self.tok();
        if self.is_op("-") || self.is_op("+") || self.is_op("~") {
            self.pos += 1;
            self.enter()?;
            let e = self.unary();
            self.leave();
            return Ok(Expr::node(e?.depth + 1, start, self.last()));
        }
        self.power()
    }

    #[inline(always)]
    fn power(&mut self) -> Result<Expr> {
        let start = self.tok();
        let e = if self.eat_kw("await") {
            let p = self.primary()?;
            Expr::node(p.depth + 1, start, self.last())
        } else {
            self.primary()?
        };
        if self.eat_op("**") {
            self.enter()?;
            let r = self.unary();
            self.leave();
            return Ok(Expr::node(e.depth.max(r?.depth) + 1, start, self.last()));
        }
        Ok(e)
    }

    /// An atom and its trailers: `.name`, `(arguments)`, `[subscript]`, each evaluated as
    /// the tree pass evaluates that node (`paths::attribute_value`, `named_call_value`,
    /// `method_value`, `parents_value`).
    fn primary(&mut self) -> Result<Expr> {
        let start = self.tok();
        let at = self.pos;
        let mut e = self.atom()?;
        let atom_end = self.pos;
        // What the last trailer was, for the one after it: `.name` (with the value of what
        // it was taken of), or a call of `os.path.split` (with its first argument's value).
        let mut trailer = Trailer::None;
        let mut env = self.env_start(start, &e);
        loop {
            env.iter_mut().for_each(|env| env.trailers += 1);
            if self.eat_op(".") {
                let t = self.tok();
                if t.kind != Kind::Name || is_keyword(self.text_of(t)) {
                    return Err(Unsure);
                }
                self.pos += 1;
                self.env_attribute(env.as_mut(), start, t);
                let attribute = self.text_of(t);
                let object = self.value_of(&e);
                let mut node = Expr {
                    single: true,
                    pattern: true,
                    ..Expr::node(e.depth + 1, start, t)
                };
                if node.set_value(paths::attribute_value(
                    self.span(start.start, t.end),
                    attribute,
                    || object.clone(),
                    |key| self.module_file(key),
                )) {
                    self.built_on(&e);
                }
                self.record(&mut node);
                trailer = Trailer::Attribute {
                    name: attribute,
                    object,
                    // `"{}/x".format(…)`: the template a call of the string's `.format` fills.
                    template: e.template.filter(|_| attribute == "format"),
                };
                e = node;
            } else if self.is_op("(") {
                let function = self.span(start.start, self.last().end);
                let open = self.pos;
                self.pos += 1;
                let context = crate::lang::python::analyze::argument_context_of(function);
                // A reader of os's environment, called: read by `env_called` below.
                let env_call = self.env_reader_called(env);
                self.defer_call(function, context, &trailer, env_call);
                let path_call = context == Some(StringContext::PathArg);
                let outer = self.context;
                if path_call {
                    self.context = StringContext::PathArg;
                }
                let args = self.arguments(function == "print" && self.starts_statement(at));
                self.context = outer;
                let args = args?;
                if path_call && args.generator {
                    // A generator is no argument list to tree-sitter: its strings keep the
                    // context around the call.
                    self.defer_for(format!("a generator given to {function}"));
                }
                self.expect_op(")")?;
                self.env_called(env_call, start, open, &args);
                let mut node = Expr::node(e.depth.max(args.depth) + 1, start, self.last());
                if node.set_value(self.call_value(function, &trailer, &args)) {
                    for arg in &args.positional {
                        self.built_on(arg);
                    }
                }
                self.record(&mut node);
                trailer = if paths::is_split(function) {
                    Trailer::Split(args.first.clone())
                } else {
                    Trailer::None
                };
                e = node;
            } else if self.eat_op("[") {
                let at = self.pos;
                let d = self.subscript()?;
                let index = (self.pos == at + 1 && self.toks[at].kind == Kind::Number)
                    .then(|| self.text_of(self.toks[at]));
                self.expect_op("]")?;
                if self.in_annotation && !self.ends_type() {
                    return Err(Unsure);
                }
                self.env_subscript(env, start, at);
                let mut node = Expr {
                    single: true,
                    pattern: true,
                    ..Expr::node(e.depth.max(d) + 1, start, self.last())
                };
                if node.set_value(self.subscript_value(&trailer, index)) {
                    self.built_on(&e);
                }
                self.record(&mut node);
                trailer = Trailer::None;
                e = node;
            } else {
                self.env_alone(env, &e);
                self.defer_starred(at, atom_end);
                return Ok(e);
            }
            if e.depth > MAX_EXPR_DEPTH {
                return Err(Unsure);
            }
        }
    }

    /// A primary from `at` just read, its atom ending at `atom_end`. tree-sitter reads
    /// `*a.b(…)` as `(*a).b(…)` as a list's or set's one element (`[*a.b]`, not `[*a.b, c]`)
    /// and after the first argument of a statement's `print(`, so the call, attribute or
    /// subscript it reads is not this one: such a file goes to tree-sitter.
    fn defer_starred(&mut self, at: usize, atom_end: usize) {
        if self.pos == atom_end {
            return;
        }
        let lone =
            at >= 2 && matches!(self.text_of(self.toks[at - 2]), "[" | "{") && !self.is_op(",");
        if self.star_before(at) && (lone || self.late_print_star) {
            self.defer_for("a starred primary with trailers".into());
        }
    }

    /// Whether the token at `at` is the first of a statement.
    fn starts_statement(&self, at: usize) -> bool {
        at.checked_sub(1).is_none_or(|i| {
            let t = self.toks[i];
            matches!(t.kind, Kind::Newline | Kind::Indent | Kind::Dedent)
                || (t.kind == Kind::Op && self.text_of(t) == ";")
        })
    }

    /// Whether the token before `at` is a `*`.
    fn star_before(&self, at: usize) -> bool {
        at.checked_sub(1)
            .is_some_and(|i| self.toks[i].kind == Kind::Op && self.text_of(self.toks[i]) == "*")
    }

    /// Sends the file to tree-sitter for a call (its `(` just read) only the tree pass reads;
    /// `env_call`, a reader of os's environment, is read here.
    fn defer_call(
        &mut self,
        function: &str,
        context: Option<StringContext>,
        trailer: &Trailer<'_>,
        env_call: bool,
    ) {
        let has_args = !self.is_op(")");
        if !env_call && crate::lang::python::scan::call_matters(function, context, has_args) {
            self.defer_for(format!("call {function}"));
        }
        // The tree pass reads a listing method by its name, whatever stands around the dot
        // (`HERE. iterdir()`).
        if let Trailer::Attribute { name, .. } = trailer
            && crate::lang::python::analyze::is_listing_method(name)
        {
            self.defer_for(format!("call {function}"));
        }
    }

    /// Whether the token ends a type in an annotation, or joins a union: what may follow a
    /// generic type (`List[int]`) there.
    fn ends_type(&self) -> bool {
        let t = self.tok();
        matches!(t.kind, Kind::Newline | Kind::End)
            || (t.kind == Kind::Op && matches!(self.text_of(t), "=" | ")" | "," | ":" | "]" | "|"))
    }

    /// `p.parents[2]`, `os.path.split(p)[0]`: the tree pass reads the index from the
    /// subscript's text, so one that is not a lone number (`[+1]`, `[1, 2]`) is left to it
    /// where the value would be a path.
    fn subscript_value(&mut self, trailer: &Trailer<'_>, index: Option<&str>) -> Option<PathValue> {
        let (object, split) = match trailer {
            Trailer::Attribute {
                name: "parents",
                object,
                ..
            } => (object.clone(), false),
            Trailer::Split(first) => (first.clone(), true),
            _ => return None,
        };
        object.as_ref()?;
        let Some(index) = index else {
            self.defer_for("a subscript of a path not a lone number".into());
            return None;
        };
        let index: usize = index.parse().ok()?;
        if split {
            return if index == 0 { object?.parent() } else { None };
        }
        paths::parents_value(object, index)
    }

    /// What a call evaluates to: a template's `.format(…)` fills it; a wrapper, join or path
    /// method is what the evaluator makes of it (a resource call was left to tree-sitter).
    fn call_value(
        &mut self,
        function: &str,
        trailer: &Trailer<'_>,
        args: &Arguments<'_>,
    ) -> Option<PathValue> {
        let method = match trailer {
            Trailer::Attribute { name, .. } => paths::is_path_method(name) || *name == "format",
            _ => false,
        };
        // Whether the callee's name makes the value (asked without arguments).
        let named = paths::named_call_value(function, 0, |_| None).is_some();
        if args.generator && (named || paths::is_split(function) || method) {
            // The tree pass reads a generator's parts as the arguments.
            self.defer_for(format!("a generator given to {function}"));
            return None;
        }
        let value = |k: usize| args.positional.get(k).and_then(|a| self.value_of(a));
        let n = args.positional.len();
        if let Trailer::Attribute {
            template: Some((start, end)),
            ..
        } = trailer
        {
            let keyword = |name: &str| {
                args.keywords
                    .iter()
                    .rev()
                    .find(|(n, _)| *n == name)
                    .and_then(|(_, v)| v.clone())
            };
            return paths::format_value(self.span(*start, *end), value, keyword);
        }
        if let Some(v) = paths::named_call_value(function, n, value) {
            return v;
        }
        match trailer {
            Trailer::Attribute { name, object, .. } => {
                paths::method_value(name, object.clone(), n, value)
            }
            _ => None,
        }
    }

    /// A class's bases and keywords, read as call arguments (the tree pass builds on none).
    /// A class's bases, after its `(` and up to its `)`, read.
    pub(super) fn class_arguments(&mut self) -> Result<()> {
        let open = self.pos - 1;
        let args = self.arguments(false)?;
        // `class A(x for x in y)` is an error to tree-sitter.
        if args.generator {
            return Err(Unsure);
        }
        self.expect_op(")")?;
        self.env_arguments(open, &args.env_lines);
        Ok(())
    }

    /// Call arguments up to `)`: positional, `*a`, `**k`, `name=value`, or one generator.
    /// `print_statement`: of a statement's `print(…)`, which tree-sitter also reads as a
    /// Python 2 print statement (see `defer_starred`).
    fn arguments(&mut self, print_statement: bool) -> Result<Arguments<'s>> {
        let mut args = Arguments::default();
        let mut count = 0;
        let open = self.last();
        while !self.is_op(")") {
            count += 1;
            let t = self.tok();
            // Each argument's depth; a positional one is moved into `positional`.
            let late_print_star = count > 1 && print_statement && self.is_op("*");
            let depth = if self.eat_op("**") || self.eat_op("*") {
                // A splat is an argument the evaluator reads as no value.
                let was = std::mem::replace(&mut self.late_print_star, late_print_star);
                let e = self.expression();
                self.late_print_star = was;
                let e = e?;
                args.positional
                    .push(Expr::node(e.depth + 1, t, self.last()));
                e.depth
            } else if t.kind == Kind::Name && self.op_at(1, "=") {
                let keyword = self.name()?;
                self.pos += 1;
                let outer = self.context;
                if crate::lang::python::analyze::path_keyword(keyword) {
                    self.context = StringContext::PathArg;
                }
                let e = self.expression();
                self.context = outer;
                let e = e?;
                if self.claim_env(&e) {
                    self.env_keyword(t, &e);
                }
                args.keywords.push((keyword, self.value_of(&e)));
                e.depth
            } else {
                let since = self.used.len();
                let e = self.named_expression()?;
                if self.is_kw("for") || self.is_kw("async") {
                    // A generator as the only argument.
                    if count != 1 {
                        return Err(Unsure);
                    }
                    let d = self.comprehension(since)?;
                    if !self.is_op(")") {
                        return Err(Unsure);
                    }
                    args.generator = true;
                    args.depth = e.depth.max(d) + 1;
                    return Ok(args);
                }
                if count == 1 && !self.has_comment(open.end, t.start) {
                    args.first = self.value_of(&e);
                }
                if self.claim_env(&e) {
                    args.env_lines.push(e.line);
                }
                let depth = e.depth;
                args.positional.push(e);
                depth
            };
            args.depth = args.depth.max(depth);
            if !self.eat_op(",") {
                break;
            }
        }
        args.depth += 1;
        Ok(args)
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
        if self.in_annotation {
            return Err(Unsure);
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
    /// `since`: where its element began in `used`.
    pub(super) fn comprehension(&mut self, since: usize) -> Result<u32> {
        let outer = std::mem::take(&mut self.pending_inside);
        let depth = self.comprehension_clauses();
        let changed = std::mem::replace(&mut self.pending_inside, outer);
        self.bound_inside_since(since, changed);
        depth
    }

    fn comprehension_clauses(&mut self) -> Result<u32> {
        let mut depth = 0;
        loop {
            let asynchronous = self.eat_kw("async");
            if !self.eat_kw("for") {
                return if asynchronous { Err(Unsure) } else { Ok(depth) };
            }
            depth = depth.max(self.loop_clause(true)?);
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
                    return Ok(Expr::node(1, t, t));
                }
                self.name()?;
                if self.bound_inside.contains(&text) {
                    self.defer_for("a name used after a binding inside its statement".into());
                }
                self.used.push((t.start, text));
                Ok(Expr {
                    single: true,
                    pattern: true,
                    name: Some((t.start, t.end)),
                    value: paths::name_value(text, |n| self.names.get(n).cloned()).map(Box::new),
                    ..Expr::node(1, t, t)
                })
            }
            Kind::Number => {
                self.pos += 1;
                Ok(Expr::node(1, t, t))
            }
            Kind::Str => self.strings(),
            Kind::Op => match self.text_of(t) {
                "..." => {
                    self.pos += 1;
                    Ok(Expr::node(1, t, t))
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
        let open = self.last();
        let tuple = |parser: &Self, parts: Vec<Expr>, pattern, depth| {
            let node = Expr::node(depth, open, parser.last());
            let commented = parser.has_comment(node.start, node.end);
            let elements = parts.iter().map(|e| parser.value_of(e)).collect();
            // A comment is an item too, and no string: no loop binds over it.
            let items = parts
                .iter()
                .map(|e| e.template.map(|(s, e)| parser.span(s, e).to_string()))
                .collect();
            Expr {
                pattern,
                elements: (close == ")").then(|| Box::new((elements, commented))),
                items: (!commented).then_some(items),
                pattern_names: parts.iter().flat_map(target_names).collect(),
                ..node
            }
        };
        if self.eat_op(close) {
            return Ok(tuple(self, Vec::new(), false, 1));
        }
        if close == ")" && self.is_kw("yield") {
            let e = self.yield_expression()?;
            self.expect_op(close)?;
            return Ok(Expr::node(e.depth + 1, open, self.last()));
        }
        let since = self.used.len();
        let first = self.star_expression()?;
        if self.is_kw("for") || self.is_kw("async") {
            // `[*x for x in y]` is no Python; tree-sitter reads its star its own way.
            if first.starred {
                return Err(Unsure);
            }
            let d = self.comprehension(since)?;
            self.expect_op(close)?;
            return Ok(Expr::node(first.depth.max(d) + 1, open, self.last()));
        }
        if close == ")" && first.starred && self.is_op(close) {
            return Err(Unsure);
        }
        if close == ")" && self.eat_op(close) {
            // A parenthesized expression: its value is the inside's (unless a comment comes
            // first, which the tree pass takes for the inside), and it is no target here.
            let value = if self.has_comment(open.end, first.start) {
                None
            } else {
                self.value_of(&first)
            };
            return Ok(Expr {
                value: value.map(Box::new),
                pattern_names: target_names(&first),
                ..Expr::node(first.depth + 1, open, self.last())
            });
        }
        let (mut pattern, mut depth) = (first.pattern, first.depth);
        let mut parts = vec![first];
        while self.eat_op(",") {
            if self.is_op(close) {
                break;
            }
            let e = self.star_expression()?;
            pattern &= e.pattern;
            depth = depth.max(e.depth);
            parts.push(e);
        }
        self.expect_op(close)?;
        Ok(tuple(self, parts, pattern, depth + 1))
    }

    pub(super) fn has_comment(&self, start: u32, end: u32) -> bool {
        let comments = &self.lexed.comments;
        let i = comments.partition_point(|&c| c < start);
        comments.get(i).is_some_and(|&c| c < end)
    }

    /// `{…}`: a dict, a set, or a comprehension of either.
    fn braces(&mut self) -> Result<Expr> {
        let open = self.tok();
        self.pos += 1;
        self.enter()?;
        let result = self.braces_inner();
        self.leave();
        Ok(Expr::node(result?, open, self.last()))
    }

    fn braces_inner(&mut self) -> Result<u32> {
        if self.eat_op("}") {
            return Ok(1);
        }
        let mut depth = 0;
        let mut dict = None;
        let mut first = true;
        let since = self.used.len();
        loop {
            let splat = self.is_op("**") || self.is_op("*");
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
                // `{*x for x in y}` is no Python; tree-sitter reads its star its own way.
                if splat {
                    return Err(Unsure);
                }
                depth = depth.max(self.comprehension(since)?);
                self.expect_op("}")?;
                return Ok(depth + 1);
            }
            first = false;
            if !self.eat_op(",") || self.is_op("}") {
                break;
            }
        }
        self.expect_op("}")?;
        Ok(depth + 1)
    }

    /// Adjacent string literals: one value (each hole's where the evaluator knows it; a lone
    /// f-string's first hole may anchor it), recorded as a string where it has no hole and as
    /// a path where an f-string reads as one.
    fn strings(&mut self) -> Result<Expr> {
        let first = self.tok();
        let mut parts: Vec<&'s StrLit> = Vec::new();
        let mut bytes_kind = None;
        while self.tok().kind == Kind::Str {
            let t = self.tok();
            // Bytes and text literals do not concatenate.
            let is_bytes = self.src[t.start as usize..]
                .iter()
                .take_while(|b| b.is_ascii_alphabetic())
                .any(|b| b | 0x20 == b'b');
            if *bytes_kind.get_or_insert(is_bytes) != is_bytes {
                return Err(Unsure);
            }
            parts.push(&self.lexed.strings[t.aux as usize]);
            self.pos += 1;
        }
        let mut e = Expr::node(2, first, self.last());
        e.template = (parts.len() == 1 && parts[0].holes.is_empty()).then_some(parts[0].content);
        if parts.iter().all(|p| p.holes.is_empty()) {
            let text: std::borrow::Cow<'s, str> = match parts.as_slice() {
                [one] => self.span(one.content.0, one.content.1).into(),
                _ => parts
                    .iter()
                    .map(|p| self.span(p.content.0, p.content.1))
                    .collect::<String>()
                    .into(),
            };
            // One literal's value is its content, made when an expression reads it.
            if e.template.is_none() {
                e.value = Some(Box::new(PathValue::Relative(text.to_string())));
            }
            // The tree pass does not walk an f-string's holes: a string there is no fact.
            if !self.in_hole {
                self.strings.push((first.line, text, self.context));
            }
            return Ok(e);
        }
        if self.context != StringContext::Plain {
            self.defer_for("an f-string in a path argument".into());
        }
        // Each part's text and holes' values: one string is a template whose path-valued
        // first hole anchors the rest (`f"{HERE}/x.json"`); adjacent ones are text, each
        // hole's value where it is text, else unknown.
        let mut chunks = Vec::new();
        for part in &parts {
            let mut at = part.content.0;
            for (hole, &span) in part.holes.iter().zip(&part.spans) {
                let (value, depth) = self.hole(hole)?;
                // The evaluator follows a hole's expression: it is as deep as that, and more.
                e.depth = e.depth.max(depth + 2);
                // A format spec's hole is read, but its value is no part of the text.
                let Some((start, end)) = span else { continue };
                chunks.push(Chunk::Text(self.span(at, start).to_string()));
                chunks.push(Chunk::Value(value));
                at = end;
            }
            chunks.push(Chunk::Text(self.span(at, part.content.1).to_string()));
        }
        e.value = if parts.len() == 1 {
            paths::assemble(chunks)
        } else {
            let mut text = String::new();
            for chunk in chunks {
                match chunk {
                    Chunk::Text(t) | Chunk::Value(Some(PathValue::Relative(t))) => {
                        text.push_str(&t)
                    }
                    Chunk::Value(_) => text.push(UNKNOWN),
                }
            }
            Some(PathValue::Relative(text))
        }
        .map(Box::new);
        // Recorded as the tree pass records an f-string outside a path argument: text that
        // reads as a path, or a folder's file.
        let recorded = match e.value.as_deref().cloned().map(PathValue::seal) {
            Some(PathValue::Relative(glob))
                if crate::lang::python::analyze::reads_as_path(&glob) =>
            {
                Some(PathValue::Relative(glob))
            }
            Some(
                value @ (PathValue::FileDir(_)
                | PathValue::Package { .. }
                | PathValue::ModuleDir { .. }),
            ) => Some(value),
            _ => None,
        };
        if !self.in_hole
            && let Some(value) = recorded
        {
            self.paths.push(Some(PathRef {
                line: first.line,
                value,
                text: crate::lang::python::analyze::one_line(self.span(e.start, e.end)),
            }));
        }
        Ok(e)
    }

    /// An f-string hole's expression list, parsed from its own tokens: its value and depth.
    fn hole(&mut self, tokens: &'s [Token]) -> Result<(Option<PathValue>, u32)> {
        let (outer, at, was) = (self.toks, self.pos, self.in_hole);
        self.toks = tokens;
        self.pos = 0;
        self.in_hole = true;
        self.enter()?;
        let result = self.star_expressions();
        self.leave();
        let ended = self.tok().kind == Kind::End;
        self.toks = outer;
        self.pos = at;
        self.in_hole = was;
        let e = result?;
        if !ended {
            return Err(Unsure);
        }
        Ok((self.value_of(&e), e.depth))
    }
}

/// The trailer before the one being read.
enum Trailer<'s> {
    None,
    /// `.name`: the value of what it is taken of, and a single literal's content before
    /// `.format`.
    Attribute {
        name: &'s str,
        object: Option<PathValue>,
        template: Option<(u32, u32)>,
    },
    /// A call of `os.path.split`: its first argument's value, as the tree pass reads it.
    Split(Option<PathValue>),
}

/// A call's arguments as the evaluator reads them.
#[derive(Default)]
pub(super) struct Arguments<'s> {
    /// The value of the first argument where it is a plain one (the tree pass reads the
    /// first thing in the parentheses: a keyword, a splat or a comment is no value).
    first: Option<PathValue>,
    /// Positional arguments and splats, in order: what `str(…)` and `.format` read by place.
    positional: Vec<Expr>,
    keywords: Vec<(&'s str, Option<PathValue>)>,
    /// The only argument is a generator.
    pub generator: bool,
    depth: u32,
    /// The lines of the arguments that are the whole of an `os.environ`.
    pub env_lines: Vec<u32>,
}

/// The names a target binds: a bare name, or those of a tuple, list or starred target.
fn target_names(e: &Expr) -> Vec<(u32, u32)> {
    e.name
        .into_iter()
        .chain(e.pattern_names.iter().copied())
        .collect()
}
