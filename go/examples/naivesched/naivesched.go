// Package naivesched is a deliberately naive gang scheduler over Kubernetes' own Go
// types, the worked example of gangpack's Go test kit (package gangpacktest): a
// scheduler author's property "for every generated cluster, my decisions pass
// gangpack's Check" finds its planted bug and shrinks it to a few objects.
//
// It schedules one unit at a time, in input order: the pending pods of a PodGroup
// (scheduling.k8s.io/v1beta1), or a pod without one. All of a unit's pods are placed
// or none; each pod goes to the first node that fits: node resources (containers'
// requests), cordons, NoSchedule/NoExecute taints and tolerations, nodeSelector, the
// PodGroup's minCount and topology constraints, and its ResourceClaims (direct, or
// made from a ResourceClaimTemplate as the resourceclaim controller would): for each
// request, `count` devices of the node, from complete pools, that match the
// DeviceClass's and the request's CEL selectors (a small subset of CEL, see
// compileCEL). What it does not understand stays pending, which is valid: node
// affinity, firstAvailable and All requests, admin access, capacity requests, claim
// constraints and config, shared, partitioned, tainted or non-node-local devices,
// PodGroup claims, composite groups, init containers, scheduling gates.
//
// It writes its decisions as kube-scheduler does (see [Decisions]): per pod, the
// claims' status (a merge patch with status.allocation and status.reservedFor, or a
// whole claim it creates from a template), then a v1 Binding.
//
// The planted bug ([Options].ForgetTakenDevices, on in [Buggy]): it forgets which
// devices are taken, by claims allocated in the input and by the claims it allocated
// earlier in this run, so two claims can get the same device. [Fixed] has it off.
package naivesched

import (
	"fmt"
	"hash/fnv"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Options switch the planted bug.
type Options struct {
	// ForgetTakenDevices is the planted bug: a device is free for a claim unless that
	// same claim took it already, whatever other claims hold (allocated in the input,
	// or by this run). Two claims can then get one device (the gangpack rules
	// device-allocated-twice and device-in-use).
	ForgetTakenDevices bool
}

var (
	// Buggy is the scheduler with its planted bug.
	Buggy = Options{ForgetTakenDevices: true}
	// Fixed is the scheduler without it: its decisions pass gangpack's Check.
	Fixed = Options{}
)

// device is a device the scheduler may allocate.
type device struct {
	driver, pool string
	dev          *resourcev1.Device
}

func (d device) key() string { return d.driver + "/" + d.pool + "/" + d.dev.Name }

// state is what the scheduler knows and has decided so far; a unit works on a copy
// and commits it only when all its pods are placed.
type state struct {
	used    map[string]corev1.ResourceList // node → what bound pods request
	taken   map[string]bool                // device key → allocated
	claimed map[string]bool                // claim ns/name → allocated by this run
}

func (s *state) clone() *state {
	c := &state{used: map[string]corev1.ResourceList{}, taken: map[string]bool{}, claimed: map[string]bool{}}
	for n, l := range s.used {
		c.used[n] = l.DeepCopy()
	}
	for k, v := range s.taken {
		c.taken[k] = v
	}
	for k, v := range s.claimed {
		c.claimed[k] = v
	}
	return c
}

type scheduler struct {
	opts       Options
	c          *Cluster
	classes    map[string]*resourcev1.DeviceClass
	claims     map[string]*resourcev1.ResourceClaim
	templates  map[string]*resourcev1.ResourceClaimTemplate
	groups     map[string]*schedulingv1beta1.PodGroup
	devices    map[string][]device // node → usable devices, in slice order
	nodeByName map[string]*corev1.Node
	// opaque are the nodes where a running pod asks for what this scheduler cannot
	// count (init containers, overhead, pod-level resources): it places nothing there.
	opaque map[string]bool
}

// Schedule decides what it can for the cluster's pending pods. It never fails: what
// it does not understand stays pending.
func Schedule(c *Cluster, opts Options) *Decisions {
	s := &scheduler{
		opts: opts, c: c,
		classes:    map[string]*resourcev1.DeviceClass{},
		claims:     map[string]*resourcev1.ResourceClaim{},
		templates:  map[string]*resourcev1.ResourceClaimTemplate{},
		groups:     map[string]*schedulingv1beta1.PodGroup{},
		nodeByName: map[string]*corev1.Node{},
		opaque:     map[string]bool{},
	}
	for _, dc := range c.DeviceClasses {
		s.classes[dc.Name] = dc
	}
	for _, rc := range c.ResourceClaims {
		s.claims[key(rc.Namespace, rc.Name)] = rc
	}
	for _, t := range c.ResourceClaimTemplates {
		s.templates[key(t.Namespace, t.Name)] = t
	}
	for _, g := range c.PodGroups {
		s.groups[key(g.Namespace, g.Name)] = g
	}
	for _, n := range c.Nodes {
		if n.Name != "" {
			s.nodeByName[n.Name] = n
		}
	}
	s.devices = s.usableDevices()

	st := &state{used: map[string]corev1.ResourceList{}, taken: map[string]bool{}, claimed: map[string]bool{}}
	for _, p := range c.Pods {
		if p.Spec.NodeName == "" || terminal(p) {
			continue
		}
		req, ok := podRequests(p)
		if !ok {
			s.opaque[p.Spec.NodeName] = true
			continue
		}
		add(st.used, p.Spec.NodeName, req)
	}
	for _, rc := range c.ResourceClaims {
		if rc.Status.Allocation == nil {
			continue
		}
		for _, r := range rc.Status.Allocation.Devices.Results {
			st.taken[r.Driver+"/"+r.Pool+"/"+r.Device] = true
		}
	}

	out := &Decisions{}
	for _, u := range s.units() {
		if placed, next := s.scheduleUnit(u, st); placed != nil {
			out.Pods = append(out.Pods, placed...)
			st = next
		}
	}
	return out
}

func key(ns, name string) string {
	if ns == "" {
		ns = "default"
	}
	return ns + "/" + name
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func add(used map[string]corev1.ResourceList, node string, req corev1.ResourceList) {
	l := used[node]
	if l == nil {
		l = corev1.ResourceList{}
		used[node] = l
	}
	for r, q := range req {
		sum := l[r]
		sum.Add(q)
		l[r] = sum
	}
}

// podRequests is what a pod asks of its node: its containers' requests (a limit
// without a request counts as the request) and one `pods`; false when the pod has
// what this scheduler does not count (init containers, overhead, pod resources).
func podRequests(p *corev1.Pod) (corev1.ResourceList, bool) {
	if len(p.Spec.InitContainers) > 0 || len(p.Spec.Overhead) > 0 || p.Spec.Resources != nil {
		return nil, false
	}
	total := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}
	for _, c := range p.Spec.Containers {
		for r, q := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[r]; !ok {
				sum := total[r]
				sum.Add(q)
				total[r] = sum
			}
		}
		for r, q := range c.Resources.Requests {
			sum := total[r]
			sum.Add(q)
			total[r] = sum
		}
	}
	return total, true
}

// usableDevices are, per node, the devices this scheduler may allocate: those of the
// current generation of a complete pool, in a slice for one node, without shared
// counters, taints (in the slice or by a DeviceTaintRule), sharing, per-device node
// selection or binding conditions.
func (s *scheduler) usableDevices() map[string][]device {
	type poolKey struct{ driver, pool string }
	pools := map[poolKey][]*resourcev1.ResourceSlice{}
	var order []poolKey
	for _, sl := range s.c.ResourceSlices {
		k := poolKey{sl.Spec.Driver, sl.Spec.Pool.Name}
		if _, ok := pools[k]; !ok {
			order = append(order, k)
		}
		pools[k] = append(pools[k], sl)
	}
	out := map[string][]device{}
	for _, k := range order {
		members := pools[k]
		gen := int64(0)
		for _, sl := range members {
			gen = max(gen, sl.Spec.Pool.Generation)
		}
		var current []*resourcev1.ResourceSlice
		for _, sl := range members {
			if sl.Spec.Pool.Generation == gen {
				current = append(current, sl)
			}
		}
		complete := k.driver != "" && k.pool != ""
		names := map[string]bool{}
		for _, sl := range current {
			if sl.Spec.Pool.ResourceSliceCount != int64(len(current)) {
				complete = false
			}
			for _, d := range sl.Spec.Devices {
				if names[d.Name] {
					complete = false // an invalid pool: a device name twice
				}
				names[d.Name] = true
			}
		}
		if !complete {
			continue
		}
		for _, sl := range current {
			if sl.Spec.NodeName == nil || *sl.Spec.NodeName == "" || len(sl.Spec.SharedCounters) > 0 ||
				sl.Spec.PerDeviceNodeSelection != nil && *sl.Spec.PerDeviceNodeSelection {
				continue
			}
			for i := range sl.Spec.Devices {
				d := &sl.Spec.Devices[i]
				if s.usable(k.driver, k.pool, d) {
					node := *sl.Spec.NodeName
					out[node] = append(out[node], device{driver: k.driver, pool: k.pool, dev: d})
				}
			}
		}
	}
	return out
}

func (s *scheduler) usable(driver, pool string, d *resourcev1.Device) bool {
	if d.Name == "" || len(d.Taints) > 0 || len(d.ConsumesCounters) > 0 ||
		d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations ||
		d.BindsToNode != nil && *d.BindsToNode || len(d.BindingConditions) > 0 ||
		len(d.BindingFailureConditions) > 0 || d.NodeName != nil || d.NodeSelector != nil ||
		d.AllNodes != nil || len(d.NodeAllocatableResources) > 0 {
		return false
	}
	for _, r := range s.c.DeviceTaintRules {
		sel := r.Spec.DeviceSelector
		if sel == nil {
			return false // every device
		}
		if (sel.Driver == nil || *sel.Driver == driver) && (sel.Pool == nil || *sel.Pool == pool) &&
			(sel.Device == nil || *sel.Device == d.Name) {
			return false
		}
	}
	return true
}

// unit is a PodGroup's pending pods, or a lone pod (group nil, lone true).
type unit struct {
	key   string
	group *schedulingv1beta1.PodGroup
	lone  bool
	pods  []*corev1.Pod
}

// units are the pending units in input order.
func (s *scheduler) units() []*unit {
	var order []*unit
	byKey := map[string]*unit{}
	for _, p := range s.c.Pods {
		if p.Spec.NodeName != "" || terminal(p) || p.DeletionTimestamp != nil || len(p.Spec.SchedulingGates) > 0 {
			continue
		}
		if p.Spec.SchedulerName != "" && p.Spec.SchedulerName != corev1.DefaultSchedulerName {
			continue
		}
		k, lone := "pod:"+key(p.Namespace, p.Name), true
		if g := p.Spec.SchedulingGroup; g != nil {
			if g.PodGroupName == nil {
				continue // a kind of group this scheduler does not know
			}
			k, lone = key(p.Namespace, *g.PodGroupName), false
		}
		u := byKey[k]
		if u == nil {
			u = &unit{key: k, lone: lone}
			if !lone {
				u.group = s.groups[k]
			}
			byKey[k] = u
			order = append(order, u)
		}
		u.pods = append(u.pods, p)
	}
	return order
}

// placedPod is one pod's decision.
type placedPod struct {
	pod    *corev1.Pod
	node   string
	claims []*plannedClaim
}

// plannedClaim is a pod's claim: an existing one (ref) or one to create from a
// template, with its requests and, once placed, its device results.
type plannedClaim struct {
	podClaim string
	ref      string // ns/name of an existing claim, "" for a template's
	template *resourcev1.ResourceClaimTemplate
	requests []request
	results  []resourcev1.DeviceRequestAllocationResult
}

type request struct {
	name        string
	count       int64
	tests       []predicate
	tolerations []resourcev1.DeviceToleration
}

// scheduleUnit places all of the unit's pods, or none (nil).
func (s *scheduler) scheduleUnit(u *unit, st *state) ([]*PodDecision, *state) {
	domains := [][]string{nil}
	var topologyKeys []string
	if !u.lone {
		g := u.group
		if g == nil || len(g.Spec.ResourceClaims) > 0 || g.Spec.ParentCompositePodGroupName != nil {
			return nil, nil
		}
		if c := g.Spec.SchedulingConstraints; c != nil {
			for _, t := range c.Topology {
				topologyKeys = append(topologyKeys, t.Key)
			}
		}
		running := s.runningMembers(u.key)
		minCount := int32(1)
		if gang := g.Spec.SchedulingPolicy.Gang; gang != nil {
			minCount = gang.MinCount
		}
		if int32(len(u.pods)+len(running)) < minCount {
			return nil, nil
		}
		var ok bool
		if domains, ok = s.domains(topologyKeys, running); !ok {
			return nil, nil
		}
	}
	type podPlan struct {
		pod    *corev1.Pod
		needs  corev1.ResourceList
		claims []*plannedClaim
	}
	var plans []podPlan
	for _, p := range u.pods {
		if p.Spec.Affinity != nil {
			return nil, nil
		}
		needs, ok := podRequests(p)
		if !ok {
			return nil, nil
		}
		claims, err := s.podClaims(p)
		if err != nil {
			return nil, nil
		}
		plans = append(plans, podPlan{p, needs, claims})
	}
	for _, domain := range domains {
		next := st.clone()
		var placed []*PodDecision
		for _, pl := range plans {
			d := s.placePod(pl.pod, pl.needs, pl.claims, topologyKeys, domain, next)
			if d == nil {
				placed = nil
				break
			}
			placed = append(placed, d)
		}
		if placed != nil {
			return placed, next
		}
	}
	return nil, nil
}

// runningMembers are the nodes of the group's bound pods.
func (s *scheduler) runningMembers(group string) []string {
	var nodes []string
	for _, p := range s.c.Pods {
		if p.Spec.NodeName == "" || terminal(p) || p.Spec.SchedulingGroup == nil || p.Spec.SchedulingGroup.PodGroupName == nil {
			continue
		}
		if key(p.Namespace, *p.Spec.SchedulingGroup.PodGroupName) == group {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	return nodes
}

// domains are the topology domains (the values of keys) a group may use, in node
// order: the one its running members are in, if any; false when they span several
// or lack a label.
func (s *scheduler) domains(keys []string, running []string) ([][]string, bool) {
	if len(keys) == 0 {
		return [][]string{nil}, true
	}
	var out [][]string
	for _, name := range running {
		n := s.nodeByName[name]
		if n == nil {
			return nil, false
		}
		d, ok := domainOf(n, keys)
		if !ok || len(out) > 0 && !slices.Equal(out[0], d) {
			return nil, false
		}
		out = [][]string{d}
	}
	if out != nil {
		return out, true
	}
	for _, n := range s.c.Nodes {
		if d, ok := domainOf(n, keys); ok && !slices.ContainsFunc(out, func(o []string) bool { return slices.Equal(o, d) }) {
			out = append(out, d)
		}
	}
	return out, true
}

func domainOf(n *corev1.Node, keys []string) ([]string, bool) {
	d := make([]string, len(keys))
	for i, k := range keys {
		v, ok := n.Labels[k]
		if !ok {
			return nil, false
		}
		d[i] = v
	}
	return d, true
}

// podClaims are the pod's claims with their requests, or an error when the
// scheduler does not handle one (the unit stays pending).
func (s *scheduler) podClaims(p *corev1.Pod) ([]*plannedClaim, error) {
	statuses := map[string]string{}
	for _, st := range p.Status.ResourceClaimStatuses {
		if st.ResourceClaimName != nil {
			statuses[st.Name] = *st.ResourceClaimName
		}
	}
	var out []*plannedClaim
	for _, ref := range p.Spec.ResourceClaims {
		name := statuses[ref.Name]
		if ref.ResourceClaimName != nil {
			name = *ref.ResourceClaimName
		}
		switch {
		case name != "":
			rc := s.claims[key(p.Namespace, name)]
			if rc == nil || rc.Status.Allocation != nil || len(rc.Status.ReservedFor) > 0 {
				return nil, fmt.Errorf("claim %s missing or in use", name)
			}
			reqs, err := s.requests(rc.Spec)
			if err != nil {
				return nil, err
			}
			out = append(out, &plannedClaim{podClaim: ref.Name, ref: key(p.Namespace, name), requests: reqs})
		case ref.ResourceClaimTemplateName != nil:
			t := s.templates[key(p.Namespace, *ref.ResourceClaimTemplateName)]
			if t == nil {
				return nil, fmt.Errorf("template %s missing", *ref.ResourceClaimTemplateName)
			}
			reqs, err := s.requests(t.Spec.Spec)
			if err != nil {
				return nil, err
			}
			out = append(out, &plannedClaim{podClaim: ref.Name, template: t, requests: reqs})
		default:
			return nil, fmt.Errorf("claim reference %s", ref.Name)
		}
	}
	return out, nil
}

// requests are a claim's requests, or an error for what the scheduler does not do.
func (s *scheduler) requests(spec resourcev1.ResourceClaimSpec) ([]request, error) {
	if len(spec.Devices.Constraints) > 0 || len(spec.Devices.Config) > 0 {
		return nil, fmt.Errorf("constraints or config")
	}
	var out []request
	for _, r := range spec.Devices.Requests {
		e := r.Exactly
		if e == nil || r.Name == "" {
			return nil, fmt.Errorf("firstAvailable")
		}
		if e.AllocationMode != "" && e.AllocationMode != resourcev1.DeviceAllocationModeExactCount {
			return nil, fmt.Errorf("allocationMode %s", e.AllocationMode)
		}
		if e.AdminAccess != nil || e.Capacity != nil {
			return nil, fmt.Errorf("adminAccess or capacity")
		}
		count := e.Count
		if count == 0 {
			count = 1
		}
		class := s.classes[e.DeviceClassName]
		if count < 1 || count > 32 || class == nil {
			return nil, fmt.Errorf("count or class")
		}
		tests, err := selectors(class.Spec.Selectors)
		if err != nil {
			return nil, err
		}
		own, err := selectors(e.Selectors)
		if err != nil {
			return nil, err
		}
		out = append(out, request{name: r.Name, count: count, tests: append(tests, own...), tolerations: e.Tolerations})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no requests")
	}
	return out, nil
}

// placePod puts the pod on the first node (in the domain) that fits it and its
// claims, updating st; nil when none does.
func (s *scheduler) placePod(p *corev1.Pod, needs corev1.ResourceList, claims []*plannedClaim,
	keys, domain []string, st *state) *PodDecision {
	for _, ref := range claims {
		if ref.ref != "" && st.claimed[ref.ref] {
			return nil // a claim two pods of this run share: not handled
		}
	}
	for _, n := range s.c.Nodes {
		if n.Name == "" || s.opaque[n.Name] || !s.nodeFits(p, n, needs, st) {
			continue
		}
		if keys != nil {
			if d, ok := domainOf(n, keys); !ok || !slices.Equal(d, domain) {
				continue
			}
		}
		taken := st.taken
		if s.opts.ForgetTakenDevices {
			taken = map[string]bool{} // BUG: only this pod's own picks count as taken
		}
		picks := map[string]bool{}
		var results [][]resourcev1.DeviceRequestAllocationResult
		for _, c := range claims {
			r := s.allocate(c.requests, n.Name, taken, picks)
			if r == nil {
				results = nil
				break
			}
			results = append(results, r)
		}
		if len(claims) > 0 && results == nil {
			continue
		}
		add(st.used, n.Name, needs)
		for k := range picks {
			st.taken[k] = true
		}
		d := &PodDecision{Pod: p, Node: n.Name}
		for i, c := range claims {
			if c.ref != "" {
				st.claimed[c.ref] = true
			}
			d.Claims = append(d.Claims, s.claimDecision(p, n.Name, c, results[i]))
		}
		return d
	}
	return nil
}

// allocate picks, for each request, count devices of the node that match it and are
// neither taken nor picked already (picks grows with them); nil when one is short.
func (s *scheduler) allocate(reqs []request, node string, taken, picks map[string]bool) []resourcev1.DeviceRequestAllocationResult {
	var out []resourcev1.DeviceRequestAllocationResult
	for _, r := range reqs {
		for range r.count {
			var pick *device
			for i := range s.devices[node] {
				d := &s.devices[node][i]
				k := d.key()
				if taken[k] || picks[k] || !matches(r.tests, d) {
					continue
				}
				pick = d
				break
			}
			if pick == nil {
				return nil
			}
			picks[pick.key()] = true
			res := resourcev1.DeviceRequestAllocationResult{
				Request: r.name, Driver: pick.driver, Pool: pick.pool, Device: pick.dev.Name,
			}
			if len(r.tolerations) > 0 {
				// Upstream copies the request's tolerations into each result.
				res.Tolerations = slices.Clone(r.tolerations)
			}
			out = append(out, res)
		}
	}
	return out
}

func matches(tests []predicate, d *device) bool {
	for _, t := range tests {
		if !t(d.driver, d.dev) {
			return false
		}
	}
	return true
}

func (s *scheduler) nodeFits(p *corev1.Pod, n *corev1.Node, needs corev1.ResourceList, st *state) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !tolerates(p, t) {
			return false
		}
	}
	for k, v := range p.Spec.NodeSelector {
		if got, ok := n.Labels[k]; !ok || got != v {
			return false
		}
	}
	used := st.used[n.Name]
	for r, q := range needs {
		free, ok := n.Status.Allocatable[r]
		if !ok {
			return false
		}
		sum := used[r]
		sum.Add(q)
		if sum.Cmp(free) > 0 {
			return false
		}
	}
	return true
}

// tolerates says whether one of the pod's tolerations tolerates the taint (the
// operators Exists and Equal; any other tolerates nothing).
func tolerates(p *corev1.Pod, t corev1.Taint) bool {
	for _, tol := range p.Spec.Tolerations {
		if tol.Effect != "" && tol.Effect != t.Effect {
			continue
		}
		switch tol.Operator {
		case corev1.TolerationOpExists:
			if tol.Key == "" || tol.Key == t.Key {
				return true
			}
		case corev1.TolerationOpEqual, "":
			if tol.Key == t.Key && tol.Value == t.Value {
				return true
			}
		}
	}
	return false
}

// claimDecision is the claim's new state: the existing claim with its allocation
// and reservation, or the claim made from the template.
func (s *scheduler) claimDecision(p *corev1.Pod, node string, c *plannedClaim,
	results []resourcev1.DeviceRequestAllocationResult) ClaimDecision {
	status := resourcev1.ResourceClaimStatus{
		Allocation: &resourcev1.AllocationResult{
			Devices: resourcev1.DeviceAllocationResult{Results: results},
			NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{
					Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node},
				}},
			}}},
		},
		ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: p.Name, UID: p.UID}},
	}
	if c.ref != "" {
		rc := s.claims[c.ref]
		return ClaimDecision{Namespace: rc.Namespace, Name: rc.Name, Status: status}
	}
	t := c.template
	created := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:        generatedName(p, c.podClaim),
			Namespace:   p.Namespace,
			Labels:      t.Spec.Labels,
			Annotations: map[string]string{"resource.kubernetes.io/pod-claim-name": c.podClaim},
			Finalizers:  []string{"resource.kubernetes.io/delete-protection"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID,
				Controller: ptr(true), BlockOwnerDeletion: ptr(true),
			}},
		},
		Spec:   *t.Spec.Spec.DeepCopy(),
		Status: status,
	}
	created.APIVersion, created.Kind = "resource.k8s.io/v1", "ResourceClaim"
	return ClaimDecision{Namespace: p.Namespace, Name: created.Name, PodClaim: c.podClaim, Status: status, Created: created}
}

func ptr[T any](v T) *T { return &v }

// generatedName is `<pod>-<claim>-<5 characters>`, as the resourceclaim controller
// names a claim (its suffix is random; here a hash of the pod's uid, or its name).
func generatedName(p *corev1.Pod, claim string) string {
	seed := string(p.UID)
	if seed == "" {
		seed = key(p.Namespace, p.Name)
	}
	h := fnv.New64a()
	h.Write([]byte(seed + "/" + claim))
	n := h.Sum64()
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = alphabet[n%uint64(len(alphabet))]
		n /= uint64(len(alphabet))
	}
	return fmt.Sprintf("%s-%s-%s", p.Name, claim, suffix)
}
