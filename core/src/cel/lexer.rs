//! Tokens of the CEL subset: identifiers, literals, operators, punctuation.
//!
//! The lexer follows the CEL language definition (`cel-spec/doc/langdef.md`, "Syntax"):
//! `//` comments, decimal and hexadecimal integers, quoted / triple-quoted / raw
//! strings with CEL's escapes, unsigned (`1u`) and floating-point (`1.5`, `2e3`)
//! numbers. Bytes literals, which the front end does not support, are still recognised
//! here so the parser can reject them with a precise message instead of a confusing
//! syntax error.

use super::{CelError, CelErrorKind};
use crate::alloc_prelude::*;

/// One token kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Tok<'s> {
    /// An identifier (not a keyword).
    Ident(&'s str),
    /// An integer literal's magnitude (the sign is an operator; the parser folds it).
    Int(u64),
    /// An unsigned literal (`1u`).
    Uint(u64),
    /// A floating-point literal, as the bits of its `f64` (so that tokens stay `Eq`).
    Double(u64),
    /// A string literal, escapes decoded.
    Str(String),
    /// A bytes literal (`b"..."`): recognised, rejected by the parser.
    Bytes,
    /// `true`.
    True,
    /// `false`.
    False,
    /// `null`.
    Null,
    /// `in`.
    In,
    /// `(`.
    LParen,
    /// `)`.
    RParen,
    /// `[`.
    LBracket,
    /// `]`.
    RBracket,
    /// `{`.
    LBrace,
    /// `}`.
    RBrace,
    /// `.`.
    Dot,
    /// `,`.
    Comma,
    /// `?`.
    Question,
    /// `:`.
    Colon,
    /// `||`.
    OrOr,
    /// `&&`.
    AndAnd,
    /// `!`.
    Bang,
    /// `==`.
    EqEq,
    /// `!=`.
    NotEq,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `+`.
    Plus,
    /// `-`.
    Minus,
    /// `*`.
    Star,
    /// `/`.
    Slash,
    /// `%`.
    Percent,
    /// End of input.
    Eof,
}

impl Tok<'_> {
    /// How the token reads in an error message.
    pub(super) fn describe(&self) -> String {
        let punct = match self {
            Tok::Ident(name) => return format!("identifier '{name}'"),
            Tok::Int(_) | Tok::Uint(_) | Tok::Double(_) => return "number".to_owned(),
            Tok::Str(_) => return "string literal".to_owned(),
            Tok::Bytes => return "bytes literal".to_owned(),
            Tok::Eof => return "end of input".to_owned(),
            Tok::True => "true",
            Tok::False => "false",
            Tok::Null => "null",
            Tok::In => "in",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Dot => ".",
            Tok::Comma => ",",
            Tok::Question => "?",
            Tok::Colon => ":",
            Tok::OrOr => "||",
            Tok::AndAnd => "&&",
            Tok::Bang => "!",
            Tok::EqEq => "==",
            Tok::NotEq => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
        };
        format!("'{punct}'")
    }
}

/// A token and its byte span in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Token<'s> {
    /// What was read.
    pub(super) tok: Tok<'s>,
    /// Byte offset of its first character.
    pub(super) start: usize,
}

/// CEL's reserved words: not usable as identifiers.
const RESERVED: [&str; 16] = [
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
];

/// Splits `src` into tokens, ending with [`Tok::Eof`].
pub(super) fn tokenize(src: &str) -> Result<Vec<Token<'_>>, CelError> {
    let mut lexer = Lexer {
        src,
        bytes: src.as_bytes(),
        pos: 0,
    };
    let mut out = Vec::new();
    loop {
        lexer.skip_trivia();
        let start = lexer.pos;
        let tok = lexer.next_token()?;
        let end = tok == Tok::Eof;
        out.push(Token { tok, start });
        if end {
            return Ok(out);
        }
    }
}

struct Lexer<'s> {
    src: &'s str,
    bytes: &'s [u8],
    pos: usize,
}

fn err(position: usize, kind: CelErrorKind) -> CelError {
    CelError { position, kind }
}

impl<'s> Lexer<'s> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    /// Skips whitespace and `//` comments.
    fn skip_trivia(&mut self) {
        while let Some(b) = self.peek(0) {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0C' => self.pos += 1,
                b'/' if self.peek(1) == Some(b'/') => {
                    while let Some(c) = self.peek(0) {
                        if c == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn next_token(&mut self) -> Result<Tok<'s>, CelError> {
        let start = self.pos;
        let Some(b) = self.peek(0) else {
            return Ok(Tok::Eof);
        };
        let two = |lexer: &mut Lexer<'s>, second: u8, both: Tok<'s>, one: Tok<'s>| {
            if lexer.peek(1) == Some(second) {
                lexer.pos += 2;
                both
            } else {
                lexer.pos += 1;
                one
            }
        };
        let tok = match b {
            b'(' => self.single(Tok::LParen),
            b')' => self.single(Tok::RParen),
            b'[' => self.single(Tok::LBracket),
            b']' => self.single(Tok::RBracket),
            b'{' => self.single(Tok::LBrace),
            b'}' => self.single(Tok::RBrace),
            b',' => self.single(Tok::Comma),
            b'?' => self.single(Tok::Question),
            b':' => self.single(Tok::Colon),
            b'+' => self.single(Tok::Plus),
            b'-' => self.single(Tok::Minus),
            b'*' => self.single(Tok::Star),
            b'/' => self.single(Tok::Slash),
            b'%' => self.single(Tok::Percent),
            b'.' if self.peek(1).is_some_and(|c| c.is_ascii_digit()) => self.number()?,
            b'.' => self.single(Tok::Dot),
            b'!' => two(self, b'=', Tok::NotEq, Tok::Bang),
            b'<' => two(self, b'=', Tok::Le, Tok::Lt),
            b'>' => two(self, b'=', Tok::Ge, Tok::Gt),
            b'=' if self.peek(1) == Some(b'=') => {
                self.pos += 2;
                Tok::EqEq
            }
            b'|' if self.peek(1) == Some(b'|') => {
                self.pos += 2;
                Tok::OrOr
            }
            b'&' if self.peek(1) == Some(b'&') => {
                self.pos += 2;
                Tok::AndAnd
            }
            b'"' | b'\'' => Tok::Str(self.string(false)?),
            b'0'..=b'9' => self.number()?,
            b'r' | b'R' if matches!(self.peek(1), Some(b'"' | b'\'')) => {
                self.pos += 1;
                Tok::Str(self.string(true)?)
            }
            b'b' | b'B' if matches!(self.peek(1), Some(b'"' | b'\'')) => {
                self.pos += 1;
                self.string(false)?;
                Tok::Bytes
            }
            b'b' | b'B'
                if matches!(self.peek(1), Some(b'r' | b'R'))
                    && matches!(self.peek(2), Some(b'"' | b'\'')) =>
            {
                self.pos += 2;
                self.string(true)?;
                Tok::Bytes
            }
            b'_' | b'a'..=b'z' | b'A'..=b'Z' => self.word()?,
            _ => {
                let found = self.src[start..].chars().next().unwrap_or('\u{FFFD}');
                return Err(err(start, CelErrorKind::UnexpectedCharacter { found }));
            }
        };
        Ok(tok)
    }

    fn single(&mut self, tok: Tok<'s>) -> Tok<'s> {
        self.pos += 1;
        tok
    }

    fn word(&mut self) -> Result<Tok<'s>, CelError> {
        let start = self.pos;
        while self
            .peek(0)
            .is_some_and(|c| c == b'_' || c.is_ascii_alphanumeric())
        {
            self.pos += 1;
        }
        let word = &self.src[start..self.pos];
        Ok(match word {
            "true" => Tok::True,
            "false" => Tok::False,
            "null" => Tok::Null,
            "in" => Tok::In,
            _ if RESERVED.contains(&word) => {
                return Err(err(
                    start,
                    CelErrorKind::ReservedIdentifier {
                        name: word.to_owned(),
                    },
                ));
            }
            _ => Tok::Ident(word),
        })
    }

    /// A number: decimal or hex integer, optionally `u`-suffixed, or a double.
    fn number(&mut self) -> Result<Tok<'s>, CelError> {
        let start = self.pos;
        let invalid = || err(start, CelErrorKind::InvalidNumber);
        if self.peek(0) == Some(b'0') && matches!(self.peek(1), Some(b'x' | b'X')) {
            self.pos += 2;
            let digits = self.pos;
            while self.peek(0).is_some_and(|c| c.is_ascii_hexdigit()) {
                self.pos += 1;
            }
            let text = &self.src[digits..self.pos];
            let value = u64::from_str_radix(text, 16).map_err(|_| invalid())?;
            return Ok(self.finish_int(value));
        }
        while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let int_end = self.pos;
        let mut is_double = false;
        if self.peek(0) == Some(b'.') && self.peek(1).is_some_and(|c| c.is_ascii_digit()) {
            is_double = true;
            self.pos += 1;
            while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        if matches!(self.peek(0), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.peek(1), Some(b'+' | b'-')));
            if self.peek(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                is_double = true;
                self.pos += 1 + sign;
                while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
            }
        }
        if is_double {
            let value: f64 = self.src[start..self.pos].parse().map_err(|_| invalid())?;
            return Ok(Tok::Double(value.to_bits()));
        }
        let value = self.src[start..int_end]
            .parse::<u64>()
            .map_err(|_| invalid())?;
        Ok(self.finish_int(value))
    }

    fn finish_int(&mut self, value: u64) -> Tok<'s> {
        if matches!(self.peek(0), Some(b'u' | b'U')) {
            self.pos += 1;
            return Tok::Uint(value);
        }
        Tok::Int(value)
    }

    /// A quoted string starting at the quote; `raw` disables escapes.
    fn string(&mut self, raw: bool) -> Result<String, CelError> {
        let open = self.pos;
        let quote = self.bytes[open];
        let triple = self.peek(1) == Some(quote) && self.peek(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        let unterminated = || err(open, CelErrorKind::UnterminatedString);
        let mut out = String::new();
        loop {
            let Some(c) = self.src[self.pos..].chars().next() else {
                return Err(unterminated());
            };
            if c as u32 == u32::from(quote) {
                if !triple {
                    self.pos += 1;
                    return Ok(out);
                }
                if self.peek(1) == Some(quote) && self.peek(2) == Some(quote) {
                    self.pos += 3;
                    return Ok(out);
                }
            }
            if !triple && (c == '\n' || c == '\r') {
                return Err(unterminated());
            }
            if c == '\\' && !raw {
                out.push(self.escape()?);
                continue;
            }
            out.push(c);
            self.pos += c.len_utf8();
        }
    }

    /// Decodes one escape sequence starting at the backslash.
    fn escape(&mut self) -> Result<char, CelError> {
        let at = self.pos;
        let bad = || err(at, CelErrorKind::InvalidEscape);
        let Some(kind) = self.peek(1) else {
            return Err(err(at, CelErrorKind::UnterminatedString));
        };
        self.pos += 2;
        let simple = match kind {
            b'a' => Some('\x07'),
            b'b' => Some('\x08'),
            b'f' => Some('\x0C'),
            b'n' => Some('\n'),
            b'r' => Some('\r'),
            b't' => Some('\t'),
            b'v' => Some('\x0B'),
            b'\\' => Some('\\'),
            b'?' => Some('?'),
            b'"' => Some('"'),
            b'\'' => Some('\''),
            b'`' => Some('`'),
            _ => None,
        };
        if let Some(c) = simple {
            return Ok(c);
        }
        let (digits, radix) = match kind {
            b'x' | b'X' => (2, 16),
            b'u' => (4, 16),
            b'U' => (8, 16),
            b'0'..=b'3' => {
                // Octal: the first digit is already consumed.
                self.pos -= 1;
                (3, 8)
            }
            _ => return Err(bad()),
        };
        let text = self.src.get(self.pos..self.pos + digits).ok_or_else(bad)?;
        let code = u32::from_str_radix(text, radix).map_err(|_| bad())?;
        if text.bytes().any(|b| b == b'+' || b == b'-') {
            return Err(bad());
        }
        self.pos += digits;
        char::from_u32(code).ok_or_else(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok<'_>> {
        tokenize(src).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn punctuation_and_words() {
        assert_eq!(
            toks("a.b[\"x\"] >= 0x1F && !in_ || x != 7"),
            [
                Tok::Ident("a"),
                Tok::Dot,
                Tok::Ident("b"),
                Tok::LBracket,
                Tok::Str("x".into()),
                Tok::RBracket,
                Tok::Ge,
                Tok::Int(31),
                Tok::AndAnd,
                Tok::Bang,
                Tok::Ident("in_"),
                Tok::OrOr,
                Tok::Ident("x"),
                Tok::NotEq,
                Tok::Int(7),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn literals() {
        assert_eq!(
            toks(r#"1u 1.5 2e3 .5 b"x" r"a\n" 'it''s' """tri"ple""" "\x41\u00e9\101\n""#),
            [
                Tok::Uint(1),
                Tok::Double(1.5f64.to_bits()),
                Tok::Double(2e3f64.to_bits()),
                Tok::Double(0.5f64.to_bits()),
                Tok::Bytes,
                Tok::Str("a\\n".into()),
                Tok::Str("it".into()),
                Tok::Str("s".into()),
                Tok::Str("tri\"ple".into()),
                Tok::Str("AéA\n".into()),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn comments_and_positions() {
        let t = tokenize("// c\n  x // y").unwrap();
        assert_eq!(t[0].tok, Tok::Ident("x"));
        assert_eq!(t[0].start, 7);
        assert_eq!(t[1].start, 13);
    }

    #[test]
    fn errors() {
        let e = |s| tokenize(s).unwrap_err();
        assert_eq!(e("\"abc").position, 0);
        assert_eq!(e("x == 'a\nb'").kind, CelErrorKind::UnterminatedString);
        assert_eq!(e(r#""\q""#).kind, CelErrorKind::InvalidEscape);
        assert_eq!(e(r#""\ud800""#).kind, CelErrorKind::InvalidEscape);
        assert_eq!(e("99999999999999999999").kind, CelErrorKind::InvalidNumber);
        assert_eq!(
            e("a # b"),
            CelError {
                position: 2,
                kind: CelErrorKind::UnexpectedCharacter { found: '#' }
            }
        );
        assert!(matches!(
            e("if").kind,
            CelErrorKind::ReservedIdentifier { .. }
        ));
        assert_eq!(e("\"é").kind, CelErrorKind::UnterminatedString);
    }
}
