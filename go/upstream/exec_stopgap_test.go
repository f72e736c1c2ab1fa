package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"

	resourceapi "k8s.io/api/resource/v1"
)

// execAllocator runs a native helper binary (stopgap until the Go package lands).
type execAllocator struct{ bin string }

func (e execAllocator) Allocate(ctx context.Context, yaml []byte, node string, claims []string) (*GangpackOutcome, error) {
	f, err := os.CreateTemp("", "scenario-*.yaml")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	f.Write(yaml)
	f.Close()
	out, err := exec.CommandContext(ctx, e.bin, append([]string{f.Name(), node}, claims...)...).Output()
	if err != nil {
		return nil, err
	}
	var resp struct {
		Error   string                         `json:"error"`
		Outcome string                         `json:"outcome"`
		Results []resourceapi.AllocationResult `json:"results"`
		Reason  string                         `json:"reason"`
		Steps   uint64                         `json:"steps"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, err
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	return &GangpackOutcome{Outcome: resp.Outcome, Results: resp.Results, Reason: resp.Reason, Steps: resp.Steps}, nil
}
