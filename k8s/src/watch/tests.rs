//! Reading events: every kind of event and every way one can be wrong.

use serde_json::json;

use super::{
    Applied, Event, EventError, EventType, Frame, Objects, Position, Rejected, parse_event,
};
use crate::load::LoadOptions;

fn frame(index: usize, line: usize, text: &str) -> Frame {
    Frame {
        index,
        at: Position {
            offset: 100,
            line,
            column: 1,
        },
        bytes: text.as_bytes().to_vec(),
    }
}

fn parse(text: &str) -> Result<Event, EventError> {
    parse_event("pods.json", &frame(7, 40, text), &LoadOptions::default())
}

fn pod(node: Option<&str>) -> serde_json::Value {
    let mut spec = json!({"containers": [{"name": "c", "image": "busybox"}]});
    if let Some(n) = node {
        spec["nodeName"] = json!(n);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop"}, "spec": spec})
}

fn event(ty: &str, object: &serde_json::Value) -> String {
    serde_json::to_string_pretty(&json!({"type": ty, "object": object})).unwrap()
}

#[test]
fn object_events_read_their_object() {
    let Ok(Event::Object {
        kind,
        object,
        warnings,
    }) = parse(&event("MODIFIED", &pod(Some("n1"))))
    else {
        panic!("an object event");
    };
    assert_eq!(kind, EventType::Modified);
    assert_eq!(object.describe(), "Pod \"shop/web\"");
    assert_eq!(
        (object.source.file.as_str(), object.source.doc),
        ("pods.json", 7)
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        parse(
            r#"{"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "12"}}}"#
        ),
        Ok(Event::Bookmark)
    );
}

#[test]
fn an_error_event_carries_its_status() {
    let text = r#"{"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": "too old resource version: 12 (34)", "reason": "Expired", "code": 410}}"#;
    let Ok(Event::Error(status)) = parse(text) else {
        panic!("an error event");
    };
    assert!(status.is_expired());
    assert_eq!(
        status.to_string(),
        "410 Expired: too old resource version: 12 (34)"
    );
    let Ok(Event::Error(other)) =
        parse(r#"{"type": "ERROR", "object": {"code": 500, "reason": "InternalError"}}"#)
    else {
        panic!("an error event");
    };
    assert!(!other.is_expired());
}

#[test]
fn other_kinds_are_skipped_with_a_warning() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}});
    let Ok(Event::Skipped { kind, warning }) = parse(&event("ADDED", &cm)) else {
        panic!("skipped");
    };
    assert_eq!(kind, EventType::Added);
    assert_eq!(warning.object.as_deref(), Some("ConfigMap \"shop/c\""));
}

#[test]
fn malformed_events_say_what_and_where() {
    // Not JSON: the line is the stream's.
    let Err(EventError::Syntax { line, message }) = parse("{\n  \"type\": ADDED\n}") else {
        panic!("a syntax error");
    };
    assert_eq!(line, 41);
    assert!(message.starts_with("JSON syntax error"), "{message}");
    // A duplicate key.
    let Err(EventError::Syntax { line, message }) =
        parse("{\"type\": \"ADDED\",\n\"type\": \"DELETED\"}")
    else {
        panic!("a duplicate key");
    };
    assert_eq!(
        (line, message.as_str()),
        (41, "mapping key \"type\" already defined")
    );
    // A bare object (kubectl without --output-watch-events).
    let Err(EventError::NotAnEvent(m)) = parse(&serde_json::to_string(&pod(None)).unwrap()) else {
        panic!("not an event");
    };
    assert!(
        m.contains("Pod \"shop/web\"") && m.contains("--output-watch-events"),
        "{m}"
    );
    assert_eq!(
        parse(r#"{"type": "CHANGED", "object": {}}"#),
        Err(EventError::UnknownType("CHANGED".into()))
    );
    assert!(matches!(
        parse(r#"{"type": "ADDED"}"#),
        Err(EventError::NotAnEvent(_))
    ));
    assert!(matches!(
        parse(r#"{"type": 3, "object": {}}"#),
        Err(EventError::NotAnEvent(_))
    ));
    assert!(matches!(
        parse(r#"{"type": "ADDED", "object": []}"#),
        Err(EventError::NotAnEvent(_))
    ));
    // Not UTF-8.
    let mut bytes = event("ADDED", &pod(None)).into_bytes();
    bytes[30] = 0xff;
    let f = Frame {
        bytes,
        ..frame(7, 40, "")
    };
    assert!(matches!(
        parse_event("pods.json", &f, &LoadOptions::default()),
        Err(EventError::Syntax { .. })
    ));
}

#[test]
fn an_invalid_object_fails_at_its_event_naming_the_field() {
    let mut bad = pod(None);
    bad["spec"]["containers"][0]["resources"] = json!({"requests": {"cpu": "lots"}});
    let Err(e @ EventError::Object { kind, .. }) = parse(&event("ADDED", &bad)) else {
        panic!("an object error");
    };
    assert_eq!(kind, EventType::Added);
    let text = e.to_string();
    assert!(
        text.starts_with("ADDED Pod \"shop/web\": spec.containers[0].resources.requests"),
        "{text}"
    );
    // No name at all.
    let nameless = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}});
    assert!(matches!(
        parse(&event("ADDED", &nameless)),
        Err(EventError::Object { .. })
    ));
    // A deleted object only needs to name itself.
    assert!(matches!(
        parse(&event("DELETED", &bad)),
        Ok(Event::Object { .. })
    ));
}

#[test]
fn objects_follow_events_and_refuse_what_does_not_fit() {
    let Ok(Event::Object { object: bound, .. }) = parse(&event("MODIFIED", &pod(Some("n1"))))
    else {
        panic!()
    };
    let Ok(Event::Object {
        object: pending, ..
    }) = parse(&event("ADDED", &pod(None)))
    else {
        panic!()
    };
    let mut objects = Objects::default();
    assert_eq!(
        objects.apply(EventType::Modified, bound.clone()),
        Err(Rejected::NotAdded)
    );
    assert_eq!(
        objects.apply(EventType::Added, pending.clone()),
        Ok(Applied::Added)
    );
    assert!(matches!(
        objects.apply(EventType::Added, bound.clone()),
        Err(Rejected::AlreadyAdded { .. })
    ));
    // Unchanged by the refused event.
    assert_eq!(objects.iter().next(), Some(&pending));
    assert_eq!(
        objects.apply(EventType::Modified, bound.clone()),
        Ok(Applied::Modified)
    );
    assert_eq!(
        objects.get(crate::Kind::Pod, Some("shop"), "web"),
        Some(&bound)
    );
    assert_eq!(
        objects.apply(EventType::Deleted, bound.clone()),
        Ok(Applied::Deleted)
    );
    assert_eq!(
        objects.apply(EventType::Deleted, bound.clone()),
        Err(Rejected::NotPresent)
    );
    assert_eq!(
        objects.apply(EventType::Bookmark, bound.clone()),
        Err(Rejected::NoObject(EventType::Bookmark))
    );
    // A starting dump's object is listed again by the stream.
    objects.insert_initial(pending.clone()).unwrap();
    assert!(objects.insert_initial(pending.clone()).is_err());
    assert_eq!(
        objects.apply(EventType::Added, bound.clone()),
        Ok(Applied::Relisted)
    );
    assert!(matches!(
        objects.apply(EventType::Added, bound),
        Err(Rejected::AlreadyAdded { .. })
    ));
    assert_eq!(objects.loaded().objects.len(), 1);
}
