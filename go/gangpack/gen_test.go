package gangpack

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestGenerateMatchesNative: Generate prints native `gangpack gen`'s bytes for the
// same options (GANGPACK_NATIVE names a built binary).
func TestGenerateMatchesNative(t *testing.T) {
	bin := os.Getenv("GANGPACK_NATIVE")
	if bin == "" {
		t.Skip("GANGPACK_NATIVE is not set")
	}
	ctx := context.Background()
	for _, o := range []GenerateOptions{
		{Seed: 1},
		{Seed: 2, Size: "medium", Kind: "mixed", Output: "json"},
		{Seed: 3, Features: "none"},
		{Seed: 4, Features: "-cel,-topology", Kind: "gangs"},
		{Seed: 5, Features: "sharing,device-taints", Events: true},
	} {
		args := []string{"gen", "--seed", strconv.FormatUint(o.Seed, 10)}
		for flag, v := range map[string]string{"--size": o.Size, "--kind": o.Kind, "--features": o.Features, "-o": o.Output} {
			if v != "" {
				args = append(args, flag+"="+v)
			}
		}
		if o.Events {
			args = append(args, "--events")
		}
		want, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		got, err := Generate(ctx, o)
		if err != nil {
			t.Fatalf("Generate(%+v): %v", o, err)
		}
		if !bytes.Equal(want, got.Text) {
			t.Errorf("Generate(%+v) differs from gangpack %v", o, args)
		}
		if o.Events != (got.List == nil) || o.Events != (len(got.Events) > 0) {
			t.Errorf("Generate(%+v): List %v, %d events", o, got.List != nil, len(got.Events))
		}
	}
}

// TestGenerateRefusesUnknownFeature: a misspelt feature names the closest one.
func TestGenerateRefusesUnknownFeature(t *testing.T) {
	_, err := Generate(context.Background(), GenerateOptions{Seed: 1, Features: "shareing"})
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindInvalidArgument || !strings.Contains(e.Error(), "sharing") {
		t.Fatalf("err = %v; want InvalidArgument naming sharing", err)
	}
}

// pendingJudge keeps a candidate while Plan leaves something pending: the judge calls
// gangpack from inside Shrink (another instance of the pool).
func pendingJudge(t *testing.T) func([]byte) Verdict {
	return func(candidate []byte) Verdict {
		res, err := Plan(context.Background(), Named("candidate.yaml", candidate), nil)
		if err != nil {
			return Passes // an unreadable candidate does not show the failure
		}
		if res.Pending {
			return Fails
		}
		return Passes
	}
}

// TestShrinkKeepsTheFailure: a generated scenario with pending work shrinks to a much
// smaller one that still leaves work pending (checked again after Shrink, by Plan).
func TestShrinkKeepsTheFailure(t *testing.T) {
	ctx := context.Background()
	var scenario []byte
	for seed := uint64(1); seed < 40 && scenario == nil; seed++ {
		g, err := Generate(ctx, GenerateOptions{Seed: seed, Kind: "gangs"})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := Plan(ctx, YAML(g.Text), nil); err == nil && res.Pending {
			scenario = g.Text
		}
	}
	if scenario == nil {
		t.Fatal("no generated scenario leaves work pending")
	}
	r, err := Shrink(ctx, YAML(scenario), pendingJudge(t), &ShrinkOptions{MaxRuns: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if r.After.Objects >= r.Before.Objects || r.After.Objects == 0 || r.Runs == 0 {
		t.Fatalf("shrunk %+v → %+v in %d runs", r.Before, r.After, r.Runs)
	}
	if len(r.List.Items) != r.After.Objects {
		t.Errorf("List has %d objects, After says %d", len(r.List.Items), r.After.Objects)
	}
	res, err := Plan(ctx, YAML(r.Text), nil)
	if err != nil || !res.Pending {
		t.Fatalf("the shrunk scenario no longer fails: %v, %+v", err, res)
	}
	t.Logf("%d objects → %d in %d runs", r.Before.Objects, r.After.Objects, r.Runs)
}

// TestShrinkBounds: MaxRuns stops it, and so do the judge's Stop and a cancelled ctx.
func TestShrinkBounds(t *testing.T) {
	ctx := context.Background()
	g, err := Generate(ctx, GenerateOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	always := func([]byte) Verdict { return Fails }
	r, err := Shrink(ctx, YAML(g.Text), always, &ShrinkOptions{MaxRuns: 5})
	if err != nil || r.Runs > 5 || r.Stopped != "maxRuns" {
		t.Fatalf("MaxRuns 5: %v, %+v", err, r)
	}
	calls := 0
	r, err = Shrink(ctx, YAML(g.Text), func([]byte) Verdict {
		calls++
		if calls == 3 {
			return Stop
		}
		return Fails
	}, nil)
	if err != nil || r.Stopped != "judge" || calls != 3 {
		t.Fatalf("Stop at the third call: %v, %+v, %d calls", err, r, calls)
	}
	cctx, cancel := context.WithCancel(ctx)
	_, err = Shrink(cctx, YAML(g.Text), func([]byte) Verdict { cancel(); return Fails }, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
	// An input that does not fail is refused.
	if _, err := Shrink(ctx, YAML(g.Text), func([]byte) Verdict { return Passes }, nil); err == nil {
		t.Fatal("a passing input was shrunk")
	}
}
