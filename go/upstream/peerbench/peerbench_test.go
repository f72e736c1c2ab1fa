package peerbench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
)

// workloads are the rows of the side-by-side table, in gangpack's order
// (`gangpack_benches::peer::peer_workloads`).
var workloads = []string{
	"1_gpu",
	"8_gpus_match_numa",
	"8_of_7_rejected",
	"4096x8_1_gpu_every_node",
	"4096x8_gang_64x8",
}

// fixturesOrSkip returns the fixture directory, or skips tb when it has not been
// generated.
func fixturesOrSkip(tb testing.TB) string {
	tb.Helper()
	dir := FixturesDir()
	if _, err := os.Stat(filepath.Join(dir, "workloads.json")); errors.Is(err, fs.ErrNotExist) {
		tb.Skipf("no peer-bench fixtures in %s: run scripts/peer-bench.sh, or "+
			"`cargo run -p gangpack-benches --release --bin peer-fixtures -- DIR` and set %s=DIR",
			dir, FixturesEnv)
	}
	return dir
}

func load(tb testing.TB, dir, name string) *Cluster {
	tb.Helper()
	c, err := Load(dir, name)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// deviceNuma is the `numa` attribute of every device, by pool and device name.
func deviceNuma(tb testing.TB, c *Cluster) map[[2]string]int {
	tb.Helper()
	out := map[[2]string]int{}
	for _, s := range c.Slices {
		for _, d := range s.Spec.Devices {
			a, ok := d.Attributes["numa"]
			if !ok || a.IntValue == nil {
				tb.Fatalf("%s: slice %s, device %s: no int attribute numa", c.Name, s.Name, d.Name)
			}
			out[[2]string{s.Spec.Pool.Name, d.Name}] = int(*a.IntValue)
		}
	}
	return out
}

// requestedCount is the device count pod's one claim asks for.
func requestedCount(tb testing.TB, c *Cluster, pod *v1.Pod) int {
	tb.Helper()
	if len(pod.Spec.ResourceClaims) != 1 || pod.Spec.ResourceClaims[0].ResourceClaimName == nil {
		tb.Fatalf("%s: pod %s: want one claim by name", c.Name, pod.Name)
	}
	claim := c.Claims[pod.Namespace+"/"+*pod.Spec.ResourceClaims[0].ResourceClaimName]
	if claim == nil || len(claim.Spec.Devices.Requests) != 1 || claim.Spec.Devices.Requests[0].Exactly == nil {
		tb.Fatalf("%s: pod %s: want a claim with one exactly request", c.Name, pod.Name)
	}
	return int(claim.Spec.Devices.Requests[0].Exactly.Count)
}

// placed turns a first fit into an Expect entry, checking the device count and, for a
// claim with a constraint, that every device is on one NUMA node.
func placed(tb testing.TB, c *Cluster, numa map[[2]string]int, pod *v1.Pod, node int, res []resourceapi.AllocationResult) *Placed {
	tb.Helper()
	if node < 0 {
		return nil
	}
	if len(res) != 1 {
		tb.Fatalf("%s: pod %s: %d results, want 1", c.Name, pod.Name, len(res))
	}
	devs := res[0].Devices.Results
	if want := requestedCount(tb, c, pod); len(devs) != want {
		tb.Fatalf("%s: pod %s: %d devices, want %d", c.Name, pod.Name, len(devs), want)
	}
	p := &Placed{Node: c.Nodes[node].Name}
	claim := c.Claims[pod.Namespace+"/"+*pod.Spec.ResourceClaims[0].ResourceClaimName]
	if len(claim.Spec.Devices.Constraints) > 0 {
		first := numa[[2]string{devs[0].Pool, devs[0].Device}]
		for _, d := range devs {
			if got := numa[[2]string{d.Pool, d.Device}]; got != first {
				tb.Fatalf("%s: pod %s: devices on NUMA %d and %d", c.Name, pod.Name, first, got)
			}
		}
		p.Numa = &first
	}
	return p
}

func (p *Placed) String() string {
	if p == nil {
		return "nowhere"
	}
	if p.Numa == nil {
		return p.Node
	}
	return fmt.Sprintf("%s (NUMA %d)", p.Node, *p.Numa)
}

// TestFixtures checks that the Go side loaded what gangpack wrote (counts of nodes,
// devices, tainted and allocated devices, pods), that the allocator NewAllocator picks
// for kube-scheduler's default features is the incubating one, and that upstream's
// allocator gives each workload's expected outcome: the number of nodes the first pod
// fits (Filter on every node) and, pod by pod, the first node in name order that fits
// with earlier pods' devices reserved.
func TestFixtures(t *testing.T) {
	dir := fixturesOrSkip(t)
	names, err := Workloads(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names, workloads) {
		t.Fatalf("workloads.json lists %v, want %v", names, workloads)
	}
	ctx := context.Background()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			c := load(t, dir, name)
			e := c.Expect
			devices, tainted := 0, 0
			for _, s := range c.Slices {
				if s.Spec.NodeName == nil || *s.Spec.NodeName == "" {
					t.Errorf("slice %s: want a node-local slice", s.Name)
				}
				devices += len(s.Spec.Devices)
				for _, d := range s.Spec.Devices {
					if len(d.Taints) > 0 {
						tainted++
					}
				}
			}
			for _, check := range []struct {
				what      string
				got, want int
			}{
				{"nodes", len(c.Nodes), e.Nodes},
				{"slices", len(c.Slices), e.Nodes},
				{"devices", devices, e.Devices},
				{"tainted devices", tainted, e.TaintedDevices},
				{"allocated devices", c.Allocated.Len(), e.AllocatedDevices},
				{"pending pods", len(c.Pods), e.Pods},
				{"device classes", len(c.Classes), 1},
			} {
				if check.got != check.want {
					t.Errorf("%s: %d, want %d", check.what, check.got, check.want)
				}
			}
			if t.Failed() {
				return
			}

			cycle, err := c.PreFilter(ctx, c.Pods[0])
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%T", cycle.Allocator); got != "*incubating.Allocator" {
				t.Errorf("allocator %s, want *incubating.Allocator (kube-scheduler 1.37's default features)", got)
			}
			fitting, err := c.FittingNodes(ctx, c.Pods[0])
			if err != nil {
				t.Fatal(err)
			}
			if fitting != e.FittingNodes {
				t.Errorf("first pod fits on %d nodes, want %d", fitting, e.FittingNodes)
			}

			numa := deviceNuma(t, c)
			run := c.Clone()
			for i, pod := range run.Pods {
				node, res, err := run.FirstFit(ctx, pod)
				if err != nil {
					t.Fatal(err)
				}
				got := placed(t, run, numa, pod, node, res)
				if want := e.FirstFit[i]; got.String() != want.String() {
					t.Errorf("pod %s: first fit %v, want %v", pod.Name, got, want)
				}
			}
			if c.Allocated.Len() != e.AllocatedDevices {
				t.Errorf("the run changed the loaded cluster's allocated set (clone shares it)")
			}
		})
	}
}

// TestLoadRejectsUnknownFields checks that a field the Go types do not have is an
// error naming the object, not dropped.
func TestLoadRejectsUnknownFields(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	objects := `{"apiVersion":"v1","kind":"List","items":[` +
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":{"bogus":1}}]}`
	if err := os.WriteFile(filepath.Join(dir, "w", "objects.json"), []byte(objects), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir, "w")
	if err == nil {
		t.Fatal("Load accepted a Node with an unknown field")
	}
	want := "items[0] (v1 Node)"
	if got := err.Error(); !contains(got, want) || !contains(got, "bogus") {
		t.Errorf("error %q does not name %q and the field", got, want)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
