//! `gangpack shrink`: a failing scenario reduced to a small one that still fails, the
//! judge a shell command ([`gangpack_k8s::shrink`] does the reducing).
//!
//! Each candidate is written to one temporary file, in the input's format (JSON when
//! the first input file is JSON, else YAML; a `v1` `List` either way), and the judge
//! runs as `sh -c COMMAND` with the file's path in `GANGPACK_SCENARIO` and in place of
//! `{}` in the command. A candidate still fails when the judge ends as it did on the
//! input (the same exit status, or the same signal), or with `--fails-with CODE`; a
//! judge that runs past `--judge-timeout` passes. Each run is its own process group,
//! killed whole on a timeout, at `--max-time` and on Ctrl-C; the best scenario found
//! so far is then the output.
//!
//! The process part (files, `sh`, clocks, signals) is here, in the command; the
//! reducing is the library's, which a WebAssembly host calls with a judge of its own.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use gangpack_cli::{EXIT_FAILURE, EXIT_INVALID, EXIT_OK, Format};
use gangpack_k8s::shrink::{self, Progress, ShrinkError, ShrinkOptions, Shrunk, Stopped, Verdict};
use serde_json::Value;

use crate::{Style, message};

/// Exit status: interrupted (Ctrl-C), after the best scenario so far was written.
const EXIT_INTERRUPTED: u8 = 130;

/// How often the progress line is redrawn, at most.
const REDRAW: Duration = Duration::from_millis(100);

/// How often a running judge is looked at (its end, the clock, Ctrl-C).
const POLL: Duration = Duration::from_millis(2);

pub(crate) const SHRINK_HELP: &str = "\
The judge:
  Runs as `sh -c COMMAND` once per candidate, with the candidate's path in the
  environment variable GANGPACK_SCENARIO and in place of {} in the command (quoted for
  the shell); its stdout and stderr are discarded. A candidate still fails when the
  judge ends as it did on the input: the same non-zero exit status (or the same
  signal), or the status --fails-with names. So a candidate that `gangpack check`
  finds invalid (exit 2) does not count when the input broke a rule (exit 4).

  gangpack shrink -f scenario.json \\
    --judge 'my-scheduler < \"$GANGPACK_SCENARIO\" > /tmp/d.json &&
             gangpack check -f \"$GANGPACK_SCENARIO\" --decisions /tmp/d.json' \\
    -o small.json

Order: whole objects (halves, quarters, ... single objects), then list items at any
depth, then fields (never apiVersion, kind, metadata.name, metadata.namespace), then
integers greater than 1 set to 1 (unless --keep-numbers); rounds until one changes
nothing. Deterministic: the same input and judge give the same output. Progress goes
to stderr on a terminal; a summary line at the end either way.

Exit status:
  0    shrunk (also when --max-time or --max-runs stopped it: the summary says so)
  1    a file could not be read or written, or the judge could not be started
  2    invalid input or usage; the judge passed (or timed out) on the input
  130  interrupted (Ctrl-C): the best scenario so far was written";

/// `gangpack shrink` arguments.
#[derive(Debug, Args)]
pub(crate) struct ShrinkArgs {
    /// The failing scenario: a file or directory of manifests (`*.yaml`, `*.yml`,
    /// `*.json`, read recursively), `-` for stdin. Repeat the flag for more, or separate
    /// paths with commas; the objects are read as written, unknown kinds too.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "PATH",
        required = true,
        value_delimiter = ','
    )]
    paths: Vec<String>,
    /// The shell command that judges a candidate (see "The judge" below).
    #[arg(long, value_name = "COMMAND")]
    judge: String,
    /// Write the shrunk scenario here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Stop after this long and write the best scenario so far (`90s`, `10m`, `1h`,
    /// `1m30s`; a bare number is seconds).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    max_time: Duration,
    /// Stop after this many judge runs, the input's included.
    #[arg(long, value_name = "N", default_value_t = ShrinkOptions::DEFAULT_MAX_RUNS, value_parser = clap::value_parser!(u64).range(1..))]
    max_runs: u64,
    /// A judge run longer than this is killed and passes (the candidate is not kept)
    /// [default: none, only --max-time].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    judge_timeout: Option<Duration>,
    /// The exit status that means "still fails" [default: the judge's on the input,
    /// which must not be 0].
    #[arg(long, value_name = "CODE", value_parser = clap::value_parser!(i32).range(1..=255))]
    fails_with: Option<i32>,
    /// Leave numbers as they are (no step setting integers greater than 1 to 1).
    #[arg(long)]
    keep_numbers: bool,
}

/// `90s`, `10m`, `1h`, `500ms`, `1m30s`, or a bare number of seconds.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("{s:?} is not a duration (expected e.g. 90s, 10m, 1h, 1m30s)");
    let s = s.trim();
    if let Ok(seconds) = s.parse::<u64>() {
        return (seconds > 0)
            .then(|| Duration::from_secs(seconds))
            .ok_or_else(bad);
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let one = match &rest[..unit] {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.saturating_mul(60)),
            "h" => Duration::from_secs(n.saturating_mul(3600)),
            _ => return Err(bad()),
        };
        total = total.saturating_add(one);
        rest = &rest[unit..];
    }
    if total.is_zero() {
        return Err(bad());
    }
    Ok(total)
}

/// A duration as the summary prints it: `12.3 s`, `4m05s`.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        let s = d.as_secs();
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// A duration as a flag value: `10m`, `90s`, `500ms`.
fn flag_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// Why the command failed.
struct Fail {
    code: u8,
    lines: Vec<String>,
}

impl Fail {
    fn io(line: String) -> Fail {
        Fail {
            code: EXIT_FAILURE,
            lines: vec![line],
        }
    }

    fn invalid(line: String) -> Fail {
        Fail {
            code: EXIT_INVALID,
            lines: vec![line],
        }
    }
}

/// Runs `gangpack shrink`; returns the exit status (messages are printed here).
pub(crate) fn run(args: &ShrinkArgs, max_input_bytes: usize, style: Style) -> u8 {
    match shrink_files(args, max_input_bytes, style) {
        Ok(code) => code,
        Err(fail) => {
            for line in &fail.lines {
                message(style, "error:", "31", line);
            }
            fail.code
        }
    }
}

fn shrink_files(args: &ShrinkArgs, max_input_bytes: usize, style: Style) -> Result<u8, Fail> {
    let (objects, format) = read_inputs(&args.paths, max_input_bytes)?;
    let interrupted = Arc::new(AtomicBool::new(false));
    // Without the handler Ctrl-C ends the command at once: worse, but not wrong.
    let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&interrupted));
    let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&interrupted));
    let dir = TempDir::new()?;
    let mut judge = ShellJudge {
        command: args.judge.clone(),
        scenario: dir.path.join(if format == Format::Json {
            "scenario.json"
        } else {
            "scenario.yaml"
        }),
        log: dir.path.join("judge.log"),
        format,
        fails_with: args.fails_with.map(End::Exit),
        input_end: None,
        start: Instant::now(),
        max_time: args.max_time,
        judge_timeout: args.judge_timeout,
        interrupted,
        timeouts: 0,
        stop: None,
        error: None,
    };
    let options = ShrinkOptions {
        max_runs: args.max_runs,
        numbers: !args.keep_numbers,
    };
    let mut line = ProgressLine::new(std::io::stderr().is_terminal(), judge.start);
    let result = shrink::shrink(
        objects,
        &options,
        |candidate| judge.judge(candidate),
        |p| line.draw(p),
    );
    line.clear();
    if let Some(fail) = judge.error.take() {
        return Err(fail);
    }
    let shrunk = result.map_err(|e| judge.input_failure(e))?;
    write_output(args.output.as_deref(), &shrunk.objects, format)?;
    summary(style, &shrunk, &judge, args);
    Ok(if judge.stop == Some(Stop::Interrupted) {
        EXIT_INTERRUPTED
    } else {
        EXIT_OK
    })
}

/// The stderr lines at the end: what was shrunk to what, and why it stopped early.
fn summary(style: Style, shrunk: &Shrunk, judge: &ShellJudge, args: &ShrinkArgs) {
    let (before, after) = (shrunk.stats.before, shrunk.stats.after);
    let runs = shrunk.stats.runs;
    let _ = writeln!(
        std::io::stderr().lock(),
        "shrunk {} to {}, {} list items to {}, {} fields to {} ({} judge run{}, {})",
        objects(before.objects),
        after.objects,
        before.items,
        after.items,
        before.fields,
        after.fields,
        runs,
        if runs == 1 { "" } else { "s" },
        seconds(judge.start.elapsed()),
    );
    let stopped = match (shrunk.stats.stopped, judge.stop) {
        (Some(Stopped::MaxRuns), _) => Some(format!("--max-runs {}", args.max_runs)),
        (_, Some(Stop::OutOfTime)) => Some(format!("--max-time {}", flag_duration(args.max_time))),
        (_, Some(Stop::Interrupted)) => Some("interrupted".to_owned()),
        _ => None,
    };
    if let Some(why) = stopped {
        message(
            style,
            "note:",
            "33",
            &format!(
                "stopped early ({why}): the output still fails, but a longer run may shrink it further"
            ),
        );
    }
    if judge.timeouts > 0 {
        let timeout = args.judge_timeout.map(flag_duration).unwrap_or_default();
        message(
            style,
            "note:",
            "33",
            &format!(
                "{} judge run{} took longer than --judge-timeout {timeout} and counted as passing",
                judge.timeouts,
                if judge.timeouts == 1 { "" } else { "s" }
            ),
        );
    }
}

fn objects(n: usize) -> String {
    format!("{n} object{}", if n == 1 { "" } else { "s" })
}

/// How a judge run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// It exited with this status.
    Exit(i32),
    /// A signal killed it.
    Signal(i32),
}

impl End {
    fn of(status: ExitStatus) -> End {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt as _;
            if let Some(signal) = status.signal() {
                return End::Signal(signal);
            }
        }
        End::Exit(status.code().unwrap_or(-1))
    }

    fn failed(self) -> bool {
        self != End::Exit(0)
    }
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            End::Exit(code) => write!(f, "exit status {code}"),
            End::Signal(signal) => write!(f, "signal {signal}"),
        }
    }
}

/// Why the judge said stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    OutOfTime,
    Interrupted,
}

/// What one run of the command came to.
enum Outcome {
    Ended(End),
    TimedOut,
    Stopped(Stop),
}

/// The judge: the shell command, run on each candidate written to a file.
struct ShellJudge {
    command: String,
    scenario: PathBuf,
    log: PathBuf,
    format: Format,
    /// `--fails-with`, else how it ended on the input (once known).
    fails_with: Option<End>,
    /// How it ended on the input.
    input_end: Option<Outcome>,
    start: Instant,
    max_time: Duration,
    judge_timeout: Option<Duration>,
    interrupted: Arc<AtomicBool>,
    timeouts: u64,
    stop: Option<Stop>,
    /// Something went wrong outside the judge (a file, `sh` itself): the shrink stops.
    error: Option<Fail>,
}

impl ShellJudge {
    /// The verdict on one candidate (the first is the input).
    fn judge(&mut self, candidate: &[Value]) -> Verdict {
        match self.outcome(candidate) {
            Ok(outcome) => {
                let verdict = self.verdict(&outcome);
                if self.input_end.is_none() {
                    self.input_end = Some(outcome);
                }
                verdict
            }
            Err(fail) => {
                self.error = Some(fail);
                Verdict::Stop
            }
        }
    }

    fn verdict(&mut self, outcome: &Outcome) -> Verdict {
        match *outcome {
            Outcome::Stopped(stop) => {
                self.stop = Some(stop);
                Verdict::Stop
            }
            Outcome::TimedOut => {
                self.timeouts += 1;
                Verdict::Passes
            }
            Outcome::Ended(end) => {
                if self.input_end.is_none() && self.fails_with.is_none() && end.failed() {
                    self.fails_with = Some(end);
                }
                if self.fails_with == Some(end) {
                    Verdict::Fails
                } else {
                    Verdict::Passes
                }
            }
        }
    }

    /// Writes the candidate and runs the command on it.
    fn outcome(&mut self, candidate: &[Value]) -> Result<Outcome, Fail> {
        if let Some(stop) = self.stop_now() {
            return Ok(Outcome::Stopped(stop));
        }
        let text = list_text(candidate, self.format)?;
        std::fs::write(&self.scenario, text).map_err(|e| {
            Fail::io(format!(
                "cannot write the candidate {}: {e}",
                self.scenario.display()
            ))
        })?;
        let log = std::fs::File::create(&self.log)
            .map_err(|e| Fail::io(format!("cannot write {}: {e}", self.log.display())))?;
        let log2 = log
            .try_clone()
            .map_err(|e| Fail::io(format!("cannot write {}: {e}", self.log.display())))?;
        let path = self.scenario.to_string_lossy().into_owned();
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(self.command.replace("{}", &shell_quote(&path)))
            .env("GANGPACK_SCENARIO", &path)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2);
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt as _;
            // Its own group: killed whole (the scheduler it starts too), and out of
            // the terminal's Ctrl-C, which is ours to handle.
            command.process_group(0);
        }
        let mut child = command
            .spawn()
            .map_err(|e| Fail::io(format!("cannot run the judge (sh -c ...): {e}")))?;
        let deadline = self.judge_timeout.map(|t| Instant::now() + t);
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return Ok(Outcome::Ended(End::of(status))),
                Ok(None) => {}
                Err(e) => return Err(Fail::io(format!("cannot wait for the judge: {e}"))),
            }
            let outcome = if let Some(stop) = self.stop_now() {
                Some(Outcome::Stopped(stop))
            } else if deadline.is_some_and(|d| Instant::now() >= d) {
                Some(Outcome::TimedOut)
            } else {
                None
            };
            if let Some(outcome) = outcome {
                kill_group(&mut child);
                return Ok(outcome);
            }
            std::thread::sleep(POLL);
        }
    }

    /// Whether to stop now: Ctrl-C, or --max-time passed.
    fn stop_now(&self) -> Option<Stop> {
        if self.interrupted.load(Ordering::Relaxed) {
            Some(Stop::Interrupted)
        } else if self.start.elapsed() >= self.max_time {
            Some(Stop::OutOfTime)
        } else {
            None
        }
    }

    /// Why the shrink could not start: what the judge did on the input.
    fn input_failure(&self, e: ShrinkError) -> Fail {
        let log = self.log_tail();
        let mut lines = vec![match (&self.input_end, e) {
            (Some(Outcome::Ended(end)), _) if end.failed() => format!(
                "the judge ended with {end} on the input, not the {} of --fails-with: nothing to shrink",
                self.fails_with.map(|e| e.to_string()).unwrap_or_default()
            ),
            (Some(Outcome::Ended(_)), _) => {
                "the judge passed on the input (exit status 0): nothing to shrink".to_owned()
            }
            (Some(Outcome::TimedOut), _) => format!(
                "the judge took longer than --judge-timeout {} on the input: nothing to shrink",
                self.judge_timeout.map(flag_duration).unwrap_or_default()
            ),
            (Some(Outcome::Stopped(Stop::OutOfTime)), _) => format!(
                "the judge ran past --max-time {} on the input",
                flag_duration(self.max_time)
            ),
            (Some(Outcome::Stopped(Stop::Interrupted)), _) => {
                return Fail {
                    code: EXIT_INTERRUPTED,
                    lines: vec!["interrupted before the judge ended on the input".to_owned()],
                };
            }
            (None, e) => e.to_string(),
        }];
        if !log.is_empty() {
            lines.push(format!(
                "the judge's output on the input, last lines:\n{log}"
            ));
        }
        Fail {
            code: EXIT_INVALID,
            lines,
        }
    }

    /// The last lines the judge printed (its run on the input, when it failed there).
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(10)..]
            .iter()
            .map(|l| format!("  {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Kills the judge's process group, then reaps it.
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let _ = Command::new("sh")
            .arg("-c")
            .arg(format!("kill -KILL -- -{} 2>/dev/null", child.id()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// `s` as one word for `sh`: in single quotes, each `'` written `'\''`.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The objects as a `v1` `List`, JSON or YAML.
fn list_text(objects: &[Value], format: Format) -> Result<String, Fail> {
    let list = gangpack_k8s::output::list(objects.to_vec());
    gangpack_cli::print_list(&list, format).map_err(|f| Fail::io(f.lines().join("; ")))
}

/// The shrunk scenario, to `path` or stdout.
fn write_output(path: Option<&Path>, objects: &[Value], format: Format) -> Result<(), Fail> {
    let text = list_text(objects, format)?;
    if let Some(path) = path {
        return std::fs::write(path, text)
            .map_err(|e| Fail::io(format!("cannot write {}: {e}", path.display())));
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Fail::io(format!("cannot write output: {e}")))
        }
        _ => Ok(()),
    }
}

/// The objects of every input, in order, and the format candidates are written in (the
/// first file's).
fn read_inputs(paths: &[String], max_bytes: usize) -> Result<(Vec<Value>, Format), Fail> {
    let mut files = Vec::new();
    for p in paths {
        if p == "-" {
            files.push(p.clone());
            continue;
        }
        let meta = std::fs::metadata(p)
            .map_err(|e| Fail::io(format!("{p}: {}", gangpack_cli::io_reason(&e))))?;
        if meta.is_dir() {
            let found = gangpack_k8s::manifest_files(Path::new(p))
                .map_err(|e| Fail::io(format!("{p}: {}", gangpack_cli::io_reason(&e))))?;
            files.extend(found.into_iter().map(|f| f.to_string_lossy().into_owned()));
        } else {
            files.push(p.clone());
        }
    }
    let mut objects = Vec::new();
    let mut format = None;
    let mut problems = Vec::new();
    for file in &files {
        let (name, text) = read_text(file, max_bytes)?;
        format.get_or_insert(if shrink::is_json(&text) {
            Format::Json
        } else {
            Format::Yaml
        });
        match shrink::read_objects(&text, &name) {
            Ok(o) => objects.extend(o),
            Err(errors) => problems.extend(errors.to_string().lines().map(str::to_owned)),
        }
    }
    if !problems.is_empty() {
        return Err(Fail {
            code: EXIT_INVALID,
            lines: problems,
        });
    }
    if objects.is_empty() {
        return Err(Fail::invalid(format!(
            "no objects in {}: nothing to shrink",
            paths.join(", ")
        )));
    }
    Ok((objects, format.unwrap_or(Format::Yaml)))
}

/// One input's name in messages and its text, refused over `max_bytes`.
fn read_text(file: &str, max_bytes: usize) -> Result<(String, String), Fail> {
    use std::io::Read as _;
    let name = if file == "-" { "<stdin>" } else { file };
    let mut bytes = Vec::new();
    let limit = u64::try_from(max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let read = if file == "-" {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(file).and_then(|f| f.take(limit).read_to_end(&mut bytes))
    };
    read.map_err(|e| Fail::io(format!("{name}: {e}")))?;
    if bytes.len() > max_bytes {
        return Err(Fail::invalid(format!(
            "{name}: more than --max-input-bytes {max_bytes} bytes"
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| Fail::invalid(format!("{name}: not UTF-8 text: {e}")))?;
    Ok((name.to_owned(), text))
}

/// A directory of our own for the candidate and the judge's output, removed at the end.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> Result<TempDir, Fail> {
        let base = std::env::temp_dir();
        for n in 0..100u32 {
            let path = base.join(format!("gangpack-shrink-{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(Fail::io(format!("cannot create {}: {e}", path.display())));
                }
            }
        }
        Err(Fail::io(format!(
            "cannot create a temporary directory in {}",
            base.display()
        )))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The progress line on a terminal (stderr), redrawn in place at most every
/// [`REDRAW`]; nothing when stderr is not a terminal.
struct ProgressLine {
    on: bool,
    drawn: bool,
    last: Option<Instant>,
    start: Instant,
}

impl ProgressLine {
    fn new(on: bool, start: Instant) -> ProgressLine {
        ProgressLine {
            on,
            drawn: false,
            last: None,
            start,
        }
    }

    fn draw(&mut self, p: &Progress) {
        if !self.on || self.last.is_some_and(|t| t.elapsed() < REDRAW) {
            return;
        }
        self.last = Some(Instant::now());
        let round = if p.round == 0 {
            String::new()
        } else {
            format!("round {}, ", p.round)
        };
        let _ = write!(
            std::io::stderr().lock(),
            "\r\x1b[2Kshrink: {round}{}: {} judge runs, {} left ({} list items, {} fields), {}",
            p.pass,
            p.runs,
            objects(p.best.objects),
            p.best.items,
            p.best.fields,
            seconds(self.start.elapsed()),
        );
        self.drawn = true;
    }

    fn clear(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
            self.drawn = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_mins(10)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_hours(2)));
        for bad in ["", "m", "10x", "1.5m", "0s", "-1s", "s10"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
        assert_eq!(flag_duration(Duration::from_mins(10)), "10m");
        assert_eq!(flag_duration(Duration::from_secs(90)), "90s");
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/tmp/a b"), "'/tmp/a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
