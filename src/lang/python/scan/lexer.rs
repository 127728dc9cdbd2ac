//! The fast path's lexer: Python source bytes → tokens, with the logical lines, indentation and
//! f-string holes Python's own tokenizer gives. It gives up (`Unsure`) on anything it does not
//! know exactly as tree-sitter reads it — a tab or form feed in indentation, a dedent to no
//! open level, a non-ASCII name, a prefix or number form it does not list, an f-string hole
//! that nests the enclosing quote — and the file goes to tree-sitter.

/// The file is not one the fast path reads exactly: tree-sitter reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unsure;

pub(super) type Result<T> = std::result::Result<T, Unsure>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Name,
    Number,
    /// A string literal; its parts are `Lexed::strings[aux]`.
    Str,
    Op,
    Newline,
    Indent,
    Dedent,
    End,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Token {
    pub kind: Kind,
    pub start: u32,
    pub end: u32,
    pub line: u32,
    /// For `Str`: its index in `Lexed::strings`.
    pub aux: u32,
}

/// A string literal: where its content is, and for an f-string the tokens of each hole's
/// expression (each ends with an `End` token).
#[derive(Debug, Default)]
pub(super) struct StrLit {
    pub content: (u32, u32),
    pub holes: Vec<Vec<Token>>,
    /// Per hole, where it stands, `{` to `}`; None for a hole inside another's format spec
    /// (`{w}` in `{a:>{w}}`), which is parsed but stands inside its outer hole's span.
    pub spans: Vec<Option<(u32, u32)>>,
}

#[derive(Debug, Default)]
pub(super) struct Lexed {
    pub tokens: Vec<Token>,
    pub strings: Vec<StrLit>,
    /// Where each comment starts: the tree pass counts one among a tuple's elements.
    pub comments: Vec<u32>,
}

/// The length of the operator `rest` starts with, longest first (`**=` before `**` before
/// `*`); none for a character no operator starts with (`!` alone, `$`, `?`, a backtick).
fn op_len(rest: &[u8]) -> Option<usize> {
    let at = |i: usize| rest.get(i).copied().unwrap_or(0);
    let (a, b, c) = (at(0), at(1), at(2));
    match a {
        b'(' | b')' | b'[' | b']' | b'{' | b'}' | b',' | b';' | b'~' => Some(1),
        b'.' if b == b'.' && c == b'.' => Some(3),
        b'.' => Some(1),
        b'*' | b'/' | b'>' | b'<' if b == a && c == b'=' => Some(3),
        b'*' | b'/' | b'>' | b'<' if b == a => Some(2),
        b'-' if b == b'>' => Some(2),
        b':' if b == b'=' => Some(2),
        b'!' if b == b'=' => Some(2),
        b'+' | b'-' | b'*' | b'/' | b'%' | b'@' | b'&' | b'|' | b'^' | b'<' | b'>' | b'='
            if b == b'=' =>
        {
            Some(2)
        }
        b'+' | b'-' | b'*' | b'/' | b'%' | b'@' | b'&' | b'|' | b'^' | b'<' | b'>' | b'='
        | b':' => Some(1),
        _ => None,
    }
}

/// The deepest bracket nesting read: deeper files go to tree-sitter (the parser recurses).
pub(super) const MAX_NESTING: usize = 64;

pub(super) fn lex(src: &[u8]) -> Result<Lexed> {
    let mut lx = Lexer {
        src,
        pos: 0,
        line: 1,
        out: Lexed::default(),
        brackets: Vec::new(),
        indents: vec![0],
    };
    lx.file()?;
    Ok(lx.out)
}

struct Lexer<'s> {
    src: &'s [u8],
    pos: usize,
    line: u32,
    out: Lexed,
    brackets: Vec<u8>,
    indents: Vec<usize>,
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Lexer<'_> {
    fn peek(&self, at: usize) -> u8 {
        self.src.get(self.pos + at).copied().unwrap_or(0)
    }

    fn push(&mut self, kind: Kind, start: usize, line: u32) {
        self.out.tokens.push(Token {
            kind,
            start: start as u32,
            end: self.pos as u32,
            line,
            aux: 0,
        });
    }

    fn file(&mut self) -> Result<()> {
        let mut at_line_start = true;
        loop {
            if at_line_start && self.brackets.is_empty() {
                if !self.indentation()? {
                    break;
                }
                at_line_start = false;
            }
            let b = self.peek(0);
            match b {
                0 if self.pos >= self.src.len() => break,
                b' ' => self.pos += 1,
                b'\t' | b'\x0c' => self.pos += 1,
                b'#' => self.comment(),
                b'\\' => self.continuation()?,
                b'\r' | b'\n' => {
                    let line = self.line;
                    let start = self.pos;
                    self.newline()?;
                    if !self.brackets.is_empty() {
                        self.continued_line()?;
                    }
                    if self.brackets.is_empty() {
                        self.out.tokens.push(Token {
                            kind: Kind::Newline,
                            start: start as u32,
                            end: start as u32 + 1,
                            line,
                            aux: 0,
                        });
                        at_line_start = true;
                    }
                }
                _ => self.token(false)?,
            }
        }
        if !self.brackets.is_empty() {
            return Err(Unsure);
        }
        let end = self.src.len() as u32;
        let last_is_line = self
            .out
            .tokens
            .last()
            .is_none_or(|t| matches!(t.kind, Kind::Newline | Kind::Dedent | Kind::Indent));
        if !last_is_line {
            self.out.tokens.push(Token {
                kind: Kind::Newline,
                start: end,
                end,
                line: self.line,
                aux: 0,
            });
        }
        while self.indents.len() > 1 {
            self.indents.pop();
            self.out.tokens.push(Token {
                kind: Kind::Dedent,
                start: end,
                end,
                line: self.line,
                aux: 0,
            });
        }
        self.out.tokens.push(Token {
            kind: Kind::End,
            start: end,
            end,
            line: self.line,
            aux: 0,
        });
        Ok(())
    }

    /// At the start of a line outside brackets: skips blank and comment-only lines, then
    /// emits the indents or dedents of the first line with a token. False at the end.
    fn indentation(&mut self) -> Result<bool> {
        loop {
            let mut width = 0;
            while self.peek(0) == b' ' {
                self.pos += 1;
                width += 1;
            }
            match self.peek(0) {
                b'\t' | b'\x0c' => return Err(Unsure),
                b'#' => {
                    self.comment();
                    if self.pos >= self.src.len() {
                        return Ok(false);
                    }
                    self.newline()?;
                }
                b'\r' | b'\n' => self.newline()?,
                b'\\' => return Err(Unsure),
                0 if self.pos >= self.src.len() => return Ok(false),
                _ => {
                    let top = *self.indents.last().unwrap_or(&0);
                    if width > top {
                        self.indents.push(width);
                        self.push(Kind::Indent, self.pos, self.line);
                    } else {
                        while width < *self.indents.last().unwrap_or(&0) {
                            self.indents.pop();
                            self.push(Kind::Dedent, self.pos, self.line);
                        }
                        if width != *self.indents.last().unwrap_or(&0) {
                            return Err(Unsure);
                        }
                    }
                    return Ok(true);
                }
            }
        }
    }

    /// A line continued inside brackets that starts left of the enclosing block: Python joins
    /// it, tree-sitter's indentation scanner may not.
    fn continued_line(&self) -> Result<()> {
        let rest = &self.src[self.pos..];
        let width = rest.iter().take_while(|&&b| b == b' ').count();
        match rest.get(width) {
            Some(b'\r' | b'\n') | None => Ok(()),
            Some(b'\t' | b'\x0c') => Err(Unsure),
            Some(_) if width < *self.indents.last().unwrap_or(&0) => Err(Unsure),
            Some(_) => Ok(()),
        }
    }

    fn comment(&mut self) {
        self.out.comments.push(self.pos as u32);
        while !matches!(self.peek(0), b'\n' | b'\r') && self.pos < self.src.len() {
            self.pos += 1;
        }
    }

    /// `\r\n` or `\n`; a lone `\r` (an old Mac line end) is read differently by each tool.
    fn newline(&mut self) -> Result<()> {
        match (self.peek(0), self.peek(1)) {
            (b'\r', b'\n') => self.pos += 2,
            (b'\n', _) => self.pos += 1,
            _ => return Err(Unsure),
        }
        self.line += 1;
        Ok(())
    }

    fn continuation(&mut self) -> Result<()> {
        // Inside brackets a backslash is redundant, and tree-sitter keeps it as a node among
        // the arguments or operands (`f(a, b\⏎)` has three children): its count is the tree
        // pass's, not ours.
        if !self.brackets.is_empty() {
            return Err(Unsure);
        }
        self.pos += 1;
        self.newline()?;
        // A continued line must go on: a backslash before the end of the file, or before a
        // blank line ending a statement, is read differently by each tool.
        if self.pos >= self.src.len() {
            return Err(Unsure);
        }
        Ok(())
    }

    /// One name, number, string or operator at `pos`. In a hole (`hole`), a newline inside
    /// brackets is the enclosing string's business and a comment is not allowed.
    fn token(&mut self, hole: bool) -> Result<()> {
        let b = self.peek(0);
        let start = self.pos;
        let line = self.line;
        if is_name_start(b) {
            while is_name_byte(self.peek(0)) {
                self.pos += 1;
            }
            if matches!(self.peek(0), b'\'' | b'"') {
                let prefix = &self.src[start..self.pos];
                return self.string(start, line, prefix, hole);
            }
            if self.peek(0) >= 0x80 {
                return Err(Unsure);
            }
            self.push(Kind::Name, start, line);
            return Ok(());
        }
        if b.is_ascii_digit() || (b == b'.' && self.peek(1).is_ascii_digit()) {
            return self.number(start, line);
        }
        if b == b'\'' || b == b'"' {
            return self.string(start, line, b"", hole);
        }
        if let Some(len) = op_len(&self.src[self.pos..]) {
            {
                self.pos += len;
                match b {
                    open @ (b'(' | b'[' | b'{') => {
                        self.brackets.push(open);
                        if self.brackets.len() > MAX_NESTING {
                            return Err(Unsure);
                        }
                    }
                    close @ (b')' | b']' | b'}') => {
                        let want = match close {
                            b')' => b'(',
                            b']' => b'[',
                            _ => b'{',
                        };
                        if self.brackets.pop() != Some(want) {
                            return Err(Unsure);
                        }
                    }
                    _ => {}
                }
                self.push(Kind::Op, start, line);
                return Ok(());
            }
        }
        Err(Unsure)
    }

    /// Digits with single `_` between them (never leading: `1._0` is no number).
    fn digits(&mut self, ok: fn(u8) -> bool) -> usize {
        let from = self.pos;
        while ok(self.peek(0)) || (self.pos > from && self.peek(0) == b'_' && ok(self.peek(1))) {
            self.pos += 1;
        }
        self.pos - from
    }

    fn number(&mut self, start: usize, line: u32) -> Result<()> {
        let radix = match (self.peek(0), self.peek(1) | 0x20) {
            (b'0', b'x') => Some((|b: u8| b.is_ascii_hexdigit()) as fn(u8) -> bool),
            (b'0', b'o') => Some((|b: u8| (b'0'..=b'7').contains(&b)) as fn(u8) -> bool),
            (b'0', b'b') => Some((|b: u8| b == b'0' || b == b'1') as fn(u8) -> bool),
            _ => None,
        };
        let decimal = |b: u8| b.is_ascii_digit();
        if let Some(ok) = radix {
            self.pos += 2;
            if self.peek(0) == b'_' {
                self.pos += 1;
            }
            if self.digits(ok) == 0 {
                return Err(Unsure);
            }
        } else {
            let whole = self.digits(decimal);
            // `0777` is Python 2's octal: each tool reads it differently.
            if whole > 1
                && self.src[start] == b'0'
                && self.src[start..self.pos]
                    .iter()
                    .any(|&d| d != b'0' && d != b'_')
            {
                return Err(Unsure);
            }
            if self.peek(0) == b'.' {
                self.pos += 1;
                self.digits(decimal);
            }
            if self.peek(0) | 0x20 == b'e' {
                self.pos += 1;
                if matches!(self.peek(0), b'+' | b'-') {
                    self.pos += 1;
                }
                if self.digits(decimal) == 0 {
                    return Err(Unsure);
                }
            }
            if self.peek(0) | 0x20 == b'j' {
                self.pos += 1;
            }
        }
        // `1if x else 2`, `0x1for`, `1L`: tools disagree on where such a number ends.
        if is_name_byte(self.peek(0)) || self.peek(0) == b'.' || self.peek(0) >= 0x80 {
            return Err(Unsure);
        }
        self.push(Kind::Number, start, line);
        Ok(())
    }

    /// A string literal at the quote after `prefix` (which started at `start`).
    fn string(&mut self, start: usize, line: u32, prefix: &[u8], hole: bool) -> Result<()> {
        let lower: Vec<u8> = prefix.iter().map(u8::to_ascii_lowercase).collect();
        let fstring = match lower.as_slice() {
            b"" | b"u" | b"b" | b"r" | b"br" | b"rb" => false,
            b"f" | b"fr" | b"rf" => true,
            _ => return Err(Unsure),
        };
        let raw = lower.contains(&b'r');
        let quote = self.peek(0);
        let triple = self.peek(1) == quote && self.peek(2) == quote;
        let width = if triple { 3 } else { 1 };
        self.pos += width;
        let content_start = self.pos;
        let mut holes = Vec::new();
        let mut spans = Vec::new();
        loop {
            let b = self.peek(0);
            if self.pos >= self.src.len() {
                return Err(Unsure);
            }
            if b == quote && (!triple || (self.peek(1) == quote && self.peek(2) == quote)) {
                break;
            }
            match b {
                b'\\' => {
                    // Even a raw string's backslash keeps the next character.
                    if fstring && matches!(self.peek(1), b'{' | b'}' | b'N') {
                        return Err(Unsure);
                    }
                    self.pos += 1;
                    if matches!(self.peek(0), b'\r' | b'\n') {
                        self.newline()?;
                    } else {
                        self.pos += 1;
                    }
                }
                b'\r' | b'\n' if !triple => return Err(Unsure),
                b'\r' | b'\n' => self.newline()?,
                b'{' if fstring && self.peek(1) == b'{' => self.pos += 2,
                b'}' if fstring && self.peek(1) == b'}' => self.pos += 2,
                b'}' if fstring => return Err(Unsure),
                b'{' if fstring => {
                    if hole {
                        // An f-string inside a hole: each tool splits these differently.
                        return Err(Unsure);
                    }
                    let (at, first) = (self.pos as u32, holes.len());
                    self.pos += 1;
                    self.hole(quote, triple, &mut holes)?;
                    spans.resize(holes.len(), None);
                    spans[first] = Some((at, self.pos as u32));
                }
                _ => self.pos += 1,
            }
        }
        let content_end = self.pos;
        // A raw string of escapes alone (`r'\\'`, `r'\''`): tree-sitter keeps no content.
        let content = &self.src[content_start..content_end];
        let escapes_alone = content.len().is_multiple_of(2)
            && content
                .chunks(2)
                .all(|pair| pair[0] == b'\\' && matches!(pair[1], b'\\' | b'\'' | b'"'));
        if raw && !content.is_empty() && escapes_alone {
            return Err(Unsure);
        }
        self.pos += width;
        let aux = self.out.strings.len() as u32;
        self.out.strings.push(StrLit {
            content: (content_start as u32, content_end as u32),
            holes,
            spans,
        });
        self.out.tokens.push(Token {
            kind: Kind::Str,
            start: start as u32,
            end: self.pos as u32,
            line,
            aux,
        });
        Ok(())
    }

    /// An f-string hole after its `{`: the expression's tokens, then `=`, `!r`, a format spec
    /// (which may hold holes of its own) and the closing `}`.
    fn hole(&mut self, quote: u8, triple: bool, holes: &mut Vec<Vec<Token>>) -> Result<()> {
        let outer = std::mem::take(&mut self.out.tokens);
        let outer_brackets = std::mem::take(&mut self.brackets);
        let result = self.hole_expression(quote, triple);
        let tokens = std::mem::replace(&mut self.out.tokens, outer);
        self.brackets = outer_brackets;
        result?;
        if tokens.is_empty() {
            return Err(Unsure);
        }
        let end = tokens.last().map_or(0, |t| t.end);
        let mut tokens = tokens;
        tokens.push(Token {
            kind: Kind::End,
            start: end,
            end,
            line: self.line,
            aux: 0,
        });
        holes.push(tokens);
        // What follows the expression.
        if self.peek(0) == b'=' {
            self.pos += 1;
            self.skip_hole_space(triple)?;
        }
        if self.peek(0) == b'!' {
            if !matches!(self.peek(1), b'r' | b's' | b'a') {
                return Err(Unsure);
            }
            self.pos += 2;
        }
        if self.peek(0) == b':' {
            self.pos += 1;
            loop {
                match self.peek(0) {
                    b'}' => break,
                    b'{' => {
                        self.pos += 1;
                        self.hole(quote, triple, holes)?;
                    }
                    b'\\' | b'\r' | b'\n' => return Err(Unsure),
                    b if b == quote => return Err(Unsure),
                    _ if self.pos >= self.src.len() => return Err(Unsure),
                    _ => self.pos += 1,
                }
            }
        }
        if self.peek(0) != b'}' {
            return Err(Unsure);
        }
        self.pos += 1;
        Ok(())
    }

    fn skip_hole_space(&mut self, triple: bool) -> Result<()> {
        loop {
            match self.peek(0) {
                b' ' => self.pos += 1,
                b'\r' | b'\n' if triple => self.newline()?,
                b'\r' | b'\n' | b'\t' | b'\x0c' | b'\\' | b'#' => return Err(Unsure),
                _ => return Ok(()),
            }
        }
    }

    /// The tokens of a hole's expression, up to the `=`, `!`, `:` or `}` that ends it.
    fn hole_expression(&mut self, quote: u8, triple: bool) -> Result<()> {
        loop {
            self.skip_hole_space(triple)?;
            let b = self.peek(0);
            if self.pos >= self.src.len() || b == quote {
                return Err(Unsure);
            }
            if self.brackets.is_empty() {
                match (b, self.peek(1)) {
                    (b'}', _) => return Ok(()),
                    (b'!', b'=') => {}
                    (b'!', _) => return Ok(()),
                    // `:=` unparenthesized is a format spec of `=`: read apart by each tool.
                    (b':', b'=') => return Err(Unsure),
                    (b':', _) => return Ok(()),
                    (b'=', b'=') => {}
                    (b'=', _) => return Ok(()),
                    _ => {}
                }
            }
            if b == b'!' && self.peek(1) == b'=' {
                let (start, line) = (self.pos, self.line);
                self.pos += 2;
                self.push(Kind::Op, start, line);
                continue;
            }
            if matches!(b, b'\'' | b'"') || is_name_start(b) {
                // A string inside a hole must not use the enclosing quote (Python 3.12 allows
                // it; the grammar gate was built with does not).
                let before = self.out.tokens.len();
                self.token(true)?;
                if let Some(t) = self.out.tokens.get(before)
                    && t.kind == Kind::Str
                {
                    let text = &self.src[t.start as usize..t.end as usize];
                    if text.contains(&quote) || (triple && text.contains(&b'\n')) {
                        return Err(Unsure);
                    }
                }
                continue;
            }
            self.token(true)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, lex};

    fn kinds(src: &str) -> Vec<Kind> {
        lex(src.as_bytes())
            .unwrap()
            .tokens
            .iter()
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn logical_lines_indents_and_brackets() {
        use Kind::*;
        assert_eq!(
            kinds("if x:\n    y = (1,\n      2)\n# c\n\nz\n"),
            [
                Name, Name, Op, Newline, Indent, Name, Op, Op, Number, Op, Number, Op, Newline,
                Dedent, Name, Newline, End
            ]
        );
        assert!(lex(b"if x:\n\ty\n").is_err(), "tabs go to tree-sitter");
        assert!(
            lex(b"if x:\n    y\n  z\n").is_err(),
            "a dedent to no open level"
        );
        assert!(lex(b"x = (1\n").is_err());
        assert!(
            lex(b"if x:\n    y = (1,\n  2)\n").is_err(),
            "a bracketed line left of its block: tree-sitter's scanner may dedent"
        );
        assert!(lex(b"x = 'abc\n").is_err());
    }

    #[test]
    fn f_string_holes_are_token_lists() {
        let lexed = lex(b"x = f'{a!r:>{w}} {b=} {{c}}'\n").unwrap();
        assert_eq!(lexed.strings[0].holes.len(), 3);
        assert_eq!(
            lexed.strings[0].spans,
            [Some((6, 16)), None, Some((17, 21))],
            "the format spec's hole stands inside its outer hole"
        );
        assert!(
            lex(b"x = f'{a['k']}'\n").is_err(),
            "the enclosing quote in a hole"
        );
    }
}
