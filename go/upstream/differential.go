package upstream

import (
	"context"
	"fmt"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// GangpackOutcome is gangpack's answer for one node (the `allocate` operation of the
// C-ABI surface).
type GangpackOutcome struct {
	Outcome string // "allocated" | "unsatisfiable" | "undecided"
	Results []resourceapi.AllocationResult
	Reason  string
	Steps   uint64
}

// GangpackAllocator allocates claims on a node with gangpack; an error is gangpack
// refusing the input or the call.
type GangpackAllocator interface {
	Allocate(ctx context.Context, yaml []byte, node string, claims []string) (*GangpackOutcome, error)
}

// Divergence kinds.
const (
	ErrorMismatch   = "error-mismatch"   // one side fails with an error, the other answers
	FitMismatch     = "fit-mismatch"     // one side allocates, the other says it does not fit
	InvalidUpstream = "invalid-upstream" // upstream's allocation fails the checker
	InvalidGangpack = "invalid-gangpack" // gangpack's allocation fails the checker
	DevicesDiffer   = "devices-differ"   // both allocate, with different results
)

// Divergence is one disagreement on one node.
type Divergence struct {
	Kind   string
	Node   string
	Detail string
}

func (d *Divergence) String() string { return fmt.Sprintf("%s on %s: %s", d.Kind, d.Node, d.Detail) }

// Verdict is the comparison of one scenario on one node.
type Verdict struct {
	Node string
	// UpstreamFits / GangpackFits: whether each allocated (false on error).
	UpstreamFits, GangpackFits bool
	UpstreamErr, GangpackErr   error
	Undecided                  bool // gangpack ran out of steps: not compared
	Divergences                []*Divergence
}

// Compare judges the two answers for one node. Outcomes (error or not, fits or not)
// are always compared; each allocation is checked against the scenario by the
// independent checker; and where both allocate, the results themselves, because
// gangpack's search promises upstream's first solution (claims, requests,
// subrequests in order; devices by driver, pool, slice, position). Share IDs (random
// UUIDs upstream) and allocation timestamps are not compared.
func Compare(sc *Scenario, node string, up Outcome, gp *GangpackOutcome, gpErr error) Verdict {
	v := Verdict{Node: node, UpstreamErr: up.Err, GangpackErr: gpErr, UpstreamFits: up.Fits()}
	add := func(kind, format string, args ...any) {
		v.Divergences = append(v.Divergences, &Divergence{Kind: kind, Node: node, Detail: fmt.Sprintf(format, args...)})
	}
	if gpErr == nil && gp.Outcome == "undecided" {
		v.Undecided = true
		return v
	}
	v.GangpackFits = gpErr == nil && gp.Outcome == "allocated"
	switch {
	case up.Err != nil && gpErr != nil:
		return v
	case up.Err != nil:
		add(ErrorMismatch, "upstream error %q, gangpack %s %s", up.Err, gp.Outcome, gp.Reason)
		return v
	case gpErr != nil:
		add(ErrorMismatch, "gangpack error %q, upstream fits=%v", gpErr, up.Fits())
		return v
	}
	if up.Fits() {
		if p := sc.Verify(node, up.Results); len(p) > 0 {
			add(InvalidUpstream, "%s", strings.Join(p, "; "))
		}
	}
	if v.GangpackFits {
		if p := sc.Verify(node, gp.Results); len(p) > 0 {
			add(InvalidGangpack, "%s", strings.Join(p, "; "))
		}
	}
	switch {
	case up.Fits() != v.GangpackFits:
		add(FitMismatch, "upstream fits=%v, gangpack %s %s", up.Fits(), gp.Outcome, gp.Reason)
	case up.Fits():
		a, b := normalize(up.Results), normalize(gp.Results)
		if !apiequality.Semantic.DeepEqual(a, b) {
			add(DevicesDiffer, "upstream %s; gangpack %s", Summary(a), Summary(b))
		}
	}
	return v
}

func normalize(rs []resourceapi.AllocationResult) []resourceapi.AllocationResult {
	out := make([]resourceapi.AllocationResult, len(rs))
	for i := range rs {
		r := rs[i].DeepCopy()
		r.AllocationTimestamp = nil
		for j := range r.Devices.Results {
			d := &r.Devices.Results[j]
			if d.ShareID != nil {
				d.ShareID = nil
			}
			if len(d.Tolerations) == 0 {
				d.Tolerations = nil
			}
			if len(d.ConsumedCapacity) == 0 {
				d.ConsumedCapacity = nil
			}
		}
		if len(r.Devices.Results) == 0 {
			r.Devices.Results = nil
		}
		if len(r.Devices.Config) == 0 {
			r.Devices.Config = nil
		}
		out[i] = *r
	}
	return out
}

// Summary is a one-line view of allocation results: per claim, request=device
// (pool) and the node selector.
func Summary(rs []resourceapi.AllocationResult) string {
	var parts []string
	for _, r := range rs {
		var ds []string
		for _, d := range r.Devices.Results {
			s := fmt.Sprintf("%s=%s/%s", d.Request, d.Pool, d.Device)
			if d.AdminAccess != nil && *d.AdminAccess {
				s += "(admin)"
			}
			if len(d.ConsumedCapacity) > 0 {
				s += fmt.Sprintf("%v", d.ConsumedCapacity)
			}
			if len(d.Tolerations) > 0 {
				s += fmt.Sprintf("tol%d", len(d.Tolerations))
			}
			ds = append(ds, s)
		}
		sel := "any node"
		if r.NodeSelector != nil {
			sel = fmt.Sprintf("%v", r.NodeSelector.NodeSelectorTerms)
		}
		parts = append(parts, fmt.Sprintf("[%s | %s]", strings.Join(ds, " "), sel))
	}
	return strings.Join(parts, " ")
}
