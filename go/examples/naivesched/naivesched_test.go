package naivesched_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gangpack/gangpack/go/examples/naivesched"
	"github.com/gangpack/gangpack/go/gangpack"
	"github.com/gangpack/gangpack/go/gangpacktest"
)

func scheduler(opts naivesched.Options) gangpacktest.Scheduler {
	return func(s *gangpacktest.Scenario) ([]byte, error) {
		return naivesched.ScheduleManifests(s.Manifests, opts)
	}
}

// The property finds the planted bug and shrinks it to a few objects: a node, a
// device class, a ResourceSlice with the device, and the two pods and claims that
// get it (7), or a running claim holding the device and the pod and claim that get
// it again (6). Eight leaves room for a Namespace the shrinker cannot remove.
func TestThePropertyFindsThePlantedBugAndShrinksIt(t *testing.T) {
	ce, err := gangpacktest.Find(t, scheduler(naivesched.Buggy))
	if err != nil {
		t.Fatal(err)
	}
	if ce == nil {
		t.Fatal("the planted bug was not found")
	}
	t.Log(ce)
	rule := ce.Failure.Rule
	if rule != "device-allocated-twice" && rule != "device-in-use" {
		t.Fatalf("the planted bug breaks device-allocated-twice or device-in-use, not %s", rule)
	}
	if ce.ShrunkFailure == nil || !strings.Contains(ce.ShrunkFailure.String(), rule) {
		t.Fatalf("the shrunk scenario does not fail with %s:\n%s", rule, ce)
	}
	if n := ce.Objects(); n > 8 || n >= ce.Before.Objects {
		t.Errorf("shrunk to %d objects from %d:\n%s", n, ce.Before.Objects, ce.Shrunk.Manifests)
	}
	// The shrunk scenario passes with the bug fixed: it is the bug's, nothing else's.
	fixed, err := naivesched.ScheduleManifests(ce.Shrunk.Manifests, naivesched.Fixed)
	if err != nil {
		t.Fatal(err)
	}
	if r := check(t, gangpack.YAML(ce.Shrunk.Manifests), fixed); !r.Valid {
		t.Errorf("Fixed fails on the shrunk scenario:\n%s", r.Table)
	}
}

func TestFixedPassesTheProperty(t *testing.T) {
	gangpacktest.Check(t, scheduler(naivesched.Fixed))
}

func check(t *testing.T, in gangpack.Input, decisions []byte) *gangpack.CheckResult {
	t.Helper()
	dec := gangpack.YAML(decisions)
	r, err := gangpack.Check(context.Background(), in, &gangpack.CheckOptions{Decisions: &dec}, nil)
	if err != nil {
		t.Fatalf("%v\ndecisions:\n%s", err, decisions)
	}
	return r
}

// A gang of two from a ResourceClaimTemplate, in one rack, next to a running claim:
// Fixed places both pods in rack-b (rack-a's node is too small), on devices the
// running claim does not hold, creating their claims; Buggy gives both the running
// claim's device.
const cluster = `
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {rack: rack-a}}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: b1, labels: {rack: rack-b}}
status: {allocatable: {cpu: "64", memory: 256Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: b2, labels: {rack: rack-b}}
status: {allocatable: {cpu: "64", memory: 256Gi, pods: "10"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "h100"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: b1}
spec:
  driver: gpu.example.com
  nodeName: b1
  pool: {name: b1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: h100}}}
  - {name: gpu-1, attributes: {model: {string: a100}}}
  - {name: gpu-2, attributes: {model: {string: h100}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: b2}
spec:
  driver: gpu.example.com
  nodeName: b2
  pool: {name: b2, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: h100}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: running-gpu, namespace: ml}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu}}
status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: b1, device: gpu-0}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [b1]}]}]
  reservedFor: [{resource: pods, name: running, uid: u-running}]
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: ml, uid: u-running}
spec:
  nodeName: b1
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: running-gpu}]
status: {phase: Running}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: job, namespace: ml}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints: {topology: [{key: rack}]}
---
apiVersion: v1
kind: Pod
metadata: {name: job-0, namespace: ml, uid: u-0}
spec:
  schedulingGroup: {podGroupName: job}
  containers: [{name: c, image: x, resources: {requests: {cpu: "8"}, claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
---
apiVersion: v1
kind: Pod
metadata: {name: job-1, namespace: ml, uid: u-1}
spec:
  schedulingGroup: {podGroupName: job}
  containers: [{name: c, image: x, resources: {requests: {cpu: "8"}, claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
`

func TestFixedPlacesAGangFromTemplatesInOneRack(t *testing.T) {
	c, err := naivesched.Decode([]byte(cluster))
	if err != nil {
		t.Fatal(err)
	}
	d := naivesched.Schedule(c, naivesched.Fixed)
	if len(d.Pods) != 2 {
		t.Fatalf("placed %d pods, want the gang of 2", len(d.Pods))
	}
	var devices []string
	for _, p := range d.Pods {
		if p.Node != "b1" && p.Node != "b2" {
			t.Errorf("pod %s on %s, outside rack-b", p.Pod.Name, p.Node)
		}
		for _, c := range p.Claims {
			if c.Created == nil || !strings.HasPrefix(c.Name, p.Pod.Name+"-gpu-") {
				t.Errorf("claim %s not made from the template", c.Name)
			}
			for _, r := range c.Status.Allocation.Devices.Results {
				devices = append(devices, p.Node+"/"+r.Pool+"/"+r.Device)
			}
		}
	}
	// gpu-0 of b1 is the running claim's, gpu-1 an A100: b1/gpu-2, then b2/gpu-0.
	if strings.Join(devices, " ") != "b1/b1/gpu-2 b2/b2/gpu-0" {
		t.Errorf("devices %v", devices)
	}
	out, err := d.YAML()
	if err != nil {
		t.Fatal(err)
	}
	r := check(t, gangpack.YAML([]byte(cluster)), out)
	if !r.Valid || r.Bound != 2 || len(r.NewBindings) != 2 {
		t.Errorf("gangpack says:\n%s\ndecisions:\n%s", r.Table, out)
	}
}

func TestBuggyTakesTheRunningClaimsDevice(t *testing.T) {
	out, err := naivesched.ScheduleManifests([]byte(cluster), naivesched.Buggy)
	if err != nil {
		t.Fatal(err)
	}
	r := check(t, gangpack.YAML([]byte(cluster)), out)
	taken := false
	for _, f := range r.Findings {
		taken = taken || f.Rule == "device-allocated-twice" && strings.Contains(f.Message, "ml/running-gpu")
	}
	if !taken {
		t.Errorf("want the running claim's device allocated twice, gangpack says:\n%s", r.Table)
	}
}

func TestWhatItDoesNotUnderstandStaysPending(t *testing.T) {
	// examples/gang-rack.yaml: each worker's claim has a matchAttribute constraint.
	var all []byte
	for _, p := range []string{"deviceclasses", "namespace", "nodes", "priorityclasses", "resourceslices"} {
		b, err := os.ReadFile("../../../examples/cluster/" + p + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		all = append(append(all, b...), "\n---\n"...)
	}
	gang, err := os.ReadFile("../../../examples/gang-rack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := naivesched.Decode(append(all, gang...))
	if err != nil {
		t.Fatal(err)
	}
	if d := naivesched.Schedule(c, naivesched.Fixed); len(d.Pods) != 0 {
		t.Errorf("placed %d pods of a gang whose claims have constraints", len(d.Pods))
	}
	if len(c.Pods) != 4 || len(c.Nodes) != 4 || len(c.ResourceClaimTemplates) != 1 {
		t.Errorf("decoded %d pods, %d nodes, %d templates", len(c.Pods), len(c.Nodes), len(c.ResourceClaimTemplates))
	}
}

func TestDecodeNamesWhatItCannotRead(t *testing.T) {
	_, err := naivesched.Decode([]byte("apiVersion: resource.k8s.io/v1beta2\nkind: ResourceClaim\nmetadata: {name: a, namespace: ml}\n"))
	if err == nil || !strings.Contains(err.Error(), `ResourceClaim "ml/a": apiVersion "resource.k8s.io/v1beta2"`) {
		t.Errorf("got %v", err)
	}
	_, err = naivesched.Decode([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: 3}\n"))
	if err == nil || !strings.Contains(err.Error(), `document 1: Pod "p"`) {
		t.Errorf("got %v", err)
	}
}
