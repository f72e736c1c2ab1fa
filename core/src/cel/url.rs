//! The Kubernetes URL library (`url()`, `isURL()` and the `get…` accessors), parsing as
//! Go's `net/url` does: `url(s)` and `isURL(s)` accept what `url.ParseRequestURI`
//! accepts (an absolute URI or an absolute path), and the components are those of
//! `url.Parse` (which, unlike `ParseRequestURI`, splits off the `#fragment`).

use core::fmt::Write as _;

use crate::alloc_prelude::*;

/// A parsed URL: the components the accessors return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Url {
    scheme: String,
    /// `host[:port]`, IPv6 addresses in brackets; `""` when absent.
    host: String,
    /// The path as written (still escaped).
    raw_path: String,
    /// The path, unescaped.
    path: String,
    /// The query without its `?`.
    raw_query: String,
}

/// Parses `s` as `url()` does; the error reads as Go's `*url.Error`.
pub(super) fn parse(s: &str) -> Result<Url, String> {
    let wrap = |reason: &str| format!("parse {}: {reason}", go_quote(s));
    parse_go(s, true).map_err(|r| wrap(&r))?;
    let (without_fragment, _) = s.split_once('#').unwrap_or((s, ""));
    parse_go(without_fragment, false).map_err(|r| wrap(&r))
}

/// Go's `url.ParseRequestURI(s)`, its error as `*url.Error` prints it.
pub(super) fn parse_request_uri(s: &str) -> Result<(), String> {
    parse_go(s, true)
        .map(|_| ())
        .map_err(|r| format!("parse {}: {r}", go_quote(s)))
}

/// Whether `isURL(s)` holds.
pub(super) fn is_url(s: &str) -> bool {
    parse_go(s, true).is_ok()
}

impl Url {
    pub(super) fn scheme(&self) -> &str {
        &self.scheme
    }

    pub(super) fn host(&self) -> &str {
        &self.host
    }

    /// The host without the port, IPv6 addresses without brackets (Go's `Hostname`).
    pub(super) fn hostname(&self) -> &str {
        let (host, _) = split_host_port(&self.host);
        host.strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host)
    }

    /// The port without its `:`, `""` when absent (Go's `Port`).
    pub(super) fn port(&self) -> &str {
        split_host_port(&self.host).1
    }

    /// The path, escaped: the path as written when it is a valid escaping, otherwise
    /// the unescaped path escaped again (Go's `EscapedPath`).
    pub(super) fn escaped_path(&self) -> String {
        if valid_encoded_path(&self.raw_path)
            && unescape(&self.raw_path, Mode::Path).ok().as_deref() == Some(self.path.as_str())
        {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return String::from("*");
        }
        escape_path(&self.path)
    }

    /// The query parameters: each key (unescaped) with its values in order, keys sorted
    /// (Go's `Query`, which skips malformed pairs).
    pub(super) fn query(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for pair in self.raw_query.split('&') {
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (Ok(key), Ok(value)) = (
                unescape(key, Mode::QueryComponent),
                unescape(value, Mode::QueryComponent),
            ) else {
                continue;
            };
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some((_, values)) => values.push(value),
                None => out.push((key, vec![value])),
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

fn split_host_port(host: &str) -> (&str, &str) {
    let colon = match host.rfind(']') {
        Some(end) => host[end..].find(':').map(|i| end + i),
        None => host.rfind(':'),
    };
    match colon {
        Some(i) => (&host[..i], &host[i + 1..]),
        None => (host, ""),
    }
}

/// Go's `url.parse(rawURL, viaRequest)`.
fn parse_go(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(String::from("net/url: invalid control character in URL"));
    }
    if raw.is_empty() && via_request {
        return Err(String::from("empty url"));
    }
    let mut url = Url {
        scheme: String::new(),
        host: String::new(),
        raw_path: String::new(),
        path: String::new(),
        raw_query: String::new(),
    };
    if raw == "*" {
        url.path = String::from("*");
        url.raw_path = String::from("*");
        return Ok(url);
    }
    let (scheme, rest) = split_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let mut rest = rest;
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = String::from(query);
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // A rootless path is opaque: no host, no path.
            return Ok(url);
        }
        if via_request {
            return Err(String::from("invalid URI for request"));
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err(String::from(
                "first path segment in URL cannot contain colon",
            ));
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && rest.starts_with("//")
    {
        let authority = &rest[2..];
        let (authority, path) = match authority.find('/') {
            Some(i) => (&authority[..i], &authority[i..]),
            None => (authority, ""),
        };
        url.host = parse_authority(authority)?;
        rest = path;
    }
    url.path = unescape(rest, Mode::Path)?;
    url.raw_path = String::from(rest);
    Ok(url)
}

/// Splits a leading `scheme:`, as Go's `getScheme`.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err(String::from("missing protocol scheme")),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// The host of `[userinfo@]host[:port]`, validated as Go's `parseAuthority`.
fn parse_authority(authority: &str) -> Result<String, String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let host = parse_host(host)?;
    if let Some(userinfo) = userinfo {
        let valid = userinfo
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&b) || b >= 0x80);
        if !valid {
            return Err(String::from("net/url: invalid userinfo"));
        }
        unescape(userinfo, Mode::UserPassword)?;
    }
    Ok(host)
}

fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `parseHost`.
fn parse_host(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let end = host
            .rfind(']')
            .ok_or_else(|| String::from("missing ']' in host"))?;
        let port = &host[end + 1..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", go_quote(port)));
        }
    } else if let Some(i) = host.rfind(':') {
        let port = &host[i..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", go_quote(port)));
        }
    }
    unescape(host, Mode::Host)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    UserPassword,
    QueryComponent,
}

/// Characters a host may hold unescaped (Go's `shouldEscape` in host mode).
fn host_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:[]<>\"".contains(&b) || b >= 0x80
}

/// Go's `unescape`: `%XX` decoded (an invalid escape is an error), `+` a space in
/// query components, and in hosts only the characters a host may hold.
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = |b: u8| char::from(b).to_digit(16);
                let (Some(hi), Some(lo)) = (
                    bytes.get(i + 1).copied().and_then(hex),
                    bytes.get(i + 2).copied().and_then(hex),
                ) else {
                    let end = (i + 3).min(s.len());
                    let escape = s.get(i..end).unwrap_or(&s[i..]);
                    return Err(format!("invalid URL escape {}", go_quote(escape)));
                };
                let decoded = u8::try_from(hi * 16 + lo).unwrap_or(0);
                if mode == Mode::Host && decoded < 0x80 && s[..i].starts_with('[') {
                    // Only a zone may be escaped inside an IP literal.
                } else if mode == Mode::Host && decoded < 0x80 && !host_char(decoded) {
                    return Err(format!("invalid URL escape {}", go_quote(&s[i..i + 3])));
                }
                out.push(decoded);
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            b if mode == Mode::Host && !host_char(b) => {
                return Err(format!(
                    "invalid character {} in host name",
                    go_quote(&String::from(char::from(b)))
                ));
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Characters a path may hold unescaped (Go's `shouldEscape` in path mode).
fn path_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&b)
}

/// Whether `s` is a valid escaped path (Go's `validEncoded` in path mode).
fn valid_encoded_path(s: &str) -> bool {
    s.bytes().all(|b| path_char(b) || b"!'()*[]%".contains(&b))
}

fn escape_path(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if path_char(b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Go's `%q` for the error messages.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
