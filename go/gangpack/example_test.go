package gangpack_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gangpack/gangpack/go/gangpack"
)

const small = `
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: train, namespace: ml}
spec: {devices: {requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 2}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml}
spec:
  containers: [{name: main, image: train}]
  resourceClaims: [{name: gpus, resourceClaimName: train}]
`

func ExampleAllocate() {
	r, err := gangpack.Allocate(context.Background(), gangpack.YAML([]byte(small)), "n1", []string{"ml/train"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Outcome)
	for _, d := range r.Results[0].Devices.Results {
		fmt.Println(d.Request, d.Pool, d.Device)
	}
	// Output:
	// allocated
	// gpus n1 gpu-0
	// gpus n1 gpu-1
}

func ExamplePlan() {
	p, err := gangpack.Plan(context.Background(), gangpack.YAML([]byte(small)), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Pending, len(p.List.Items))
	for _, o := range p.List.Items {
		fmt.Println(o.GetKind(), o.GetNamespace()+"/"+o.GetName())
	}
	// Output:
	// false 2
	// ResourceClaim ml/train
	// Pod ml/train
}

func ExampleCheck() {
	// A decision binding the pod without allocating its claim.
	binding := []byte(`{"apiVersion": "v1", "kind": "Binding",
	  "metadata": {"name": "train", "namespace": "ml"},
	  "target": {"kind": "Node", "name": "n1"}}`)
	decisions := gangpack.Named("decisions.json", binding)
	c, err := gangpack.Check(context.Background(), gangpack.YAML([]byte(small)),
		&gangpack.CheckOptions{Decisions: &decisions}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Valid)
	for _, f := range c.Findings {
		fmt.Println(f.Rule, f.Objects[0].Kind, f.Objects[0].Namespace+"/"+f.Objects[0].Name)
	}
	// Output:
	// false
	// missing-allocation ResourceClaim ml/train
}

func ExampleVersion() {
	v, err := gangpack.Version(context.Background())
	fmt.Println(v != "", err)
	// Output: true <nil>
}

// A controller loop over a Session: the cluster of examples/cluster and the rack gang
// of examples/gang-rack.yaml; the controller carries out each cycle's decisions (its
// writes come back as events), a GPU of the gang fails (a NoExecute DeviceTaintRule
// is ADDED), the gang is evicted whole and its Job recreates the pods, which wait
// until the GPU is repaired (the rule DELETED) and are then bound again.
func ExampleSession() {
	ctx := context.Background()
	s, err := gangpack.NewSession(ctx,
		gangpack.Files("../../examples/cluster", "../../examples/gang-rack.yaml"), nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()

	cycle := func() *gangpack.Cycle {
		c, err := s.Cycle(ctx, time.Time{})
		if err != nil {
			panic(err)
		}
		for _, pod := range sortedKeys(c.Bindings) {
			fmt.Printf("cycle %d: bind %s to %s\n", c.Number, pod, c.Bindings[pod])
		}
		for _, e := range c.Evictions {
			fmt.Printf("cycle %d: evicted %s (%s)\n", c.Number, e.Pod, e.Reason)
		}
		for _, u := range c.Pending {
			fmt.Printf("cycle %d: pending %s %s: %s\n", c.Number, u.Kind, u.Name, u.Reason)
		}
		return c
	}
	apply := func(events ...gangpack.Event) {
		if _, err := s.Apply(ctx, events...); err != nil {
			panic(err)
		}
	}

	// Cycle 1 places the gang; the controller binds the pods and writes the claims
	// (generated from the template: new objects).
	c := cycle()
	apply(written(c.List)...)
	var worker0 resourcev1.DeviceRequestAllocationResult
	for claim, a := range c.Allocations {
		if strings.HasPrefix(claim, "ml/llm-pretrain-worker-0-") {
			worker0 = a.Devices.Results[0]
		}
	}

	// The first GPU of worker-0 reports ECC errors: taint it NoExecute.
	rule := &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: "ecc",
			CreationTimestamp: metav1.Date(2026, 11, 5, 7, 12, 0, 0, time.UTC)},
		Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: &resourcev1.DeviceTaintSelector{
				Driver: &worker0.Driver, Pool: &worker0.Pool, Device: &worker0.Device},
			Taint: resourcev1.DeviceTaint{Key: "gpu.nvidia.com/ecc", Value: "uncorrectable",
				Effect: resourcev1.DeviceTaintEffectNoExecute},
		},
	}
	apply(gangpack.Event{Type: "ADDED", Object: rule})
	c = cycle()

	// The Job recreates the evicted pods (their generated claims go with them).
	m, err := s.Manifests(ctx)
	if err != nil {
		panic(err)
	}
	apply(recreated(m, c)...)
	cycle()

	// The GPU is repaired: the rule goes, and the gang is bound again.
	apply(gangpack.Event{Type: "DELETED", Object: rule})
	cycle()

	// Output:
	// cycle 1: bind ml/llm-pretrain-worker-0 to gpu-r1-n1
	// cycle 1: bind ml/llm-pretrain-worker-1 to gpu-r1-n1
	// cycle 1: bind ml/llm-pretrain-worker-2 to gpu-r1-n2
	// cycle 1: bind ml/llm-pretrain-worker-3 to gpu-r1-n2
	// cycle 2: evicted ml/llm-pretrain-worker-0 (DeletionByDeviceTaintManager)
	// cycle 2: evicted ml/llm-pretrain-worker-1 (DeletionByDeviceTaintManager)
	// cycle 2: evicted ml/llm-pretrain-worker-2 (DeletionByDeviceTaintManager)
	// cycle 2: evicted ml/llm-pretrain-worker-3 (DeletionByDeviceTaintManager)
	// cycle 3: pending PodGroup ml/llm-pretrain: PodGroup ml/llm-pretrain: 3 of 4 pods fit: 1 device on 1 node (gpu-r1-n1) carries gpu.nvidia.com/ecc=uncorrectable:NoExecute, not tolerated
	// cycle 4: bind ml/llm-pretrain-worker-0 to gpu-r1-n1
	// cycle 4: bind ml/llm-pretrain-worker-1 to gpu-r1-n1
	// cycle 4: bind ml/llm-pretrain-worker-2 to gpu-r1-n2
	// cycle 4: bind ml/llm-pretrain-worker-3 to gpu-r1-n2
}

// written is a cycle's decisions as the events that carrying them out brings: the
// claims are new (ADDED), the pods changed (MODIFIED).
func written(list unstructured.UnstructuredList) []gangpack.Event {
	var out []gangpack.Event
	for i := range list.Items {
		ty := "MODIFIED"
		if list.Items[i].GetKind() == "ResourceClaim" {
			ty = "ADDED"
		}
		out = append(out, gangpack.Event{Type: ty, Object: &list.Items[i]})
	}
	return out
}

// recreated is what a Job controller does after an eviction: each evicted pod and
// its released claims DELETED, and the pod ADDED again, unbound.
func recreated(m *unstructured.UnstructuredList, c *gangpack.Cycle) []gangpack.Event {
	gone := map[string]bool{}
	for _, e := range c.Evictions {
		gone["Pod/"+e.Pod] = true
	}
	for _, claim := range c.Released {
		gone["ResourceClaim/"+claim] = true
	}
	var out []gangpack.Event
	for i := range m.Items {
		o := &m.Items[i]
		if !gone[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] {
			continue
		}
		out = append(out, gangpack.Event{Type: "DELETED", Object: o})
		if o.GetKind() == "Pod" {
			fresh := o.DeepCopy()
			unstructured.RemoveNestedField(fresh.Object, "spec", "nodeName")
			unstructured.RemoveNestedField(fresh.Object, "status")
			out = append(out, gangpack.Event{Type: "ADDED", Object: fresh})
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
