package gangpack

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Options are the options every call on manifests takes: the gangpack command's
// global flags. The zero Options are the command's defaults.
type Options struct {
	// Now is the logical clock; zero: the latest timestamp in the input.
	Now time.Time
	// Policy is the scoring policy: "BestFit" (default), "Spread", "Stranding" or
	// "FGD" (any case, "-" and "_" ignored).
	Policy string
	// SkipInvalid skips objects that fail validation (each a warning) instead of
	// failing.
	SkipInvalid bool
	// Strict makes unknown fields errors, not warnings.
	Strict bool
	// StepBudget is the most steps one gang search takes (0: 100,000).
	StepBudget uint64
	// AllocatorStepBudget is the most steps one claim allocation takes (0: 1,000,000).
	AllocatorStepBudget uint64
	// PodGroupPreemptionPolicy is kube-scheduler's feature gate of that name.
	PodGroupPreemptionPolicy bool
}

type optionsJSON struct {
	Now                      string `json:"now,omitempty"`
	Policy                   string `json:"policy,omitempty"`
	SkipInvalid              bool   `json:"skipInvalid,omitempty"`
	Strict                   bool   `json:"strict,omitempty"`
	StepBudget               uint64 `json:"stepBudget,omitempty"`
	AllocatorStepBudget      uint64 `json:"allocatorStepBudget,omitempty"`
	PodGroupPreemptionPolicy bool   `json:"podGroupPreemptionPolicy,omitempty"`
}

func (o *Options) request() *optionsJSON {
	if o == nil {
		return nil
	}
	r := &optionsJSON{
		Policy: o.Policy, SkipInvalid: o.SkipInvalid, Strict: o.Strict,
		StepBudget: o.StepBudget, AllocatorStepBudget: o.AllocatorStepBudget,
		PodGroupPreemptionPolicy: o.PodGroupPreemptionPolicy,
	}
	if !o.Now.IsZero() {
		r.Now = o.Now.UTC().Format(time.RFC3339)
	}
	return r
}

// decode reads a call's result into out.
func decode(op string, raw json.RawMessage, err error, out any) error {
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("gangpack: %s: unreadable result: %w", op, err)
	}
	return nil
}

// PlanResult is one scheduling cycle's outcome.
type PlanResult struct {
	// Table is exactly what `gangpack plan` prints.
	Table string `json:"table"`
	// List is exactly the `kind: List` `gangpack plan -o json` prints: the bindings,
	// claim allocations and PodGroup statuses decided.
	List unstructured.UnstructuredList `json:"list"`
	// ExitCode is the command's exit status: 0 (everything placed) or 3.
	ExitCode int `json:"exitCode"`
	// Pending says something stays pending (ExitCode 3).
	Pending bool `json:"pending"`
	// Warnings are the command's warnings, one line per cause.
	Warnings []string `json:"warnings"`
}

// Plan runs one scheduling cycle over the input, as `gangpack plan` does. Pending
// work is an outcome (Pending), never an error; an error means the input cannot be
// read (an [*Error] naming each object and field).
func Plan(ctx context.Context, in Input, opts *Options) (*PlanResult, error) {
	if in.err != nil {
		return nil, in.err
	}
	raw, err := call(ctx, "plan", map[string]any{"files": in.files, "options": opts.request()})
	var out PlanResult
	if err := decode("plan", raw, err, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Unit names what [Explain] explains: a PodGroup or a pod (`namespace/name` or
// `name`, in the default namespace). The zero Unit is every unit that stays pending.
type Unit struct {
	// PodGroup is a PodGroup's name.
	PodGroup string
	// Pod is a pod's name (set only one of the two).
	Pod string
}

// ExplainResult is why units are (not) placed.
type ExplainResult struct {
	// Text is exactly what `gangpack explain` prints.
	Text string `json:"text"`
	// Warnings are the command's warnings.
	Warnings []string `json:"warnings"`
}

// Explain says why a unit is not placed and what it would take, as `gangpack
// explain` prints it. A unit that does not exist is a NotFound [*Error].
func Explain(ctx context.Context, in Input, unit Unit, opts *Options) (*ExplainResult, error) {
	if in.err != nil {
		return nil, in.err
	}
	req := map[string]any{"files": in.files, "options": opts.request()}
	switch {
	case unit.PodGroup != "" && unit.Pod != "":
		req["unit"] = map[string]string{"podGroup": unit.PodGroup, "pod": unit.Pod}
	case unit.PodGroup != "":
		req["unit"] = map[string]string{"podGroup": unit.PodGroup}
	case unit.Pod != "":
		req["unit"] = map[string]string{"pod": unit.Pod}
	}
	raw, err := call(ctx, "explain", req)
	var out ExplainResult
	if err := decode("explain", raw, err, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CheckOptions are [Check]'s own options.
type CheckOptions struct {
	// Decisions are applied over the input first (docs/DECISIONS.md): v1 Bindings,
	// merge patches of the input's objects, or whole objects as Plan lists them.
	Decisions *Input
	// Admission holds running pods and claims to the rules of placement too.
	Admission bool
}

// FindingObject is one object a [Finding] involves.
type FindingObject struct {
	// Kind is Pod, PodGroup, Node, ResourceClaim, DeviceClass, DeviceTaintRule,
	// Device (Name `driver/pool/device`) or Pool (Name `driver/pool`).
	Kind string `json:"kind"`
	// Namespace is set for namespaced objects.
	Namespace string `json:"namespace,omitempty"`
	// Name is the object's name.
	Name string `json:"name"`
}

// Finding is one broken rule.
type Finding struct {
	// Rule is the stable rule name (`device-allocated-twice`, `below-min-count`, ...).
	Rule string `json:"rule"`
	// Message says what is wrong, in a sentence.
	Message string `json:"message"`
	// Objects are the objects involved, most specific first.
	Objects []FindingObject `json:"objects"`
}

// CheckResult is the validator's verdict on a state.
type CheckResult struct {
	// Valid says no rule is broken.
	Valid bool `json:"valid"`
	// ExitCode is the command's exit status: 0 (valid) or 4.
	ExitCode int `json:"exitCode"`
	// Table is exactly what `gangpack check` prints.
	Table string `json:"table"`
	// Findings are every broken rule, exactly as `gangpack check -o json` lists them.
	Findings []Finding `json:"findings"`
	// PodsBound counts bound pods (after the decisions).
	PodsBound int `json:"podsBound"`
	// ClaimsAllocated counts allocated claims.
	ClaimsAllocated int `json:"claimsAllocated"`
	// GroupsRunning counts PodGroups with a bound member.
	GroupsRunning int `json:"groupsRunning"`
	// Devices counts published devices.
	Devices int `json:"devices"`
	// DevicesAllocated counts distinct allocated devices (admin access left out).
	DevicesAllocated int `json:"devicesAllocated"`
	// RunningExempt counts findings of placement rules on running pods and claims,
	// not counted without Admission.
	RunningExempt int `json:"runningExempt"`
	// Patched, Replaced, Added and Bound count decision objects by how they applied.
	Patched  int `json:"patched"`
	Replaced int `json:"replaced"`
	Added    int `json:"added"`
	Bound    int `json:"bound"`
	// Decided counts bindings and allocations the decisions made or changed.
	Decided int `json:"decided"`
	// Bindings maps every bound pod (`namespace/name`) to its node.
	Bindings map[string]string `json:"bindings"`
	// NewBindings are the pods the decisions bound or moved.
	NewBindings []string `json:"newBindings"`
	// Evicted are the pods bound in the input that the decisions evict.
	Evicted []string `json:"evicted"`
	// Warnings are the command's warnings.
	Warnings []string `json:"warnings"`
}

// Check judges the input's state (or the decisions applied over it) by gangpack's
// validator, as `gangpack check` does. A broken rule is a Finding, never an error.
func Check(ctx context.Context, in Input, opts *CheckOptions, o *Options) (*CheckResult, error) {
	if in.err != nil {
		return nil, in.err
	}
	spec := map[string]any{}
	if opts != nil {
		if opts.Decisions != nil {
			if opts.Decisions.err != nil {
				return nil, opts.Decisions.err
			}
			spec["decisions"] = opts.Decisions.files
		}
		spec["admission"] = opts.Admission
	}
	raw, err := call(ctx, "check", map[string]any{"files": in.files, "spec": spec, "options": o.request()})
	var out CheckResult
	if err := decode("check", raw, err, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DiffSide is one side of a [Diff].
type DiffSide struct {
	// Valid says the validator found no broken rule.
	Valid bool `json:"valid"`
	// PodsPlaced counts pods this side's decisions bound or moved.
	PodsPlaced int `json:"podsPlaced"`
	// PodsBound counts bound pods.
	PodsBound int `json:"podsBound"`
	// DevicesAllocated and DevicesUnallocated count devices.
	DevicesAllocated   int `json:"devicesAllocated"`
	DevicesUnallocated int `json:"devicesUnallocated"`
	// GangsSplit are PodGroups placed below minCount or across topology domains.
	GangsSplit []string `json:"gangsSplit"`
	// Evicted are the pods this side evicts.
	Evicted []string `json:"evicted"`
	// Violations are this side's broken rules.
	Violations []Finding `json:"violations"`
}

// DiffResult compares two schedulers' decisions.
type DiffResult struct {
	Ours   DiffSide `json:"ours"`
	Theirs DiffSide `json:"theirs"`
	// PlacedByOursOnly and PlacedByTheirsOnly are pods placed by one side only.
	PlacedByOursOnly   []string `json:"placedByOursOnly"`
	PlacedByTheirsOnly []string `json:"placedByTheirsOnly"`
	// PlacedOnDifferentNodes are pods both place, on different nodes.
	PlacedOnDifferentNodes []struct {
		Pod    string `json:"pod"`
		Ours   string `json:"ours"`
		Theirs string `json:"theirs"`
	} `json:"placedOnDifferentNodes"`
	EvictedByOursOnly   []string `json:"evictedByOursOnly"`
	EvictedByTheirsOnly []string `json:"evictedByTheirsOnly"`
	// Same says the two place and evict the same pods on the same nodes.
	Same bool `json:"same"`
	// ExitCode is 0 (both valid) or 4.
	ExitCode int `json:"exitCode"`
	// Table is exactly what `gangpack diff` prints.
	Table    string   `json:"table"`
	Warnings []string `json:"warnings"`
}

// Diff compares two sets of decisions for the same input, as `gangpack diff` does.
func Diff(ctx context.Context, in, ours, theirs Input, o *Options) (*DiffResult, error) {
	for _, x := range []Input{in, ours, theirs} {
		if x.err != nil {
			return nil, x.err
		}
	}
	raw, err := call(ctx, "diff", map[string]any{"files": in.files,
		"spec": map[string]any{"ours": ours.files, "theirs": theirs.files}, "options": o.request()})
	var out DiffResult
	if err := decode("diff", raw, err, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CapacityOptions are [Capacity]'s own options.
type CapacityOptions struct {
	// Key is the node label grouping nodes into domains; empty: the first PodGroup
	// topology key.
	Key string
	// Whole treats the cluster as one domain (Key ignored).
	Whole bool
	// GangPods is the pods of the gang shape, 8 devices each (0: 8).
	GangPods uint32
}

// CapacityResult is what the free capacity can host, per domain.
type CapacityResult struct {
	// Report is exactly the object `gangpack capacity -o json` prints.
	Report json.RawMessage `json:"-"`
	// Table is exactly what `gangpack capacity` prints.
	Table    string   `json:"table"`
	Warnings []string `json:"warnings"`
}

// Capacity reports which request shapes the free capacity can still host, per
// topology domain, as `gangpack capacity` does.
func Capacity(ctx context.Context, in Input, opts *CapacityOptions, o *Options) (*CapacityResult, error) {
	if in.err != nil {
		return nil, in.err
	}
	spec := map[string]any{}
	if opts != nil {
		switch {
		case opts.Whole:
			spec["key"] = nil
		case opts.Key != "":
			spec["key"] = opts.Key
		}
		if opts.GangPods != 0 {
			spec["gangPods"] = opts.GangPods
		}
	}
	raw, err := call(ctx, "capacity", map[string]any{"files": in.files, "spec": spec, "options": o.request()})
	var out CapacityResult
	if err := decode("capacity", raw, err, &out); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	delete(fields, "table")
	delete(fields, "warnings")
	out.Report, _ = json.Marshal(fields)
	return &out, nil
}

// AllocateOptions are [Allocate]'s options.
type AllocateOptions struct {
	// StepBudget is the most search steps (0: 1,000,000); when it runs out the outcome
	// is "undecided".
	StepBudget uint64
}

// AllocateResult is the outcome of [Allocate].
type AllocateResult struct {
	// Outcome is "allocated", "unsatisfiable" or "undecided".
	Outcome string `json:"outcome"`
	// Results holds one AllocationResult per claim, in the order asked (allocated).
	Results []resourcev1.AllocationResult `json:"results"`
	// Reason says why nothing fits, in gangpack's words (unsatisfiable).
	Reason string `json:"reason"`
	// Steps is the step budget spent (undecided).
	Steps uint64 `json:"steps"`
}

// Allocate allocates the named pending claims (`namespace/name`) together on node,
// all or none, over the input's Nodes, ResourceSlices, DeviceClasses,
// ResourceClaims and DeviceTaintRules (claims with status.allocation hold their
// devices; other kinds are ignored): the analogue of the upstream structured
// allocator's Allocate(ctx, node, claims). A claim that is missing or allocated
// already is an InvalidArgument [*Error] naming it (field `claims[i]`).
func Allocate(ctx context.Context, in Input, node string, claims []string, opts *AllocateOptions) (*AllocateResult, error) {
	if in.err != nil {
		return nil, in.err
	}
	req := map[string]any{"files": in.files, "node": node, "claims": claims}
	if claims == nil {
		req["claims"] = []string{}
	}
	if opts != nil && opts.StepBudget != 0 {
		req["stepBudget"] = opts.StepBudget
	}
	raw, err := call(ctx, "allocate", req)
	var out AllocateResult
	if err := decode("allocate", raw, err, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Version is the version of the gangpack core the embedded module was built from.
func Version(ctx context.Context) (string, error) {
	raw, err := call(ctx, "version", struct{}{})
	var out struct {
		Version string `json:"version"`
	}
	if err := decode("version", raw, err, &out); err != nil {
		return "", err
	}
	return out.Version, nil
}
