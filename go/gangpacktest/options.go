package gangpacktest

import (
	"context"
	"time"
)

// Option changes what [Check], [Find] and [Generator] do.
type Option func(*config)

type config struct {
	checks     int // 0: rapid's -rapid.checks
	sizes      []string
	kinds      []string
	features   []string
	maxSeed    uint64
	shrink     bool
	shrinkRuns uint64
	shrinkTime time.Duration
	dir        string // "" : testdata/gangpacktest/<test name>
	ctx        context.Context
	admission  bool
}

func newConfig(opts []Option) *config {
	c := &config{
		sizes:      []string{"small", "medium"},
		kinds:      Kinds,
		features:   AllFeatures,
		maxSeed:    1 << 32,
		shrink:     true,
		shrinkRuns: 2000,
		shrinkTime: 2 * time.Minute,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Checks is how many scenarios to try (default: rapid's -rapid.checks, 100). The
// runs rapid spends on shrinking a failure come on top.
func Checks(n int) Option { return func(c *config) { c.checks = n } }

// WithSizes are the sizes to draw from, smallest first (default small and medium;
// see [Sizes]). Shrinking moves toward the first.
func WithSizes(sizes ...string) Option { return func(c *config) { c.sizes = sizes } }

// WithKinds are the workload kinds to draw from, simplest first (default all of
// [Kinds]). Shrinking moves toward the first.
func WithKinds(kinds ...string) Option { return func(c *config) { c.kinds = kinds } }

// WithFeatures are the features a scenario may have (default all of [AllFeatures]):
// each is drawn on or off, and rapid's shrinking switches them off. Give those your
// scheduler handles, so that a unit it leaves pending for a reason you know is not
// all you test; with none, scenarios have no feature at all.
func WithFeatures(features ...string) Option {
	return func(c *config) { c.features = append([]string(nil), features...) }
}

// WithoutShrinking skips gangpack's shrinking of the failing scenario: the
// counterexample is the generated scenario rapid found.
func WithoutShrinking() Option { return func(c *config) { c.shrink = false } }

// ShrinkRuns bounds gangpack's shrinking: at most n runs of the scheduler and
// Check (default 2,000).
func ShrinkRuns(n uint64) Option { return func(c *config) { c.shrinkRuns = n } }

// ShrinkTime bounds gangpack's shrinking in time (default 2 minutes); the best
// scenario so far is the result. rapid's own shrinking of the drawn values is
// bounded by -rapid.shrinktime.
func ShrinkTime(d time.Duration) Option { return func(c *config) { c.shrinkTime = d } }

// Dir is where [Check] writes a counterexample's files (default
// testdata/gangpacktest/<test name>, beside rapid's testdata/rapid).
func Dir(dir string) Option { return func(c *config) { c.dir = dir } }

// WithContext bounds every call (default the test's t.Context()): when it is done,
// checking stops and the test fails saying so.
func WithContext(ctx context.Context) Option { return func(c *config) { c.ctx = ctx } }

// Admission holds pods and claims the scenario runs already to the placement rules
// too (gangpack check --admission). Off by default: a scheduler is judged on what it
// decides.
func Admission() Option { return func(c *config) { c.admission = true } }
