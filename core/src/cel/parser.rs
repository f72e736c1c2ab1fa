//! Recursive-descent parser for the CEL grammar subset, producing an AST with byte
//! positions.
//!
//! ```text
//! Expr           = Or ["?" Or ":" Expr]
//! Or             = And {"||" And}
//! And            = Relation {"&&" Relation}
//! Relation       = Addition {("<" | "<=" | ">=" | ">" | "==" | "!=" | "in") Addition}
//! Addition       = Multiplication {("+" | "-") Multiplication}
//! Multiplication = Unary {("*" | "/" | "%") Unary}
//! Unary          = Member | "!" {"!"} Member | "-" {"-"} Member
//! Member         = Primary {"." ["?"] IDENT ["(" [Exprs] ")"] | "[" ["?"] Expr "]"}
//! Primary        = ["."] IDENT ["(" [Exprs] ")"] | "(" Expr ")" | "[" [Exprs [","]] "]"
//!                | "{" [Expr ":" Expr {"," Expr ":" Expr} [","]] "}" | literal
//! ```
//!
//! `&&` and `||` chains are flattened into one n-ary node. Nesting is bounded by
//! [`MAX_DEPTH`] so that neither parsing nor the later passes can exhaust the stack.

use super::lexer::{Tok, Token, tokenize};
use super::{CelError, CelErrorKind};
use crate::alloc_prelude::*;

/// The deepest AST (and the deepest parser recursion) accepted.
pub(crate) const MAX_DEPTH: usize = 64;

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum UnOp {
    /// `!`.
    Not,
    /// `-`.
    Neg,
}

/// A binary operator other than `&&` / `||`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BinOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

impl BinOp {
    /// CEL's internal function name, as cel-go prints it in overload errors.
    pub(super) fn cel_name(self) -> &'static str {
        match self {
            BinOp::Eq => "_==_",
            BinOp::Ne => "_!=_",
            BinOp::Lt => "_<_",
            BinOp::Le => "_<=_",
            BinOp::Gt => "_>_",
            BinOp::Ge => "_>=_",
            BinOp::In => "@in",
            BinOp::Add => "_+_",
            BinOp::Sub => "_-_",
            BinOp::Mul => "_*_",
            BinOp::Div => "_/_",
            BinOp::Mod => "_%_",
        }
    }
}

/// An AST node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Node {
    /// What the node is.
    pub(super) kind: Kind,
    /// Byte offset where the node's text starts.
    pub(super) start: usize,
    /// Byte offset errors about this node point at: the operator of a binary node, the
    /// name of a call or field, otherwise `start`.
    pub(super) pos: usize,
    /// Height of the subtree (a leaf is 1).
    depth: usize,
}

/// AST node kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Int(i64),
    Uint(u64),
    /// A double literal, as the bits of its `f64` (so that nodes stay `Eq`).
    Double(u64),
    Str(String),
    Bool(bool),
    Null,
    Ident(String),
    /// `base.field`, or `base.?field` when `optional`.
    Select {
        base: Box<Node>,
        field: String,
        optional: bool,
    },
    /// `base[key]`, or `base[?key]` when `optional`.
    Index {
        base: Box<Node>,
        key: Box<Node>,
        optional: bool,
    },
    /// `name(args)` or `target.name(args)`.
    Call {
        target: Option<Box<Node>>,
        name: String,
        args: Vec<Node>,
    },
    List(Vec<Node>),
    /// `{k: v, ...}`.
    Map(Vec<(Node, Node)>),
    Unary {
        op: UnOp,
        arg: Box<Node>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    And(Vec<Node>),
    Or(Vec<Node>),
    Cond {
        cond: Box<Node>,
        then: Box<Node>,
        otherwise: Box<Node>,
    },
}

impl Kind {
    fn children(&self) -> Vec<&Node> {
        match self {
            Kind::Int(_)
            | Kind::Uint(_)
            | Kind::Double(_)
            | Kind::Str(_)
            | Kind::Bool(_)
            | Kind::Null
            | Kind::Ident(_) => Vec::new(),
            Kind::Select { base, .. } => vec![base],
            Kind::Index { base, key, .. } => vec![base, key],
            Kind::Call { target, args, .. } => target.iter().map(|t| &**t).chain(args).collect(),
            Kind::List(items) | Kind::And(items) | Kind::Or(items) => items.iter().collect(),
            Kind::Map(entries) => entries.iter().flat_map(|(k, v)| [k, v]).collect(),
            Kind::Unary { arg, .. } => vec![arg],
            Kind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
            Kind::Cond {
                cond,
                then,
                otherwise,
            } => vec![cond, then, otherwise],
        }
    }
}

/// Parses a whole expression.
pub(super) fn parse(src: &str) -> Result<Node, CelError> {
    let tokens = tokenize(src)?;
    let mut parser = Parser {
        tokens,
        at: 0,
        recursion: 0,
    };
    let node = parser.expr()?;
    let next = parser.peek();
    if next.tok != Tok::Eof {
        return Err(CelError {
            position: next.start,
            kind: CelErrorKind::TrailingInput {
                found: next.tok.describe(),
            },
        });
    }
    Ok(node)
}

/// Precedence of `||` (the loosest binary operator).
const PREC_OR: u8 = 1;

/// An infix operator.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Infix {
    Or,
    And,
    Bin(BinOp),
}

/// The infix operator a token stands for, with its precedence (higher binds tighter).
fn binary_op(tok: &Tok<'_>) -> Option<(Infix, u8)> {
    Some(match tok {
        Tok::OrOr => (Infix::Or, PREC_OR),
        Tok::AndAnd => (Infix::And, 2),
        Tok::EqEq => (Infix::Bin(BinOp::Eq), 3),
        Tok::NotEq => (Infix::Bin(BinOp::Ne), 3),
        Tok::Lt => (Infix::Bin(BinOp::Lt), 3),
        Tok::Le => (Infix::Bin(BinOp::Le), 3),
        Tok::Gt => (Infix::Bin(BinOp::Gt), 3),
        Tok::Ge => (Infix::Bin(BinOp::Ge), 3),
        Tok::In => (Infix::Bin(BinOp::In), 3),
        Tok::Plus => (Infix::Bin(BinOp::Add), 4),
        Tok::Minus => (Infix::Bin(BinOp::Sub), 4),
        Tok::Star => (Infix::Bin(BinOp::Mul), 5),
        Tok::Slash => (Infix::Bin(BinOp::Div), 5),
        Tok::Percent => (Infix::Bin(BinOp::Mod), 5),
        _ => return None,
    })
}

/// The token of `&&` / `||`.
fn binary_token(op: Infix) -> Tok<'static> {
    if op == Infix::And {
        Tok::AndAnd
    } else {
        Tok::OrOr
    }
}

struct Parser<'s> {
    tokens: Vec<Token<'s>>,
    at: usize,
    recursion: usize,
}

impl<'s> Parser<'s> {
    fn peek(&self) -> &Token<'s> {
        // The token list always ends with `Eof`, and `bump` never moves past it.
        &self.tokens[self.at.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, ahead: usize) -> &Tok<'s> {
        &self.tokens[(self.at + ahead).min(self.tokens.len() - 1)].tok
    }

    fn bump(&mut self) -> Token<'s> {
        let token = self.peek().clone();
        if token.tok != Tok::Eof {
            self.at += 1;
        }
        token
    }

    fn eat(&mut self, tok: &Tok<'_>) -> bool {
        if self.peek().tok == *tok {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: &Tok<'_>, expected: &'static str) -> Result<Token<'s>, CelError> {
        if self.peek().tok == *tok {
            Ok(self.bump())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn unexpected(&self, expected: &'static str) -> CelError {
        let next = self.peek();
        CelError {
            position: next.start,
            kind: CelErrorKind::UnexpectedToken {
                found: next.tok.describe(),
                expected,
            },
        }
    }

    /// Builds a node, enforcing [`MAX_DEPTH`].
    fn node(kind: Kind, start: usize, pos: usize) -> Result<Node, CelError> {
        let depth = 1 + kind.children().iter().map(|c| c.depth).max().unwrap_or(0);
        if depth > MAX_DEPTH {
            return Err(CelError {
                position: pos,
                kind: CelErrorKind::TooDeep { max: MAX_DEPTH },
            });
        }
        Ok(Node {
            kind,
            start,
            pos,
            depth,
        })
    }

    /// A full expression (the entry point of every nested expression: parentheses,
    /// arguments, list items, index keys, ternary branches), guarding the recursion.
    ///
    /// The functions on this recursive path keep their rare branches in separate
    /// functions: debug builds give every temporary its own stack slot, and each level
    /// of nesting pays for the whole path.
    fn expr(&mut self) -> Result<Node, CelError> {
        if self.recursion >= MAX_DEPTH {
            return Err(self.too_deep());
        }
        self.recursion += 1;
        let result = self.conditional();
        self.recursion -= 1;
        result
    }

    #[cold]
    fn too_deep(&self) -> CelError {
        CelError {
            position: self.peek().start,
            kind: CelErrorKind::TooDeep { max: MAX_DEPTH },
        }
    }

    fn conditional(&mut self) -> Result<Node, CelError> {
        let cond = self.binary(PREC_OR)?;
        if self.peek().tok == Tok::Question {
            self.ternary(cond)
        } else {
            Ok(cond)
        }
    }

    /// The `? then : otherwise` after `cond`.
    fn ternary(&mut self, cond: Node) -> Result<Node, CelError> {
        let pos = self.bump().start;
        let then = self.binary(PREC_OR)?;
        self.expect(&Tok::Colon, "':' of the conditional operator")?;
        let otherwise = self.expr()?;
        let start = cond.start;
        Self::node(
            Kind::Cond {
                cond: Box::new(cond),
                then: Box::new(then),
                otherwise: Box::new(otherwise),
            },
            start,
            pos,
        )
    }

    /// Binary operators by precedence climbing: parses operators binding at least as
    /// tightly as `min`. `&&` and `||` chains become one n-ary node.
    fn binary(&mut self, min: u8) -> Result<Node, CelError> {
        let mut lhs = self.unary()?;
        loop {
            match binary_op(&self.peek().tok) {
                Some((op, prec)) if prec >= min => lhs = self.infix(lhs, op, prec)?,
                _ => return Ok(lhs),
            }
        }
    }

    /// The operator `op` (the next token) and its right operand(s).
    fn infix(&mut self, lhs: Node, op: Infix, prec: u8) -> Result<Node, CelError> {
        let pos = self.bump().start;
        let start = lhs.start;
        match op {
            Infix::And | Infix::Or => {
                let mut items = vec![lhs, self.binary(prec + 1)?];
                while self.peek().tok == binary_token(op) {
                    self.bump();
                    items.push(self.binary(prec + 1)?);
                }
                let kind = if op == Infix::And {
                    Kind::And(items)
                } else {
                    Kind::Or(items)
                };
                Self::node(kind, start, pos)
            }
            Infix::Bin(op) => {
                let rhs = self.binary(prec + 1)?;
                Self::node(
                    Kind::Binary {
                        op,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    },
                    start,
                    pos,
                )
            }
        }
    }

    fn unary(&mut self) -> Result<Node, CelError> {
        match self.peek().tok {
            Tok::Bang => self.prefixed(),
            // `-` directly before an integer literal is part of the literal (so that
            // -9223372036854775808 is representable); `primary` reads it.
            Tok::Minus if !matches!(self.peek_at(1), Tok::Int(_)) => self.prefixed(),
            _ => self.member(),
        }
    }

    /// `!` / `-` operators (collected without recursion) and their operand.
    fn prefixed(&mut self) -> Result<Node, CelError> {
        let mut ops = Vec::new();
        loop {
            match self.peek().tok {
                Tok::Bang => ops.push((UnOp::Not, self.bump().start)),
                Tok::Minus if !matches!(self.peek_at(1), Tok::Int(_)) => {
                    ops.push((UnOp::Neg, self.bump().start));
                }
                _ => break,
            }
        }
        let mut node = self.member()?;
        while let Some((op, pos)) = ops.pop() {
            node = Self::node(
                Kind::Unary {
                    op,
                    arg: Box::new(node),
                },
                pos,
                pos,
            )?;
        }
        Ok(node)
    }

    fn member(&mut self) -> Result<Node, CelError> {
        let mut node = self.primary()?;
        loop {
            node = match self.peek().tok {
                Tok::Dot => self.dot_suffix(node)?,
                Tok::LBracket => self.index_suffix(node)?,
                _ => return Ok(node),
            };
        }
    }

    /// `.name`, `.?name` or `.name(args)` after `node`.
    fn dot_suffix(&mut self, node: Node) -> Result<Node, CelError> {
        self.bump();
        let optional = self.eat(&Tok::Question);
        let name_token = self.peek().clone();
        let Tok::Ident(name) = name_token.tok else {
            return Err(self.unexpected("a field or method name after '.'"));
        };
        self.bump();
        let start = node.start;
        let pos = name_token.start;
        if self.peek().tok != Tok::LParen {
            return Self::node(
                Kind::Select {
                    base: Box::new(node),
                    field: name.to_owned(),
                    optional,
                },
                start,
                pos,
            );
        }
        if optional {
            return Err(CelError {
                position: pos,
                kind: CelErrorKind::UnexpectedToken {
                    found: "'('".to_owned(),
                    expected: "a field name after '.?' (not a method call)",
                },
            });
        }
        let args = self.arguments()?;
        Self::node(
            Kind::Call {
                target: Some(Box::new(node)),
                name: name.to_owned(),
                args,
            },
            start,
            pos,
        )
    }

    /// `[key]` or `[?key]` after `node`.
    fn index_suffix(&mut self, node: Node) -> Result<Node, CelError> {
        let pos = self.bump().start;
        let optional = self.eat(&Tok::Question);
        let key = self.expr()?;
        self.expect(&Tok::RBracket, "']'")?;
        let start = node.start;
        Self::node(
            Kind::Index {
                base: Box::new(node),
                key: Box::new(key),
                optional,
            },
            start,
            pos,
        )
    }

    /// `(` [expr {, expr}] `)`, the `(` being the next token.
    fn arguments(&mut self) -> Result<Vec<Node>, CelError> {
        self.expect(&Tok::LParen, "'('")?;
        let mut args = Vec::new();
        if self.eat(&Tok::RParen) {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat(&Tok::RParen) {
                return Ok(args);
            }
            self.expect(&Tok::Comma, "',' or ')' in the argument list")?;
        }
    }

    fn unexpected_token(token: &Token<'_>, expected: &'static str) -> CelError {
        CelError {
            position: token.start,
            kind: CelErrorKind::UnexpectedToken {
                found: token.tok.describe(),
                expected,
            },
        }
    }

    fn unsupported(position: usize, what: &'static str) -> CelError {
        CelError {
            position,
            kind: CelErrorKind::UnsupportedSyntax { what },
        }
    }

    fn primary(&mut self) -> Result<Node, CelError> {
        let token = self.bump();
        match token.tok {
            Tok::LParen => {
                let inner = self.expr()?;
                self.expect(&Tok::RParen, "')'")?;
                Ok(inner)
            }
            Tok::LBracket => self.list(token.start),
            Tok::LBrace => self.map(token.start),
            Tok::Dot | Tok::Ident(_) => self.name(token),
            Tok::Minus => self.negative_int(token.start),
            _ => Self::literal(token),
        }
    }

    /// A literal token, or an error for anything else.
    fn literal(token: Token<'_>) -> Result<Node, CelError> {
        let start = token.start;
        let kind = match token.tok {
            Tok::Int(magnitude) => Kind::Int(i64::try_from(magnitude).map_err(|_| CelError {
                position: start,
                kind: CelErrorKind::InvalidNumber,
            })?),
            Tok::Str(s) => Kind::Str(s),
            Tok::True => Kind::Bool(true),
            Tok::False => Kind::Bool(false),
            Tok::Null => Kind::Null,
            Tok::Uint(u) => Kind::Uint(u),
            Tok::Double(bits) => Kind::Double(bits),
            Tok::Bytes => return Err(Self::unsupported(start, "bytes literals")),
            _ => return Err(Self::unexpected_token(&token, "an expression")),
        };
        Self::node(kind, start, start)
    }

    /// `-` directly followed by an integer literal (see `unary`).
    fn negative_int(&mut self, start: usize) -> Result<Node, CelError> {
        let token = self.bump();
        let Tok::Int(magnitude) = token.tok else {
            return Err(Self::unexpected_token(&token, "an integer"));
        };
        let value = i64::try_from(-i128::from(magnitude)).map_err(|_| CelError {
            position: start,
            kind: CelErrorKind::InvalidNumber,
        })?;
        Self::node(Kind::Int(value), start, start)
    }

    /// A list literal after its `[`.
    fn list(&mut self, start: usize) -> Result<Node, CelError> {
        let mut items = Vec::new();
        loop {
            if self.eat(&Tok::RBracket) {
                break;
            }
            items.push(self.expr()?);
            if self.eat(&Tok::RBracket) {
                break;
            }
            self.expect(&Tok::Comma, "',' or ']' in the list")?;
        }
        Self::node(Kind::List(items), start, start)
    }

    /// A map literal after its `{`.
    fn map(&mut self, start: usize) -> Result<Node, CelError> {
        let mut entries = Vec::new();
        loop {
            if self.eat(&Tok::RBrace) {
                break;
            }
            let key = self.expr()?;
            self.expect(&Tok::Colon, "':' after the map key")?;
            let value = self.expr()?;
            entries.push((key, value));
            if self.eat(&Tok::RBrace) {
                break;
            }
            self.expect(&Tok::Comma, "',' or '}' in the map")?;
        }
        Self::node(Kind::Map(entries), start, start)
    }

    /// An identifier or a global call; `token` is the identifier or a leading `.`
    /// (which names the root scope; there is only one scope here).
    fn name(&mut self, token: Token<'s>) -> Result<Node, CelError> {
        let start = token.start;
        let name_token = if token.tok == Tok::Dot {
            self.bump()
        } else {
            token
        };
        let Tok::Ident(name) = name_token.tok else {
            return Err(Self::unexpected_token(
                &name_token,
                "an identifier after '.'",
            ));
        };
        match self.peek().tok {
            Tok::LParen => {
                let args = self.arguments()?;
                Self::node(
                    Kind::Call {
                        target: None,
                        name: name.to_owned(),
                        args,
                    },
                    start,
                    name_token.start,
                )
            }
            Tok::LBrace => Err(Self::unsupported(self.peek().start, "message literals")),
            _ => Self::node(Kind::Ident(name.to_owned()), start, start),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders an AST in a compact fully parenthesised form.
    fn show(n: &Node) -> String {
        match &n.kind {
            Kind::Int(i) => format!("{i}"),
            Kind::Uint(u) => format!("{u}u"),
            Kind::Double(bits) => format!("{:?}", f64::from_bits(*bits)),
            Kind::Str(s) => format!("{s:?}"),
            Kind::Bool(b) => format!("{b}"),
            Kind::Null => "null".into(),
            Kind::Ident(s) => s.clone(),
            Kind::Select {
                base,
                field,
                optional,
            } => format!("{}.{}{field}", show(base), if *optional { "?" } else { "" }),
            Kind::Index { base, key, .. } => format!("{}[{}]", show(base), show(key)),
            Kind::Call { target, name, args } => {
                let args: Vec<_> = args.iter().map(show).collect();
                match target {
                    Some(t) => format!("{}.{name}({})", show(t), args.join(", ")),
                    None => format!("{name}({})", args.join(", ")),
                }
            }
            Kind::List(items) => {
                let items: Vec<_> = items.iter().map(show).collect();
                format!("[{}]", items.join(", "))
            }
            Kind::Map(entries) => {
                let entries: Vec<_> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", show(k), show(v)))
                    .collect();
                format!("{{{}}}", entries.join(", "))
            }
            Kind::Unary { op, arg } => {
                format!(
                    "({}{})",
                    if *op == UnOp::Not { "!" } else { "-" },
                    show(arg)
                )
            }
            Kind::Binary { op, lhs, rhs } => {
                format!("({} {} {})", show(lhs), op.cel_name(), show(rhs))
            }
            Kind::And(items) | Kind::Or(items) => {
                let sep = if matches!(n.kind, Kind::And(_)) {
                    " && "
                } else {
                    " || "
                };
                let items: Vec<_> = items.iter().map(show).collect();
                format!("({})", items.join(sep))
            }
            Kind::Cond {
                cond,
                then,
                otherwise,
            } => format!("({} ? {} : {})", show(cond), show(then), show(otherwise)),
        }
    }

    fn p(src: &str) -> String {
        show(&parse(src).unwrap_or_else(|e| panic!("{src}: {e}")))
    }

    #[test]
    fn precedence() {
        assert_eq!(p("1 + 2 * 3 == 7"), "((1 _+_ (2 _*_ 3)) _==_ 7)");
        assert_eq!(p("a || b && c || d"), "(a || (b && c) || d)");
        assert_eq!(p("a ? b : c ? d : e"), "(a ? b : (c ? d : e))");
        assert_eq!(p("!a.b(1)[2]"), "(!a.b(1)[2])");
        assert_eq!(p("-x - -1"), "((-x) _-_ -1)");
        assert_eq!(p("--1"), "(--1)");
        assert_eq!(p("x in [1, 2,]"), "(x @in [1, 2])");
        assert_eq!(p("(a || b) && c"), "((a || b) && c)");
        assert_eq!(p("a.?b[?c]"), "a.?b[c]");
        assert_eq!(p(".device"), "device");
        assert_eq!(p("-9223372036854775808"), "-9223372036854775808");
    }

    #[test]
    fn positions() {
        let n = parse("device.driver == 1").unwrap();
        assert_eq!((n.start, n.pos), (0, 14));
        let n = parse("  a.b.matches('x')").unwrap();
        assert_eq!((n.start, n.pos), (2, 6));
    }

    #[test]
    fn errors() {
        let e = |s: &str| parse(s).unwrap_err();
        assert_eq!(e("true false").position, 5);
        assert!(matches!(
            e("true false").kind,
            CelErrorKind::TrailingInput { .. }
        ));
        assert_eq!(e("").position, 0);
        assert_eq!(e("(a").position, 2);
        assert_eq!(
            e("b'x' == 1").kind,
            CelErrorKind::UnsupportedSyntax {
                what: "bytes literals"
            }
        );
        assert_eq!(e("{1 2}").position, 3);
        assert_eq!(e("9223372036854775808").kind, CelErrorKind::InvalidNumber);
        assert_eq!(e("a.?b()").position, 3);
        assert_eq!(e("a[?").position, 3);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert!(matches!(
            parse(&deep).unwrap_err().kind,
            CelErrorKind::TooDeep { .. }
        ));
        let long_chain = vec!["1"; 500].join(" + ");
        assert!(matches!(
            parse(&long_chain).unwrap_err().kind,
            CelErrorKind::TooDeep { .. }
        ));
        let bangs = format!("{}true", "!".repeat(500));
        assert!(matches!(
            parse(&bangs).unwrap_err().kind,
            CelErrorKind::TooDeep { .. }
        ));
        // Flattened: a long && chain is shallow.
        let ands = vec!["true"; 500].join(" && ");
        assert!(parse(&ands).is_ok());
        let ok = format!("{}1{}", "(".repeat(40), ")".repeat(40));
        assert!(parse(&ok).is_ok());
    }
}
