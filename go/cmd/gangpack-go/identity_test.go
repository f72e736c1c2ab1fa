package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// root is the repository's root (this file is in go/cmd/gangpack-go).
var root = filepath.Join("..", "..", "..")

// manifestSets is every manifest set the native command's tests use: each file alone
// and each directory whole, relative to the root.
func manifestSets(t *testing.T) []string {
	var sets []string
	isManifest := func(name string) bool {
		ext := filepath.Ext(name)
		return ext == ".yaml" || ext == ".yml" || ext == ".json"
	}
	var visit func(rel string)
	visit = func(rel string) {
		abs := filepath.Join(root, rel)
		info, err := os.Stat(abs)
		if err != nil {
			t.Fatal(err)
		}
		if !info.IsDir() {
			if isManifest(rel) {
				sets = append(sets, rel)
			}
			return
		}
		entries, err := os.ReadDir(abs)
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(entries))
		any := false
		for _, e := range entries {
			names = append(names, e.Name())
			any = any || e.IsDir() || isManifest(e.Name())
		}
		sort.Strings(names)
		if any {
			sets = append(sets, rel)
		}
		for _, n := range names {
			visit(filepath.Join(rel, n))
		}
	}
	for _, top := range []string{"examples", "cli/tests/fixtures", "k8s/tests/data"} {
		entries, err := os.ReadDir(filepath.Join(root, top))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			visit(filepath.Join(top, e.Name()))
		}
	}
	return sets
}

type outcome struct {
	stdout []byte
	code   int
}

func native(t *testing.T, bin string, args []string) outcome {
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = io.Discard
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		code = ee.ExitCode()
	}
	return outcome{out.Bytes(), code}
}

// ours runs the Go command in this process, from the root, as the native one runs.
func ours(t *testing.T, args []string) outcome {
	dir := t.TempDir()
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	defer stderr.Close()
	wd, _ := os.Getwd()
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	code := run(context.Background(), args, strings.NewReader(""), stdout, stderr)
	if err := os.Chdir(wd); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(stdout.Name())
	if err != nil {
		t.Fatal(err)
	}
	return outcome{b, code}
}

// TestSameBytesAsNative holds gangpack-go to the native gangpack (GANGPACK_NATIVE, a
// built binary): the same stdout and exit status for plan (table, yaml, json),
// explain and check on every manifest set, and for check with decisions.
func TestSameBytesAsNative(t *testing.T) {
	bin := os.Getenv("GANGPACK_NATIVE")
	if bin == "" {
		t.Skip("GANGPACK_NATIVE is not set: build the native command (cargo build -p gangpack-cli) and name it")
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]string
	for _, set := range manifestSets(t) {
		for _, c := range [][]string{
			{"plan", "-f", set},
			{"plan", "-f", set, "-o", "json"},
			{"plan", "-f", set, "-o", "yaml", "--policy", "spread"},
			{"explain", "-f", set},
			{"check", "-f", set, "-o", "json"},
		} {
			lines = append(lines, c)
		}
	}
	lines = append(lines,
		[]string{"check", "-f", "examples/cluster", "-f", "examples/gang-rack.yaml", "--decisions", "examples/testing/naive-decision.yaml"},
		[]string{"check", "-f", "examples/cluster,examples/gang-rack.yaml", "--decisions", "examples/testing/naive-decision-bindings.yaml", "-o", "yaml"},
		[]string{"explain", "-f", "examples/cluster", "-f", "examples/gang-rack.yaml", "ml/llm-pretrain"},
		[]string{"plan", "-f", "examples/cluster", "--now", "2026-09-01T00:00:00Z", "--strict"},
		[]string{"plan", "-f", "examples/does-not-exist.yaml"},
	)
	if len(lines) < 100 {
		t.Fatalf("only %d command lines: the manifest sets were not found", len(lines))
	}
	failed := 0
	for _, args := range lines {
		want, got := native(t, bin, args), ours(t, args)
		if want.code != got.code || !bytes.Equal(want.stdout, got.stdout) {
			failed++
			if failed <= 5 {
				t.Errorf("gangpack %s:\nnative exit %d, gangpack-go exit %d\nnative stdout:\n%s\ngangpack-go stdout:\n%s",
					strings.Join(args, " "), want.code, got.code, want.stdout, got.stdout)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d command lines differ", failed, len(lines))
	}
	t.Logf("%d command lines: the same bytes and exit status", len(lines))
}

// TestUsageErrors: a bad command line is exit 2 with the problem on stderr, before
// any input is read.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan"}, "--filename <PATH>"},
		{[]string{"plam", "-f", "x"}, "unrecognized subcommand 'plam'"},
		{[]string{"plan", "-f", "x", "-o", "xml"}, "possible values: table, yaml, json"},
		{[]string{"plan", "-f", "x", "--pod", "a/b"}, "unexpected argument '--pod'"},
		{[]string{"explain", "-f", "x", "a/b", "--pod", "c/d"}, "cannot be used with"},
		{[]string{"plan", "-f", "x", "--seed", "-1"}, "invalid digit"},
	} {
		dir := t.TempDir()
		stdout, _ := os.Create(filepath.Join(dir, "out"))
		stderr, _ := os.Create(filepath.Join(dir, "err"))
		code := run(context.Background(), c.args, strings.NewReader(""), stdout, stderr)
		stdout.Close()
		stderr.Close()
		msg, _ := os.ReadFile(stderr.Name())
		if code != exitInvalid || !strings.Contains(string(msg), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, msg, c.want)
		}
	}
}
