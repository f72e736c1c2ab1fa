//! A controller loop on the crate: a recorded stream of object events (the model's
//! JSON, one event per line, as an informer would deliver them) applied to one
//! [`Scheduler`], a cycle whenever the stream says the informers are in sync, and
//! every report logged with its `Display`.
//!
//! ```sh
//! cargo run -p gangpack --features serde --example controller [events.jsonl]
//! ```
//!
//! Its log for the default stream is `core/examples/controller.out` (the test script
//! compares them).
//!
//! Each line is `{"type": "ADDED" | "MODIFIED" | "DELETED", "kind": K, "object": O}`
//! (a DELETED object needs only its name, and its namespace for namespaced kinds),
//! `{"type": "SYNC"}` (run a cycle) or `{"type": "CLOCK", "object": seconds}` (advance
//! the logical clock, carrying out the evictions due). The default stream
//! (`core/examples/events.jsonl`) sets the clock, brings up two nodes and a two-pod
//! gang, taints a GPU under one member `NoExecute` (the driver republishing its
//! slice), adds a third node, advances the clock (the member is evicted; its Job
//! re-creates it and the next cycle places it on the new node), and removes a node
//! (its pod is deleted with it).

use std::error::Error;

use gangpack::DeviceClass;
use gangpack::prelude::*;
use serde_json::Value;

/// The recorded stream shipped with the example.
const RECORDED: &str = include_str!("events.jsonl");

fn main() -> Result<(), Box<dyn Error>> {
    let text = match std::env::args().nth(1) {
        Some(path) => std::fs::read_to_string(path)?,
        None => RECORDED.to_owned(),
    };
    let mut sched = Scheduler::new(Cluster::new(), GangOptions::default());
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let event: Value = serde_json::from_str(line)?;
        let kind = event["kind"].as_str().unwrap_or_default();
        let object = event["object"].clone();
        // A refused event changes nothing: log it and go on, as a controller would.
        if let Err(e) = apply(
            &mut sched,
            event["type"].as_str().unwrap_or_default(),
            kind,
            object,
        ) {
            eprintln!("event {}: {kind}: {e}", i + 1);
        }
    }
    Ok(())
}

/// Applies one event; logs what it changed.
fn apply(
    sched: &mut Scheduler,
    event: &str,
    kind: &str,
    object: Value,
) -> Result<(), Box<dyn Error>> {
    let name = || -> String {
        match object["namespace"].as_str() {
            Some(ns) => format!("{ns}/{}", object["name"].as_str().unwrap_or_default()),
            None => object["name"].as_str().unwrap_or_default().to_owned(),
        }
    };
    let log = |what: String| {
        if !what.is_empty() {
            println!("{what}");
        }
    };
    match (event, kind) {
        ("SYNC", _) => println!("-- cycle\n{}", sched.cycle()),
        ("CLOCK", _) => {
            let now = Time(sched.now().0 + object.as_i64().unwrap_or(0));
            println!("-- clock {}", now.to_rfc3339());
            for e in sched.advance(now) {
                println!("evicted {e}");
            }
        }
        ("ADDED", "Node") => log(sched.add_node(serde_json::from_value(object)?)?.to_string()),
        ("MODIFIED", "Node") => log(sched
            .update_node(serde_json::from_value(object)?)?
            .to_string()),
        ("DELETED", "Node") => {
            let gone = sched.remove_node(&name())?;
            println!(
                "node {} removed; deleted with it: {:?}",
                gone.node.name, gone.deleted_pods
            );
        }
        ("ADDED", "ResourceSlice") => log(sched
            .add_slice(serde_json::from_value(object)?)?
            .to_string()),
        ("MODIFIED", "ResourceSlice") => {
            log(sched
                .replace_slice(serde_json::from_value(object)?)?
                .to_string());
        }
        ("DELETED", "ResourceSlice") => log(sched.remove_slice(&name())?.1.to_string()),
        ("ADDED" | "MODIFIED", "DeviceClass") => {
            sched.put_device_class(serde_json::from_value::<DeviceClass>(object)?)?;
        }
        ("DELETED", "DeviceClass") => drop(sched.remove_device_class(&name())?),
        ("ADDED", "ResourceClaim") => sched.add_claim(serde_json::from_value(object)?)?,
        ("MODIFIED", "ResourceClaim") => sched.update_claim(serde_json::from_value(object)?)?,
        ("DELETED", "ResourceClaim") => drop(sched.remove_claim(&name())?),
        ("ADDED", "PodGroup") => sched.add_group(serde_json::from_value(object)?)?,
        ("MODIFIED", "PodGroup") => sched.update_group(serde_json::from_value(object)?)?,
        ("DELETED", "PodGroup") => drop(sched.remove_group(&name())?),
        ("ADDED", "Pod") => sched.add_pod(serde_json::from_value(object)?)?,
        ("MODIFIED", "Pod") => log(sched
            .update_pod(serde_json::from_value(object)?)?
            .to_string()),
        ("DELETED", "Pod") => drop(sched.remove_pod(&name())?),
        _ => return Err(format!("unsupported event {event} of kind {kind}").into()),
    }
    Ok(())
}
