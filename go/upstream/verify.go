package upstream

import (
	"fmt"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The independent checker: whether a list of AllocationResults is a valid
// allocation of the scenario's pending claims on a node. It shares no code with
// either allocator (selectors are judged by their Go meaning, not by CEL), so it can
// judge both.

type devKey struct{ driver, pool, device string }

type devInfo struct {
	slice  *resourceapi.ResourceSlice
	dev    *resourceapi.Device
	taints []resourceapi.DeviceTaint
}

// poolKey names a pool.
type poolKey struct{ driver, pool string }

// usableDevices returns the devices a pod on node may be given: in a slice of the
// pool's newest generation, of a complete pool, reachable from the node.
func (sc *Scenario) usableDevices(node *v1.Node) (map[devKey]devInfo, map[poolKey][]resourceapi.CounterSet) {
	maxGen := map[poolKey]int64{}
	for _, s := range sc.Slices {
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		if g, ok := maxGen[k]; !ok || s.Spec.Pool.Generation > g {
			maxGen[k] = s.Spec.Pool.Generation
		}
	}
	count := map[poolKey]int64{}
	want := map[poolKey]int64{}
	counters := map[poolKey][]resourceapi.CounterSet{}
	for _, s := range sc.Slices {
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		if s.Spec.Pool.Generation == maxGen[k] {
			count[k]++
			want[k] = s.Spec.Pool.ResourceSliceCount
			counters[k] = append(counters[k], s.Spec.SharedCounters...)
		}
	}
	out := map[devKey]devInfo{}
	for _, s := range sc.Slices {
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		if s.Spec.Pool.Generation != maxGen[k] || count[k] != want[k] {
			continue
		}
		for i := range s.Spec.Devices {
			d := &s.Spec.Devices[i]
			var reach bool
			switch {
			case s.Spec.NodeName != nil:
				reach = *s.Spec.NodeName == node.Name
			case s.Spec.AllNodes != nil && *s.Spec.AllNodes:
				reach = true
			case s.Spec.NodeSelector != nil:
				reach = selectorMatches(s.Spec.NodeSelector, node)
			case s.Spec.PerDeviceNodeSelection != nil && *s.Spec.PerDeviceNodeSelection:
				switch {
				case d.NodeName != nil:
					reach = *d.NodeName == node.Name
				case d.AllNodes != nil && *d.AllNodes:
					reach = true
				case d.NodeSelector != nil:
					reach = selectorMatches(d.NodeSelector, node)
				}
			}
			if !reach {
				continue
			}
			taints := append([]resourceapi.DeviceTaint(nil), d.Taints...)
			for _, r := range sc.TaintRules {
				sel := r.Spec.DeviceSelector
				if sel == nil || (sel.Driver != nil && *sel.Driver != s.Spec.Driver) ||
					(sel.Pool != nil && *sel.Pool != s.Spec.Pool.Name) || (sel.Device != nil && *sel.Device != d.Name) {
					continue
				}
				taints = append(taints, r.Spec.Taint)
			}
			out[devKey{s.Spec.Driver, s.Spec.Pool.Name, d.Name}] = devInfo{slice: s, dev: d, taints: taints}
		}
	}
	return out, counters
}

func selectorMatches(sel *v1.NodeSelector, node *v1.Node) bool {
	for _, term := range sel.NodeSelectorTerms {
		ok := true
		for _, r := range term.MatchExpressions {
			ok = ok && requirementMatches(r, node.Labels[r.Key], hasKey(node.Labels, r.Key))
		}
		for _, r := range term.MatchFields {
			ok = ok && r.Key == "metadata.name" && requirementMatches(r, node.Name, true)
		}
		if ok && (len(term.MatchExpressions) > 0 || len(term.MatchFields) > 0) {
			return true
		}
	}
	return false
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

func requirementMatches(r v1.NodeSelectorRequirement, val string, present bool) bool {
	in := false
	for _, v := range r.Values {
		in = in || v == val
	}
	switch r.Operator {
	case v1.NodeSelectorOpIn:
		return present && in
	case v1.NodeSelectorOpNotIn:
		return !present || !in
	case v1.NodeSelectorOpExists:
		return present
	case v1.NodeSelectorOpDoesNotExist:
		return !present
	}
	return false
}

// tolerates is the toleration rule of resourceclaim.ToleratesTaint, written out.
func tolerates(t resourceapi.DeviceToleration, taint resourceapi.DeviceTaint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case resourceapi.DeviceTolerationOpExists:
		return true
	case "", resourceapi.DeviceTolerationOpEqual:
		return t.Value == taint.Value
	}
	return false
}

func shareable(d *resourceapi.Device) bool {
	return d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations
}

// consumed is what one share of a shareable device consumes for a request, and
// whether the request is allowed by the capacity's policy.
func consumed(c resourceapi.DeviceCapacity, req *resource.Quantity) (resource.Quantity, bool) {
	p := c.RequestPolicy
	if req == nil {
		if p != nil && p.Default != nil {
			return p.Default.DeepCopy(), true
		}
		return c.Value.DeepCopy(), true
	}
	if p == nil {
		return req.DeepCopy(), true
	}
	switch {
	case p.ValidRange != nil && p.ValidRange.Min != nil:
		min := p.ValidRange.Min.Value()
		v := req.Value()
		if v < min {
			v = min
		} else if p.ValidRange.Step != nil {
			step := p.ValidRange.Step.Value()
			v = min + (v-min+step-1)/step*step
		}
		if p.ValidRange.Max != nil && v > p.ValidRange.Max.Value() {
			return *resource.NewQuantity(v, resource.BinarySI), false
		}
		return *resource.NewQuantity(v, resource.BinarySI), true
	case len(p.ValidValues) > 0:
		for _, vv := range p.ValidValues {
			if req.Cmp(vv) <= 0 {
				return vv.DeepCopy(), true
			}
		}
		return req.DeepCopy(), false
	}
	return req.DeepCopy(), true
}

// attrOf looks an attribute up the way constraints do: the fully qualified name,
// or the bare name when the domain is the device's driver.
func attrOf(driver string, d *resourceapi.Device, fqn string) (resourceapi.DeviceAttribute, bool) {
	if a, ok := d.Attributes[resourceapi.QualifiedName(fqn)]; ok {
		return a, true
	}
	if i := strings.IndexByte(fqn, '/'); i >= 0 && fqn[:i] == driver {
		a, ok := d.Attributes[resourceapi.QualifiedName(fqn[i+1:])]
		return a, ok
	}
	return resourceapi.DeviceAttribute{}, false
}

// Verify returns every way results fail to be a valid allocation of the pending
// claims on node (nil: valid).
func (sc *Scenario) Verify(nodeName string, results []resourceapi.AllocationResult) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var node *v1.Node
	for _, n := range sc.Nodes {
		if n.Name == nodeName {
			node = n
		}
	}
	if len(results) != len(sc.Pending) {
		return []string{fmt.Sprintf("%d results for %d claims", len(results), len(sc.Pending))}
	}
	devs, counterSets := sc.usableDevices(node)
	classes := map[string]*resourceapi.DeviceClass{}
	for _, c := range sc.Classes {
		classes[c.Name] = c
	}
	claims := map[string]*resourceapi.ResourceClaim{}
	for _, c := range sc.Claims {
		claims[c.Namespace+"/"+c.Name] = c
	}
	// Committed state.
	exclusive := map[devKey]bool{}
	sharedUsed := map[devKey]map[string]resource.Quantity{}
	charged := map[devKey]bool{}
	for _, c := range sc.Claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			k := devKey{r.Driver, r.Pool, r.Device}
			charged[k] = true
			if r.ShareID != nil {
				if sharedUsed[k] == nil {
					sharedUsed[k] = map[string]resource.Quantity{}
				}
				for n, q := range r.ConsumedCapacity {
					sum := sharedUsed[k][string(n)]
					sum.Add(q)
					sharedUsed[k][string(n)] = sum
				}
				continue
			}
			exclusive[k] = true
		}
	}
	matches := func(exprs []resourceapi.DeviceSelector, k devKey, info devInfo) (bool, error) {
		for _, s := range exprs {
			p, ok := sc.Selectors[s.CEL.Expression]
			if !ok {
				return false, fmt.Errorf("checker: unknown selector %q", s.CEL.Expression)
			}
			m, err := p(View(k.driver, info.dev))
			if err != nil || !m {
				return false, err
			}
		}
		return true, nil
	}
	pickedBy := map[devKey]string{} // non-admin exclusive picks in this call
	for ci, name := range sc.Pending {
		claim := claims[name]
		res := results[ci]
		if res.NodeSelector != nil && !selectorMatches(res.NodeSelector, node) {
			bad("%s: nodeSelector does not match %s", name, nodeName)
		}
		adminPicked := map[devKey]bool{}
		byRequest := map[string][]resourceapi.DeviceRequestAllocationResult{}
		for _, r := range res.Devices.Results {
			top, _, _ := strings.Cut(r.Request, "/")
			byRequest[top] = append(byRequest[top], r)
		}
		type scoped struct {
			ref string
			k   devKey
			d   *resourceapi.Device
		}
		var all []scoped
		for _, req := range claim.Spec.Devices.Requests {
			got := byRequest[req.Name]
			delete(byRequest, req.Name)
			var body resourceapi.ExactDeviceRequest
			ref := req.Name
			if req.Exactly != nil {
				body = *req.Exactly
			} else {
				if len(got) == 0 {
					bad("%s: request %s has no results", name, req.Name)
					continue
				}
				_, sub, _ := strings.Cut(got[0].Request, "/")
				found := false
				for _, s := range req.FirstAvailable {
					if s.Name == sub {
						found = true
						body = resourceapi.ExactDeviceRequest{DeviceClassName: s.DeviceClassName, Selectors: s.Selectors, AllocationMode: s.AllocationMode, Count: s.Count, Tolerations: s.Tolerations, Capacity: s.Capacity}
					}
				}
				if !found {
					bad("%s: request %s: unknown subrequest %q", name, req.Name, sub)
					continue
				}
				ref = req.Name + "/" + sub
			}
			admin := body.AdminAccess != nil && *body.AdminAccess
			class := classes[body.DeviceClassName]
			eligible := func(k devKey, info devInfo) bool {
				ok1, err1 := matches(class.Spec.Selectors, k, info)
				ok2, err2 := matches(body.Selectors, k, info)
				return err1 == nil && err2 == nil && ok1 && ok2
			}
			switch body.AllocationMode {
			case resourceapi.DeviceAllocationModeAll:
				if body.Capacity == nil {
					n := 0
					for k, info := range devs {
						if eligible(k, info) {
							n++
						}
					}
					if n != len(got) || n == 0 {
						bad("%s: request %s (All): %d results, %d eligible devices", name, ref, len(got), n)
					}
				}
			default:
				if int64(len(got)) != body.Count {
					bad("%s: request %s: %d results, count %d", name, ref, len(got), body.Count)
				}
			}
			for _, r := range got {
				if r.Request != ref {
					bad("%s: result request %q, expected %q (one subrequest per request)", name, r.Request, ref)
				}
				k := devKey{r.Driver, r.Pool, r.Device}
				info, ok := devs[k]
				if !ok {
					bad("%s: %s: device %v is not usable on %s", name, ref, k, nodeName)
					continue
				}
				all = append(all, scoped{ref, k, info.dev})
				if !eligible(k, info) {
					bad("%s: %s: device %v does not match the class and request selectors", name, ref, k)
				}
				for _, t := range info.taints {
					if t.Effect != resourceapi.DeviceTaintEffectNoSchedule && t.Effect != resourceapi.DeviceTaintEffectNoExecute {
						continue
					}
					ok := false
					for _, tol := range body.Tolerations {
						ok = ok || tolerates(tol, t)
					}
					if !ok {
						bad("%s: %s: device %v has untolerated taint %s=%s:%s", name, ref, k, t.Key, t.Value, t.Effect)
					}
				}
				if !reflect.DeepEqual(r.Tolerations, body.Tolerations) && (len(r.Tolerations) > 0 || len(body.Tolerations) > 0) {
					bad("%s: %s: result tolerations %v, request has %v", name, ref, r.Tolerations, body.Tolerations)
				}
				if (r.AdminAccess != nil && *r.AdminAccess) != admin {
					bad("%s: %s: adminAccess %v in result", name, ref, r.AdminAccess)
				}
				if admin {
					if adminPicked[k] {
						bad("%s: %s: device %v picked twice with admin access in one claim", name, ref, k)
					}
					adminPicked[k] = true
					continue
				}
				if shareable(info.dev) {
					if exclusive[k] {
						bad("%s: %s: shareable device %v already held exclusively", name, ref, k)
					}
					if r.ShareID == nil {
						bad("%s: %s: shareable device %v without shareID", name, ref, k)
					}
					if sharedUsed[k] == nil {
						sharedUsed[k] = map[string]resource.Quantity{}
					}
					for cn, c := range info.dev.Capacity {
						var want *resource.Quantity
						if body.Capacity != nil {
							if q, ok := body.Capacity.Requests[cn]; ok {
								want = &q
							}
						}
						q, allowed := consumed(c, want)
						if !allowed {
							bad("%s: %s: device %v: request %v for %s violates the policy", name, ref, k, want, cn)
						}
						if got, ok := r.ConsumedCapacity[cn]; !ok || got.Cmp(q) != 0 {
							bad("%s: %s: device %v: consumedCapacity[%s] = %v, expected %v", name, ref, k, cn, r.ConsumedCapacity[cn], q.String())
						}
						sum := sharedUsed[k][string(cn)]
						sum.Add(q)
						sharedUsed[k][string(cn)] = sum
						if sum.Cmp(c.Value) > 0 {
							bad("%s: %s: device %v: %s over capacity (%v of %v)", name, ref, k, cn, sum.String(), c.Value.String())
						}
					}
				} else {
					if body.Capacity != nil {
						for cn, q := range body.Capacity.Requests {
							c, ok := info.dev.Capacity[cn]
							if !ok || c.Value.Cmp(q) < 0 {
								bad("%s: %s: device %v lacks capacity %s >= %v", name, ref, k, cn, q.String())
							}
						}
					}
					if exclusive[k] || sharedUsed[k] != nil {
						bad("%s: %s: device %v is already allocated", name, ref, k)
					}
					if prev, ok := pickedBy[k]; ok {
						bad("%s: %s: device %v also picked by %s", name, ref, k, prev)
					}
					pickedBy[k] = name + " " + ref
				}
			}
		}
		for top := range byRequest {
			bad("%s: results for unknown request %q", name, top)
		}
		for _, con := range claim.Spec.Devices.Constraints {
			var attr string
			match := con.MatchAttribute != nil
			if match {
				attr = string(*con.MatchAttribute)
			} else {
				attr = string(*con.DistinctAttribute)
			}
			var vals []resourceapi.DeviceAttribute
			for _, s := range all {
				top, _, _ := strings.Cut(s.ref, "/")
				in := len(con.Requests) == 0
				for _, r := range con.Requests {
					in = in || r == s.ref || r == top
				}
				if !in {
					continue
				}
				a, ok := attrOf(s.k.driver, s.d, attr)
				if !ok {
					bad("%s: constraint on %s: device %v lacks it", name, attr, s.k)
					continue
				}
				for _, prev := range vals {
					if match && !attrEqual(prev, a) {
						bad("%s: matchAttribute %s: device %v differs", name, attr, s.k)
					}
					if !match && attrEqual(prev, a) {
						bad("%s: distinctAttribute %s: device %v repeats a value", name, attr, s.k)
					}
				}
				vals = append(vals, a)
			}
		}
	}
	// Shared counters: committed devices plus this call's picks, each device charged
	// once.
	for _, res := range results {
		for _, r := range res.Devices.Results {
			charged[devKey{r.Driver, r.Pool, r.Device}] = true
		}
	}
	used := map[poolKey]map[string]map[string]resource.Quantity{}
	for k := range charged {
		var dev *resourceapi.Device
		for _, s := range sc.Slices {
			if s.Spec.Driver == k.driver && s.Spec.Pool.Name == k.pool {
				for i := range s.Spec.Devices {
					if s.Spec.Devices[i].Name == k.device {
						dev = &s.Spec.Devices[i]
					}
				}
			}
		}
		if dev == nil {
			continue
		}
		pk := poolKey{k.driver, k.pool}
		for _, cc := range dev.ConsumesCounters {
			if used[pk] == nil {
				used[pk] = map[string]map[string]resource.Quantity{}
			}
			if used[pk][cc.CounterSet] == nil {
				used[pk][cc.CounterSet] = map[string]resource.Quantity{}
			}
			for cn, c := range cc.Counters {
				sum := used[pk][cc.CounterSet][cn]
				sum.Add(c.Value)
				used[pk][cc.CounterSet][cn] = sum
			}
		}
	}
	for pk, sets := range counterSets {
		for _, set := range sets {
			for cn, c := range set.Counters {
				if u, ok := used[pk][set.Name][cn]; ok && u.Cmp(c.Value) > 0 {
					bad("pool %v: counter %s/%s over (%v of %v)", pk, set.Name, cn, u.String(), c.Value.String())
				}
			}
		}
	}
	return problems
}
