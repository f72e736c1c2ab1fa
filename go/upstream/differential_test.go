package upstream

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

var (
	flagSeed      = flag.Uint64("diff.seed", 1, "first scenario seed")
	flagScenarios = flag.Int("diff.scenarios", 4000, "scenarios to run (0: until -diff.minutes)")
	flagMinutes   = flag.Float64("diff.minutes", 0, "run for this many minutes instead of a fixed count")
	flagOnly      = flag.Uint64("diff.only", 0, "run this one seed (replay)")
	flagAll       = flag.Bool("diff.all", false, "report every divergent seed (default: the first 10)")
)

// sizeFor: one scenario in five is big.
func sizeFor(seed uint64) Size {
	if seed%5 == 0 {
		return Big
	}
	return Small
}

func gangpackUnderTest(*testing.T) GangpackAllocator { return wasmAllocator{} }

// TestDifferential runs generated scenarios through Kubernetes' allocator and
// gangpack's on every node and compares them (Compare). A failure logs the seed
// and the path of the scenario's YAML; -diff.only=SEED replays it.
func TestDifferential(t *testing.T) {
	gp := gangpackUnderTest(t)
	ctx := context.Background()
	d := NewDriver()
	first, count := *flagSeed, *flagScenarios
	if *flagOnly != 0 {
		first, count = *flagOnly, 1
	}
	var deadline time.Time
	if *flagMinutes > 0 {
		deadline = time.Now().Add(time.Duration(*flagMinutes * float64(time.Minute)))
		count = 0
	}
	stats := map[string]int{}
	failures := 0
	start := time.Now()
	n := 0
	for seed := first; ; seed++ {
		if count > 0 && n >= count || count == 0 && time.Now().After(deadline) {
			break
		}
		n++
		sc := Generate(seed, sizeFor(seed))
		yaml, err := sc.YAML()
		if err != nil {
			t.Fatalf("seed %d: yaml: %v", seed, err)
		}
		var bad []string
		for _, node := range sc.NodeNames() {
			up := d.Allocate(ctx, &sc.Cluster, node, sc.Pending)
			out, gerr := gp.Allocate(ctx, yaml, node, sc.Pending)
			v := Compare(sc, node, up, out, gerr)
			switch {
			case v.Undecided:
				stats["gangpack undecided"]++
			case v.UpstreamErr != nil && v.GangpackErr != nil:
				stats["both error"]++
			case v.UpstreamFits && v.GangpackFits:
				stats["both fit"]++
			case !v.UpstreamFits && !v.GangpackFits && v.UpstreamErr == nil && v.GangpackErr == nil:
				stats["neither fits"]++
			}
			for _, div := range v.Divergences {
				if q := KnownQuirk(sc, div); q != "" {
					stats["known: "+q]++
					continue
				}
				stats[div.Kind]++
				bad = append(bad, div.String())
			}
		}
		if len(bad) > 0 {
			failures++
			if failures <= 10 || *flagAll {
				dir, _ := os.MkdirTemp("", "dra-differential-")
				path := filepath.Join(dir, fmt.Sprintf("seed-%d.yaml", seed))
				_ = os.WriteFile(path, yaml, 0o644)
				t.Errorf("seed %d (replay: go test -run TestDifferential -diff.only=%d; scenario %s):\n  %s",
					seed, seed, path, joinLines(bad))
			}
		}
	}
	var keys []string
	for k := range stats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	summary := ""
	for _, k := range keys {
		summary += fmt.Sprintf("\n  %-40s %d", k, stats[k])
	}
	t.Logf("%d scenarios from seed %d in %v, %d with divergences:%s", n, first, time.Since(start).Round(time.Second), failures, summary)
}

func joinLines(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += "\n  "
		}
		out += x
	}
	return out
}
