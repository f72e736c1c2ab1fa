package upstream

import (
	"context"
	"errors"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// Features137 is what kube-scheduler 1.37's DynamicResources plugin hands the
// allocator with every feature gate at its 1.37 default (AllocatorFeatures in
// pkg/scheduler/framework/plugins/dynamicresources): DRAAdminAccess (GA 1.36),
// DRAPrioritizedList (GA), DRAPartitionableDevices (beta, on), DRADeviceTaints (GA
// 1.37), DRADeviceBindingConditions (beta, on) together with
// DRAResourceClaimDeviceStatus (GA) and DRAConsumableCapacity (beta, on). The
// alpha gates (list-type attributes, compatibility groups, derived attributes,
// optional node operations) are off, so NewAllocator picks the "incubating"
// implementation. FractionalCapacityRange only changes fractional validRange
// arithmetic, which the generator never produces.
var Features137 = structured.Features{
	AdminAccess:            true,
	PrioritizedList:        true,
	PartitionableDevices:   true,
	DeviceTaints:           true,
	DeviceBindingAndStatus: true,
	ConsumableCapacity:     true,
}

// Cluster is the state the scheduler's DRA manager exposes to the plugin: every
// object the allocator may read.
type Cluster struct {
	Nodes      []*v1.Node
	Slices     []*resourceapi.ResourceSlice
	Classes    []*resourceapi.DeviceClass
	Claims     []*resourceapi.ResourceClaim
	TaintRules []*resourceapi.DeviceTaintRule
}

// Outcome is upstream's answer for one node: Results (one per claim, in order)
// when the claims fit, nil Results and nil Err when they do not, or Err.
type Outcome struct {
	Results []resourceapi.AllocationResult
	Err     error
}

// Fits reports whether the claims were allocated.
func (o Outcome) Fits() bool { return o.Err == nil && o.Results != nil }

// ClassLister serves DeviceClasses as the scheduler's informer-backed lister does
// (by name); a missing class is a NotFound error.
type ClassLister map[string]*resourceapi.DeviceClass

// List returns every class, by name.
func (l ClassLister) List() ([]*resourceapi.DeviceClass, error) {
	out := make([]*resourceapi.DeviceClass, 0, len(l))
	for _, c := range l {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Get returns the class called name, or a NotFound error.
func (l ClassLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c, ok := l[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
}

// AllocatedState builds the allocator's view of committed allocations the way the
// plugin's claim tracker does with DRAConsumableCapacity on (foreachAllocatedDevice
// in allocateddevices.go): results with adminAccess are skipped; a result with a
// shareID records the share and its consumed capacity; any other result marks the
// device allocated.
func AllocatedState(claims []*resourceapi.ResourceClaim) structured.AllocatedState {
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			if r.ShareID != nil {
				state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
				if r.ConsumedCapacity != nil {
					state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
				}
				continue
			}
			state.AllocatedDevices.Insert(id)
		}
	}
	return state
}

// SlicesWithTaintRules returns the slices as the scheduler's ResourceSlice tracker
// publishes them (ListWithDeviceTaintRules): each DeviceTaintRule's taint appended
// to every device its selector names (nil selector: none; unset driver, pool or
// device: any), rules in the given order. The inputs are not modified.
func SlicesWithTaintRules(slices []*resourceapi.ResourceSlice, rules []*resourceapi.DeviceTaintRule) []*resourceapi.ResourceSlice {
	out := make([]*resourceapi.ResourceSlice, len(slices))
	for i, slice := range slices {
		patched := slice
		for _, rule := range rules {
			sel := rule.Spec.DeviceSelector
			if sel == nil {
				continue
			}
			if sel.Driver != nil && *sel.Driver != slice.Spec.Driver {
				continue
			}
			if sel.Pool != nil && *sel.Pool != slice.Spec.Pool.Name {
				continue
			}
			for d := range slice.Spec.Devices {
				if sel.Device != nil && *sel.Device != slice.Spec.Devices[d].Name {
					continue
				}
				if patched == slice {
					patched = slice.DeepCopy()
				}
				patched.Spec.Devices[d].Taints = append(patched.Spec.Devices[d].Taints, rule.Spec.Taint)
			}
		}
		out[i] = patched
	}
	return out
}

// Driver runs Kubernetes' allocator the way the DynamicResources plugin does for
// one pod: PreFilter builds one allocator from the allocated state, the class
// lister, the slices with taint rules applied and a CEL cache; Filter calls
// Allocate once per node with the pod's unallocated claims.
type Driver struct {
	Features structured.Features
	celCache *cel.Cache
}

// NewDriver returns a driver with the 1.37 default features and its own CEL cache
// (the plugin keeps one per scheduler).
func NewDriver() *Driver {
	return &Driver{
		Features: Features137,
		celCache: cel.NewCache(10, cel.Features{EnableConsumableCapacity: Features137.ConsumableCapacity}),
	}
}

// Allocate allocates the named claims ("namespace/name") together on node.
func (d *Driver) Allocate(ctx context.Context, c *Cluster, node string, claimNames []string) Outcome {
	var nodeObj *v1.Node
	for _, n := range c.Nodes {
		if n.Name == node {
			nodeObj = n
		}
	}
	if nodeObj == nil {
		return Outcome{Err: fmt.Errorf("node %q not found", node)}
	}
	byName := map[string]*resourceapi.ResourceClaim{}
	for _, cl := range c.Claims {
		byName[cl.Namespace+"/"+cl.Name] = cl
	}
	claims := make([]*resourceapi.ResourceClaim, 0, len(claimNames))
	for _, name := range claimNames {
		cl, ok := byName[name]
		if !ok {
			return Outcome{Err: fmt.Errorf("claim %q not found", name)}
		}
		if cl.Status.Allocation != nil {
			return Outcome{Err: fmt.Errorf("claim %q is already allocated", name)}
		}
		claims = append(claims, cl)
	}
	classes := ClassLister{}
	for _, cl := range c.Classes {
		classes[cl.Name] = cl
	}
	// PreFilter: a missing class makes the pod unschedulable before any Filter.
	for _, cl := range claims {
		for _, r := range cl.Spec.Devices.Requests {
			names := []string{}
			if r.Exactly != nil {
				names = append(names, r.Exactly.DeviceClassName)
			}
			for _, s := range r.FirstAvailable {
				names = append(names, s.DeviceClassName)
			}
			for _, n := range names {
				if _, err := classes.Get(n); err != nil {
					return Outcome{Err: fmt.Errorf("claim %s/%s request %s: %w", cl.Namespace, cl.Name, r.Name, err)}
				}
			}
		}
	}
	slices := SlicesWithTaintRules(c.Slices, c.TaintRules)
	alloc, err := structured.NewAllocator(ctx, d.Features, AllocatedState(c.Claims), classes, slices, d.celCache)
	if err != nil {
		return Outcome{Err: err}
	}
	results, err := alloc.Allocate(ctx, nodeObj, claims)
	if err != nil {
		return Outcome{Err: err}
	}
	if results != nil && len(results) != len(claims) {
		return Outcome{Err: errors.New("upstream returned a partial result")}
	}
	return Outcome{Results: results}
}
