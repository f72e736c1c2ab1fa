// Package gangpacktest is gangpack's test kit for schedulers written in Go: one
// property, "for every generated cluster, my decisions pass gangpack's Check",
// run with pgregory.net/rapid, and a failure shrunk to the few objects it needs.
//
//	func TestMyScheduler(t *testing.T) {
//		gangpacktest.Check(t, func(s *gangpacktest.Scenario) ([]byte, error) {
//			return myscheduler.Run(s.Manifests) // decisions: Bindings, claim status patches, ...
//		})
//	}
//
// Each check draws a scenario ([Generator]: a seed, a size, a workload kind and the
// test kit's features, as `gangpack gen` takes them), runs the scheduler on its
// manifests, and judges the decisions with [gangpack.Check] over the scenario
// (decisions as docs/DECISIONS.md describes them: v1 Bindings, merge patches, whole
// objects). A broken rule, a decision gangpack refuses, a scheduler error or a panic
// fails the property. rapid then shrinks what it drew (toward small scenarios of
// plain pods with few features), and gangpack shrinks the failing scenario itself
// ([gangpack.Shrink]): whole objects, list items, fields and numbers go while the
// scheduler's decisions on what is left still break the same rule.
//
// [Check] fails the test with the findings before and after shrinking, and writes
// the scenarios and decisions to files to look at and to re-check with the gangpack
// command; [Find] returns the [Counterexample] instead.
package gangpacktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gangpack/gangpack/go/gangpack"
	"pgregory.net/rapid"
)

// Scheduler is the scheduler under test: it reads the scenario and returns its
// decisions as manifests (YAML or JSON, several documents or a `kind: List`): v1
// Bindings, merge patches (a ResourceClaim with only status, a Pod with only
// spec.nodeName) or whole objects, as docs/DECISIONS.md describes. Leaving a pod
// pending is valid: return no decision for it. An error fails the property.
type Scheduler func(s *Scenario) (decisions []byte, err error)

// The rules a failure has besides gangpack's (which are Check's rule names,
// `device-allocated-twice`, ...).
const (
	// RuleSchedulerError: the scheduler returned an error.
	RuleSchedulerError = "scheduler-error"
	// RuleSchedulerPanic: the scheduler panicked.
	RuleSchedulerPanic = "scheduler-panic"
	// RuleRefused: gangpack refused the decisions (a pod the scenario lacks, a claim's
	// spec changed, a pod bound twice, ...; docs/DECISIONS.md, "Refused decisions").
	RuleRefused = "decisions-refused"
)

// Failure is why a scenario fails the property.
type Failure struct {
	// Rule is the first broken rule of Findings, or RuleSchedulerError,
	// RuleSchedulerPanic or RuleRefused. Shrinking keeps a candidate that fails with
	// the same Rule.
	Rule string
	// Findings are every rule the decisions break, as gangpack's Check lists them.
	Findings []gangpack.Finding
	// Table is what `gangpack check` prints for them.
	Table string
	// Err is the scheduler's error, its panic, or gangpack's refusal.
	Err error
}

// String is the failure in a few lines: each finding with its objects, or the error.
func (f *Failure) String() string {
	var b strings.Builder
	if len(f.Findings) == 0 {
		fmt.Fprintf(&b, "%s: %v\n", f.Rule, f.Err)
		return b.String()
	}
	for _, x := range f.Findings {
		fmt.Fprintf(&b, "%s: %s\n", x.Rule, x.Message)
		var objs []string
		for _, o := range x.Objects {
			name := o.Name
			if o.Namespace != "" {
				name = o.Namespace + "/" + o.Name
			}
			objs = append(objs, o.Kind+" "+name)
		}
		if len(objs) > 0 {
			fmt.Fprintf(&b, "  objects: %s\n", strings.Join(objs, ", "))
		}
	}
	return b.String()
}

// has says whether f fails with rule.
func (f *Failure) has(rule string) bool {
	if f.Rule == rule {
		return true
	}
	for _, x := range f.Findings {
		if x.Rule == rule {
			return true
		}
	}
	return false
}

// evaluate runs the scheduler on the scenario and judges its decisions: the
// failure, or nil. judgeable is false when gangpack cannot read the scenario (only a
// shrink candidate can be such); err is gangpack failing.
func evaluate(ctx context.Context, c *config, sched Scheduler, s *Scenario) (decisions []byte, f *Failure, judgeable bool, err error) {
	decisions, schedErr := run(sched, s)
	if schedErr != nil {
		// Only a scenario gangpack reads counts: a candidate that lost what makes it
		// valid input says nothing about the scheduler.
		if _, err := gangpack.Check(ctx, s.Input(), nil, nil); err != nil {
			var e *gangpack.Error
			if errors.As(err, &e) && e.Kind != gangpack.KindInternal {
				return nil, nil, false, nil
			}
			return nil, nil, false, err
		}
		rule := RuleSchedulerError
		var p panicError
		if errors.As(schedErr, &p) {
			rule = RuleSchedulerPanic
		}
		return nil, &Failure{Rule: rule, Err: schedErr}, true, nil
	}
	res, refused, ok, err := judge(ctx, s, decisions, c.admission)
	switch {
	case err != nil || !ok:
		return decisions, nil, false, err
	case refused != nil:
		return decisions, &Failure{Rule: RuleRefused, Err: refused}, true, nil
	case res.Valid || len(res.Findings) == 0:
		return decisions, nil, true, nil
	}
	return decisions, &Failure{Rule: res.Findings[0].Rule, Findings: res.Findings, Table: res.Table}, true, nil
}

type panicError struct{ value any }

func (p panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// run calls the scheduler, a panic made an error.
func run(sched Scheduler, s *Scenario) (out []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError{v}
		}
	}()
	return sched(s)
}

// Counterexample is a scenario the scheduler fails on, before and after shrinking.
type Counterexample struct {
	// Scenario is the generated scenario rapid found (after shrinking what it drew).
	Scenario *Scenario
	// Decisions are the scheduler's decisions on it, and Failure why they fail.
	Decisions []byte
	Failure   *Failure
	// Shrunk is the scenario after gangpack's shrinking (nil without shrinking):
	// every object, list item and field left is needed to break Failure.Rule.
	Shrunk *Scenario
	// ShrunkDecisions are the scheduler's decisions on Shrunk, and ShrunkFailure why
	// they fail.
	ShrunkDecisions []byte
	ShrunkFailure   *Failure
	// ShrinkRuns is how many times shrinking ran the scheduler and Check, and
	// ShrinkTime how long it took; ShrinkStopped is "" when shrinking finished, else
	// why it stopped early ("maxRuns", "stopped": the time ran out or ctx was done).
	ShrinkRuns    uint64
	ShrinkTime    time.Duration
	ShrinkStopped string
	// Before and After count objects, list items and fields of Scenario and Shrunk.
	Before, After Size
	// Reproduce is how to run the failing check again, as rapid says it
	// (`-run="^TestX$" -rapid.failfile="..." (or -rapid.seed=N)`).
	Reproduce string
	// Files are the paths [Counterexample.WriteFiles] wrote, by name.
	Files map[string]string
}

// Size counts a scenario's objects, the items of its lists and its fields.
type Size struct{ Objects, Items, Fields int }

// Objects is the number of objects of the smallest failing scenario.
func (c *Counterexample) Objects() int {
	s := c.Scenario
	if c.Shrunk != nil {
		s = c.Shrunk
	}
	n, _ := countObjects(s.Manifests)
	return n
}

// String is the counterexample in a few lines: the findings before and after
// shrinking, the sizes, the files and how to reproduce it.
func (c *Counterexample) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gangpacktest: the scheduler's decisions break %s\n", c.Failure.Rule)
	fmt.Fprintf(&b, "on a generated scenario (%s):\n", c.Scenario)
	b.WriteString(indent(limit(c.Failure.String(), 12)))
	if c.Shrunk != nil && c.ShrunkFailure != nil {
		stopped := ""
		if c.ShrinkStopped != "" {
			stopped = ", stopped early: " + c.ShrinkStopped
		}
		fmt.Fprintf(&b, "shrunk by gangpack: %d objects → %d, %d list items → %d, %d fields → %d (%d runs, %s%s); on it:\n",
			c.Before.Objects, c.After.Objects, c.Before.Items, c.After.Items, c.Before.Fields, c.After.Fields,
			c.ShrinkRuns, c.ShrinkTime.Round(time.Millisecond), stopped)
		b.WriteString(indent(limit(c.ShrunkFailure.String(), 12)))
	}
	if len(c.Files) > 0 {
		b.WriteString("files:\n")
		for _, k := range []string{"shrunk", "shrunk-decisions", "scenario", "decisions"} {
			if p, ok := c.Files[k]; ok {
				fmt.Fprintf(&b, "  %s\n", p)
			}
		}
		if sc, ok := c.Files["shrunk"]; ok {
			fmt.Fprintf(&b, "re-check: gangpack check -f %s --decisions %s\n", sc, c.Files["shrunk-decisions"])
		} else if sc, ok := c.Files["scenario"]; ok {
			fmt.Fprintf(&b, "re-check: gangpack check -f %s --decisions %s\n", sc, c.Files["decisions"])
		}
	}
	fmt.Fprintf(&b, "regenerate: %s\n", c.Scenario.Command())
	if c.Reproduce != "" {
		fmt.Fprintf(&b, "reproduce: go test %s\n", c.Reproduce)
	}
	return b.String()
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "    " + strings.Join(lines, "\n    ") + "\n"
}

// limit keeps the first n lines of s, saying how many it left out.
func limit(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... (%d more lines)\n", len(lines)-n)
}

// WriteFiles writes the counterexample to dir (created if missing; files of an
// earlier counterexample there are replaced): scenario.json and decisions.yaml
// (the generated scenario and the scheduler's decisions on it), shrunk.json and
// shrunk-decisions.yaml (the same after shrinking), and failure.txt (the
// summary). It returns the paths by name ("scenario", "decisions", "shrunk",
// "shrunk-decisions", "failure") and records them in Files.
func (c *Counterexample) WriteFiles(dir string) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("gangpacktest: %w", err)
	}
	files := map[string]string{}
	put := func(key, name string, b []byte) error {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return fmt.Errorf("gangpacktest: %w", err)
		}
		files[key] = p
		return nil
	}
	for _, name := range []string{"shrunk.json", "shrunk-decisions.yaml"} {
		os.Remove(filepath.Join(dir, name)) // not left over from an earlier failure
	}
	if err := put("scenario", "scenario.json", c.Scenario.Manifests); err != nil {
		return nil, err
	}
	if err := put("decisions", "decisions.yaml", c.Decisions); err != nil {
		return nil, err
	}
	if c.Shrunk != nil {
		if err := put("shrunk", "shrunk.json", c.Shrunk.Manifests); err != nil {
			return nil, err
		}
		if err := put("shrunk-decisions", "shrunk-decisions.yaml", c.ShrunkDecisions); err != nil {
			return nil, err
		}
	}
	c.Files = files
	if err := put("failure", "failure.txt", []byte(c.String())); err != nil {
		return nil, err
	}
	c.Files = files
	return files, nil
}

// Check runs the property "for every generated scenario, the scheduler's decisions
// pass gangpack's Check" (see the package documentation). On a failure it shrinks
// the scenario, writes the counterexample's files ([Dir]; default
// testdata/gangpacktest/<test name>) and fails t with the findings before and
// after shrinking, the files and how to reproduce it (rapid's -rapid.seed, or its
// fail file, which the next `go test` replays first). It also fails t when gangpack
// cannot run or the context ends before the checks do.
func Check(t testing.TB, sched Scheduler, opts ...Option) {
	t.Helper()
	c := newConfig(opts)
	ce, err := find(t, c, sched)
	if err != nil {
		t.Fatalf("gangpacktest: %v", err)
	}
	if ce == nil {
		return
	}
	dir := c.dir
	if dir == "" {
		dir = filepath.Join("testdata", "gangpacktest", safeName(t.Name()))
	}
	if _, err := ce.WriteFiles(dir); err != nil {
		t.Errorf("%v", err)
	}
	t.Fatal("\n" + ce.String())
}

// Find is [Check] without failing t: the counterexample (shrunk, unless
// [WithoutShrinking]), or nil when every check passes. t names rapid's fail file
// and receives rapid's log; no files of the counterexample are written (see
// [Counterexample.WriteFiles]). An error means gangpack could not run, an option is
// wrong (an unknown feature, size or kind), or the context ended.
func Find(t testing.TB, sched Scheduler, opts ...Option) (*Counterexample, error) {
	t.Helper()
	return find(t, newConfig(opts), sched)
}

func safeName(name string) string {
	return regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(name, "_")
}

// found is a failing check.
type found struct {
	scenario  *Scenario
	decisions []byte
	failure   *Failure
}

func find(t testing.TB, c *config, sched Scheduler) (*Counterexample, error) {
	t.Helper()
	ctx := c.ctx
	if ctx == nil {
		ctx = t.Context()
	}
	if len(c.sizes) == 0 || len(c.kinds) == 0 {
		return nil, errors.New("gangpacktest: no size or no kind to draw from")
	}
	// Every option at once, so that a wrong one is an error naming it, before rapid.
	probe := &Scenario{Size: c.sizes[len(c.sizes)-1], Kind: c.kinds[len(c.kinds)-1], Features: c.features}
	for _, size := range c.sizes {
		for _, kind := range c.kinds {
			probe.Size, probe.Kind = size, kind
			if _, err := generate(ctx, probe); err != nil {
				return nil, fmt.Errorf("gangpacktest: %s: %w", probe.Command(), err)
			}
		}
	}

	rec := &recorder{TB: t}
	gen := generator(ctx, c)
	var (
		mu       sync.Mutex
		last     *found
		failed   bool // a failure was seen: every later run is rapid's shrinking
		runs     int
		internal error
	)
	rapid.Check(rec, func(rt *rapid.T) {
		mu.Lock()
		skip := ctx.Err() != nil || internal != nil || c.checks > 0 && !failed && runs >= c.checks
		if !skip {
			runs++
		}
		mu.Unlock()
		if skip {
			return // the checks asked for are done (or stopped): the rest pass at once
		}
		s := gen.Draw(rt, "scenario")
		decisions, f, judgeable, err := evaluate(ctx, c, sched, s)
		if err == nil && !judgeable {
			err = fmt.Errorf("gangpack cannot read its own generated scenario (%s)", s.Command())
		}
		if err != nil {
			mu.Lock()
			if ctx.Err() == nil {
				internal = err
			}
			mu.Unlock()
			return
		}
		if f != nil {
			mu.Lock()
			failed = true
			last = &found{scenario: s, decisions: decisions, failure: f}
			mu.Unlock()
			rt.Fatalf("%s on %s:\n%s", f.Rule, s, limit(f.String(), 6))
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gangpacktest: stopped after %d checks: %w", runs, err)
	}
	if internal != nil {
		return nil, fmt.Errorf("gangpacktest: %w", internal)
	}
	if !rec.failed() {
		t.Logf("gangpacktest: %d scenarios passed (sizes %s, kinds %s, features drawn from %s)",
			runs, strings.Join(c.sizes, ","), strings.Join(c.kinds, ","), strings.Join(c.features, ","))
		return nil, nil
	}
	if last == nil {
		return nil, fmt.Errorf("gangpacktest: rapid failed:\n%s", rec.text())
	}
	ce := &Counterexample{
		Scenario:  last.scenario,
		Decisions: last.decisions,
		Failure:   last.failure,
		Reproduce: rec.reproduce(),
	}
	if c.shrink {
		if err := shrinkCounterexample(ctx, c, sched, ce); err != nil {
			return nil, err
		}
	}
	return ce, nil
}

// shrinkCounterexample shrinks ce.Scenario with gangpack while the scheduler's
// decisions on a candidate still break the same rule.
func shrinkCounterexample(ctx context.Context, c *config, sched Scheduler, ce *Counterexample) error {
	rule := ce.Failure.Rule
	candidate := func(text []byte) *Scenario {
		s := *ce.Scenario
		s.Manifests, s.Shrunk, s.ctx = text, true, ctx
		return &s
	}
	start := time.Now()
	text, stats, err := shrink(ctx, c, ce.Scenario, func(text []byte) (bool, error) {
		_, f, judgeable, err := evaluate(ctx, c, sched, candidate(text))
		if err != nil {
			return false, err
		}
		return judgeable && f != nil && f.has(rule), nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("gangpacktest: shrinking stopped: %w", ctx.Err())
		}
		return fmt.Errorf("gangpacktest: shrinking: %w", err)
	}
	ce.ShrinkTime = time.Since(start)
	ce.ShrinkRuns, ce.ShrinkStopped = stats.runs, stats.stopped
	ce.Before = Size{stats.before[0], stats.before[1], stats.before[2]}
	ce.After = Size{stats.after[0], stats.after[1], stats.after[2]}
	shrunk := candidate(text)
	decisions, f, judgeable, err := evaluate(ctx, c, sched, shrunk)
	if err != nil {
		return fmt.Errorf("gangpacktest: the shrunk scenario: %w", err)
	}
	if !judgeable || f == nil {
		// The scheduler is not deterministic: the scenario that failed passes now.
		return fmt.Errorf("gangpacktest: the shrunk scenario passes when run again "+
			"(is the scheduler deterministic?); the unshrunk counterexample fails with %s", rule)
	}
	ce.Shrunk, ce.ShrunkDecisions, ce.ShrunkFailure = shrunk, decisions, f
	return nil
}

// recorder is the TB rapid reports to: it keeps rapid's failure and log instead of
// failing the test, so that gangpack can shrink the counterexample first.
type recorder struct {
	testing.TB
	mu        sync.Mutex
	buf       strings.Builder
	hasFailed bool
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf.WriteString(s)
	if !strings.HasSuffix(s, "\n") {
		r.buf.WriteString("\n")
	}
}

func (r *recorder) fail() {
	r.mu.Lock()
	r.hasFailed = true
	r.mu.Unlock()
}

func (r *recorder) failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hasFailed
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

var reproduceLine = regexp.MustCompile(`To reproduce, specify (.*)`)

// reproduce is rapid's "To reproduce" arguments.
func (r *recorder) reproduce() string {
	m := reproduceLine.FindStringSubmatch(r.text())
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1])
}

func (r *recorder) Log(args ...any)                 { r.note(fmt.Sprintln(args...)) }
func (r *recorder) Logf(format string, args ...any) { r.note(fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)               { r.note(fmt.Sprintln(args...)); r.fail() }
func (r *recorder) Errorf(format string, args ...any) {
	r.note(fmt.Sprintf(format, args...))
	r.fail()
}
func (r *recorder) Fatal(args ...any)                 { r.Error(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
func (r *recorder) Fail()                             { r.fail() }

// FailNow only records: rapid calls it last, after its report, from the test's
// goroutine, and Check goes on to shrink and report.
func (r *recorder) FailNow()     { r.fail() }
func (r *recorder) Failed() bool { return r.failed() }
