package naivesched

import (
	"bytes"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/yaml"
)

// Decisions are what the scheduler decided: the pods it binds, in order.
type Decisions struct {
	Pods []*PodDecision
}

// PodDecision binds one pod to a node, with its claims' allocations.
type PodDecision struct {
	// Pod is the input's pod.
	Pod *corev1.Pod
	// Node is the node it goes to.
	Node string
	// Claims are the pod's claims, allocated on Node and reserved for the pod.
	Claims []ClaimDecision
}

// ClaimDecision is one claim's allocation and reservation.
type ClaimDecision struct {
	// Namespace and Name are the claim's.
	Namespace, Name string
	// PodClaim is the pod's name for a claim made from a template (Created).
	PodClaim string
	// Status holds the allocation and the reservation.
	Status resourcev1.ResourceClaimStatus
	// Created is the whole claim when the scheduler made it from a
	// ResourceClaimTemplate (as the resourceclaim controller would); nil for a claim
	// of the input, whose status alone changes.
	Created *resourcev1.ResourceClaim
}

// Objects are the decisions as the documents kube-scheduler's writes amount to, per
// pod in order: each claim (a merge patch of an existing claim's status, or the
// whole claim made from a template), the pod's status.resourceClaimStatuses naming
// the claims made from templates (a merge patch), then a v1 Binding. Each is a JSON
// object; `gangpack check --decisions` reads them (docs/DECISIONS.md).
func (d *Decisions) Objects() ([]json.RawMessage, error) {
	var out []json.RawMessage
	put := func(v any) error {
		b, err := json.Marshal(v)
		if err == nil {
			out = append(out, b)
		}
		return err
	}
	for _, p := range d.Pods {
		var statuses []corev1.PodResourceClaimStatus
		for _, c := range p.Claims {
			if c.Created != nil {
				if err := put(c.Created); err != nil {
					return nil, err
				}
				statuses = append(statuses, corev1.PodResourceClaimStatus{Name: c.PodClaim, ResourceClaimName: ptr(c.Name)})
				continue
			}
			err := put(map[string]any{
				"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
				"metadata": map[string]any{"name": c.Name, "namespace": c.Namespace},
				"status":   c.Status,
			})
			if err != nil {
				return nil, err
			}
		}
		if len(statuses) > 0 {
			// A merge patch replaces a list whole: keep the pod's other entries.
			all := append(append([]corev1.PodResourceClaimStatus(nil), p.Pod.Status.ResourceClaimStatuses...), statuses...)
			err := put(map[string]any{
				"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": p.Pod.Name, "namespace": p.Pod.Namespace},
				"status":   map[string]any{"resourceClaimStatuses": all},
			})
			if err != nil {
				return nil, err
			}
		}
		b := corev1.Binding{
			Target: corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: p.Node},
		}
		meta := map[string]any{"name": p.Pod.Name, "namespace": p.Pod.Namespace}
		if p.Pod.UID != "" {
			meta["uid"] = p.Pod.UID
		}
		if err := put(map[string]any{"apiVersion": "v1", "kind": "Binding", "metadata": meta, "target": b.Target}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// YAML is the decisions as multi-document YAML, in the order of [Decisions.Objects];
// empty when nothing is decided.
func (d *Decisions) YAML() ([]byte, error) {
	objs, err := d.Objects()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for i, o := range objs {
		y, err := yaml.JSONToYAML(o)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(y)
	}
	return buf.Bytes(), nil
}

// ScheduleManifests is the whole scheduler as a function of bytes: it decodes the
// manifests ([Decode]), schedules them and writes the decisions as YAML.
func ScheduleManifests(manifests []byte, opts Options) ([]byte, error) {
	c, err := Decode(manifests)
	if err != nil {
		return nil, err
	}
	return Schedule(c, opts).YAML()
}
