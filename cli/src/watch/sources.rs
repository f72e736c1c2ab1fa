//! Reading the sources of a watch: regular files in turn, live ones (FIFOs, pipes,
//! stdin) on threads of their own, and cycles on the way.

use std::io::Read;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::Duration;

use gangpack_k8s::LoadOptions;
use gangpack_k8s::watch::{Event, EventError, Frame, FrameError, Framer};

use super::engine::{CHUNK, Cycle, Flow, Trigger, Watch};
use super::{Message, WatchOptions, WatchSink, WatchSource};
use crate::render::Style;
use crate::{EXIT_FAILURE, EXIT_INVALID, Input, Options};

/// `gangpack watch`: reads the starting dump, then every source (see the module docs
/// of `watch` for the order, the cycles and what each problem does), writing each
/// cycle and each message to `sink` as it comes. Returns the exit status.
///
/// Regular files and texts are read whole, in turn, in the order given, so a run on
/// them is reproducible. A live source is read on a thread of its own until it ends;
/// if the watch stops first (an `ERROR` event, a closed output), the threads still
/// blocked on a read are left behind (the process is about to exit).
pub(crate) fn watch(
    initial: Option<&Input>,
    sources: &[WatchSource],
    global: &Options,
    options: &WatchOptions,
    style: Style,
    sink: &mut dyn WatchSink,
) -> u8 {
    let mut out = Out {
        sink,
        style,
        json: options.json,
        stopped: false,
        failed: false,
    };
    let stdin_twice = sources.iter().filter(|s| is_stdin(s)).count()
        + usize::from(matches!(initial, Some(Input::Paths(p)) if p.iter().any(|p| p == "-")))
        > 1;
    if stdin_twice {
        out.say(&Message::Error(
            "stdin (`-`) can be read once: as one -f source or in --initial".into(),
        ));
        return EXIT_INVALID;
    }
    let mut plan = Vec::with_capacity(sources.len());
    for s in sources {
        match classify(s) {
            Ok(k) => plan.push((s, k)),
            Err((code, text)) => {
                out.say(&Message::Error(text));
                return code;
            }
        }
    }
    let mut w = Watch::new(global, options.audit);
    if let Some(input) = initial
        && let Err(f) = w.initial(input)
    {
        out.flush(&mut w);
        for line in f.lines() {
            out.say(&Message::Error(line));
        }
        return f.code();
    }
    out.flush(&mut w);

    // Regular files and texts, in turn.
    let mut flow = Flow::Continue;
    for (source, kind) in &plan {
        if flow == Flow::Stop || out.stopped {
            break;
        }
        let name = source.name();
        let mut cycle = |w: &mut Watch, t: Trigger| out.cycle(w, t);
        flow = match (kind, source) {
            (Kind::Text, WatchSource::Text { text, .. }) => {
                w.read_from(name, &mut text.as_bytes(), options.every, &mut cycle)
            }
            (Kind::File, WatchSource::Path(p)) => match std::fs::File::open(p) {
                Ok(mut f) => w.read_from(name, &mut f, options.every, &mut cycle),
                Err(e) => {
                    w.unreadable(name, &e);
                    Flow::Continue
                }
            },
            _ => continue,
        };
        out.flush(&mut w);
    }

    // Live sources, together.
    let live: Vec<&WatchSource> = plan
        .iter()
        .filter(|(_, k)| *k == Kind::Live)
        .map(|(s, _)| *s)
        .collect();
    if flow == Flow::Continue && !out.stopped && !live.is_empty() {
        flow = follow(&mut w, &live, options, &mut out);
    }

    if !out.stopped && w.is_dirty() {
        let trigger = if flow == Flow::Stop {
            Trigger::Stopped
        } else {
            Trigger::End
        };
        out.cycle(&mut w, trigger);
    }
    out.flush(&mut w);
    if out.failed {
        EXIT_FAILURE
    } else {
        w.exit_code()
    }
}

/// How a source is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A text: read whole, in turn.
    Text,
    /// A regular file: read whole, in turn.
    File,
    /// A FIFO, a pipe, a character device or stdin: read as it comes.
    Live,
}

fn is_stdin(s: &WatchSource) -> bool {
    matches!(s, WatchSource::Path(p) if p == "-")
}

/// How a source is read, or why it cannot be (the exit status and the message): a
/// path that does not exist cannot be read (exit 1); a directory is not a stream
/// (exit 2: dumps go to `--initial`).
fn classify(s: &WatchSource) -> Result<Kind, (u8, String)> {
    let p = match s {
        WatchSource::Text { .. } => return Ok(Kind::Text),
        WatchSource::Path(p) if p == "-" => return Ok(Kind::Live),
        WatchSource::Path(p) => p,
    };
    let meta = std::fs::metadata(p).map_err(|e| {
        (
            EXIT_FAILURE,
            format!("cannot read {p}: {}", crate::io_reason(&e)),
        )
    })?;
    if meta.is_dir() {
        return Err((
            EXIT_INVALID,
            format!("{p}: a directory is not a watch stream (a dump of objects goes to --initial)"),
        ));
    }
    Ok(if meta.is_file() {
        Kind::File
    } else {
        Kind::Live
    })
}

/// What a live source's thread hands over.
enum Item {
    /// One event, read (its frame without its bytes).
    Event(usize, Frame, Result<Event, EventError>),
    /// The stream cannot be followed any further.
    Failed(usize, FrameError),
    /// The source could not be read.
    Unreadable(usize, std::io::Error),
    /// The source ended.
    End,
}

/// Follows the live sources until they all end (or an `ERROR` event, or a closed
/// output), with cycles on quiet and every N events.
fn follow(w: &mut Watch, live: &[&WatchSource], options: &WatchOptions, out: &mut Out<'_>) -> Flow {
    let (tx, rx) = sync_channel::<Item>(256);
    let names: Vec<String> = live.iter().map(|s| s.name().to_owned()).collect();
    let mut open = live.len();
    for (i, source) in live.iter().enumerate() {
        w.add_stream(&names[i]);
        let path = match source {
            WatchSource::Path(p) if p != "-" => Some(p.clone()),
            _ => None,
        };
        let (tx, name, load) = (tx.clone(), names[i].clone(), w.load_options());
        let max = load.limits.max_input_bytes;
        let spawned = std::thread::Builder::new()
            .name(format!("watch {name}"))
            .spawn(move || read_live(i, path, &name, &load, max, &tx));
        if let Err(e) = spawned {
            w.unreadable(&names[i], &e);
            open -= 1;
        }
    }
    drop(tx);
    let quiet = (options.quiet_ms > 0).then(|| Duration::from_millis(options.quiet_ms));
    let every = options.every.filter(|n| *n > 0);
    while open > 0 && !out.stopped {
        let Some(item) = next(&rx, w, quiet, out) else {
            break;
        };
        match item {
            Item::Event(i, frame, event) => {
                if w.apply(&names[i], &frame, event) == Flow::Stop {
                    return Flow::Stop;
                }
                if let Some(n) = every
                    && w.events_since_cycle() >= n
                {
                    out.cycle(w, Trigger::Every(n));
                }
            }
            Item::Failed(i, e) => w.stream_failed(&names[i], &e),
            Item::Unreadable(i, e) => w.unreadable(&names[i], &e),
            Item::End => open -= 1,
        }
        out.flush(w);
    }
    Flow::Continue
}

/// The next item, running a cycle whenever the sources stay quiet that long after a
/// change; `None` once every thread is gone.
fn next(
    rx: &Receiver<Item>,
    w: &mut Watch,
    quiet: Option<Duration>,
    out: &mut Out<'_>,
) -> Option<Item> {
    loop {
        match quiet {
            Some(q) if w.is_dirty() => match rx.recv_timeout(q) {
                Ok(item) => return Some(item),
                Err(RecvTimeoutError::Timeout) => {
                    out.cycle(w, Trigger::Quiet);
                    if out.stopped {
                        return None;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return None,
            },
            _ => return rx.recv().ok(),
        }
    }
}

/// A live source's thread: reads and cuts the stream, reads each event, hands them
/// over in order, then [`Item::End`].
fn read_live(
    i: usize,
    path: Option<String>,
    name: &str,
    load: &LoadOptions,
    max: usize,
    tx: &SyncSender<Item>,
) {
    let mut reader: Box<dyn Read> = match path {
        None => Box::new(std::io::stdin()),
        Some(p) => match std::fs::File::open(&p) {
            Ok(f) => Box::new(f),
            Err(e) => {
                let _ = tx.send(Item::Unreadable(i, e));
                let _ = tx.send(Item::End);
                return;
            }
        },
    };
    let mut framer = Framer::new(max);
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => {
                if let Some(e) = framer.finish() {
                    let _ = tx.send(Item::Failed(i, e));
                }
                break;
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Item::Unreadable(i, e));
                break;
            }
        };
        for frame in framer.push(&buf[..n]) {
            let item = match frame {
                Ok(mut frame) => {
                    let event = Watch::parse(load, name, &frame);
                    frame.bytes = Vec::new();
                    Item::Event(i, frame, event)
                }
                Err(e) => Item::Failed(i, e),
            };
            // The watch stopped reading: so does this thread.
            if tx.send(item).is_err() {
                return;
            }
        }
        if framer.is_stopped() {
            break;
        }
    }
    let _ = tx.send(Item::End);
}

/// The sink, with how cycles are printed and whether the output is still open.
struct Out<'a> {
    sink: &'a mut dyn WatchSink,
    style: Style,
    json: bool,
    /// The output was closed (a closed pipe): the watch stops, quietly.
    stopped: bool,
    /// The output could not be written (exit 1).
    failed: bool,
}

impl Out<'_> {
    fn say(&mut self, m: &Message) {
        self.sink.message(m);
    }

    /// Writes what the watch has to say.
    fn flush(&mut self, w: &mut Watch) {
        for m in w.take_messages() {
            self.sink.message(&m);
        }
    }

    /// Runs a cycle and writes it, after what was said before it (none once the
    /// output is closed).
    fn cycle(&mut self, w: &mut Watch, trigger: Trigger) {
        if self.stopped {
            return;
        }
        let cycle = w.cycle(trigger);
        self.flush(w);
        if let Some(c) = cycle {
            self.write(&c);
        }
    }

    fn write(&mut self, c: &Cycle) {
        if self.stopped {
            return;
        }
        let text = if self.json {
            c.json()
        } else {
            c.text(self.style)
        };
        match self.sink.output(&text) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => self.stopped = true,
            Err(e) => {
                self.sink
                    .message(&Message::Error(format!("cannot write output: {e}")));
                self.stopped = true;
                self.failed = true;
            }
        }
    }
}
