package upstream

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// Scenario is one generated cluster and the claims of one pod to allocate on each
// of its nodes.
type Scenario struct {
	Seed       uint64
	Namespaces []*v1.Namespace
	Cluster
	// Pending names the claims to allocate together ("namespace/name"), in order.
	Pending []string
	// Selectors maps every CEL expression the scenario uses to its meaning in Go,
	// for the independent checker.
	Selectors map[string]Predicate
}

// Predicate is a selector's meaning: whether the device matches, or an error where
// CEL fails at run time (a missing attribute looked up without has()).
type Predicate func(DeviceView) (bool, error)

// DeviceView is what a selector sees of a device.
type DeviceView struct {
	Driver     string
	Device     *resourceapi.Device
	Attributes map[string]resourceapi.DeviceAttribute // by fully qualified name
	Capacity   map[string]resource.Quantity           // by fully qualified name
}

// View qualifies a device's attribute and capacity names with the driver's domain.
func View(driver string, d *resourceapi.Device) DeviceView {
	v := DeviceView{Driver: driver, Device: d, Attributes: map[string]resourceapi.DeviceAttribute{}, Capacity: map[string]resource.Quantity{}}
	for k, a := range d.Attributes {
		v.Attributes[qualify(driver, string(k))] = a
	}
	for k, c := range d.Capacity {
		v.Capacity[qualify(driver, string(k))] = c.Value
	}
	return v
}

func qualify(driver, name string) string {
	for _, c := range name {
		if c == '/' {
			return name
		}
	}
	return driver + "/" + name
}

const (
	gpuDriver = "gpu.example.com"
	nicDriver = "nic.example.com"
	sharedDom = "example.com"
	adminNS   = "admin"
	userNS    = "team"
)

// Size bounds a generated scenario.
type Size struct {
	Nodes, MaxDevicesPerSlice, MaxPendingClaims, MaxRequests int
}

// Small keeps every search space tiny, so outcomes are decisive.
var Small = Size{Nodes: 2, MaxDevicesPerSlice: 4, MaxPendingClaims: 2, MaxRequests: 2}

// Big has more devices and claims (searches of thousands of steps).
var Big = Size{Nodes: 3, MaxDevicesPerSlice: 8, MaxPendingClaims: 3, MaxRequests: 3}

type gen struct {
	r   *rand.Rand
	sc  *Scenario
	sz  Size
	uid int
	// devices generated so far, for allocated claims and taint rules.
	devs []genDevice
}

type genDevice struct {
	driver, pool string
	dev          *resourceapi.Device
	nodeLocal    string // node name for node-local slices, "" otherwise
}

// Generate draws a scenario from a seed; the same seed and size give the same
// scenario.
func Generate(seed uint64, sz Size) *Scenario {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), sz: sz}
	g.sc = &Scenario{Seed: seed, Selectors: map[string]Predicate{}}
	g.namespaces()
	g.nodes()
	g.classes()
	g.slices()
	g.rules()
	g.allocated()
	g.pending()
	return g.sc
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }
func (g *gen) intn(n int) int        { return g.r.IntN(n) }
func pick[T any](g *gen, xs ...T) T  { return xs[g.r.IntN(len(xs))] }
func ptr[T any](v T) *T              { return &v }

func (g *gen) nextUID() types.UID {
	g.uid++
	return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", g.uid))
}

func (g *gen) namespaces() {
	g.sc.Namespaces = []*v1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: adminNS, Labels: map[string]string{resourceapi.DRAAdminNamespaceLabelKey: "true"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: userNS}},
	}
}

func (g *gen) nodes() {
	for i := 0; i < g.sz.Nodes; i++ {
		g.sc.Nodes = append(g.sc.Nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("node-%d", i),
			Labels: map[string]string{"kubernetes.io/hostname": fmt.Sprintf("node-%d", i), "rack": fmt.Sprintf("r%d", i%2)},
		}})
	}
}

// selector draws a CEL expression with its meaning.
func (g *gen) selector(driverHint string) string {
	type sel struct {
		expr string
		p    Predicate
	}
	attrEq := func(dom, name string, want resourceapi.DeviceAttribute, guarded bool) sel {
		key := dom + "/" + name
		var lit string
		switch {
		case want.StringValue != nil:
			lit = fmt.Sprintf("%q", *want.StringValue)
		case want.IntValue != nil:
			lit = fmt.Sprint(*want.IntValue)
		case want.BoolValue != nil:
			lit = fmt.Sprint(*want.BoolValue)
		}
		expr := fmt.Sprintf("device.attributes[%q].%s == %s", dom, name, lit)
		if guarded {
			expr = fmt.Sprintf("has(device.attributes[%q].%s) && %s", dom, name, expr)
		}
		return sel{expr, func(v DeviceView) (bool, error) {
			a, ok := v.Attributes[key]
			if !ok {
				if guarded {
					return false, nil
				}
				return false, fmt.Errorf("no such key: %s", name)
			}
			return attrEqual(a, want), nil
		}}
	}
	var s sel
	switch g.intn(9) {
	case 0:
		d := driverHint
		if d == "" || g.chance(0.3) {
			d = pick(g, gpuDriver, nicDriver)
		}
		s = sel{fmt.Sprintf("device.driver == %q", d), func(v DeviceView) (bool, error) { return v.Driver == d, nil }}
	case 1:
		s = attrEq(gpuDriver, "model", resourceapi.DeviceAttribute{StringValue: ptr(pick(g, "a100", "h100"))}, !g.chance(0.1))
	case 2:
		s = attrEq(gpuDriver, "numa", resourceapi.DeviceAttribute{IntValue: ptr(int64(g.intn(2)))}, true)
	case 3:
		s = attrEq(sharedDom, "rack", resourceapi.DeviceAttribute{StringValue: ptr(pick(g, "r0", "r1"))}, true)
	case 4:
		s = attrEq(gpuDriver, "healthy", resourceapi.DeviceAttribute{BoolValue: ptr(true)}, true)
	case 5:
		gi := int64(pick(g, 8, 16, 40))
		s = sel{fmt.Sprintf("has(device.capacity[%q].memory) && device.capacity[%q].memory.compareTo(quantity(\"%dGi\")) >= 0", gpuDriver, gpuDriver, gi),
			func(v DeviceView) (bool, error) {
				q, ok := v.Capacity[gpuDriver+"/memory"]
				return ok && q.Cmp(resource.MustParse(fmt.Sprintf("%dGi", gi))) >= 0, nil
			}}
	case 6:
		want := g.chance(0.5)
		s = sel{fmt.Sprintf("device.allowMultipleAllocations == %v", want), func(v DeviceView) (bool, error) {
			return (v.Device.AllowMultipleAllocations != nil && *v.Device.AllowMultipleAllocations) == want, nil
		}}
	case 7:
		s = sel{fmt.Sprintf("%q in device.attributes[%q]", "numa", gpuDriver), func(v DeviceView) (bool, error) {
			_, ok := v.Attributes[gpuDriver+"/numa"]
			return ok, nil
		}}
	default:
		s = sel{"true", func(DeviceView) (bool, error) { return true, nil }}
	}
	g.sc.Selectors[s.expr] = s.p
	return s.expr
}

func attrEqual(a, b resourceapi.DeviceAttribute) bool {
	switch {
	case a.StringValue != nil && b.StringValue != nil:
		return *a.StringValue == *b.StringValue
	case a.IntValue != nil && b.IntValue != nil:
		return *a.IntValue == *b.IntValue
	case a.BoolValue != nil && b.BoolValue != nil:
		return *a.BoolValue == *b.BoolValue
	case a.VersionValue != nil && b.VersionValue != nil:
		return *a.VersionValue == *b.VersionValue
	}
	return false
}

func celSelectors(exprs ...string) []resourceapi.DeviceSelector {
	var out []resourceapi.DeviceSelector
	for _, e := range exprs {
		out = append(out, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: e}})
	}
	return out
}

// Classes: "gpu" and "nic" select by driver; "any" selects everything; "gpu-x"
// adds a drawn selector.
func (g *gen) classes() {
	add := func(name string, exprs ...string) {
		g.sc.Classes = append(g.sc.Classes, &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourceapi.DeviceClassSpec{Selectors: celSelectors(exprs...)}})
	}
	gpuSel := fmt.Sprintf("device.driver == %q", gpuDriver)
	nicSel := fmt.Sprintf("device.driver == %q", nicDriver)
	g.sc.Selectors[gpuSel] = func(v DeviceView) (bool, error) { return v.Driver == gpuDriver, nil }
	g.sc.Selectors[nicSel] = func(v DeviceView) (bool, error) { return v.Driver == nicDriver, nil }
	add("gpu", gpuSel)
	add("nic", nicSel)
	add("any")
	add("gpu-x", gpuSel, g.selector(gpuDriver))
}

func (g *gen) attrs(driver string, i int) map[resourceapi.QualifiedName]resourceapi.DeviceAttribute {
	a := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{}
	if driver == gpuDriver {
		if !g.chance(0.1) {
			a["model"] = resourceapi.DeviceAttribute{StringValue: ptr(pick(g, "a100", "h100"))}
		}
		if !g.chance(0.1) {
			a["numa"] = resourceapi.DeviceAttribute{IntValue: ptr(int64(g.intn(2)))}
		}
		if g.chance(0.7) {
			a["healthy"] = resourceapi.DeviceAttribute{BoolValue: ptr(g.chance(0.8))}
		}
		a["index"] = resourceapi.DeviceAttribute{IntValue: ptr(int64(i))}
	} else {
		a["numa"] = resourceapi.DeviceAttribute{IntValue: ptr(int64(g.intn(2)))}
	}
	if !g.chance(0.15) {
		a[sharedDom+"/rack"] = resourceapi.DeviceAttribute{StringValue: ptr(pick(g, "r0", "r1"))}
	}
	return a
}

func gi(n int64) resource.Quantity { return *resource.NewQuantity(n<<30, resource.BinarySI) }

func (g *gen) taints() []resourceapi.DeviceTaint {
	if !g.chance(0.2) {
		return nil
	}
	var out []resourceapi.DeviceTaint
	for n := 1 + g.intn(2); n > 0; n-- {
		out = append(out, g.taint())
	}
	return out
}

func (g *gen) taint() resourceapi.DeviceTaint {
	t := resourceapi.DeviceTaint{
		Key:    pick(g, "example.com/broken", "example.com/maint"),
		Effect: pick(g, resourceapi.DeviceTaintEffectNoSchedule, resourceapi.DeviceTaintEffectNoExecute, resourceapi.DeviceTaintEffectNone),
	}
	if g.chance(0.6) {
		t.Value = pick(g, "yes", "no")
	}
	t.TimeAdded = ptr(metav1.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return t
}

// device draws one device of a driver; shared devices carry consumable capacity.
func (g *gen) device(driver string, i int, shared bool) resourceapi.Device {
	d := resourceapi.Device{Name: fmt.Sprintf("dev-%d", i), Attributes: g.attrs(driver, i), Taints: g.taints()}
	if driver == gpuDriver {
		d.Capacity = map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: gi(int64(pick(g, 16, 40, 80)))}}
	}
	if shared {
		d.AllowMultipleAllocations = ptr(true)
		mem := gi(int64(pick(g, 16, 40)))
		c := resourceapi.DeviceCapacity{Value: mem}
		switch g.intn(3) {
		case 0:
			c.RequestPolicy = &resourceapi.CapacityRequestPolicy{Default: ptr(gi(4)), ValidRange: &resourceapi.CapacityRequestPolicyRange{Min: ptr(gi(4)), Step: ptr(gi(4))}}
		case 1:
			c.RequestPolicy = &resourceapi.CapacityRequestPolicy{Default: ptr(gi(8)), ValidValues: []resource.Quantity{gi(4), gi(8), gi(16)}}
		}
		d.Capacity = map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": c}
		if g.chance(0.5) {
			d.Capacity["bandwidth"] = resourceapi.DeviceCapacity{Value: *resource.NewQuantity(int64(pick(g, 10, 100)), resource.DecimalSI)}
		}
	}
	return d
}

func (g *gen) slice(name, driver, pool string, gen, count int64) *resourceapi.ResourceSlice {
	return &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       resourceapi.ResourceSliceSpec{Driver: driver, Pool: resourceapi.ResourcePool{Name: pool, Generation: gen, ResourceSliceCount: count}},
	}
}

func (g *gen) record(s *resourceapi.ResourceSlice, nodeLocal string) {
	for i := range s.Spec.Devices {
		g.devs = append(g.devs, genDevice{driver: s.Spec.Driver, pool: s.Spec.Pool.Name, dev: &s.Spec.Devices[i], nodeLocal: nodeLocal})
	}
	g.sc.Slices = append(g.sc.Slices, s)
}

func (g *gen) slices() {
	maxDev := g.sz.MaxDevicesPerSlice
	for ni, node := range g.sc.Nodes {
		n := node.Name
		// Node-local GPUs: plain, partitionable (counters), or shared.
		switch kind := g.intn(4); kind {
		case 0, 1:
			s := g.slice(n+"-gpu", gpuDriver, n+"-gpu", 1, 1)
			s.Spec.NodeName = ptr(n)
			for i := 0; i < 1+g.intn(maxDev); i++ {
				s.Spec.Devices = append(s.Spec.Devices, g.device(gpuDriver, i, false))
			}
			g.record(s, n)
			if kind == 1 && g.chance(0.3) {
				// A second slice of the same pool; sometimes missing (incomplete
				// pool), sometimes an older generation left behind.
				s2 := g.slice(n+"-gpu-b", gpuDriver, n+"-gpu", 1, 2)
				s2.Spec.NodeName = ptr(n)
				s2.Spec.Devices = []resourceapi.Device{g.device(gpuDriver, 100, false)}
				s.Spec.Pool.ResourceSliceCount = 2
				switch g.intn(3) {
				case 0:
					g.record(s2, n)
				case 1:
					// incomplete: only s present, count 2
				case 2:
					s2.Spec.Pool.Generation = 0
					g.record(s2, n) // stale generation, ignored
				}
			}
		case 2:
			// Partitionable: a counter set and devices that consume it.
			cs := g.slice(n+"-mig-counters", gpuDriver, n+"-mig", 1, 2)
			cs.Spec.NodeName = ptr(n)
			total := int64(pick(g, 4, 7, 8))
			cs.Spec.SharedCounters = []resourceapi.CounterSet{{Name: "gpu0", Counters: map[string]resourceapi.Counter{
				"slices": {Value: *resource.NewQuantity(total, resource.DecimalSI)},
				"memory": {Value: gi(40)},
			}}}
			g.sc.Slices = append(g.sc.Slices, cs)
			ds := g.slice(n+"-mig-devices", gpuDriver, n+"-mig", 1, 2)
			ds.Spec.NodeName = ptr(n)
			for i := 0; i < 2+g.intn(maxDev); i++ {
				d := g.device(gpuDriver, i, false)
				sl := int64(pick(g, 1, 2, 3, 4))
				d.ConsumesCounters = []resourceapi.DeviceCounterConsumption{{CounterSet: "gpu0", Counters: map[string]resourceapi.Counter{
					"slices": {Value: *resource.NewQuantity(sl, resource.DecimalSI)},
					"memory": {Value: gi(sl * 5)},
				}}}
				d.Capacity = map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: gi(sl * 5)}}
				ds.Spec.Devices = append(ds.Spec.Devices, d)
			}
			g.record(ds, n)
		case 3:
			s := g.slice(n+"-shared", gpuDriver, n+"-shared", 1, 1)
			s.Spec.NodeName = ptr(n)
			for i := 0; i < 1+g.intn(2); i++ {
				s.Spec.Devices = append(s.Spec.Devices, g.device(gpuDriver, i, true))
			}
			g.record(s, n)
		}
		// Node-local NICs, sometimes.
		if g.chance(0.5) {
			s := g.slice(n+"-nic", nicDriver, fmt.Sprintf("nic-%d", ni), 1, 1)
			s.Spec.NodeName = ptr(n)
			for i := 0; i < 1+g.intn(2); i++ {
				s.Spec.Devices = append(s.Spec.Devices, g.device(nicDriver, i, false))
			}
			g.record(s, n)
		}
	}
	// Network-attached devices: by node selector, all nodes, or per device.
	if g.chance(0.6) {
		s := g.slice("fabric", nicDriver, "fabric", 1, 1)
		switch g.intn(3) {
		case 0:
			s.Spec.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "rack", Operator: v1.NodeSelectorOpIn, Values: []string{"r0"}}}}}}
		case 1:
			s.Spec.AllNodes = ptr(true)
		case 2:
			s.Spec.PerDeviceNodeSelection = ptr(true)
		}
		for i := 0; i < 1+g.intn(3); i++ {
			d := g.device(nicDriver, i, false)
			if s.Spec.PerDeviceNodeSelection != nil {
				switch g.intn(3) {
				case 0:
					d.NodeName = ptr(g.sc.Nodes[g.intn(len(g.sc.Nodes))].Name)
				case 1:
					d.AllNodes = ptr(true)
				case 2:
					d.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "rack", Operator: v1.NodeSelectorOpIn, Values: []string{pick(g, "r0", "r1")}}}}}}
				}
			}
			s.Spec.Devices = append(s.Spec.Devices, d)
		}
		g.record(s, "")
	}
}

func (g *gen) rules() {
	for n := g.intn(3) - 1; n > 0; n-- {
		sel := &resourceapi.DeviceTaintSelector{}
		if len(g.devs) > 0 && g.chance(0.7) {
			d := g.devs[g.intn(len(g.devs))]
			sel.Driver = ptr(d.driver)
			if g.chance(0.7) {
				sel.Pool = ptr(d.pool)
				if g.chance(0.6) {
					sel.Device = ptr(d.dev.Name)
				}
			}
		} else {
			sel.Driver = ptr(pick(g, gpuDriver, nicDriver))
		}
		g.sc.TaintRules = append(g.sc.TaintRules, &resourceapi.DeviceTaintRule{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rule-%d", n)},
			Spec:       resourceapi.DeviceTaintRuleSpec{DeviceSelector: sel, Taint: g.taint()},
		})
	}
}

// allocated writes claims that already hold devices: exclusive, shared (with a share
// ID and consumed capacity) or admin.
func (g *gen) allocated() {
	used := map[*resourceapi.Device]bool{}
	usedPool := map[string]bool{}
	for n := g.intn(3); n > 0 && len(g.devs) > 0; n-- {
		d := g.devs[g.intn(len(g.devs))]
		shared := d.dev.AllowMultipleAllocations != nil && *d.dev.AllowMultipleAllocations
		admin := !shared && g.chance(0.2)
		// Keep the committed state within capacity and counters (a state that
		// overdraws them is refused by gangpack's loader: DRA-DIFFERENTIAL.md).
		if used[d.dev] && (shared || !admin) {
			continue
		}
		if len(d.dev.ConsumesCounters) > 0 && !admin {
			if usedPool[d.pool] {
				continue
			}
			usedPool[d.pool] = true
		}
		ns := userNS
		if admin {
			ns = adminNS
		}
		claim := &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("held-%d", n), Namespace: ns, UID: g.nextUID()},
			Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
				Name: "r", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "any", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1, AdminAccess: boolPtrIf(admin)},
			}}}},
		}
		res := resourceapi.DeviceRequestAllocationResult{Request: "r", Driver: d.driver, Pool: d.pool, Device: d.dev.Name, AdminAccess: boolPtrIf(admin)}
		if shared {
			uid := g.nextUID()
			res.ShareID = &uid
			res.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{}
			for name, c := range d.dev.Capacity {
				q := c.Value
				if c.RequestPolicy != nil && c.RequestPolicy.Default != nil {
					q = *c.RequestPolicy.Default
				}
				res.ConsumedCapacity[name] = q
			}
		}
		var sel *v1.NodeSelector
		if d.nodeLocal != "" {
			sel = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{d.nodeLocal}}}}}}
		}
		claim.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{res}}, NodeSelector: sel}
		used[d.dev] = true
		g.sc.Claims = append(g.sc.Claims, claim)
	}
}

func boolPtrIf(b bool) *bool {
	if b {
		return ptr(true)
	}
	return nil
}

func (g *gen) tolerations() []resourceapi.DeviceToleration {
	if !g.chance(0.35) {
		return nil
	}
	var out []resourceapi.DeviceToleration
	for n := 1 + g.intn(2); n > 0; n-- {
		t := resourceapi.DeviceToleration{}
		switch g.intn(4) {
		case 0:
			t.Operator = resourceapi.DeviceTolerationOpExists
		case 1:
			t.Key = pick(g, "example.com/broken", "example.com/maint")
			t.Operator = resourceapi.DeviceTolerationOpExists
		default:
			t.Key = pick(g, "example.com/broken", "example.com/maint")
			t.Operator = resourceapi.DeviceTolerationOpEqual
			t.Value = pick(g, "yes", "no", "")
		}
		if g.chance(0.5) {
			t.Effect = pick(g, resourceapi.DeviceTaintEffectNoSchedule, resourceapi.DeviceTaintEffectNoExecute)
		}
		out = append(out, t)
	}
	return out
}

// exact draws one (sub)request body.
func (g *gen) exact(allowAdmin bool) resourceapi.ExactDeviceRequest {
	class := pick(g, "gpu", "gpu", "nic", "any", "gpu-x")
	e := resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: int64(pick(g, 1, 1, 1, 1, 2, 2, 3))}
	if g.chance(0.12) {
		e.AllocationMode = resourceapi.DeviceAllocationModeAll
		e.Count = 0
	}
	if g.chance(0.3) {
		hint := ""
		if class == "gpu" || class == "gpu-x" {
			hint = gpuDriver
		}
		for n := pick(g, 1, 1, 2); n > 0; n-- {
			e.Selectors = append(e.Selectors, celSelectors(g.selector(hint))...)
		}
	}
	e.Tolerations = g.tolerations()
	if g.chance(0.2) {
		e.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{"memory": gi(int64(pick(g, 3, 4, 8, 10, 20)))}}
	}
	if allowAdmin && g.chance(0.08) {
		e.AdminAccess = ptr(true)
	}
	return e
}

func (g *gen) pending() {
	nClaims := 1 + g.intn(g.sz.MaxPendingClaims)
	for c := 0; c < nClaims; c++ {
		ns := userNS
		claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("claim-%d", c), Namespace: ns, UID: g.nextUID()}}
		nReq := 1 + g.intn(g.sz.MaxRequests)
		var names []string
		for r := 0; r < nReq; r++ {
			req := resourceapi.DeviceRequest{Name: fmt.Sprintf("req-%d", r)}
			if g.chance(0.25) {
				for s := 0; s < 2+g.intn(2); s++ {
					e := g.exact(false)
					req.FirstAvailable = append(req.FirstAvailable, resourceapi.DeviceSubRequest{
						Name: fmt.Sprintf("sub-%d", s), DeviceClassName: e.DeviceClassName, Selectors: e.Selectors,
						AllocationMode: e.AllocationMode, Count: e.Count, Tolerations: e.Tolerations, Capacity: e.Capacity,
					})
				}
			} else {
				e := g.exact(true)
				if e.AdminAccess != nil {
					claim.Namespace = adminNS
				}
				req.Exactly = &e
			}
			names = append(names, req.Name)
			claim.Spec.Devices.Requests = append(claim.Spec.Devices.Requests, req)
		}
		for k := pick(g, 0, 0, 0, 1, 1, 2); k > 0; k-- {
			con := resourceapi.DeviceConstraint{}
			if g.chance(0.6) && len(names) > 0 {
				con.Requests = []string{names[g.intn(len(names))]}
				if len(names) > 1 && g.chance(0.5) {
					con.Requests = names
				}
			}
			attr := resourceapi.FullyQualifiedName(pick(g, gpuDriver+"/numa", sharedDom+"/rack", gpuDriver+"/model", gpuDriver+"/index"))
			if g.chance(0.65) {
				con.MatchAttribute = &attr
			} else {
				con.DistinctAttribute = &attr
			}
			claim.Spec.Devices.Constraints = append(claim.Spec.Devices.Constraints, con)
		}
		g.sc.Claims = append(g.sc.Claims, claim)
		g.sc.Pending = append(g.sc.Pending, claim.Namespace+"/"+claim.Name)
	}
}

// YAML renders the scenario as one multi-document manifest.
func (sc *Scenario) YAML() ([]byte, error) {
	var objs []runtime.Object
	for _, o := range sc.Namespaces {
		o = o.DeepCopy()
		o.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}
		objs = append(objs, o)
	}
	for _, o := range sc.Nodes {
		o = o.DeepCopy()
		o.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}
		objs = append(objs, o)
	}
	rv := func(kind string) metav1.TypeMeta {
		return metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: kind}
	}
	for _, o := range sc.Classes {
		o = o.DeepCopy()
		o.TypeMeta = rv("DeviceClass")
		objs = append(objs, o)
	}
	for _, o := range sc.Slices {
		o = o.DeepCopy()
		o.TypeMeta = rv("ResourceSlice")
		objs = append(objs, o)
	}
	for _, o := range sc.TaintRules {
		o = o.DeepCopy()
		o.TypeMeta = rv("DeviceTaintRule")
		objs = append(objs, o)
	}
	for _, o := range sc.Claims {
		o = o.DeepCopy()
		o.TypeMeta = rv("ResourceClaim")
		objs = append(objs, o)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# gangpack DRA differential scenario, seed %d; pending claims: %v\n", sc.Seed, sc.Pending)
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// NodeNames lists the scenario's nodes in order.
func (sc *Scenario) NodeNames() []string {
	var out []string
	for _, n := range sc.Nodes {
		out = append(out, n.Name)
	}
	sort.Strings(out)
	return out
}
