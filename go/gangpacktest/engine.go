package gangpacktest

// The calls into package gangpack: generating, judging and shrinking.

import (
	"context"
	"strings"

	"github.com/gangpack/gangpack/go/gangpack"
)

// generate is `gangpack gen` of the scenario's parameters, as JSON.
func generate(ctx context.Context, s *Scenario) ([]byte, error) {
	r, err := gangpack.Generate(ctx, gangpack.GenerateOptions{
		Seed: s.Seed, Size: s.Size, Kind: s.Kind, Features: s.FeatureList(), Output: "json",
	})
	if err != nil {
		return nil, err
	}
	return r.Text, nil
}

// decisionsName names the decisions in gangpack's messages, which tells a refused
// decision from a scenario gangpack cannot read.
const decisionsName = "decisions.yaml"

// judge runs gangpack's Check of the decisions over the scenario. ok is false when
// the scenario itself is not valid input (a shrink candidate gone bad): nothing is
// judged then.
func judge(ctx context.Context, s *Scenario, decisions []byte, admission bool) (res *gangpack.CheckResult, refused *gangpack.Error, ok bool, err error) {
	dec := gangpack.Named(decisionsName, decisions)
	res, err = gangpack.Check(ctx, s.Input(), &gangpack.CheckOptions{Decisions: &dec, Admission: admission}, nil)
	if err == nil {
		return res, nil, true, nil
	}
	e, isErr := err.(*gangpack.Error)
	if !isErr || e.Kind == gangpack.KindInternal {
		return nil, nil, false, err
	}
	for _, p := range e.Problems {
		if p.File == decisionsName || strings.Contains(p.Line, decisionsName) {
			return nil, e, true, nil
		}
	}
	return nil, nil, false, nil
}

// shrinkStats is what gangpack's shrinking did.
type shrinkStats struct {
	runs          uint64
	before, after [3]int // objects, list items, fields
	stopped       string
}

// shrink cuts the scenario down while keep says a candidate still fails.
func shrink(ctx context.Context, c *config, s *Scenario, keep func(candidate []byte) (bool, error)) ([]byte, shrinkStats, error) {
	var stop error
	r, err := gangpack.Shrink(ctx, s.Input(), func(candidate []byte) gangpack.Verdict {
		if stop != nil || ctx.Err() != nil {
			return gangpack.Stop
		}
		fails, err := keep(candidate)
		switch {
		case err != nil:
			stop = err
			return gangpack.Stop
		case fails:
			return gangpack.Fails
		default:
			return gangpack.Passes
		}
	}, &gangpack.ShrinkOptions{MaxRuns: c.shrinkRuns, MaxTime: c.shrinkTime})
	if err == nil && stop != nil {
		err = stop
	}
	if err != nil {
		return nil, shrinkStats{}, err
	}
	return r.Text, shrinkStats{
		runs:    r.Runs,
		before:  [3]int{r.Before.Objects, r.Before.Items, r.Before.Fields},
		after:   [3]int{r.After.Objects, r.After.Items, r.After.Fields},
		stopped: r.Stopped,
	}, nil
}
