package gangpack

import "context"

// CLIRequest is one `gangpack` command line whose arguments the caller parsed and
// whose files it read (the module has no file system): what [RunCLI] runs.
type CLIRequest struct {
	// Command is "plan", "explain", "taint", "demo", "check" or "diff".
	Command string
	// Files are the manifests (`-f`).
	Files Input
	// Output is "table" (default), "yaml" or "json" (`-o`).
	Output string
	// Now, Policy, Seed, SkipInvalid, Strict and Color are the global flags, as
	// written on the command line (Now: RFC 3339 text or seconds since the epoch).
	Now         string
	Policy      string
	Seed        *uint64
	SkipInvalid bool
	Strict      bool
	Color       bool
	// Group and Pod name what `explain` explains (`[PODGROUP]`, `--pod`).
	Group, Pod string
	// Decisions and Admission are `check --decisions` and `--admission`.
	Decisions *Input
	Admission bool
	// Ours and Theirs are `diff --ours` and `--theirs`.
	Ours, Theirs *Input
	// Manifests is `demo --manifests`.
	Manifests bool
}

// CLIResult is what the native command would print and exit with.
type CLIResult struct {
	// Stdout is exactly the native command's standard output.
	Stdout string `json:"stdout"`
	// Warnings are the lines it prints after "warning: " on standard error.
	Warnings []string `json:"warnings"`
	// Errors are the lines it prints after "error: " on standard error.
	Errors []string `json:"errors"`
	// Code is its exit status (0 success, 2 invalid input, 3 pending, 4 broken rule).
	Code int `json:"code"`
}

// RunCLI runs one command line as the native `gangpack` does, byte for byte: the same
// stdout, warnings, errors and exit status (cmd/gangpack-go is the command over it).
// Bad input is a result (Code 2 with Errors), not an error; an error means an input
// could not be read ([Files]) or the module failed.
func RunCLI(ctx context.Context, r CLIRequest) (*CLIResult, error) {
	if r.Files.err != nil {
		return nil, r.Files.err
	}
	options := map[string]any{}
	for k, v := range map[string]string{"now": r.Now, "policy": r.Policy} {
		if v != "" {
			options[k] = v
		}
	}
	for k, v := range map[string]bool{"skipInvalid": r.SkipInvalid, "strict": r.Strict, "color": r.Color} {
		if v {
			options[k] = true
		}
	}
	if r.Seed != nil {
		options["seed"] = *r.Seed
	}
	req := map[string]any{"command": r.Command, "files": nonNil(r.Files.files), "options": options}
	if r.Output != "" {
		req["output"] = r.Output
	}
	if r.Group != "" {
		req["group"] = r.Group
	}
	if r.Pod != "" {
		req["pod"] = r.Pod
	}
	if r.Manifests {
		req["manifests"] = true
	}
	if r.Admission {
		req["admission"] = true
	}
	for k, in := range map[string]*Input{"decisions": r.Decisions, "ours": r.Ours, "theirs": r.Theirs} {
		if in == nil {
			continue
		}
		if in.err != nil {
			return nil, in.err
		}
		req[k] = nonNil(in.files)
	}
	raw, err := call(ctx, "cli", req)
	var out CLIResult
	if err := decode("cli", raw, err, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// nonNil is files, never nil (an empty input is an empty list, not null).
func nonNil(files []file) []file {
	if files == nil {
		return []file{}
	}
	return files
}
