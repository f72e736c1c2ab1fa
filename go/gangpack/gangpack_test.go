package gangpack

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var ctx = context.Background()

// The repository's examples, as the README's commands read them.
var (
	cluster       = Files("../../examples/cluster")
	firstAvail    = Join(cluster, Files("../../examples/claim-first-available.yaml"))
	gangRack      = Join(cluster, Files("../../examples/gang-rack.yaml"))
	runningJob    = Join(cluster, Files("../../examples/running-job.yaml"))
	naiveDecision = Files("../../examples/testing/naive-decision.yaml")
)

func kindOf(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *gangpack.Error, got %T %v", err, err)
	}
	return e
}

func TestImportsAreOnlyTheHostModule(t *testing.T) {
	e, err := getEngine()
	if err != nil {
		t.Fatal(err)
	}
	imports := e.compiled.ImportedFunctions()
	if len(imports) != 1 {
		t.Errorf("want one import, got %d", len(imports))
	}
	for _, f := range imports {
		mod, name, _ := f.Import()
		if mod != "gangpack_host" || name != "judge" {
			t.Errorf("unexpected import %s.%s", mod, name)
		}
	}
	for _, m := range e.compiled.ImportedMemories() {
		mod, name, _ := m.Import()
		t.Errorf("unexpected memory import %s.%s", mod, name)
	}
}

func TestVersion(t *testing.T) {
	v, err := Version(ctx)
	if err != nil || v == "" {
		t.Fatalf("Version() = %q, %v", v, err)
	}
}

func TestPlanExamples(t *testing.T) {
	r, err := Plan(ctx, runningJob, nil)
	if err != nil || r.Pending || len(r.List.Items) != 0 || !strings.HasPrefix(r.Table, "nothing to schedule") {
		t.Errorf("running-job: %+v %v", r, err)
	}
	for name, in := range map[string]Input{"first-available": firstAvail, "gang-rack": gangRack} {
		t.Run(name, func(t *testing.T) {
			p, err := Plan(ctx, in, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p.ExitCode != 0 && p.ExitCode != 3 || p.Pending != (p.ExitCode == 3) {
				t.Errorf("exit %d pending %v", p.ExitCode, p.Pending)
			}
			if !strings.Contains(p.Table, "UNIT") || len(p.List.Items) == 0 {
				t.Errorf("table %q, %d items", p.Table, len(p.List.Items))
			}
			// The plan's decisions pass the validator.
			c, err := Check(ctx, in, &CheckOptions{Decisions: ptr(Named("plan.json", mustJSON(t, p.List.UnstructuredContent(), p)))}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Valid || c.Decided == 0 {
				t.Errorf("plan's decisions: valid %v decided %d findings %+v", c.Valid, c.Decided, c.Findings)
			}
		})
	}
	p, err := Plan(ctx, firstAvail, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Table, "ml/chat-inference") || p.Pending {
		t.Errorf("first-available: %s", p.Table)
	}
}

func ptr[T any](v T) *T { return &v }

func mustJSON(t *testing.T, _ map[string]any, p *PlanResult) []byte {
	t.Helper()
	b, err := p.List.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCheckFindsTheNaiveSchedulersBug(t *testing.T) {
	in := Files("../../examples/cluster", "../../examples/gang-rack.yaml")
	c, err := Check(ctx, in, &CheckOptions{Decisions: &naiveDecision}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Valid || c.ExitCode != 4 || len(c.Findings) == 0 {
		t.Fatalf("want findings, got valid %v %+v", c.Valid, c.Findings)
	}
	for _, f := range c.Findings {
		if f.Rule == "" || f.Message == "" || len(f.Objects) == 0 {
			t.Errorf("finding without rule, message or objects: %+v", f)
		}
	}
	if !strings.Contains(c.Table, c.Findings[0].Rule) {
		t.Errorf("table lacks %s:\n%s", c.Findings[0].Rule, c.Table)
	}
}

func TestErrorsNameObjectAndField(t *testing.T) {
	bad := YAML([]byte(`apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ns}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu, count: -1}
`))
	_, err := Plan(ctx, bad, nil)
	e := kindOf(t, err)
	if e.Kind != KindInvalidInput || len(e.Problems) == 0 {
		t.Fatalf("got %+v", e)
	}
	p := e.Problems[0]
	if !strings.Contains(p.Object, "ns/c") || !strings.Contains(p.Field, "count") || p.File != "input" {
		t.Errorf("problem %+v lacks object, field or file", p)
	}
	_, err = Plan(ctx, cluster, &Options{Policy: "Fastest"})
	e = kindOf(t, err)
	if e.Kind != KindInvalidArgument || e.Problems[0].Field != "options.policy" {
		t.Errorf("got %+v", e)
	}
	_, err = Explain(ctx, gangRack, Unit{PodGroup: "nowhere/none"}, nil)
	if e := kindOf(t, err); e.Kind != KindNotFound {
		t.Errorf("got %+v", e)
	}
	_, err = Plan(ctx, Files("no/such/dir"), nil)
	if e := kindOf(t, err); e.Kind != KindIoError || e.Problems[0].File != "no/such/dir" {
		t.Errorf("got %+v", e)
	}
}

func TestExplain(t *testing.T) {
	r, err := Explain(ctx, gangRack, Unit{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Text == "" {
		t.Error("empty explanation")
	}
}

// A small hand-written cluster: one node with two GPUs, one GPU already allocated.
func allocScenario() []runtime.Object {
	meta := func(name, ns string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }
	claim := func(name string, count int64) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{ObjectMeta: meta(name, "ns"), Spec: resourcev1.ResourceClaimSpec{
			Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
				Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count},
			}}}}}
	}
	held := claim("held", 1)
	held.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
		Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: "gpu.example.com", Pool: "n1", Device: "gpu-0"}}}}
	node := "n1"
	return []runtime.Object{
		&corev1.Node{ObjectMeta: meta("n1", ""), Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}}},
		&resourcev1.DeviceClass{ObjectMeta: meta("gpu", ""), Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{
			{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}}},
		&resourcev1.ResourceSlice{ObjectMeta: meta("n1-gpus", ""), Spec: resourcev1.ResourceSliceSpec{
			Driver: "gpu.example.com", NodeName: &node, Pool: resourcev1.ResourcePool{Name: "n1", ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "gpu-0"}, {Name: "gpu-1"}}}},
		held, claim("one", 1), claim("two", 2),
	}
}

func TestAllocate(t *testing.T) {
	in := Objects(allocScenario()...)
	r, err := Allocate(ctx, in, "n1", []string{"ns/one"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != "allocated" || len(r.Results) != 1 {
		t.Fatalf("got %+v", r)
	}
	got := r.Results[0].Devices.Results
	if len(got) != 1 || got[0].Device != "gpu-1" || got[0].Pool != "n1" || got[0].Request != "gpu" {
		t.Errorf("want gpu-1 (gpu-0 is held), got %+v", got)
	}
	r, err = Allocate(ctx, in, "n1", []string{"ns/two"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != "unsatisfiable" || !strings.Contains(r.Reason, "ns/two") || len(r.Results) != 0 {
		t.Errorf("want unsatisfiable naming ns/two, got %+v", r)
	}
	// Together: one fits, two does not: all or none.
	r, err = Allocate(ctx, in, "n1", []string{"ns/one", "ns/two"}, nil)
	if err != nil || r.Outcome != "unsatisfiable" {
		t.Errorf("got %+v %v", r, err)
	}
	for i, c := range map[int][]string{0: {"ns/missing"}, 1: {"ns/one", "ns/held"}, 2: {"one"}} {
		_, err = Allocate(ctx, in, "n1", c, nil)
		e := kindOf(t, err)
		want := "claims[0]"
		if i == 1 {
			want = "claims[1]"
		}
		if e.Kind != KindInvalidArgument || e.Problems[0].Field != want {
			t.Errorf("%v: got %+v", c, e)
		}
	}
	_, err = Allocate(ctx, in, "n9", []string{"ns/one"}, nil)
	if e := kindOf(t, err); e.Kind != KindNotFound {
		t.Errorf("unknown node: got %+v", e)
	}
	r, err = Allocate(ctx, in, "n1", []string{"ns/one"}, &AllocateOptions{StepBudget: 1})
	if err != nil || r.Outcome == "" {
		t.Errorf("budget 1: %+v %v", r, err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	in := Objects(allocScenario()...)
	want, err := Plan(ctx, gangRack, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 4; i++ {
				if g%2 == 0 {
					p, err := Plan(ctx, gangRack, nil)
					if err != nil || p.Table != want.Table {
						errs <- errors.New("plan differs under concurrency")
						return
					}
				} else {
					r, err := Allocate(ctx, in, "n1", []string{"ns/one"}, nil)
					if err != nil || r.Results[0].Devices.Results[0].Device != "gpu-1" {
						errs <- errors.New("allocate differs under concurrency")
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}
