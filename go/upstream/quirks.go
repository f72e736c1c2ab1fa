package upstream

import "strings"

// KnownQuirk names the documented upstream quirk that explains a divergence, or ""
// (docs/DRA-DIFFERENTIAL.md lists each).
func KnownQuirk(sc *Scenario, d *Divergence) string {
	switch {
	case d.Kind == ErrorMismatch && strings.Contains(d.Detail, "because a claim constraint would not be satisfied"):
		// Upstream: a device of an allocationMode All request that fails a claim
		// constraint aborts the whole allocation with an error, at whatever point of
		// its search it meets it; gangpack treats it as that choice failing.
		return "all-constraint-error"
	case d.Kind == ErrorMismatch && strings.HasPrefix(d.Detail, "gangpack error") && strings.Contains(d.Detail, "CEL runtime error"):
		// Upstream evaluates selectors lazily, device by device as its search
		// reaches them, so a selector that fails at run time on some device is an
		// error only if the search gets there first; gangpack evaluates every
		// (sub)request's selectors on every reachable device before searching.
		return "lazy-cel-errors"
	}
	return ""
}
