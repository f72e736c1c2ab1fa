package gangpack

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Session is a live scheduler a controller drives with its informers' events: it
// starts from a dump of the cluster ([NewSession]), takes watch events ([Session.Apply]:
// ADDED, MODIFIED and DELETED of whole objects) and runs a scheduling cycle when asked
// ([Session.Cycle]), deciding exactly what `gangpack watch -o json` prints for the
// same events, and what [Plan] decides on a dump of the same objects.
//
// gangpack only observes: a cycle writes nothing into the session. The controller
// carries out the decisions (binds pods, writes claim allocations, evicts), and what
// the cluster then does comes back as events.
//
// A Session pins one instance of the module for its life; return it with
// [Session.Close]. A Session is not safe for concurrent use (one goroutine at a time,
// or a mutex around it); many Sessions may run at once, each on its own instance, and
// beside the package's other calls. A call that traps the instance (a gangpack bug:
// an Internal [*Error]) or is cut off by its context leaves the instance in an
// unknown state: it is discarded, and the Session answers a NotFound [*Error] saying
// so from then on (open a new one from [Session.Manifests] taken earlier, or from
// the cluster).
type Session struct {
	in     *instance
	handle uint64
	// closed says why the Session answers no more: "closed" after Close, or the
	// trap that discarded its instance.
	closed string
}

// Event is one watch event, as an informer delivers it.
type Event struct {
	// Type is "ADDED", "MODIFIED" or "DELETED".
	Type string
	// Object is the whole object (for DELETED, as it last was): a typed k8s.io/api
	// object (apiVersion and kind filled in as [Objects] fills them) or
	// *unstructured.Unstructured.
	Object runtime.Object
}

// NewSession opens a session on the objects of in (read as [Plan] reads them: the
// cluster before the first event; an empty Input starts from nothing). opts are the
// options of its cycles; opts.Now, when set, is the session's clock until a cycle or
// [Session.Advance] moves it. An error names each object and field that cannot be
// read.
func NewSession(ctx context.Context, in Input, opts *Options) (*Session, error) {
	if in.err != nil {
		return nil, in.err
	}
	e, err := getEngine()
	if err != nil {
		return nil, err
	}
	inst, err := e.get(ctx)
	if err != nil {
		return nil, err
	}
	raw, healthy, err := inst.call(ctx, "session_new", map[string]any{"files": nonNil(in.files), "options": opts.request()})
	if err != nil {
		e.release(inst, healthy)
		return nil, err
	}
	var out struct {
		Handle uint64 `json:"handle"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		e.release(inst, healthy)
		return nil, fmt.Errorf("gangpack: session_new: unreadable result: %w", err)
	}
	return &Session{in: inst, handle: out.Handle}, nil
}

// call runs method on the session's instance; a trap discards the instance and
// closes the session.
func (s *Session) call(ctx context.Context, method string, args map[string]any, out any) error {
	if s.in == nil {
		return &Error{Kind: KindNotFound, Message: fmt.Sprintf("session %d is %s", s.handle, s.closed),
			Problems: []Problem{{Line: fmt.Sprintf("session %d is %s", s.handle, s.closed),
				Field: "handle", Message: "the session is " + s.closed}}}
	}
	req := map[string]any{"handle": s.handle, "method": method}
	for k, v := range args {
		req[k] = v
	}
	raw, healthy, err := s.in.call(ctx, "session_call", req)
	if !healthy {
		e, _ := getEngine()
		e.release(s.in, false)
		s.in = nil
		s.closed = fmt.Sprintf("closed: its instance was discarded after %s failed (%v)", method, err)
	}
	return decode("session "+method, raw, err, out)
}

// Apply applies watch events, in order, all or none: every event is read and
// checked first (its object as a dump's object is read, and against the objects and
// the events before it), and the first bad one is an [*Error] naming the event
// (`events[i]`), the object and the field; then nothing is applied. ADDED of an object
// there already (not from the starting dump) is AlreadyExists; MODIFIED or DELETED of
// one that is not there is NotFound. Objects of kinds gangpack does not read are
// skipped (counted in Skipped, with a warning).
func (s *Session) Apply(ctx context.Context, events ...Event) (*ApplyResult, error) {
	raws := make([]map[string]any, len(events))
	for i, ev := range events {
		b, err := objectJSON(ev.Object)
		if err != nil {
			line := fmt.Sprintf("events[%d].object: %v", i, err)
			return nil, &Error{Kind: KindInvalidArgument, Message: line,
				Problems: []Problem{{Line: line, Field: fmt.Sprintf("events[%d].object", i), Message: err.Error()}}}
		}
		raws[i] = map[string]any{"type": ev.Type, "object": json.RawMessage(b)}
	}
	var out ApplyResult
	if err := s.call(ctx, "apply", map[string]any{"events": raws}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ApplyResult is what [Session.Apply] did.
type ApplyResult struct {
	// Applied counts the events applied.
	Applied int `json:"applied"`
	// Skipped counts events of kinds gangpack does not read.
	Skipped int `json:"skipped"`
	// Warnings are the warnings the events earned, one line each.
	Warnings []string `json:"warnings"`
}

// Cycle is one scheduling cycle of a [Session]: every decision, and what changed
// since the previous cycle as `gangpack watch -o json` prints it.
type Cycle struct {
	// Number counts the session's cycles, from 1.
	Number int
	// Now is the clock the cycle ran at (zero when the session has none: the latest
	// timestamp in the objects).
	Now time.Time
	// Bindings maps each pod the cycle binds (`namespace/name`) to its node (the pods
	// of the units placed).
	Bindings map[string]string
	// Nominations maps each preemptor pod to the node it waits for (its victims go
	// first).
	Nominations map[string]string
	// Allocations maps each claim the cycle writes with an allocation
	// (`namespace/name`: claims it allocates, generated ones included, and allocated
	// claims it reserves for a pod it places) to that allocation.
	Allocations map[string]resourcev1.AllocationResult
	// Evictions are the NoExecute evictions due at the clock, carried out before the
	// cycle placed anything (the evicted pods are not placed again in the same
	// cycle: their controller recreates them, and the events say so).
	Evictions []Eviction
	// Released are the claims (`namespace/name`) the evictions deallocated (their
	// last users were evicted).
	Released []string
	// Upcoming are NoExecute evictions scheduled for later (tolerationSeconds):
	// [Session.Advance] the clock past them and cycle again.
	Upcoming []Eviction
	// Units is every unit of the cycle, in the order the cycle took them.
	Units []CycleUnit
	// Pending is the units left pending, invalid or failed, with their reasons.
	Pending []CycleUnit
	// List is exactly the `kind: List` `gangpack plan -o json` prints for the same
	// objects: the pods, claims and PodGroups the cycle changes.
	List unstructured.UnstructuredList
	// Changes are the changes since the previous cycle (`gangpack watch`'s `changes`).
	Changes []Change
	// Line is the cycle exactly as `gangpack watch -o json` prints it (with its
	// newline).
	Line string
	// Warnings are the warnings since the previous call, one line each.
	Warnings []string
}

// Eviction is one NoExecute eviction.
type Eviction struct {
	// Pod is the pod, `namespace/name`.
	Pod string `json:"pod"`
	// At is when it falls (fell) due.
	At time.Time `json:"at"`
	// Reason is the DisruptionTarget condition's reason
	// (`DeletionByDeviceTaintManager` or `DeletionByTaintManager`).
	Reason string `json:"reason"`
	// Why says why, in one line.
	Why string `json:"why"`
}

// CycleUnit is one unit (a PodGroup or a pod without one) of a [Cycle].
type CycleUnit struct {
	// Kind is "PodGroup" or "Pod".
	Kind string `json:"kind"`
	// Name is `namespace/name`.
	Name string `json:"name"`
	// Outcome is "placed", "preempted", "pending", "invalid" or "failed".
	Outcome string `json:"outcome"`
	// Pods are its pods: placed (with their nodes) or pending (Node empty).
	Pods []PodNode `json:"pods"`
	// Devices are the devices allocated, `driver/pool/device`.
	Devices []string `json:"devices"`
	// Victims are the preemption victims (`PodGroup ns/name` or `Pod ns/name`).
	Victims []string `json:"victims"`
	// Reason is the one-line reason (empty when placed).
	Reason string `json:"reason"`
}

// PodNode is a pod and its node.
type PodNode struct {
	// Pod is `namespace/name`.
	Pod string `json:"pod"`
	// Node is the node; empty while pending.
	Node string `json:"node,omitempty"`
}

// Change is one change since the previous cycle, as `gangpack watch -o json` lists
// it (docs of `gangpack watch`: bound, gone, evicted, due, placed, preempted,
// pending, invalid, failed). Fields a change does not carry are zero.
type Change struct {
	// Change is the word.
	Change string `json:"change"`
	// Unit is the unit (`PodGroup ns/name` or `Pod ns/name`), when about one.
	Unit string `json:"unit,omitempty"`
	// Pod is the pod, for evicted and due.
	Pod string `json:"pod,omitempty"`
	// Pods are the unit's pods and nodes.
	Pods []PodNode `json:"pods,omitempty"`
	// Devices are the devices placed.
	Devices []string `json:"devices,omitempty"`
	// Victims are a preemption's victims.
	Victims []string `json:"victims,omitempty"`
	// Reason is the reason of pending, invalid, failed and evicted.
	Reason string `json:"reason,omitempty"`
	// Verdict is a pending unit's verdict line.
	Verdict string `json:"verdict,omitempty"`
	// Why says why, for evicted and due.
	Why string `json:"why,omitempty"`
	// At is an eviction's time (RFC 3339).
	At string `json:"at,omitempty"`
}

type cycleJSON struct {
	Line  string          `json:"line"`
	Watch json.RawMessage `json:"watch"`
	Units []CycleUnit     `json:"units"`
	List  json.RawMessage `json:"list"`
	Evict struct {
		CarriedOut []Eviction `json:"carriedOut"`
		Upcoming   []Eviction `json:"upcoming"`
		Released   []string   `json:"released"`
	} `json:"evictions"`
	Now      string   `json:"now"`
	Warnings []string `json:"warnings"`
}

// Cycle runs one scheduling cycle on the session's objects at clock now (zero: the
// session's clock as it is): the NoExecute evictions due, then one cycle, as `gangpack
// plan` on a dump of the objects. Pending work is an outcome, never an error; an
// error means the objects cannot be built into a cluster at all.
func (s *Session) Cycle(ctx context.Context, now time.Time) (*Cycle, error) {
	args := map[string]any{}
	if !now.IsZero() {
		args["now"] = now.UTC().Format(time.RFC3339)
	}
	var out cycleJSON
	if err := s.call(ctx, "cycle", args, &out); err != nil {
		return nil, err
	}
	c := &Cycle{
		Line: out.Line, Units: out.Units, Evictions: out.Evict.CarriedOut,
		Upcoming: out.Evict.Upcoming, Released: out.Evict.Released, Warnings: out.Warnings,
		Bindings: map[string]string{}, Nominations: map[string]string{},
		Allocations: map[string]resourcev1.AllocationResult{},
	}
	var head struct {
		Cycle   int      `json:"cycle"`
		Changes []Change `json:"changes"`
	}
	if err := json.Unmarshal(out.Watch, &head); err != nil {
		return nil, fmt.Errorf("gangpack: session cycle: unreadable line: %w", err)
	}
	c.Number, c.Changes = head.Cycle, head.Changes
	if out.Now != "" {
		t, err := time.Parse(time.RFC3339, out.Now)
		if err != nil {
			return nil, fmt.Errorf("gangpack: session cycle: now: %w", err)
		}
		c.Now = t
	}
	if err := c.List.UnmarshalJSON(out.List); err != nil {
		return nil, fmt.Errorf("gangpack: session cycle: list: %w", err)
	}
	for _, u := range c.Units {
		for _, p := range u.Pods {
			switch {
			case p.Node == "":
			case u.Outcome == "placed":
				c.Bindings[p.Pod] = p.Node
			case u.Outcome == "preempted":
				c.Nominations[p.Pod] = p.Node
			}
		}
		if u.Outcome != "placed" && u.Outcome != "preempted" {
			c.Pending = append(c.Pending, u)
		}
	}
	if err := allocations(&c.List, c.Allocations); err != nil {
		return nil, err
	}
	return c, nil
}

// allocations reads the claim allocations out of a plan's list.
func allocations(list *unstructured.UnstructuredList, alloc map[string]resourcev1.AllocationResult) error {
	for _, o := range list.Items {
		key := o.GetNamespace() + "/" + o.GetName()
		switch o.GetKind() {
		case "ResourceClaim":
			a, ok, _ := unstructured.NestedMap(o.Object, "status", "allocation")
			if !ok {
				continue
			}
			var r resourcev1.AllocationResult
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(a, &r); err != nil {
				return fmt.Errorf("gangpack: session cycle: claim %s: status.allocation: %w", key, err)
			}
			alloc[key] = r
		}
	}
	return nil
}

// Advance moves the session's clock forward by d (the session must have a clock:
// [Options].Now or a cycle's now), so that NoExecute evictions with
// tolerationSeconds fall due at the next cycle. It returns the new clock.
func (s *Session) Advance(ctx context.Context, d time.Duration) (time.Time, error) {
	return s.advance(ctx, map[string]any{"seconds": int64(d / time.Second)})
}

// AdvanceTo sets the session's clock to t (not before the clock it has).
func (s *Session) AdvanceTo(ctx context.Context, t time.Time) (time.Time, error) {
	return s.advance(ctx, map[string]any{"to": t.UTC().Format(time.RFC3339)})
}

func (s *Session) advance(ctx context.Context, args map[string]any) (time.Time, error) {
	var out struct {
		Now string `json:"now"`
	}
	if err := s.call(ctx, "advance", args, &out); err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339, out.Now)
}

// Explain says why a unit is not placed on the session's objects and what it would
// take, as `gangpack explain` prints it for a dump of them (the zero Unit: every
// pending unit). A unit that does not exist is a NotFound [*Error].
func (s *Session) Explain(ctx context.Context, unit Unit) (*ExplainResult, error) {
	args := map[string]any{}
	switch {
	case unit.PodGroup != "" && unit.Pod != "":
		args["unit"] = map[string]string{"podGroup": unit.PodGroup, "pod": unit.Pod}
	case unit.PodGroup != "":
		args["unit"] = map[string]string{"podGroup": unit.PodGroup}
	case unit.Pod != "":
		args["unit"] = map[string]string{"pod": unit.Pod}
	}
	var out ExplainResult
	if err := s.call(ctx, "explain", args, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Manifests is the session's objects as a `kind: List`, in the order `kubectl get
// -A` lists them (a dump: [Plan] of it decides what the next cycle decides).
func (s *Session) Manifests(ctx context.Context) (*unstructured.UnstructuredList, error) {
	return s.manifests(ctx, false)
}

// PlannedManifests is [Session.Manifests] with the last cycle's changed objects in
// place of theirs (bindings, allocations, evictions written; generated claims
// added): the cluster once the controller carried out the decisions.
func (s *Session) PlannedManifests(ctx context.Context) (*unstructured.UnstructuredList, error) {
	return s.manifests(ctx, true)
}

func (s *Session) manifests(ctx context.Context, planned bool) (*unstructured.UnstructuredList, error) {
	var raw json.RawMessage
	if err := s.call(ctx, "manifests", map[string]any{"planned": planned}, &raw); err != nil {
		return nil, err
	}
	var list unstructured.UnstructuredList
	if err := list.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("gangpack: session manifests: %w", err)
	}
	return &list, nil
}

// SessionStatus counts what a [Session] holds.
type SessionStatus struct {
	// Objects counts the objects followed.
	Objects int `json:"objects"`
	// EventsApplied counts the events applied (skipped and refused ones not).
	EventsApplied int `json:"eventsApplied"`
	// EventsSinceCycle counts the events applied since the last cycle.
	EventsSinceCycle int `json:"eventsSinceCycle"`
	// Cycles counts the cycles run.
	Cycles int `json:"cycles"`
	// Pending counts the units the last cycle left pending (nil before the first).
	Pending *int `json:"pending"`
	// Now is the session's clock, RFC 3339 (empty when it has none).
	Now string `json:"now"`
	// Dirty says events were applied since the last cycle (or none ran).
	Dirty bool `json:"dirty"`
}

// Status counts the session's objects, events, cycles and pending units.
func (s *Session) Status(ctx context.Context) (*SessionStatus, error) {
	var out SessionStatus
	if err := s.call(ctx, "status", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Close frees the session and returns its instance to the pool. It is idempotent;
// after it every method answers a NotFound [*Error] saying the session is closed.
func (s *Session) Close() error {
	if s.in == nil {
		return nil
	}
	in := s.in
	s.in, s.closed = nil, "closed"
	e, err := getEngine()
	if err != nil {
		return err
	}
	_, healthy, err := in.call(context.Background(), "session_free", map[string]any{"handle": s.handle})
	e.release(in, healthy && err == nil)
	return err
}
