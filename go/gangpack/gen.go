package gangpack

import (
	"context"
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// GenerateOptions are `gangpack gen`'s flags.
type GenerateOptions struct {
	// Seed picks the scenario: the same seed and options give the same bytes, here
	// and in the native `gangpack gen`.
	Seed uint64
	// Size is "small" (default), "medium" or "large".
	Size string
	// Kind is "gangs", "pods" or "mixed" (default: the command's default).
	Kind string
	// Features switches the test kit's features, as `gen --features` does: "all"
	// (default), "none", or a comma-separated list of names, each optionally prefixed
	// with + or - ("-cel,-topology"): sharing, partitioning, device-taints,
	// node-taints, topology, composite-groups, priorities, cel, admin-access,
	// first-available, allocation-mode-all, constraints. An unknown name is an
	// [*Error] that names the closest one.
	Features string
	// Events writes a watch stream (what `gangpack watch` reads) instead of a List:
	// taints, DeviceTaintRules, removals and clock steps after the initial objects.
	Events bool
	// Output is "yaml" (default) or "json".
	Output string
}

// GenerateResult is a generated scenario.
type GenerateResult struct {
	// Text is exactly what `gangpack gen` prints with the same options.
	Text []byte
	// List holds the objects of Text (nil with Events).
	List *unstructured.UnstructuredList
	// Events holds the watch events of Text (with Events): each a JSON object
	// `{"type": ..., "object": ...}` or a clock step.
	Events []json.RawMessage
}

// Generate makes a realistic cluster and workload from a seed, as `gangpack gen`
// does: racks and blocks of GPU nodes, device taints, DeviceTaintRules, shareable and
// partitionable GPUs, claims of every request form, PodGroups with topology and
// priorities, and running work. Use it to feed a scheduler under test (package
// gangpacktest draws these options with rapid).
func Generate(ctx context.Context, o GenerateOptions) (*GenerateResult, error) {
	opts := map[string]any{"seed": o.Seed}
	for k, v := range map[string]string{"size": o.Size, "kind": o.Kind, "features": o.Features, "output": o.Output} {
		if v != "" {
			opts[k] = v
		}
	}
	if o.Events {
		opts["events"] = true
	}
	raw, err := call(ctx, "gen", map[string]any{"options": opts})
	var out struct {
		Text   string                         `json:"text"`
		List   *unstructured.UnstructuredList `json:"list"`
		Events []json.RawMessage              `json:"events"`
	}
	if err := decode("gen", raw, err, &out); err != nil {
		return nil, err
	}
	return &GenerateResult{Text: []byte(out.Text), List: out.List, Events: out.Events}, nil
}

// Verdict is a shrink judge's answer about one candidate.
type Verdict int32

const (
	// Passes: the candidate does not show the failure; it is dropped.
	Passes Verdict = 0
	// Fails: the candidate still shows the failure; shrinking goes on from it.
	Fails Verdict = 1
	// Stop: stop shrinking now and return the smallest failing input so far.
	Stop Verdict = 2
)

// ShrinkOptions bound a [Shrink].
type ShrinkOptions struct {
	// MaxRuns is the most judge calls, the input's included (0: the command's
	// default).
	MaxRuns uint64
	// MaxTime stops shrinking after this long (0: no limit); the result is the
	// smallest failing input found by then.
	MaxTime time.Duration
	// KeepNumbers leaves numbers as they are (by default they are made smaller too).
	KeepNumbers bool
	// Output is the format of candidates and of the result: "yaml" or "json"
	// (default: the input's).
	Output string
}

// ShrinkSize counts what an input holds.
type ShrinkSize struct {
	Objects int `json:"objects"`
	Items   int `json:"items"`
	Fields  int `json:"fields"`
}

// ShrinkResult is the smallest failing input [Shrink] found.
type ShrinkResult struct {
	// Text is the shrunk input, a `kind: List`, exactly as `gangpack shrink` writes it.
	Text []byte
	// List holds the objects of Text.
	List *unstructured.UnstructuredList
	// Runs counts the judge calls; Cached the candidates answered from the cache.
	Runs, Cached uint64
	// Rounds counts the passes over the input.
	Rounds int
	// Before and After are the input's size before and after.
	Before, After ShrinkSize
	// Stopped says why shrinking stopped early: "maxRuns", "judge" (the judge said
	// Stop, MaxTime passed or ctx was cancelled), or "" (a fixpoint).
	Stopped string
}

// Shrink makes a failing input small, as `gangpack shrink` does: whole objects, then
// list items, then fields, then numbers go while judge says the candidate still
// fails. judge is called with each candidate's text (a `kind: List` in the input's
// format, or Output's), on the calling goroutine, one call at a time; it may call
// gangpack itself (Plan, Check: they run on other instances). The input itself must
// fail, or Shrink returns an [*Error]. Deterministic: the same input and judge give
// the same result. A cancelled ctx stops shrinking like Stop, and Shrink then returns
// ctx's error.
func Shrink(ctx context.Context, in Input, judge func(candidate []byte) Verdict, o *ShrinkOptions) (*ShrinkResult, error) {
	if in.err != nil {
		return nil, in.err
	}
	var opts ShrinkOptions
	if o != nil {
		opts = *o
	}
	var deadline time.Time
	if opts.MaxTime > 0 {
		deadline = time.Now().Add(opts.MaxTime)
	}
	id, done := registerJudge(func(b []byte) int32 {
		if ctx.Err() != nil || (!deadline.IsZero() && time.Now().After(deadline)) {
			return int32(Stop)
		}
		return int32(judge(b))
	})
	defer done()
	spec := map[string]any{}
	if opts.MaxRuns > 0 {
		spec["maxRuns"] = opts.MaxRuns
	}
	if opts.KeepNumbers {
		spec["keepNumbers"] = true
	}
	if opts.Output != "" {
		spec["output"] = opts.Output
	}
	raw, err := call(ctx, "shrink", map[string]any{"files": in.files, "judgeContext": id, "options": spec})
	var out struct {
		Text    string                         `json:"text"`
		List    *unstructured.UnstructuredList `json:"list"`
		Runs    uint64                         `json:"runs"`
		Cached  uint64                         `json:"cached"`
		Rounds  int                            `json:"rounds"`
		Before  ShrinkSize                     `json:"before"`
		After   ShrinkSize                     `json:"after"`
		Stopped *string                        `json:"stopped"`
	}
	if err := decode("shrink", raw, err, &out); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &ShrinkResult{
		Text: []byte(out.Text), List: out.List, Runs: out.Runs, Cached: out.Cached,
		Rounds: out.Rounds, Before: out.Before, After: out.After,
	}
	if out.Stopped != nil {
		r.Stopped = *out.Stopped
	}
	return r, nil
}
