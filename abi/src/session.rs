//! Sessions: a live scheduler a host drives with its informers' events, over the C ABI
//! (`session_new`, `session_call`, `session_free`).
//!
//! A session is `gangpack watch` without the streams: a [`Watch`] that starts from a
//! dump (the `files` of `session_new`), takes Kubernetes watch events (`ADDED`,
//! `MODIFIED`, `DELETED`, each with the whole object) and runs a cycle when asked, with
//! exactly the decisions and the `-o json` line `gangpack watch` prints for the same
//! objects (and `gangpack plan` on a dump of them). gangpack only observes: a cycle
//! writes nothing into the session; what the host's controller does with the decisions
//! comes back as events.
//!
//! Sessions live in a table inside the module, by handle (WebAssembly runs one thread;
//! the table is thread-local so native tests stay independent). Handles are never
//! reused: a freed handle answers `NotFound` saying it was freed.
//!
//! # Methods (`session_call {"handle": n, "method": M, ...}`)
//!
//! | method | arguments | result |
//! | --- | --- | --- |
//! | `apply` | `events: [{type, object}]` | `{applied, skipped, warnings}` |
//! | `cycle` | `now?` (RFC 3339 or seconds) | [`CycleResult`] |
//! | `advance` | `seconds` or `to` (RFC 3339) | `{now}` |
//! | `explain` | `unit?` (`{podGroup}` or `{pod}`) | `{text, warnings}` |
//! | `manifests` | `planned?` (bool) | a `kind: List` of the objects |
//! | `status` | none | [`Status`] |
//!
//! `apply` is all or none: every event is read and checked against the objects (and
//! the events before it in the same call) first, and the first bad one is an error
//! naming the event (`events[i]`), the object and the field; then nothing is applied.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use gangpack_cli::{Cycle, Input, InputFile, Trigger, Watch, WatchMessage};
use gangpack_k8s::InputError;
use gangpack_k8s::watch::{Applied, Event, EventError, Frame, Position, Rejected};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::error::{self, Error, NOT_FOUND, Problem};
use crate::options::{Now, RequestOptions};
use crate::value::{from_value, from_value_or_default, to_json};

/// The methods of `session_call`.
pub const METHODS: [&str; 6] = [
    "apply",
    "cycle",
    "advance",
    "explain",
    "manifests",
    "status",
];

/// The stream name a session's events carry in messages (`events event 7`: the
/// session's 7th event).
const STREAM: &str = "events";

/// One session.
struct Session {
    watch: Watch,
    options: RequestOptions,
    /// Events handed to `apply` so far (applied or not): numbers the next one.
    received: usize,
    /// The objects the last cycle changed (its `plan -o json` items).
    last_changed: Vec<Value>,
    /// Units the last cycle left pending (`None` before the first).
    last_pending: Option<usize>,
}

#[derive(Default)]
struct Table {
    sessions: BTreeMap<u64, Session>,
    freed: BTreeSet<u64>,
    next: u64,
}

thread_local! {
    static TABLE: RefCell<Table> = RefCell::new(Table::default());
}

/// `session_new {files, options}`: a session whose objects are the dump `files` (read
/// as `plan` reads them); `{"handle": n}`.
pub fn new(fields: &Map<String, Value>) -> Result<String, Error> {
    let files = crate::manifests::manifests(fields.get("files"), "files")?.input_named("files");
    let options: RequestOptions = from_value_or_default(fields.get("options"), "options")?;
    let global = options.options("options")?;
    let mut watch = Watch::new(&global, false);
    watch.add_stream(STREAM);
    watch.initial(&files).map_err(|f| error::failure(&f))?;
    let warnings = messages(&mut watch);
    let session = Session {
        watch,
        options,
        received: 0,
        last_changed: Vec::new(),
        last_pending: None,
    };
    let handle = TABLE.with(|t| {
        let mut t = t.borrow_mut();
        t.next += 1;
        let handle = t.next;
        t.sessions.insert(handle, session);
        handle
    });
    to_json(&json!({ "handle": handle, "warnings": warnings }))
}

/// `session_free {handle}`: drops the session; its handle answers `NotFound` after.
pub fn free(handle: u64) -> Result<String, Error> {
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        match t.sessions.remove(&handle) {
            Some(_) => {
                t.freed.insert(handle);
                Ok("{}".to_owned())
            }
            None => Err(missing(&t, handle)),
        }
    })
}

/// `session_call {handle, method, ...}`.
pub fn call(handle: u64, method: &str, fields: &Map<String, Value>) -> Result<String, Error> {
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        let t = &mut *t;
        let Some(session) = t.sessions.get_mut(&handle) else {
            return Err(missing(t, handle));
        };
        session.call(method, fields)
    })
}

/// How many sessions are open (for tests and the host's bookkeeping).
pub fn open() -> usize {
    TABLE.with(|t| t.borrow().sessions.len())
}

fn missing(t: &Table, handle: u64) -> Error {
    let message = if t.freed.contains(&handle) {
        format!("session {handle} was freed (session_free): open a new one")
    } else {
        format!("no session {handle} (session_new returns the handle)")
    };
    Error::new(NOT_FOUND, vec![Problem::field("handle", message)])
}

/// Everything the watch said since the last call, one line each.
fn messages(watch: &mut Watch) -> Vec<String> {
    watch
        .take_messages()
        .into_iter()
        .map(|m| match m {
            WatchMessage::Warning(t) => t,
            WatchMessage::Error(t) => format!("error: {t}"),
        })
        .collect()
}

/// One event of `apply`, as the host sends it.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EventArg {
    #[serde(rename = "type")]
    ty: String,
    object: Value,
}

/// A unit's row of a cycle.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UnitRow {
    kind: &'static str,
    name: String,
    outcome: &'static str,
    pods: Vec<PodNode>,
    devices: Vec<String>,
    victims: Vec<String>,
    reason: String,
}

#[derive(Serialize)]
struct PodNode {
    pod: String,
    node: Option<String>,
}

/// `cycle`'s result: the `gangpack watch -o json` line, and the plan it ran.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CycleResult {
    /// The cycle exactly as `gangpack watch -o json` prints it (one line, with its
    /// newline).
    line: String,
    /// That line's object: `cycle`, `trigger`, `events`, `objects`, `podsRunning`,
    /// `unitsPending`, `changes`.
    watch: Value,
    /// Every unit of the plan: kind, name, outcome, pods and nodes, devices, victims,
    /// reason.
    units: Vec<UnitRow>,
    /// The objects the plan changes, as `gangpack plan -o json` prints them.
    list: Value,
    /// `NoExecute` evictions carried out before the cycle and still to come, and the
    /// claims they released.
    evictions: Value,
    /// `gangpack plan`'s exit status (0, or 3: something pending).
    exit_code: u8,
    /// The clock the cycle ran at (RFC 3339), when the session has one.
    now: Option<String>,
    /// Warnings since the previous call.
    warnings: Vec<String>,
}

/// `status`'s result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    objects: usize,
    events_applied: usize,
    events_since_cycle: usize,
    cycles: usize,
    pending: Option<usize>,
    now: Option<String>,
    dirty: bool,
}

fn rfc3339(t: Option<gangpack::Time>) -> Option<String> {
    t.map(gangpack_k8s::output::time_to_rfc3339)
}

fn parse_now(value: &Value, what: &str) -> Result<gangpack::Time, Error> {
    match from_value::<Now>(value, what)? {
        Now::Seconds(s) => Ok(gangpack::Time(s)),
        Now::Text(t) => gangpack_cli::parse_rfc3339_arg(&t).map_err(|m| Error::argument(what, m)),
    }
}

fn allowed(fields: &Map<String, Value>, method: &str, args: &[&str]) -> Result<(), Error> {
    match fields
        .keys()
        .find(|k| !matches!(k.as_str(), "handle" | "method") && !args.contains(&k.as_str()))
    {
        None => Ok(()),
        Some(k) => Err(Error::argument(
            k.clone(),
            format!(
                "unknown argument of {method} (expected {})",
                if args.is_empty() {
                    "none".to_owned()
                } else {
                    args.join(", ")
                }
            ),
        )),
    }
}

/// An object's problem (from reading an event) as a problem naming the event.
fn input_problem(i: usize, e: &InputError) -> Problem {
    Problem {
        line: format!("events[{i}]: {e}"),
        ..crate::error::cli_problem(&gangpack_cli::Problem::from(e))
    }
}

/// `Kind "ns/name"` of an event's raw object, when it names itself.
fn describe(object: &Value) -> Option<String> {
    let kind = object.get("kind")?.as_str()?;
    let meta = object.get("metadata")?;
    let name = meta.get("name")?.as_str()?;
    Some(match meta.get("namespace").and_then(Value::as_str) {
        Some(ns) if !ns.is_empty() => format!("{kind} \"{ns}/{name}\""),
        _ => format!("{kind} \"{name}\""),
    })
}

impl Session {
    fn call(&mut self, method: &str, fields: &Map<String, Value>) -> Result<String, Error> {
        match method {
            "apply" => {
                allowed(fields, method, &["events"])?;
                self.apply(fields.get("events"))
            }
            "cycle" => {
                allowed(fields, method, &["now"])?;
                if let Some(v) = fields.get("now").filter(|v| !v.is_null()) {
                    let now = parse_now(v, "now")?;
                    self.watch.set_now(Some(now));
                }
                let result = self.cycle()?;
                to_json(&result)
            }
            "advance" => {
                allowed(fields, method, &["seconds", "to"])?;
                self.advance(fields)
            }
            "explain" => {
                allowed(fields, method, &["unit"])?;
                let unit = match fields.get("unit") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(crate::unit::unit_name(v)?.0),
                };
                let input = self.dump(false);
                to_json(&crate::commands::explain(
                    &input,
                    unit.as_ref(),
                    &self.clocked_options(),
                )?)
            }
            "manifests" => {
                allowed(fields, method, &["planned"])?;
                let planned: bool = from_value_or_default(fields.get("planned"), "planned")?;
                to_json(&self.list(planned))
            }
            "status" => {
                allowed(fields, method, &[])?;
                to_json(&Status {
                    objects: self.watch.objects().len(),
                    events_applied: self.watch.events_applied(),
                    events_since_cycle: self.watch.events_since_cycle(),
                    cycles: self.watch.cycles(),
                    pending: self.last_pending,
                    now: rfc3339(self.watch.now()),
                    dirty: self.watch.is_dirty(),
                })
            }
            other => Err(Error::argument(
                "method",
                format!(
                    "unknown session method {other:?} (expected one of {})",
                    METHODS.join(", ")
                ),
            )),
        }
    }

    /// The request options with the session's clock (for `explain`).
    fn clocked_options(&self) -> RequestOptions {
        let mut o = self.options.clone();
        if let Some(t) = self.watch.now() {
            o.now = Some(Now::Seconds(t.0));
        }
        o
    }

    fn apply(&mut self, events: Option<&Value>) -> Result<String, Error> {
        let events: Vec<Value> = match events {
            None | Some(Value::Null) => {
                return Err(Error::argument(
                    "events",
                    "expected the events, [{type, object}, ...]",
                ));
            }
            Some(v) => from_value(v, "events")?,
        };
        let options = self.watch.load_options();
        // Read and check every event first, against a copy of the objects: all or none.
        let mut trial = self.watch.objects().clone();
        let mut ready: Vec<(Frame, Event)> = Vec::with_capacity(events.len());
        for (i, raw) in events.iter().enumerate() {
            let what = format!("events[{i}]");
            let arg: EventArg = from_value(raw, &what)?;
            if !matches!(arg.ty.as_str(), "ADDED" | "MODIFIED" | "DELETED") {
                return Err(Error::argument(
                    format!("{what}.type"),
                    format!(
                        "{:?}: expected ADDED, MODIFIED or DELETED (a BOOKMARK carries \
                         nothing; an ERROR ends the informer's watch: list again and open a \
                         new session)",
                        arg.ty
                    ),
                ));
            }
            if !arg.object.is_object() {
                return Err(Error::argument(
                    format!("{what}.object"),
                    "expected a Kubernetes object",
                ));
            }
            let frame = Frame {
                index: self.received + i + 1,
                at: Position {
                    offset: 0,
                    line: 1,
                    column: 1,
                },
                bytes: serde_json::to_vec(raw).unwrap_or_default(),
            };
            let event = match Watch::parse(&options, STREAM, &frame) {
                Ok(e) => e,
                Err(EventError::Object { errors, .. }) => {
                    return Err(Error::new(
                        error::INVALID_INPUT,
                        errors.errors.iter().map(|e| input_problem(i, e)).collect(),
                    ));
                }
                Err(e) => return Err(Error::argument(what, e.to_string())),
            };
            if let Event::Object { kind, object, .. } = &event {
                let described = object.describe();
                let rejected = |kind_of_error: &'static str, message: String| {
                    Error::new(
                        kind_of_error,
                        vec![Problem {
                            line: format!("{what}: {described}: {message}"),
                            object: Some(described.clone()),
                            field: format!("{what}.type"),
                            message,
                            ..Problem::default()
                        }],
                    )
                };
                match trial.apply(*kind, object.clone()) {
                    Ok(
                        Applied::Added | Applied::Relisted | Applied::Modified | Applied::Deleted,
                    ) => {}
                    Err(Rejected::AlreadyAdded { .. }) => {
                        return Err(rejected(
                            error::ALREADY_EXISTS,
                            "ADDED, but it is already there and was not DELETED".into(),
                        ));
                    }
                    Err(Rejected::NotAdded) => {
                        return Err(rejected(
                            NOT_FOUND,
                            "MODIFIED, but it was never added (or was deleted)".into(),
                        ));
                    }
                    Err(Rejected::NotPresent) => {
                        return Err(rejected(
                            NOT_FOUND,
                            "DELETED, but it is not there: nothing to delete".into(),
                        ));
                    }
                    Err(r @ Rejected::NoObject(_)) => {
                        return Err(rejected(error::INVALID_ARGUMENT, r.to_string()));
                    }
                }
            } else if !matches!(event, Event::Skipped { .. }) {
                return Err(Error::argument(
                    what,
                    format!(
                        "not an event with an object{}",
                        describe(&arg.object).map_or(String::new(), |d| format!(" ({d})"))
                    ),
                ));
            }
            ready.push((frame, event));
        }
        self.received += events.len();
        let before = self.watch.events_applied();
        let skipped = ready
            .iter()
            .filter(|(_, e)| matches!(e, Event::Skipped { .. }))
            .count();
        for (frame, event) in ready {
            self.watch.apply(STREAM, &frame, Ok(event));
        }
        let applied = self.watch.events_applied() - before;
        to_json(&json!({
            "applied": applied,
            "skipped": skipped,
            "warnings": messages(&mut self.watch),
        }))
    }

    fn cycle(&mut self) -> Result<CycleResult, Error> {
        let Some(cycle) = self.watch.cycle(Trigger::Requested) else {
            let said = messages(&mut self.watch);
            return Err(Error::new(
                error::INVALID_INPUT,
                said.into_iter().map(Problem::message).collect(),
            ));
        };
        let Cycle {
            plan_rows,
            evictions,
            plan_list,
            plan_code,
            units_pending,
            ..
        } = &cycle;
        let line = cycle.json();
        let watch: Value = serde_json::from_str(&line)
            .map_err(|e| Error::message(error::INTERNAL, format!("cycle line: {e}")))?;
        let units = plan_rows
            .iter()
            .map(|r| UnitRow {
                kind: r.kind,
                name: r.name.clone(),
                outcome: r.outcome.as_str(),
                pods: r
                    .pods
                    .iter()
                    .map(|p| PodNode {
                        pod: p.pod.clone(),
                        node: p.node.clone(),
                    })
                    .collect(),
                devices: r.devices.clone(),
                victims: r.victims.clone(),
                reason: r.reason.clone(),
            })
            .collect();
        let eviction = |e: &gangpack_k8s::output::Eviction| json!({"pod": e.pod, "at": e.at_rfc3339, "reason": e.condition_reason, "why": e.why});
        let evictions = json!({
            "carriedOut": evictions.carried_out.iter().map(eviction).collect::<Vec<_>>(),
            "upcoming": evictions.upcoming.iter().map(eviction).collect::<Vec<_>>(),
            "released": evictions.released,
        });
        self.last_changed = plan_list
            .get("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        self.last_pending = Some(*units_pending);
        Ok(CycleResult {
            line,
            watch,
            units,
            list: plan_list.clone(),
            evictions,
            exit_code: *plan_code,
            now: rfc3339(self.watch.now()),
            warnings: messages(&mut self.watch),
        })
    }

    fn advance(&mut self, fields: &Map<String, Value>) -> Result<String, Error> {
        let now = match (fields.get("seconds"), fields.get("to")) {
            (Some(s), None) => {
                let seconds: i64 = from_value(s, "seconds")?;
                if seconds < 0 {
                    return Err(Error::argument(
                        "seconds",
                        "must not be negative (the clock only moves forward)",
                    ));
                }
                let Some(now) = self.watch.now() else {
                    return Err(Error::argument(
                        "seconds",
                        "the session has no clock yet: give options.now, a cycle's now, or \
                         advance to a time (to)",
                    ));
                };
                gangpack::Time(now.0.saturating_add(seconds))
            }
            (None, Some(to)) => {
                let to = parse_now(to, "to")?;
                if let Some(now) = self.watch.now()
                    && to.0 < now.0
                {
                    return Err(Error::argument(
                        "to",
                        format!(
                            "{} is before the session's clock {} (the clock only moves forward)",
                            gangpack_k8s::output::time_to_rfc3339(to),
                            gangpack_k8s::output::time_to_rfc3339(now)
                        ),
                    ));
                }
                to
            }
            _ => {
                return Err(Error::argument(
                    "seconds",
                    "expected exactly one of seconds (a number) and to (RFC 3339)",
                ));
            }
        };
        self.watch.set_now(Some(now));
        to_json(&json!({ "now": rfc3339(Some(now)) }))
    }

    /// The objects as a `kind: List`, in the order `kubectl get -A` lists them; with
    /// `planned`, the last cycle's changed objects in place of theirs (and its new
    /// objects, generated claims, added).
    fn list(&self, planned: bool) -> Value {
        let mut items: Vec<Value> = self
            .watch
            .objects()
            .iter()
            .map(|o| (*o.raw).clone())
            .collect();
        if planned {
            let key = |v: &Value| {
                let meta = v.get("metadata");
                (
                    v.get("kind").and_then(Value::as_str).map(str::to_owned),
                    meta.and_then(|m| m.get("namespace"))
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    meta.and_then(|m| m.get("name"))
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                )
            };
            for changed in &self.last_changed {
                let k = key(changed);
                match items.iter_mut().find(|i| key(i) == k) {
                    Some(i) => *i = changed.clone(),
                    None => items.push(changed.clone()),
                }
            }
        }
        gangpack_k8s::output::list(items)
    }

    /// The objects as one input, for the commands that read a dump.
    fn dump(&self, planned: bool) -> Input {
        Input::Files(vec![InputFile {
            name: "session".into(),
            text: self.list(planned).to_string(),
        }])
    }
}
