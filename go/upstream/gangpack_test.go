package upstream

import (
	"context"

	"github.com/gangpack/gangpack/go/gangpack"
)

// wasmAllocator is gangpack's allocator through the Go module (the embedded C-ABI
// WebAssembly build), as a Go user calls it.
type wasmAllocator struct{}

func (wasmAllocator) Allocate(ctx context.Context, yaml []byte, node string, claims []string) (*GangpackOutcome, error) {
	out, err := gangpack.Allocate(ctx, gangpack.Named("scenario.yaml", yaml), node, claims, nil)
	if err != nil {
		return nil, err
	}
	return &GangpackOutcome{Outcome: out.Outcome, Results: out.Results, Reason: out.Reason, Steps: out.Steps}, nil
}
