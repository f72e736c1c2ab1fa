package gangpack

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The GPU of examples/taint-rule.yaml, tainted NoExecute by a DeviceTaintRule.
func eccRule(name, device string) *resourcev1.DeviceTaintRule {
	return &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 5, 7, 12, 0, 0, time.UTC))},
		Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: &resourcev1.DeviceTaintSelector{
				Driver: ptr("gpu.nvidia.com"), Pool: ptr("gpu-r1-n1"), Device: ptr(device)},
			Taint: resourcev1.DeviceTaint{Key: "gpu.nvidia.com/ecc", Value: "uncorrectable",
				Effect: resourcev1.DeviceTaintEffectNoExecute},
		},
	}
}

func mustSession(t *testing.T, in Input, opts *Options) *Session {
	t.Helper()
	s, err := NewSession(ctx, in, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// listJSON is a list's items as JSON, for comparing decisions.
func listJSON(t *testing.T, l *unstructured.UnstructuredList) string {
	t.Helper()
	b, err := json.Marshal(l.Items)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// planOfManifests is the oracle: Plan on a dump of the session's objects.
func planOfManifests(t *testing.T, s *Session, now time.Time) *PlanResult {
	p, _ := planAndManifests(t, s, now)
	return p
}

// planAndManifests is Plan on a dump of the session's objects, and the dump.
func planAndManifests(t *testing.T, s *Session, now time.Time) (*PlanResult, *unstructured.UnstructuredList) {
	t.Helper()
	m, err := s.Manifests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Plan(ctx, Named("dump.json", b), &Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return p, m
}

// newBindings are the pods a plan's list binds that the dump has unbound.
func newBindings(plan, dump *unstructured.UnstructuredList) map[string]string {
	unbound := map[string]bool{}
	for _, o := range dump.Items {
		if n, _, _ := unstructured.NestedString(o.Object, "spec", "nodeName"); o.GetKind() == "Pod" && n == "" {
			unbound[o.GetNamespace()+"/"+o.GetName()] = true
		}
	}
	out := map[string]string{}
	for _, o := range plan.Items {
		key := o.GetNamespace() + "/" + o.GetName()
		if n, _, _ := unstructured.NestedString(o.Object, "spec", "nodeName"); o.GetKind() == "Pod" && n != "" && unbound[key] {
			out[key] = n
		}
	}
	return out
}

// Events carrying a plan's changed objects as MODIFIED (ADDED for new ones): what a
// controller's writes come back as.
func written(t *testing.T, s *Session, l *unstructured.UnstructuredList) []Event {
	t.Helper()
	m, err := s.Manifests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, o := range m.Items {
		have[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = true
	}
	var evs []Event
	for i := range l.Items {
		o := l.Items[i].DeepCopy()
		ty := "MODIFIED"
		if !have[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] {
			ty = "ADDED"
		}
		evs = append(evs, Event{Type: ty, Object: o})
	}
	return evs
}

func TestSessionRoundTrip(t *testing.T) {
	s := mustSession(t, gangRack, nil)
	c, err := s.Cycle(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Number != 1 || len(c.Bindings) != 4 || len(c.Allocations) != 4 || len(c.Pending) != 0 {
		t.Fatalf("cycle 1: %d bindings %v allocations %d pending %v", c.Number, c.Bindings, len(c.Allocations), c.Pending)
	}
	for pod, node := range c.Bindings {
		if !strings.HasPrefix(pod, "ml/llm-pretrain") || !strings.HasPrefix(node, "gpu-r1-") {
			t.Errorf("binding %s -> %s: not the gang on rack 1", pod, node)
		}
	}
	for claim, a := range c.Allocations {
		if len(a.Devices.Results) != 4 {
			t.Errorf("%s: %d devices, want 4", claim, len(a.Devices.Results))
		}
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(c.Line), &line); err != nil || line["trigger"] != "requested" {
		t.Fatalf("line %q: %v", c.Line, err)
	}
	if len(c.Changes) != 1 || c.Changes[0].Change != "placed" || c.Changes[0].Unit != "PodGroup ml/llm-pretrain" {
		t.Errorf("changes %+v", c.Changes)
	}
	// The controller writes the decisions; they come back as events.
	before, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Apply(ctx, written(t, s, &c.List)...)
	if err != nil {
		t.Fatal(err)
	}
	if r.Applied != len(c.List.Items) {
		t.Errorf("applied %d of %d", r.Applied, len(c.List.Items))
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cycles != 1 || st.EventsApplied != r.Applied || !st.Dirty || st.Pending == nil || *st.Pending != 0 {
		t.Errorf("status %+v", st)
	}
	c2, err := s.Cycle(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c2.Bindings) != 0 || len(c2.Changes) != 1 || c2.Changes[0].Change != "bound" {
		t.Errorf("cycle 2: bindings %v changes %+v", c2.Bindings, c2.Changes)
	}
	m, err := s.Manifests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Items) != st.Objects || st.Objects != before.Objects+4 { // the four generated claims were ADDED
		t.Errorf("manifests: %d items, status %d objects, %d before the claims", len(m.Items), st.Objects, before.Objects)
	}
	e, err := s.Explain(ctx, Unit{PodGroup: "ml/llm-pretrain"})
	if err != nil || e.Text == "" {
		t.Errorf("explain: %+v %v", e, err)
	}
	_, err = s.Explain(ctx, Unit{Pod: "ml/nobody"})
	if k := kindOf(t, err); k.Kind != KindNotFound {
		t.Errorf("explain nobody: %+v", k)
	}
}

// The oracle: at every step of a controller loop, the session's cycle decides what
// Plan decides on a dump of the session's objects (an independent path: the dump
// is read as files, not followed by events).
func TestSessionCyclesMatchPlan(t *testing.T) {
	in := Join(runningJob, Files("../../examples/gang-rack.yaml"))
	s := mustSession(t, in, nil)
	now := time.Date(2026, 11, 5, 7, 0, 0, 0, time.UTC)
	bound := 0
	step := func(name string) *Cycle {
		t.Helper()
		want, dump := planAndManifests(t, s, now)
		c, err := s.Cycle(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if got, exp := listJSON(t, &c.List), listJSON(t, &want.List); got != exp {
			t.Fatalf("%s: the cycle's list differs from Plan's\n got %s\nwant %s", name, got, exp)
		}
		if (len(c.Pending) > 0) != want.Pending {
			t.Fatalf("%s: pending %v, Plan pending %v", name, c.Pending, want.Pending)
		}
		if exp := newBindings(&want.List, dump); !reflect.DeepEqual(c.Bindings, exp) {
			t.Fatalf("%s: bindings %v, Plan binds %v", name, c.Bindings, exp)
		}
		bound += len(c.Bindings)
		t.Logf("%s: %d bindings, %d evictions, %d pending", name, len(c.Bindings), len(c.Evictions), len(c.Pending))
		return c
	}
	c := step("start")
	if len(c.Pending) == 0 {
		t.Fatal("the rack gang should wait behind the running job")
	}
	if _, err := s.Apply(ctx, Event{Type: "ADDED", Object: eccRule("ecc", "gpu-2")}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	c = step("tainted")
	if len(c.Evictions) == 0 {
		t.Fatal("the NoExecute rule evicted nothing")
	}
	if _, err := s.Apply(ctx, written(t, s, &c.List)...); err != nil {
		t.Fatal(err)
	}
	step("written")
	if _, err := s.Apply(ctx, Event{Type: "DELETED", Object: eccRule("ecc", "gpu-2")}); err != nil {
		t.Fatal(err)
	}
	step("untainted")
	if bound == 0 {
		t.Error("no step bound anything: the bindings went unchecked")
	}
}

// The objects of a dump, fed as ADDED events in any order into an empty session,
// decide what Plan decides on the dump.
func TestSessionFromEventsMatchesPlan(t *testing.T) {
	in := Join(runningJob, Files("../../examples/gang-rack.yaml"))
	want, err := Plan(ctx, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	full := mustSession(t, in, nil)
	m, err := full.Manifests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for seed := int64(0); seed < 5; seed++ {
		rng := rand.New(rand.NewSource(seed))
		evs := make([]Event, len(m.Items))
		for i, j := range rng.Perm(len(m.Items)) {
			evs[i] = Event{Type: "ADDED", Object: m.Items[j].DeepCopy()}
		}
		s := mustSession(t, Input{}, nil)
		if _, err := s.Apply(ctx, evs...); err != nil {
			t.Fatal(err)
		}
		c, err := s.Cycle(ctx, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if got, exp := listJSON(t, &c.List), listJSON(t, &want.List); got != exp {
			t.Fatalf("seed %d: the session's list differs from Plan's\n got %s\nwant %s", seed, got, exp)
		}
	}
}

func badPod(name string, nodeName any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "ml"},
		"spec": map[string]any{"nodeName": nodeName,
			"containers": []any{map[string]any{"name": "c", "image": "x"}}},
	}}
}

func TestSessionApplyIsAllOrNone(t *testing.T) {
	s := mustSession(t, cluster, nil)
	before, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	good := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "good", Namespace: "ml"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	_, err = s.Apply(ctx, Event{Type: "ADDED", Object: good}, Event{Type: "ADDED", Object: badPod("bad", 5)})
	e := kindOf(t, err)
	if e.Kind != KindInvalidInput || e.Problems[0].Object != `Pod "ml/bad"` || e.Problems[0].Field != "spec.nodeName" ||
		!strings.HasPrefix(e.Problems[0].Line, "events[1]") {
		t.Errorf("got %+v", e)
	}
	after, _ := s.Status(ctx)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("a refused apply changed the session: %+v -> %+v", before, after)
	}
	_, err = s.Apply(ctx, Event{Type: "MODIFIED", Object: good})
	if e := kindOf(t, err); e.Kind != KindNotFound || e.Problems[0].Object != `Pod "ml/good"` || e.Problems[0].Field != "events[0].type" {
		t.Errorf("MODIFIED of nothing: %+v", e)
	}
	_, err = s.Apply(ctx, Event{Type: "ADDED", Object: good}, Event{Type: "ADDED", Object: good})
	if e := kindOf(t, err); e.Kind != KindAlreadyExists || e.Problems[0].Field != "events[1].type" {
		t.Errorf("ADDED twice: %+v", e)
	}
	_, err = s.Apply(ctx, Event{Type: "BOOKMARK", Object: good})
	if e := kindOf(t, err); e.Kind != KindInvalidArgument || e.Problems[0].Field != "events[0].type" {
		t.Errorf("BOOKMARK: %+v", e)
	}
	_, err = s.Apply(ctx, Event{Type: "ADDED", Object: &corev1.Pod{}}, Event{Type: "ADDED", Object: nil})
	if e := kindOf(t, err); e.Problems[0].Field != "events[1].object" {
		t.Errorf("nil object: %+v", e)
	}
	after, _ = s.Status(ctx)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("refused applies changed the session: %+v -> %+v", before, after)
	}
}

func TestSessionClockAndErrors(t *testing.T) {
	s := mustSession(t, cluster, nil)
	if _, err := s.Advance(ctx, time.Minute); kindOf(t, err).Problems[0].Field != "seconds" {
		t.Errorf("advance without a clock: %v", err)
	}
	start := time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC)
	s2 := mustSession(t, cluster, &Options{Now: start})
	now, err := s2.Advance(ctx, 90*time.Second)
	if err != nil || !now.Equal(start.Add(90*time.Second)) {
		t.Errorf("advance: %v %v", now, err)
	}
	if _, err := s2.AdvanceTo(ctx, start); kindOf(t, err).Problems[0].Field != "to" {
		t.Errorf("advance backwards: %v", err)
	}
	c, err := s2.Cycle(ctx, time.Time{})
	if err != nil || !c.Now.Equal(start.Add(90*time.Second)) {
		t.Errorf("cycle at the session's clock: %v %v", c, err)
	}
	_, err = NewSession(ctx, YAML([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: 3}\n")), nil)
	if e := kindOf(t, err); e.Kind != KindInvalidInput || e.Problems[0].Field != "spec.nodeName" {
		t.Errorf("bad dump: %+v", e)
	}
}

func TestSessionCloseTwiceAndAfter(t *testing.T) {
	s, err := NewSession(ctx, cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = s.Status(ctx)
	if e := kindOf(t, err); e.Kind != KindNotFound || !strings.Contains(e.Message, fmt.Sprintf("session %d is closed", s.handle)) {
		t.Errorf("after Close: %+v", e)
	}
}

// A session whose instance fails (here: closed under it, as a trap leaves it) is
// discarded, and the Session says so from then on.
func TestSessionTrapDiscardsTheInstance(t *testing.T) {
	s, err := NewSession(ctx, cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := s.in
	in.mod.Close(ctx)
	if _, err := s.Status(ctx); err == nil {
		t.Fatal("a call on a dead instance succeeded")
	}
	_, err = s.Cycle(ctx, time.Time{})
	if e := kindOf(t, err); e.Kind != KindNotFound || !strings.Contains(e.Message, "discarded") {
		t.Errorf("after the trap: %+v", e)
	}
	e, _ := getEngine()
	for i := 0; i < cap(e.idle)+1; i++ {
		select {
		case got := <-e.idle:
			if got == in {
				t.Fatal("the failed instance is back in the pool")
			}
			defer e.put(got)
		default:
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after the trap: %v", err)
	}
}

// Many sessions at once, each on its own instance, beside other calls (run with
// -race): each decides as a lone one does.
func TestSessionsConcurrently(t *testing.T) {
	lone := mustSession(t, gangRack, nil)
	want, err := lone.Cycle(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := NewSession(ctx, gangRack, nil)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := 0; i < 3; i++ {
				c, err := s.Cycle(ctx, time.Time{})
				if err != nil {
					errs <- err
					return
				}
				if !reflect.DeepEqual(c.Bindings, want.Bindings) {
					errs <- fmt.Errorf("bindings differ: %v", c.Bindings)
					return
				}
				if _, err := Version(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

var _ runtime.Object = (*resourcev1.DeviceTaintRule)(nil)
