//! `--timings` and the progress line: the binary's hook for
//! [`gangpack_k8s::trace`]. With `--timings`, each phase of `plan` and `explain`
//! (parse, build, plan, explain, write) prints its wall time and the process's peak
//! RSS so far on stderr as it ends, the build split into conversion to the
//! Kubernetes API types and gangpack's own model and index. On a terminal, a load that
//! takes longer than half a second shows what it is doing on one status line of
//! stderr (reading, parsing, converting N of M objects, planning), erased when done.

use std::io::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gangpack_k8s::trace::{self, Event};

/// What the hook keeps between events.
struct State {
    timings: bool,
    progress: bool,
    start: Instant,
    /// When the last phase ended (or the hook was installed).
    mark: Instant,
    /// Conversion time since the last phase ended, and the open conversion's start.
    convert: Duration,
    converting: Option<Instant>,
    converted: usize,
    to_convert: usize,
    /// When the status line was last drawn, and whether one is showing.
    drawn: Option<Instant>,
    showing: bool,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Installs the hook: `timings` prints the phases, `progress` draws the status line
/// (stderr is a terminal). Nothing is installed when neither is asked for.
pub(crate) fn install(timings: bool, progress: bool) {
    if !timings && !progress {
        return;
    }
    let now = Instant::now();
    *STATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(State {
        timings,
        progress,
        start: now,
        mark: now,
        convert: Duration::ZERO,
        converting: None,
        converted: 0,
        to_convert: 0,
        drawn: None,
        showing: false,
    });
    let _ = trace::set_hook(hook);
}

/// The status line is drawn at most this often, and only once the load has taken
/// this long.
const REDRAW: Duration = Duration::from_millis(100);
const QUIET: Duration = Duration::from_millis(500);

fn hook(event: Event<'_>) {
    let mut guard = STATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(s) = guard.as_mut() else {
        return;
    };
    let now = Instant::now();
    match event {
        Event::ConvertStart => s.converting = Some(now),
        Event::ConvertEnd => {
            if let Some(t) = s.converting.take() {
                s.convert += now - t;
            }
            s.converted += 1;
            if s.converted % 256 == 0 {
                let (done, total) = (s.converted, s.to_convert);
                s.status(now, &format!("converting objects: {done} of {total}"));
            }
        }
        Event::Read { name, bytes } => {
            s.status(now, &format!("parsing {name} ({})", size(bytes)));
        }
        Event::Parsed { name, objects } => {
            s.status(now, &format!("parsed {name}: {objects} objects"));
        }
        Event::Building { objects } => {
            s.to_convert = objects;
            s.status(now, &format!("converting objects: 0 of {objects}"));
        }
        Event::PhaseEnd(phase) => {
            let next = match phase {
                "parse" => Some("converting objects"),
                "build" => Some("planning"),
                _ => None,
            };
            s.clear();
            if s.timings {
                let wall = now - s.mark;
                let detail = if phase == "build" {
                    format!(
                        " (conversion to the API types {}, gangpack's model and index {})",
                        secs(s.convert),
                        secs(wall.saturating_sub(s.convert))
                    )
                } else {
                    String::new()
                };
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "timings: {phase:<7} {:>9}{detail}; peak RSS {}; {} since start",
                    secs(wall),
                    peak_rss(),
                    secs(now - s.start)
                );
            }
            s.mark = now;
            s.convert = Duration::ZERO;
            if let Some(n) = next {
                s.status(now, n);
            }
        }
    }
}

impl State {
    /// Draws `text` as the status line (a terminal only, after [`QUIET`], at most
    /// every [`REDRAW`]).
    fn status(&mut self, now: Instant, text: &str) {
        if !self.progress || now - self.start < QUIET {
            return;
        }
        if self.drawn.is_some_and(|t| now - t < REDRAW) {
            return;
        }
        self.drawn = Some(now);
        self.showing = true;
        let mut err = std::io::stderr().lock();
        // Carriage return, the text, and erase to the end of the line.
        let _ = write!(err, "\r{text}…\x1b[K");
        let _ = err.flush();
    }

    /// Erases the status line.
    fn clear(&mut self) {
        if self.showing {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
            self.showing = false;
            self.drawn = None;
        }
    }
}

/// Erases a status line still showing (a command that failed before its last phase).
pub(crate) fn finish() {
    if let Some(s) = STATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .as_mut()
    {
        s.clear();
    }
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

fn size(bytes: usize) -> String {
    const MIB: usize = 1 << 20;
    if bytes >= MIB {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// The process's peak resident set (`VmHWM`), where `/proc` has it.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            let kib: u64 = line["VmHWM:".len()..]
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()?;
            Some(format!("{} MiB", kib / 1024))
        })
        .unwrap_or_else(|| "n/a".to_owned())
}
