// Package peerbench times Kubernetes' own DRA allocator
// (k8s.io/dynamic-resource-allocation/structured, the 1.37 release) on the workloads
// of gangpack's side-by-side benchmark, driven as kube-scheduler 1.37's
// DynamicResources plugin drives it. The gangpack side is `benches/benches/peer.rs`;
// `scripts/peer-bench.sh` runs both and prints the table.
//
// The workloads are not defined here: gangpack's benches write them
// (`cargo run -p gangpack-benches --release --bin peer-fixtures -- DIR`) as the
// Kubernetes objects of each workload, DIR/<workload>/objects.json, with what each
// must give, DIR/<workload>/expect.json. This package loads them ([Load]) and runs a
// pod through the plugin's steps:
//
//   - PreFilter, once per pod ([Cluster.PreFilter]): the pod's claims looked up by
//     name, the class of every request checked, the allocated state gathered (a copy
//     of the set of allocated devices, as the scheduler's claim tracker hands out a
//     fresh set per call, plus empty shared-device and capacity collections), the
//     ResourceSlices listed (a fresh slice of pointers, as the informer's lister
//     returns), and structured.NewAllocator with the features kube-scheduler 1.37
//     enables by default (admin access, prioritized list, partitionable devices,
//     device taints, binding conditions with device status, consumable capacity: the
//     "incubating" allocator) and the plugin's CEL cache, which lives across pods.
//   - Filter, once per node ([PodCycle.Filter]): Allocate(node, the claims to
//     allocate). A node fits when every claim gets a result.
//   - Reserve ([Cluster.Reserve]): the devices of the chosen node's results added to
//     the allocated set, which the next pod's PreFilter copies.
//
// What is left out, and why it only flatters upstream: the scheduler's other plugins,
// the framework's per-node bookkeeping, logging (off at the default verbosity), the
// parallel Filter (16 goroutines, but GOMAXPROCS=2 here, and gangpack's side is
// serial too), and scoring (the pod-by-pod run takes the first node that fits in
// name order; kube-scheduler would filter until it has found a share of the nodes
// feasible, then score them).
package peerbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gangpack/gangpack/go/upstream"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
)

// FixturesEnv names the environment variable that points at the fixture directory.
const FixturesEnv = "GANGPACK_PEER_FIXTURES"

// DefaultFixtures is where scripts/peer-bench.sh writes the fixtures, relative to
// this package's directory (go test runs there).
const DefaultFixtures = "../../../target/peer-bench/fixtures"

// FixturesDir is the fixture directory: $GANGPACK_PEER_FIXTURES, else
// [DefaultFixtures].
func FixturesDir() string {
	if d := os.Getenv(FixturesEnv); d != "" {
		return d
	}
	return DefaultFixtures
}

// Features are the allocator features kube-scheduler 1.37 turns on with its default
// feature gates: the differential's (upstream.Features137).
var Features = upstream.Features137

// Expect is what a workload must give (gangpack's `peer::Expect`, worked out from
// the workload's definition by arithmetic).
type Expect struct {
	Nodes            int       `json:"nodes"`
	Devices          int       `json:"devices"`
	TaintedDevices   int       `json:"taintedDevices"`
	AllocatedDevices int       `json:"allocatedDevices"`
	Pods             int       `json:"pods"`
	FittingNodes     int       `json:"fittingNodes"`
	FirstFit         []*Placed `json:"firstFit"`
}

// Placed is where the first fit puts a pod: the node, and for a claim with a NUMA
// constraint the NUMA node of its devices.
type Placed struct {
	Node string `json:"node"`
	Numa *int   `json:"numa"`
}

// Cluster is one workload's objects, as the scheduler's informers would hold them.
type Cluster struct {
	// Name is the workload's name (its directory).
	Name string
	// Nodes in name order.
	Nodes []*v1.Node
	// Slices in file order.
	Slices []*resourceapi.ResourceSlice
	// Classes by name.
	Classes ClassLister
	// Claims by namespace/name.
	Claims map[string]*resourceapi.ResourceClaim
	// Pending pods (no spec.nodeName), in file order.
	Pods []*v1.Pod
	// Allocated is every device held by an allocated claim (admin access excluded),
	// kept up to date by [Cluster.Reserve], as the scheduler's claim tracker keeps it.
	Allocated sets.Set[structured.DeviceID]
	// Expect is what the workload must give.
	Expect Expect

	celCache *cel.Cache
}

// ClassLister serves DeviceClasses from a map (the scheduler's informer cache): the
// differential's (upstream.ClassLister).
type ClassLister = upstream.ClassLister

// Workloads lists the workload names the fixture directory holds, in order.
func Workloads(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "workloads.json"))
	if err != nil {
		return nil, err
	}
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "workloads.json"), err)
	}
	return names, nil
}

// Load reads workload name from the fixture directory.
func Load(dir, name string) (*Cluster, error) {
	path := filepath.Join(dir, name, "objects.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var list struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if list.Kind != "List" {
		return nil, fmt.Errorf("%s: kind %q, want List", path, list.Kind)
	}
	c := &Cluster{
		Name:      name,
		Classes:   ClassLister{},
		Claims:    map[string]*resourceapi.ResourceClaim{},
		Allocated: sets.New[structured.DeviceID](),
		celCache:  cel.NewCache(10, cel.Features{EnableConsumableCapacity: Features.ConsumableCapacity}),
	}
	for i, raw := range list.Items {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("%s: items[%d]: %w", path, i, err)
		}
		where := fmt.Sprintf("%s: items[%d] (%s %s)", path, i, meta.APIVersion, meta.Kind)
		switch meta.APIVersion + " " + meta.Kind {
		case "v1 Node":
			var n v1.Node
			if err := decode(raw, &n); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			c.Nodes = append(c.Nodes, &n)
		case "resource.k8s.io/v1 ResourceSlice":
			var s resourceapi.ResourceSlice
			if err := decode(raw, &s); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			c.Slices = append(c.Slices, &s)
		case "resource.k8s.io/v1 DeviceClass":
			var d resourceapi.DeviceClass
			if err := decode(raw, &d); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			c.Classes[d.Name] = &d
		case "resource.k8s.io/v1 ResourceClaim":
			var r resourceapi.ResourceClaim
			if err := decode(raw, &r); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			c.Claims[r.Namespace+"/"+r.Name] = &r
			if r.Status.Allocation != nil {
				for _, d := range r.Status.Allocation.Devices.Results {
					if d.AdminAccess != nil && *d.AdminAccess {
						continue
					}
					c.Allocated.Insert(structured.MakeDeviceID(d.Driver, d.Pool, d.Device))
				}
			}
		case "v1 Pod":
			var p v1.Pod
			if err := decode(raw, &p); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			if p.Spec.NodeName == "" {
				c.Pods = append(c.Pods, &p)
			}
		case "v1 Namespace", "scheduling.k8s.io/v1beta1 PodGroup", "scheduling.k8s.io/v1beta1 Workload":
			// Not read by the allocator.
		default:
			return nil, fmt.Errorf("%s: not a kind the peer benchmark reads", where)
		}
	}
	slices.SortFunc(c.Nodes, func(a, b *v1.Node) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	expectPath := filepath.Join(dir, name, "expect.json")
	data, err = os.ReadFile(expectPath)
	if err != nil {
		return nil, err
	}
	if err := decode(data, &c.Expect); err != nil {
		return nil, fmt.Errorf("%s: %w", expectPath, err)
	}
	return c, nil
}

// decode is a strict json.Unmarshal: a field the Go type does not have is an error,
// so nothing the gangpack side wrote is silently dropped.
func decode(data []byte, into any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(into)
}

// Clone returns a copy whose allocated set can change without touching c's (the
// objects themselves are shared, read-only, as informer caches share them).
func (c *Cluster) Clone() *Cluster {
	out := *c
	out.Allocated = c.Allocated.Clone()
	return &out
}

// PodCycle is one pod's scheduling cycle after PreFilter.
type PodCycle struct {
	// Pod is the pod.
	Pod *v1.Pod
	// Claims are the pod's claims that need an allocation, in pod order.
	Claims []*resourceapi.ResourceClaim
	// Allocator is the allocator PreFilter built for this pod.
	Allocator structured.Allocator
}

// PreFilter is the DynamicResources plugin's PreFilter for pod: its claims, the
// classes they name, the allocated state and the allocator.
func (c *Cluster) PreFilter(ctx context.Context, pod *v1.Pod) (*PodCycle, error) {
	cycle := &PodCycle{Pod: pod}
	for i := range pod.Spec.ResourceClaims {
		name, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if name == nil {
			continue
		}
		claim, ok := c.Claims[pod.Namespace+"/"+*name]
		if !ok {
			return nil, fmt.Errorf("pod %s/%s: spec.resourceClaims[%d]: claim %s not found", pod.Namespace, pod.Name, i, *name)
		}
		if claim.Status.Allocation != nil {
			continue
		}
		for _, r := range claim.Spec.Devices.Requests {
			if r.Exactly == nil {
				return nil, fmt.Errorf("claim %s/%s: request %s: only exactly requests in these workloads", claim.Namespace, claim.Name, r.Name)
			}
			if _, err := c.Classes.Get(r.Exactly.DeviceClassName); err != nil {
				return nil, fmt.Errorf("claim %s/%s: request %s: %w", claim.Namespace, claim.Name, r.Name, err)
			}
		}
		cycle.Claims = append(cycle.Claims, claim)
	}
	if len(cycle.Claims) == 0 {
		return cycle, nil
	}
	state := structured.AllocatedState{
		AllocatedDevices:         c.Allocated.Clone(),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	a, err := structured.NewAllocator(ctx, Features, state, c.Classes, slices.Clone(c.Slices), c.celCache)
	if err != nil {
		return nil, err
	}
	cycle.Allocator = a
	return cycle, nil
}

// Filter is the plugin's Filter on node: nil results when the claims do not fit
// there, an error only for what would abort the pod's scheduling.
func (p *PodCycle) Filter(ctx context.Context, node *v1.Node) ([]resourceapi.AllocationResult, error) {
	if p.Allocator == nil {
		return []resourceapi.AllocationResult{}, nil
	}
	res, err := p.Allocator.Allocate(ctx, node, p.Claims)
	switch {
	case errors.Is(err, structured.ErrFailedAllocationOnNode):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("pod %s/%s on node %s: %w", p.Pod.Namespace, p.Pod.Name, node.Name, err)
	case len(res) != len(p.Claims):
		return nil, nil
	}
	return res, nil
}

// Reserve records results (a fitting node's) as allocated: the next PreFilter sees
// their devices taken.
func (c *Cluster) Reserve(results []resourceapi.AllocationResult) {
	for _, r := range results {
		for _, d := range r.Devices.Results {
			if d.AdminAccess != nil && *d.AdminAccess {
				continue
			}
			c.Allocated.Insert(structured.MakeDeviceID(d.Driver, d.Pool, d.Device))
		}
	}
}

// FirstFit schedules pod on the first node, in name order, where Filter fits it,
// and reserves its results there. It returns the node's index (-1: none) and the
// results.
func (c *Cluster) FirstFit(ctx context.Context, pod *v1.Pod) (int, []resourceapi.AllocationResult, error) {
	cycle, err := c.PreFilter(ctx, pod)
	if err != nil {
		return -1, nil, err
	}
	for i, n := range c.Nodes {
		res, err := cycle.Filter(ctx, n)
		if err != nil {
			return -1, nil, err
		}
		if res != nil {
			c.Reserve(res)
			return i, res, nil
		}
	}
	return -1, nil, nil
}

// FittingNodes runs pod's PreFilter, then Filter on every node, keeping each fitting
// node's results by node name (as the plugin keeps them for Reserve), and counts the
// nodes that fit.
func (c *Cluster) FittingNodes(ctx context.Context, pod *v1.Pod) (int, error) {
	cycle, err := c.PreFilter(ctx, pod)
	if err != nil {
		return 0, err
	}
	kept := make(map[string][]resourceapi.AllocationResult)
	for _, n := range c.Nodes {
		res, err := cycle.Filter(ctx, n)
		if err != nil {
			return 0, err
		}
		if res != nil {
			kept[n.Name] = res
		}
	}
	return len(kept), nil
}
