package naivesched

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Cluster is the snapshot the scheduler reads: the objects of the kinds it knows,
// in input order. Objects of other kinds (Namespaces, Workloads, PriorityClasses)
// play no part in its decisions.
type Cluster struct {
	Nodes                  []*corev1.Node
	Pods                   []*corev1.Pod
	ResourceSlices         []*resourcev1.ResourceSlice
	DeviceClasses          []*resourcev1.DeviceClass
	ResourceClaims         []*resourcev1.ResourceClaim
	ResourceClaimTemplates []*resourcev1.ResourceClaimTemplate
	DeviceTaintRules       []*resourcev1.DeviceTaintRule
	PodGroups              []*schedulingv1beta1.PodGroup
}

// NewCluster sorts typed objects (pointers to k8s.io/api types) into a Cluster.
// Objects of other types are ignored; a nil object is an error naming its index.
func NewCluster(objs ...runtime.Object) (*Cluster, error) {
	c := &Cluster{}
	for i, o := range objs {
		switch o := o.(type) {
		case nil:
			return nil, fmt.Errorf("naivesched: objects[%d] is nil", i)
		case *corev1.Node:
			c.Nodes = append(c.Nodes, o)
		case *corev1.Pod:
			c.Pods = append(c.Pods, o)
		case *resourcev1.ResourceSlice:
			c.ResourceSlices = append(c.ResourceSlices, o)
		case *resourcev1.DeviceClass:
			c.DeviceClasses = append(c.DeviceClasses, o)
		case *resourcev1.ResourceClaim:
			c.ResourceClaims = append(c.ResourceClaims, o)
		case *resourcev1.ResourceClaimTemplate:
			c.ResourceClaimTemplates = append(c.ResourceClaimTemplates, o)
		case *resourcev1.DeviceTaintRule:
			c.DeviceTaintRules = append(c.DeviceTaintRules, o)
		case *schedulingv1beta1.PodGroup:
			c.PodGroups = append(c.PodGroups, o)
		}
	}
	return c, nil
}

// Append adds o's objects after c's (the objects of several files).
func (c *Cluster) Append(o *Cluster) {
	c.Nodes = append(c.Nodes, o.Nodes...)
	c.Pods = append(c.Pods, o.Pods...)
	c.ResourceSlices = append(c.ResourceSlices, o.ResourceSlices...)
	c.DeviceClasses = append(c.DeviceClasses, o.DeviceClasses...)
	c.ResourceClaims = append(c.ResourceClaims, o.ResourceClaims...)
	c.ResourceClaimTemplates = append(c.ResourceClaimTemplates, o.ResourceClaimTemplates...)
	c.DeviceTaintRules = append(c.DeviceTaintRules, o.DeviceTaintRules...)
	c.PodGroups = append(c.PodGroups, o.PodGroups...)
}

// kinds maps the apiVersion and kind of each object the scheduler reads to a new
// empty object of its type.
var kinds = map[string]func() runtime.Object{
	"v1/Node":                                  func() runtime.Object { return &corev1.Node{} },
	"v1/Pod":                                   func() runtime.Object { return &corev1.Pod{} },
	"resource.k8s.io/v1/ResourceSlice":         func() runtime.Object { return &resourcev1.ResourceSlice{} },
	"resource.k8s.io/v1/DeviceClass":           func() runtime.Object { return &resourcev1.DeviceClass{} },
	"resource.k8s.io/v1/ResourceClaim":         func() runtime.Object { return &resourcev1.ResourceClaim{} },
	"resource.k8s.io/v1/ResourceClaimTemplate": func() runtime.Object { return &resourcev1.ResourceClaimTemplate{} },
	"resource.k8s.io/v1/DeviceTaintRule":       func() runtime.Object { return &resourcev1.DeviceTaintRule{} },
	"scheduling.k8s.io/v1beta1/PodGroup":       func() runtime.Object { return &schedulingv1beta1.PodGroup{} },
}

// Decode reads manifests (multi-document YAML, JSON objects one after another, or
// `kind: List`s of them, as `kubectl get -o yaml|json` and `gangpack gen` print them)
// into a Cluster. Objects of kinds the scheduler does not read are skipped; an
// object of a kind it reads in another apiVersion (resource.k8s.io/v1beta2) is an
// error, as is an object that does not decode, each naming the document and object.
func Decode(manifests []byte) (*Cluster, error) {
	var objs []runtime.Object
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	for doc := 1; ; doc++ {
		var raw json.RawMessage
		err := d.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("naivesched: document %d: %w", doc, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		found, err := decodeDoc(raw, fmt.Sprintf("document %d", doc))
		if err != nil {
			return nil, err
		}
		objs = append(objs, found...)
	}
	return NewCluster(objs...)
}

type header struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func decodeDoc(raw json.RawMessage, where string) ([]runtime.Object, error) {
	var h header
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("naivesched: %s: %w", where, err)
	}
	if strings.HasSuffix(h.Kind, "List") {
		var out []runtime.Object
		for i, item := range h.Items {
			found, err := decodeDoc(item, fmt.Sprintf("%s, items[%d]", where, i))
			if err != nil {
				return nil, err
			}
			out = append(out, found...)
		}
		return out, nil
	}
	name := h.Metadata.Name
	if h.Metadata.Namespace != "" {
		name = h.Metadata.Namespace + "/" + name
	}
	mk, ok := kinds[h.APIVersion+"/"+h.Kind]
	if !ok {
		for key := range kinds {
			if strings.HasSuffix(key, "/"+h.Kind) {
				return nil, fmt.Errorf("naivesched: %s: %s %q: apiVersion %q is not read (only %s)",
					where, h.Kind, name, h.APIVersion, strings.TrimSuffix(key, "/"+h.Kind))
			}
		}
		return nil, nil
	}
	o := mk()
	if err := json.Unmarshal(raw, o); err != nil {
		return nil, fmt.Errorf("naivesched: %s: %s %q: %w", where, h.Kind, name, err)
	}
	return []runtime.Object{o}, nil
}
