package gangpack

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// nativeRun runs the native command from the repository root: its stdout and exit
// status.
func nativeRun(t *testing.T, bin string, args ...string) ([]byte, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return out, ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return out, 0
}

// TestDiffAndCapacityMatchNative: Diff of gangpack's own plan against the naive
// decision, and Capacity, give the native command's tables and exit statuses
// (GANGPACK_NATIVE names a built binary).
func TestDiffAndCapacityMatchNative(t *testing.T) {
	bin := os.Getenv("GANGPACK_NATIVE")
	if bin == "" {
		t.Skip("GANGPACK_NATIVE is not set")
	}
	bin, _ = filepath.Abs(bin)
	ctx := context.Background()
	root := filepath.Join("..", "..")
	in := Files(filepath.Join(root, "examples/cluster"), filepath.Join(root, "examples/gang-rack.yaml"))
	plan, err := Plan(ctx, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": plan.List.Items})
	if err != nil {
		t.Fatal(err)
	}
	oursPath := filepath.Join(t.TempDir(), "ours.json")
	if err := os.WriteFile(oursPath, ours, 0o644); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(root, "examples/testing/naive-decision.yaml")
	d, err := Diff(ctx, in, Files(oursPath), Files(theirs), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, code := nativeRun(t, bin, "diff", "-f", "examples/cluster", "-f", "examples/gang-rack.yaml", "--ours", oursPath, "--theirs", "examples/testing/naive-decision.yaml")
	if !bytes.Equal(want, []byte(d.Table)) || code != d.ExitCode {
		t.Errorf("Diff: exit %d, table:\n%s\nnative exit %d:\n%s", d.ExitCode, d.Table, code, want)
	}
	if d.Same || !d.Ours.Valid || d.Theirs.Valid || len(d.Theirs.Violations) == 0 {
		t.Errorf("Diff: same %v, ours valid %v, theirs valid %v with %d violations", d.Same, d.Ours.Valid, d.Theirs.Valid, len(d.Theirs.Violations))
	}

	c, err := Capacity(ctx, Files(filepath.Join(root, "examples/cluster")), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, code = nativeRun(t, bin, "capacity", "-f", "examples/cluster")
	if !bytes.Equal(want, []byte(c.Table)) || code != 0 {
		t.Errorf("Capacity table:\n%s\nnative (exit %d):\n%s", c.Table, code, want)
	}
	if !json.Valid(c.Report) || len(c.Report) < 10 {
		t.Errorf("Capacity report: %s", c.Report)
	}
}
