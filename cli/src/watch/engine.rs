//! The watch itself: events applied to the objects, and cycles run on them.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use gangpack_k8s::check::CheckOptions;
use gangpack_k8s::output::{self, Outcome};
use gangpack_k8s::watch::{
    Applied, Event, EventError, Frame, FrameError, Framer, Objects, Rejected, check_object,
    parse_event,
};
use gangpack_k8s::{BuildOptions, InputError, InputErrors, LoadOptions, Snapshot};

use super::EXIT_WATCH_ENDED;
use super::changes::{self, Change, View};
use super::messages::{Message, Places, Said, event_place, folded};
use crate::input::{self, input_failure};
use crate::render::{Paint, Style, plural};
use crate::{EXIT_FAILURE, EXIT_INVALID, EXIT_OK, EXIT_VIOLATIONS, Failure, Input, Options};

/// What to do after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Read on.
    Continue,
    /// An `ERROR` event ended the watch: stop reading, run a last cycle.
    Stop,
}

/// Why a cycle runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// The live sources have been quiet for `--quiet-ms`.
    Quiet,
    /// `--every N` events were applied since the previous cycle.
    Every(usize),
    /// Every source ended.
    End,
    /// An `ERROR` event stopped the watch.
    Stopped,
    /// The caller asked for it (a session driven through a library, not a stream).
    Requested,
}

impl Trigger {
    /// `quiet`, `every`, `end`, `stopped` or `requested`: the trigger in `-o json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Quiet => "quiet",
            Trigger::Every(_) => "every",
            Trigger::End => "end",
            Trigger::Stopped => "stopped",
            Trigger::Requested => "requested",
        }
    }

    fn describe(self) -> String {
        match self {
            Trigger::Quiet => "quiet".into(),
            Trigger::Every(n) => format!("every {}", plural(n, "event", "events")),
            Trigger::End => "end of input".into(),
            Trigger::Stopped => "watch ended".into(),
            Trigger::Requested => "requested".into(),
        }
    }
}

/// One cycle of a watch: what changed, and the plan it ran.
#[derive(Clone, Debug)]
pub struct Cycle {
    /// 1-based.
    pub number: usize,
    /// Why it ran.
    pub trigger: Trigger,
    /// Events applied since the previous cycle.
    pub events: usize,
    /// Objects followed.
    pub objects: usize,
    /// Pods running (bound in the objects) before the cycle.
    pub pods_running: usize,
    /// Units the cycle left pending (or refused).
    pub units_pending: usize,
    /// The changes since the previous cycle, in the order the module docs give.
    pub changes: Vec<Change>,
    /// The plan's table, exactly as `gangpack plan` prints it for the same objects.
    pub plan_table: String,
    /// The plan's changed objects, exactly as `gangpack plan -o json` prints them.
    pub plan_list: serde_json::Value,
    /// The exit status `gangpack plan` would have (0 or 3).
    pub plan_code: u8,
    /// The plan's rows, one per unit, as `gangpack plan` decided them (every unit, not
    /// only those that changed).
    pub plan_rows: Vec<output::PlanRow>,
    /// The plan's `NoExecute` evictions: carried out before the cycle, and to come.
    pub evictions: output::Evictions,
}

impl Cycle {
    /// The human form: the header, then one line per change.
    pub fn text(&self, style: Style) -> String {
        let mut out = String::new();
        let changes = match self.changes.len() {
            0 => "no change".to_owned(),
            n => plural(n, "change", "changes"),
        };
        let _ = writeln!(
            out,
            "{} after {} ({}): {changes}; {} running, {} pending",
            style.paint(Paint::Bold, &format!("cycle {}", self.number)),
            plural(self.events, "event", "events"),
            self.trigger.describe(),
            plural(self.pods_running, "pod", "pods"),
            plural(self.units_pending, "unit", "units"),
        );
        for c in &self.changes {
            let word = c.word();
            let pad = " ".repeat(WORD_WIDTH.saturating_sub(word.len()));
            let _ = writeln!(out, "  {}{pad} {}", style.paint(c.paint(), word), c.line());
        }
        out
    }

    /// The `-o json` form: one object, on one line (with its newline): `cycle`,
    /// `trigger` (`quiet`, `every`, `end`, `stopped`, `requested`), `events`, `objects`,
    /// `podsRunning`, `unitsPending`, then `changes`, each `{"change": WORD, ...}` with
    /// the fields of [`Change::fields`].
    pub fn json(&self) -> String {
        let changes: Vec<String> = self
            .changes
            .iter()
            .map(|c| changes::ordered(&c.fields()))
            .collect();
        let head = changes::ordered(&[
            ("cycle", self.number.into()),
            ("trigger", self.trigger.as_str().into()),
            ("events", self.events.into()),
            ("objects", self.objects.into()),
            ("podsRunning", self.pods_running.into()),
            ("unitsPending", self.units_pending.into()),
        ]);
        format!(
            "{},\"changes\":[{}]}}\n",
            &head[..head.len() - 1],
            changes.join(",")
        )
    }
}

/// The widest change word (`preempted`).
const WORD_WIDTH: usize = 9;

/// A watch: the objects its events left, and what its last cycle reported.
///
/// The driver ([`watch`](crate::watch())) hands it each event as read
/// ([`Watch::apply`]) and asks for cycles; everything it has to say waits in
/// [`Watch::take_messages`].
#[derive(Debug)]
pub struct Watch {
    global: Options,
    audit: bool,
    objects: Objects,
    places: Places,
    view: View,
    /// Events applied since the previous cycle, and in all.
    since: usize,
    total: usize,
    /// The objects changed since the previous cycle (or no cycle ran yet).
    dirty: bool,
    cycles: usize,
    /// Warnings said at events (by [`Said::key`]): never repeated.
    warned: BTreeSet<String>,
    /// Warnings the previous cycle had: repeated only once they went away.
    cycle_warned: BTreeSet<String>,
    /// Warnings still to be folded into lines.
    warnings: Vec<Said>,
    messages: Vec<Message>,
    /// What went wrong so far (the exit status).
    problems: BTreeSet<Problem>,
    /// `--audit`: a finding holds at the last cycle (exit 4).
    findings: bool,
}

/// What went wrong during a watch, by exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Problem {
    /// An `ERROR` event ended the watch (exit 3).
    Ended,
    /// A source could not be read (exit 1).
    Unreadable,
    /// An error was said (exit 2).
    Invalid,
}

impl Watch {
    /// A watch with no object yet, with the global flags and `--audit`.
    pub fn new(global: &Options, audit: bool) -> Watch {
        Watch {
            global: global.clone(),
            audit,
            objects: Objects::default(),
            places: Places::default(),
            view: View::default(),
            since: 0,
            total: 0,
            dirty: true,
            cycles: 0,
            warned: BTreeSet::new(),
            cycle_warned: BTreeSet::new(),
            warnings: Vec::new(),
            messages: Vec::new(),
            problems: BTreeSet::new(),
            findings: false,
        }
    }

    /// How event objects are read (`--strict`, the limits).
    pub fn load_options(&self) -> LoadOptions {
        input::load_options(&self.global)
    }

    /// The objects as the events left them.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// The logical clock the cycles run at (`--now`); `None`: the latest timestamp in
    /// the objects, as `plan` takes it.
    pub fn now(&self) -> Option<gangpack::Time> {
        self.global.now
    }

    /// Sets the clock of the next cycles (a library driving the watch moves it: a
    /// `NoExecute` eviction falls due once the clock passes it).
    pub fn set_now(&mut self, now: Option<gangpack::Time>) {
        self.global.now = now;
    }

    /// Cycles run so far.
    pub fn cycles(&self) -> usize {
        self.cycles
    }

    /// Events applied since the previous cycle.
    pub fn events_since_cycle(&self) -> usize {
        self.since
    }

    /// Events applied in all (those refused or skipped not counted).
    pub fn events_applied(&self) -> usize {
        self.total
    }

    /// Whether the objects changed since the previous cycle (or no cycle ran yet).
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Whether an `ERROR` event ended the watch.
    pub fn is_ended(&self) -> bool {
        self.problems.contains(&Problem::Ended)
    }

    /// Reads a starting dump as `plan` reads its input: its objects are the state
    /// before the first event. Fails as `plan` fails (every problem listed; exit 2),
    /// except for what depends on objects the streams may bring later.
    pub fn initial(&mut self, input: &Input) -> Result<(), Failure> {
        let loaded = input::load_with(input, self.load_options())?;
        for w in &loaded.warnings {
            let said = Said::warning(&self.places, w);
            self.warn_once(said);
        }
        let mut errors = InputErrors::default();
        for o in loaded.objects {
            let (checked, warnings) = check_object(&o);
            for w in &warnings {
                let said = Said::warning(&self.places, w);
                self.warn_once(said);
            }
            if let Err(e) = checked {
                if self.global.skip_invalid {
                    for e in &e.errors {
                        let mut said = Said::error(&self.places, e);
                        said.text = format!("skipped: {}", said.text);
                        self.warn_once(said);
                    }
                } else {
                    errors.extend(e);
                }
                continue;
            }
            let (source, object) = (o.source.clone(), o.describe());
            if let Err(first) = self.objects.insert_initial(o) {
                errors.push(InputError {
                    source: Some(source),
                    object: Some(object),
                    field: "metadata.name".into(),
                    message: format!("duplicate object: also defined at {first}"),
                });
            }
        }
        self.flush_warnings();
        if errors.is_empty() {
            self.dirty = true;
            Ok(())
        } else {
            Err(input_failure(&errors))
        }
    }

    /// Registers a stream's name, so that messages name its objects by event
    /// (`pods.json event 7`).
    pub fn add_stream(&mut self, name: &str) {
        self.places.add_stream(name);
    }

    /// Reads one event of `stream` (as [`parse_event`] reads it, with this watch's
    /// options). Needs no `&mut`: a driver may read on other threads.
    pub fn parse(options: &LoadOptions, stream: &str, frame: &Frame) -> Result<Event, EventError> {
        parse_event(stream, frame, options)
    }

    /// Applies one event of `stream`, read from `frame` (see the module docs for
    /// what each problem does).
    pub fn apply(&mut self, stream: &str, frame: &Frame, event: Result<Event, EventError>) -> Flow {
        let place = event_place(stream, frame.index);
        let at = format!("{place} (byte {})", frame.at.offset);
        match event {
            Ok(Event::Object {
                kind,
                object,
                warnings,
            }) => {
                for w in &warnings {
                    let said = Said::warning(&self.places, w);
                    self.warn_once(said);
                }
                let described = object.describe();
                let said = |text: String| Said {
                    place: place.clone(),
                    object: Some(described.clone()),
                    text,
                };
                match self.objects.apply(kind, object) {
                    Ok(
                        Applied::Added | Applied::Relisted | Applied::Modified | Applied::Deleted,
                    ) => {
                        self.since += 1;
                        self.total += 1;
                        self.dirty = true;
                    }
                    Err(r @ (Rejected::NotPresent | Rejected::NoObject(_))) => {
                        self.warn_once(said(r.to_string()));
                    }
                    Err(Rejected::AlreadyAdded { current }) => {
                        let text = format!(
                            "ADDED, but it is already there (from {}) and was not DELETED: \
                             not applied, the object is kept as it was; two streams of one \
                             kind, or a stream that lost events (list again)",
                            self.places.of(Some(&current))
                        );
                        self.error(said(text).to_string());
                    }
                    Err(r @ Rejected::NotAdded) => self.error(said(r.to_string()).to_string()),
                }
            }
            Ok(Event::Skipped { warning, .. }) => {
                let said = Said::warning(&self.places, &warning);
                self.warn_once(said);
            }
            Ok(Event::Bookmark) => {}
            Ok(Event::Error(status)) => {
                let text = if status.is_expired() {
                    format!(
                        "{at}: ERROR: the watch expired ({status}): the events since are lost; \
                         list again (kubectl get --watch without --watch-only lists every \
                         object first) and restart gangpack watch"
                    )
                } else {
                    format!("{at}: ERROR: the watch failed ({status}): it ends here")
                };
                self.flush_warnings();
                self.messages.push(Message::Error(text));
                self.problems.insert(Problem::Ended);
                return Flow::Stop;
            }
            Err(EventError::Syntax { line, message }) => {
                self.error(format!("{at}: line {line}: {message}: not applied"));
            }
            Err(EventError::NotAnEvent(m)) => self.error(format!("{at}: {m}: not applied")),
            Err(e @ EventError::UnknownType(_)) => self.error(format!("{at}: {e}: not applied")),
            Err(EventError::Object { kind, errors }) => {
                let skip = self.global.skip_invalid;
                for e in &errors.errors {
                    let mut said = Said::error(&self.places, e);
                    if said.place.is_empty() {
                        said.place.clone_from(&place);
                    }
                    if skip {
                        said.text = format!("{kind} skipped: {}", said.text);
                        self.warn_once(said);
                    } else {
                        said.text = format!("{kind} not applied: {}", said.text);
                        self.error(said.to_string());
                    }
                }
                if errors.more > 0 && !skip {
                    self.error(format!("{place}: ... and {} more problems", errors.more));
                }
            }
        }
        Flow::Continue
    }

    /// A stream that cannot be followed any further (see [`FrameError`]).
    pub fn stream_failed(&mut self, stream: &str, e: &FrameError) {
        self.error(format!("{stream}: {e}"));
    }

    /// A source that could not be read (exit 1): it ends there.
    pub fn unreadable(&mut self, stream: &str, e: &std::io::Error) {
        self.flush_warnings();
        self.messages.push(Message::Error(format!(
            "cannot read {stream}: {}",
            crate::io_reason(e)
        )));
        self.problems.insert(Problem::Unreadable);
    }

    /// Reads a stream to its end (a regular file, or a text): every event applied in
    /// turn as it is cut, and, with `every`, a cycle handed to `cycle` after every N
    /// events applied; stops at an `ERROR` event ([`Flow::Stop`]).
    pub fn read_from(
        &mut self,
        stream: &str,
        reader: &mut dyn std::io::Read,
        every: Option<usize>,
        cycle: &mut dyn FnMut(&mut Watch, Trigger),
    ) -> Flow {
        let mut framer = Framer::new(self.global.limits.max_input_bytes);
        self.add_stream(stream);
        let options = self.load_options();
        let every = every.filter(|n| *n > 0);
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.unreadable(stream, &e);
                    return Flow::Continue;
                }
            };
            for frame in framer.push(&buf[..n]) {
                match frame {
                    Ok(frame) => {
                        let event = Watch::parse(&options, stream, &frame);
                        if self.apply(stream, &frame, event) == Flow::Stop {
                            return Flow::Stop;
                        }
                        if let Some(n) = every
                            && self.since >= n
                        {
                            cycle(self, Trigger::Every(n));
                        }
                    }
                    Err(e) => self.stream_failed(stream, &e),
                }
            }
            if framer.is_stopped() {
                return Flow::Continue;
            }
        }
        if let Some(e) = framer.finish() {
            self.stream_failed(stream, &e);
        }
        Flow::Continue
    }

    /// Runs a cycle on the objects: the snapshot `plan` builds from them, the same
    /// plan, and what changed since the previous cycle (`None` when the snapshot
    /// cannot be built at all: the errors are said).
    pub fn cycle(&mut self, trigger: Trigger) -> Option<Cycle> {
        let loaded = self.objects.loaded();
        let events = std::mem::take(&mut self.since);
        self.dirty = false;
        self.cycles += 1;
        let number = self.cycles;
        let build = BuildOptions {
            // What depends on an object not there yet is left out of this cycle.
            skip_invalid: true,
            ..input::build_options(&self.global)
        };
        let mut said: Vec<Said> = Vec::new();
        let mut snapshot = match Snapshot::build(loaded.clone(), &build) {
            Ok(mut s) => {
                input::track_input_mix(&self.global, &mut s);
                s
            }
            Err(errors) => {
                for e in &errors.errors {
                    let line = Said::error(&self.places, e).to_string();
                    self.error(format!("cycle {number}: {line}"));
                }
                return None;
            }
        };
        said.extend(
            snapshot
                .warnings
                .iter()
                .map(|w| Said::warning(&self.places, w)),
        );
        for e in &snapshot.skipped {
            let mut e = e.clone();
            if let Some(m) = e.message.strip_prefix("skipped: ") {
                e.message = m.to_owned();
            }
            let mut s = Said::error(&self.places, &e);
            s.text = format!("left out of this cycle: {}", s.text);
            said.push(s);
        }
        let observed = changes::observed(&snapshot.scheduler);
        let pods_running = observed
            .values()
            .flatten()
            .filter(|p| p.node.is_some())
            .count();
        let plan = output::plan(&mut snapshot);
        let findings = if self.audit {
            let check = CheckOptions {
                build: build.clone(),
                admission: false,
            };
            match gangpack_k8s::check::check(loaded, None, &check) {
                Ok(report) => {
                    said.extend(
                        report
                            .warnings
                            .iter()
                            .map(|w| Said::warning(&self.places, w)),
                    );
                    Some(report.findings)
                }
                Err(errors) => {
                    for e in &errors.errors {
                        let line = Said::error(&self.places, e).to_string();
                        self.error(format!("cycle {number}: audit: {line}"));
                    }
                    None
                }
            }
        } else {
            None
        };
        self.findings = findings.as_ref().is_some_and(|f| !f.is_empty());
        let (changes, view) = changes::diff(
            &self.view,
            &plan,
            &snapshot.scheduler,
            &observed,
            findings.as_deref(),
        );
        self.view = view;
        self.cycle_warnings(number, said);
        let units_pending = plan
            .rows
            .iter()
            .filter(|r| !matches!(r.outcome, Outcome::Placed | Outcome::Preempted))
            .count();
        let plan_table = crate::plan::render(&plan, &snapshot, Style::PLAIN);
        let plan_code = crate::plan::exit_code(&plan.rows);
        Some(Cycle {
            number,
            trigger,
            events,
            objects: self.objects.len(),
            pods_running,
            units_pending,
            changes,
            plan_table,
            plan_list: output::list(plan.changed),
            plan_code,
            plan_rows: plan.rows,
            evictions: plan.evictions,
        })
    }

    /// Everything said since the last call, in order.
    pub fn take_messages(&mut self) -> Vec<Message> {
        self.flush_warnings();
        std::mem::take(&mut self.messages)
    }

    /// The exit status: 3 after an `ERROR` event, else 1 when a source could not be
    /// read, else 2 when an error was said, else 4 when `--audit` finds a rule broken at
    /// the last cycle, else 0.
    pub fn exit_code(&self) -> u8 {
        match self.problems.first() {
            Some(Problem::Ended) => EXIT_WATCH_ENDED,
            Some(Problem::Unreadable) => EXIT_FAILURE,
            Some(Problem::Invalid) => EXIT_INVALID,
            None if self.findings => EXIT_VIOLATIONS,
            None => EXIT_OK,
        }
    }

    /// The warnings of a cycle that the previous cycle did not have, folded, each
    /// line prefixed with the cycle.
    fn cycle_warnings(&mut self, number: usize, said: Vec<Said>) {
        let mut now = BTreeSet::new();
        let mut new = Vec::new();
        for s in said {
            let key = s.key();
            if now.insert(key.clone()) && !self.cycle_warned.contains(&key) {
                new.push(s);
            }
        }
        self.cycle_warned = now;
        self.flush_warnings();
        for line in folded(new) {
            self.messages
                .push(Message::Warning(format!("cycle {number}: {line}")));
        }
    }

    /// A warning, unless the same was said before.
    fn warn_once(&mut self, said: Said) {
        if self.warned.insert(said.key()) {
            self.warnings.push(said);
        }
    }

    /// An error (exit 2), after the warnings said before it.
    fn error(&mut self, text: String) {
        self.flush_warnings();
        self.messages.push(Message::Error(text));
        self.problems.insert(Problem::Invalid);
    }

    fn flush_warnings(&mut self) {
        let said = std::mem::take(&mut self.warnings);
        self.messages
            .extend(folded(said).into_iter().map(Message::Warning));
    }
}

/// How many bytes a source is read by at a time.
pub(crate) const CHUNK: usize = 64 * 1024;
