//! Cutting a byte stream of concatenated JSON objects into one text per object.

use std::fmt;

/// A place in a stream: the byte offset (0-based), line and column (1-based; the
/// column counts bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// Bytes before it.
    pub offset: u64,
    /// Its line.
    pub line: usize,
    /// Its column in that line.
    pub column: usize,
}

impl fmt::Display for Position {
    /// `byte 1234, line 56`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}, line {}", self.offset, self.line)
    }
}

/// One JSON object cut from a stream: its bytes, where it starts and its number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// 1-based: the stream's first object is 1.
    pub index: usize,
    /// Where its `{` is.
    pub at: Position,
    /// Its bytes, from `{` to the matching `}`.
    pub bytes: Vec<u8>,
}

/// Why a stream cannot be cut any further. After one, the [`Framer`] takes no more
/// bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Between objects, something that does not start one (a JSON object starts with
    /// `{`): the stream cannot be followed past it.
    Unexpected {
        /// Where it is.
        at: Position,
        /// The object it would have been.
        index: usize,
        /// Its first characters (at most 40, lossily decoded).
        found: String,
    },
    /// An object longer than the limit.
    TooLarge {
        /// Where the object starts.
        at: Position,
        /// Its number.
        index: usize,
        /// The limit, in bytes.
        max: usize,
    },
    /// The stream ended inside an object (its writer was killed, or the file was cut).
    Cut {
        /// Where the object starts.
        at: Position,
        /// Its number.
        index: usize,
        /// How many of its bytes were read.
        read: usize,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Unexpected { at, index, found } => write!(
                f,
                "event {index} ({at}): expected a JSON object (`{{`), found {found:?}: the \
                 stream cannot be followed past it"
            ),
            FrameError::TooLarge { at, index, max } => write!(
                f,
                "event {index} ({at}): more than the max-input-bytes limit of {max} bytes \
                 (raise it with --max-input-bytes): the stream cannot be followed past it"
            ),
            FrameError::Cut { at, index, read } => write!(
                f,
                "the stream ends inside event {index} ({at}; {read} bytes of it read): the \
                 events before it are applied, this one is lost"
            ),
        }
    }
}

/// Cuts a byte stream into JSON objects, as `kubectl get --watch -o json` prints them:
/// pretty-printed objects one after another, separated by whitespace or nothing.
/// Bytes are pushed as they arrive; each object is handed out as soon as its closing
/// `}` is read (strings and their escapes are followed, so a brace in a string does not
/// count). Whether the object is valid JSON is the reader's business: the framer only
/// counts brackets, which all JSON shares, so a malformed object costs that object and
/// not the rest of the stream.
///
/// ```
/// use gangpack_k8s::watch::Framer;
///
/// let mut framer = Framer::new(1 << 20);
/// let frames = framer.push(b"{\"type\": \"ADDED\", \"object\": {\"a\": \"}\"}}\n{\"ty");
/// assert_eq!(frames.len(), 1);
/// let frames = framer.push(b"pe\": \"DELETED\"}");
/// assert_eq!(frames[0].as_ref().unwrap().index, 2);
/// assert!(framer.finish().is_none());
/// ```
#[derive(Clone, Debug)]
pub struct Framer {
    max: usize,
    /// Where the next byte is.
    at: Position,
    /// The object being read, from its `{`.
    buf: Vec<u8>,
    /// Where it started, while one is being read.
    start: Option<Position>,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// Objects started so far.
    started: usize,
    /// A [`FrameError`] was returned: nothing more is taken.
    stopped: bool,
}

impl Framer {
    /// A framer refusing objects longer than `max` bytes.
    pub fn new(max: usize) -> Framer {
        Framer {
            max,
            at: Position {
                offset: 0,
                line: 1,
                column: 1,
            },
            buf: Vec::new(),
            start: None,
            depth: 0,
            in_string: false,
            escaped: false,
            started: 0,
            stopped: false,
        }
    }

    /// Where the next byte goes.
    pub fn position(&self) -> Position {
        self.at
    }

    /// Whether a [`FrameError`] stopped it.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Takes the next bytes of the stream: the objects they complete, in order, then
    /// the error that stops the stream, if one does (nothing after it).
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Result<Frame, FrameError>> {
        let mut out = Vec::new();
        if self.stopped {
            return out;
        }
        for (i, &b) in bytes.iter().enumerate() {
            if self.start.is_none() {
                let bom = self.at.offset < 3 && matches!(b, 0xef | 0xbb | 0xbf);
                if b == b'{' {
                    self.started += 1;
                    self.start = Some(self.at);
                    self.depth = 0;
                } else if !(b.is_ascii_whitespace() || bom) {
                    let end = (i + 40).min(bytes.len());
                    out.push(Err(FrameError::Unexpected {
                        at: self.at,
                        index: self.started + 1,
                        found: String::from_utf8_lossy(&bytes[i..end]).into_owned(),
                    }));
                    self.stopped = true;
                    return out;
                }
            }
            if let Some(start) = self.start {
                self.buf.push(b);
                if self.step(b) {
                    out.push(Ok(Frame {
                        index: self.started,
                        at: start,
                        bytes: std::mem::take(&mut self.buf),
                    }));
                    self.start = None;
                } else if self.buf.len() > self.max {
                    out.push(Err(FrameError::TooLarge {
                        at: start,
                        index: self.started,
                        max: self.max,
                    }));
                    self.stopped = true;
                    self.buf = Vec::new();
                    return out;
                }
            }
            self.advance(b);
        }
        out
    }

    /// The end of the stream: the error when it ends inside an object.
    pub fn finish(&mut self) -> Option<FrameError> {
        if self.stopped {
            return None;
        }
        self.stopped = true;
        let at = self.start.take()?;
        Some(FrameError::Cut {
            at,
            index: self.started,
            read: std::mem::take(&mut self.buf).len(),
        })
    }

    /// Follows one byte of an object; whether it closes the object.
    fn step(&mut self, b: u8) -> bool {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            return false;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                return self.depth == 0;
            }
            _ => {}
        }
        false
    }

    fn advance(&mut self, b: u8) {
        self.at.offset += 1;
        if b == b'\n' {
            self.at.line += 1;
            self.at.column = 1;
        } else {
            self.at.column += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{FrameError, Framer, Position};

    fn texts(framer: &mut Framer, bytes: &[u8]) -> Vec<String> {
        framer
            .push(bytes)
            .into_iter()
            .map(|f| String::from_utf8(f.expect("a frame").bytes).expect("UTF-8"))
            .collect()
    }

    #[test]
    fn objects_are_cut_whatever_the_chunks() {
        let stream = "\u{feff}{\"a\": \"{[\\\"\"}\n\n{\"b\": [{}, {\"c\": \"}\"}]}{\"d\":1}  \n";
        let whole = texts(&mut Framer::new(1000), stream.as_bytes());
        assert_eq!(
            whole,
            [
                "{\"a\": \"{[\\\"\"}",
                "{\"b\": [{}, {\"c\": \"}\"}]}",
                "{\"d\":1}"
            ]
        );
        // Byte by byte, the same objects.
        let mut framer = Framer::new(1000);
        let mut bytewise = Vec::new();
        for b in stream.as_bytes() {
            bytewise.extend(texts(&mut framer, std::slice::from_ref(b)));
        }
        assert_eq!(bytewise, whole);
        assert_eq!(framer.finish(), None);
    }

    #[test]
    fn positions_and_errors() {
        let mut framer = Framer::new(1000);
        let out = framer.push(b"{}\n  {\"x\": 1}\n{\"y\"");
        let second = out[1].as_ref().expect("a frame");
        assert_eq!(
            (second.index, second.at),
            (
                2,
                Position {
                    offset: 5,
                    line: 2,
                    column: 3
                }
            )
        );
        assert_eq!(
            framer.finish(),
            Some(FrameError::Cut {
                at: Position {
                    offset: 14,
                    line: 3,
                    column: 1
                },
                index: 3,
                read: 4
            })
        );

        let mut framer = Framer::new(1000);
        let out = framer
            .push(b"{}\nerror: the server has asked for the client to provide credentials\n{}");
        assert_eq!(out.len(), 2);
        let Err(FrameError::Unexpected { at, index, found }) = &out[1] else {
            panic!("{out:?}");
        };
        assert_eq!((at.line, *index), (2, 2));
        assert!(found.starts_with("error: the server"), "{found}");
        assert!(framer.push(b"{}").is_empty() && framer.finish().is_none());

        let mut framer = Framer::new(8);
        let out = framer.push(b"{\"long\": \"0123456789\"}");
        assert!(matches!(
            out[..],
            [Err(FrameError::TooLarge { index: 1, .. })]
        ));
    }
}
