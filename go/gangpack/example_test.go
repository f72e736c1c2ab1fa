package gangpack_test

import (
	"context"
	"fmt"

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
