package gangpacktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gangpack/gangpack/go/gangpack"
	"github.com/gangpack/gangpack/go/gangpacktest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"pgregory.net/rapid"
)

// firstNode is a tiny buggy scheduler: every pending pod without claims goes to
// the first untainted, schedulable node, whatever it asks for and whatever the
// node has.
func firstNode(s *gangpacktest.Scenario) ([]byte, error) {
	var list unstructured.UnstructuredList
	if err := json.Unmarshal(s.Manifests, &list); err != nil {
		return nil, err
	}
	// The first node that takes pods at all: its one bug is to ignore what
	// the pods ask for. (A cordoned or tainted first node would make a
	// different rule fire first, depending on rapid's seed.)
	node := ""
	for _, o := range list.Items {
		unschedulable, _, _ := unstructured.NestedBool(o.Object, "spec", "unschedulable")
		taints, _, _ := unstructured.NestedSlice(o.Object, "spec", "taints")
		if o.GetKind() == "Node" && node == "" && !unschedulable && len(taints) == 0 {
			node = o.GetName()
		}
	}
	var out []string
	for _, o := range list.Items {
		nodeName, _, _ := unstructured.NestedString(o.Object, "spec", "nodeName")
		claims, _, _ := unstructured.NestedSlice(o.Object, "spec", "resourceClaims")
		if o.GetKind() != "Pod" || nodeName != "" || len(claims) > 0 || node == "" {
			continue
		}
		out = append(out, fmt.Sprintf(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":%q,"namespace":%q},"target":{"kind":"Node","name":%q}}`,
			o.GetName(), o.GetNamespace(), node))
	}
	return []byte(strings.Join(out, "\n")), nil
}

// fatalTB records what Check says when it fails the test, instead of failing it.
type fatalTB struct {
	testing.TB
	mu     sync.Mutex
	fatal  []string
	failed bool
}

func (f *fatalTB) stop(msg string) {
	f.mu.Lock()
	f.fatal = append(f.fatal, msg)
	f.failed = true
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fatalTB) Fatal(args ...any)                 { f.stop(fmt.Sprint(args...)) }
func (f *fatalTB) Fatalf(format string, args ...any) { f.stop(fmt.Sprintf(format, args...)) }
func (f *fatalTB) FailNow()                          { f.stop("FailNow") }
func (f *fatalTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	f.fatal = append(f.fatal, fmt.Sprintf(format, args...))
	f.failed = true
	f.mu.Unlock()
}
func (f *fatalTB) Failed() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.failed }

// runCheck runs Check with a recording TB on a goroutine of its own.
func runCheck(t *testing.T, sched gangpacktest.Scheduler, opts ...gangpacktest.Option) *fatalTB {
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		gangpacktest.Check(f, sched, opts...)
	}()
	<-done
	return f
}

func TestCheckFailsWithFindingsShrunkScenarioAndFiles(t *testing.T) {
	dir := t.TempDir()
	f := runCheck(t, firstNode, gangpacktest.Dir(dir), gangpacktest.WithKinds("pods"))
	if len(f.fatal) != 1 {
		t.Fatalf("Check should fail once, said %q", f.fatal)
	}
	msg := f.fatal[0]
	for _, want := range []string{
		"the scheduler's decisions break node-resources-exceeded",
		"on a generated scenario (seed ",
		"shrunk by gangpack: ",
		"re-check: gangpack check -f " + dir + "/shrunk.json --decisions " + dir + "/shrunk-decisions.yaml",
		"regenerate: gangpack gen --seed ",
		"reproduce: go test -run=",
		// rapid names its fail file, and the seed too unless -rapid.seed was given.
		"-rapid.failfile=",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	// The files are there, and the shrunk scenario with its decisions breaks the rule.
	shrunk, err := os.ReadFile(dir + "/shrunk.json")
	if err != nil {
		t.Fatal(err)
	}
	decisions, err := os.ReadFile(dir + "/shrunk-decisions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := gangpack.YAML(decisions)
	res, err := gangpack.Check(context.Background(), gangpack.YAML(shrunk), &gangpack.CheckOptions{Decisions: &dec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid || res.Findings[0].Rule != "node-resources-exceeded" {
		t.Errorf("the shrunk files do not reproduce the failure: %s", res.Table)
	}
	for _, name := range []string{"scenario.json", "decisions.yaml", "failure.txt"} {
		if _, err := os.Stat(dir + "/" + name); err != nil {
			t.Error(err)
		}
	}
}

func TestFindShrinksToTheFewObjectsTheFailureNeeds(t *testing.T) {
	ce, err := gangpacktest.Find(t, firstNode, gangpacktest.WithKinds("pods"))
	if err != nil {
		t.Fatal(err)
	}
	if ce == nil {
		t.Fatal("no counterexample")
	}
	if ce.Failure.Rule != "node-resources-exceeded" || ce.ShrunkFailure == nil || ce.ShrunkFailure.Rule != "node-resources-exceeded" {
		t.Fatalf("unexpected failure:\n%s", ce)
	}
	// A node and the pods that overflow it: at most three objects, where the
	// generated scenario has dozens.
	if n := ce.Objects(); n > 3 || n >= ce.Before.Objects {
		t.Errorf("shrunk to %d objects (from %d):\n%s", n, ce.Before.Objects, ce.Shrunk.Manifests)
	}
	if ce.After.Objects != ce.Objects() {
		t.Errorf("After.Objects %d, Objects() %d", ce.After.Objects, ce.Objects())
	}
	if !ce.Shrunk.Shrunk || ce.Scenario.Shrunk {
		t.Errorf("Shrunk flags: scenario %v, shrunk %v", ce.Scenario.Shrunk, ce.Shrunk.Shrunk)
	}
}

func TestPassingSchedulerRunsTheChecksAskedFor(t *testing.T) {
	var calls atomic.Int32
	gangpacktest.Check(t, func(s *gangpacktest.Scenario) ([]byte, error) {
		calls.Add(1)
		if s.Shrunk || len(s.Manifests) == 0 {
			return nil, errors.New("not a generated scenario")
		}
		return nil, nil // everything stays pending: valid
	}, gangpacktest.Checks(7))
	if n := calls.Load(); n != 7 {
		t.Errorf("the scheduler ran %d times, want 7", n)
	}
}

func TestSchedulerErrorsAndRefusedDecisionsFail(t *testing.T) {
	ce, err := gangpacktest.Find(t, func(s *gangpacktest.Scenario) ([]byte, error) {
		if strings.Contains(string(s.Manifests), `"kind": "Pod"`) {
			return nil, errors.New("cannot schedule pods")
		}
		return nil, nil
	}, gangpacktest.ShrinkRuns(200))
	if err != nil {
		t.Fatal(err)
	}
	if ce == nil || ce.Failure.Rule != gangpacktest.RuleSchedulerError || ce.ShrunkFailure.Rule != gangpacktest.RuleSchedulerError {
		t.Fatalf("want a scheduler error, got %v", ce)
	}
	ce, err = gangpacktest.Find(t, func(s *gangpacktest.Scenario) ([]byte, error) {
		return []byte(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"no-such-pod","namespace":"default"},"target":{"kind":"Node","name":"node-0"}}`), nil
	}, gangpacktest.ShrinkRuns(200))
	if err != nil {
		t.Fatal(err)
	}
	if ce == nil || ce.Failure.Rule != gangpacktest.RuleRefused || !strings.Contains(ce.Failure.Err.Error(), "no-such-pod") {
		t.Fatalf("want refused decisions naming the pod, got %v", ce)
	}
	ce, err = gangpacktest.Find(t, func(s *gangpacktest.Scenario) ([]byte, error) {
		var m map[string]int
		m["x"]++ // a nil map: panics
		return nil, nil
	}, gangpacktest.WithoutShrinking())
	if err != nil {
		t.Fatal(err)
	}
	if ce == nil || ce.Failure.Rule != gangpacktest.RuleSchedulerPanic || ce.Shrunk != nil {
		t.Fatalf("want an unshrunk panic, got %v", ce)
	}
}

func TestWrongOptionsAreErrorsNamingThem(t *testing.T) {
	_, err := gangpacktest.Find(t, firstNode, gangpacktest.WithFeatures("topology", "sharng"))
	if err == nil || !strings.Contains(err.Error(), "sharng") || !strings.Contains(err.Error(), "sharing") {
		t.Errorf("want an error naming the unknown feature and the closest, got %v", err)
	}
	_, err = gangpacktest.Find(t, firstNode, gangpacktest.WithSizes("huge"))
	if err == nil || !strings.Contains(err.Error(), "huge") {
		t.Errorf("want an error naming the size, got %v", err)
	}
}

func TestCancelledContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := gangpacktest.Find(t, firstNode, gangpacktest.WithContext(ctx))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("want context.Canceled, got %v", err)
	}
}

func TestGeneratorDrawsOnlyTheFeaturesAllowed(t *testing.T) {
	gen := gangpacktest.Generator(context.Background(), gangpacktest.WithFeatures("topology"),
		gangpacktest.WithSizes("small"), gangpacktest.WithKinds("gangs"))
	seen := map[string]bool{}
	rapid.Check(t, func(rt *rapid.T) {
		s := gen.Draw(rt, "scenario")
		if s.Size != "small" || s.Kind != "gangs" || len(s.Features) > 1 {
			rt.Fatalf("drew %s", s)
		}
		seen[s.FeatureList()] = true
		objs, err := s.Objects()
		if err != nil {
			rt.Fatal(err)
		}
		topology := strings.Contains(string(s.Manifests), `"topology"`)
		if topology && s.FeatureList() == "none" {
			rt.Fatalf("a topology constraint without the feature: %s", s)
		}
		for _, o := range objs {
			if o.GetObjectKind().GroupVersionKind().Kind == "" {
				rt.Fatalf("an object without its kind: %T", o)
			}
		}
	})
	if !seen["none"] || !seen["topology"] {
		t.Errorf("features drawn: %v", seen)
	}
}
