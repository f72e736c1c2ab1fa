// Command gangpack-go is the gangpack command's `plan`, `explain` and `check` over the
// Go module (the embedded WebAssembly build, run by wazero): the same arguments, the
// same standard output bytes and the same exit statuses as the native `gangpack`, which
// its tests hold it to.
//
//	gangpack-go plan    -f PATH... [-o table|yaml|json]
//	gangpack-go explain -f PATH... [PODGROUP | --pod NAMESPACE/NAME]
//	gangpack-go check   -f PATH... [--decisions PATH...] [--admission] [-o table|yaml|json]
//	global: --policy P, --now RFC3339, --seed N, --color auto|always|never,
//	        --skip-invalid, --strict
//
// Paths are files or directories (every *.yaml, *.yml and *.json below, sorted), or -
// for standard input; -f and --decisions repeat and take comma-separated lists.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gangpack/gangpack/go/gangpack"
)

const (
	exitFailure = 1
	exitInvalid = 2
)

const usage = `Usage: gangpack-go [OPTIONS] <COMMAND>

Commands:
  plan     Run one scheduling cycle: place pending pods and PodGroups
  explain  Why a PodGroup (or a pod without one) is not placed
  check    Check a cluster's state (or decisions applied over it) with the validator

Options (any command):
  --policy <best-fit|spread|stranding|fgd|gang-aware>   [default: best-fit]
  --seed <N>                                        [default: 0]
  --color <auto|always|never>                       [default: auto]
  --skip-invalid
  --strict
  --now <RFC3339>

Command options:
  plan     -f, --filename <PATH>...  -o, --output <table|yaml|json>
  explain  -f, --filename <PATH>...  [PODGROUP]  --pod <NAMESPACE/NAME>
  check    -f, --filename <PATH>...  --decisions <PATH>...  --admission  -o, --output <table|yaml|json>

Exit status:
  0  success
  1  failure: a file or stdin could not be read
  2  invalid input or usage: every input problem is printed to stderr, one per line
  3  plan: at least one pod or PodGroup stays pending
  4  check: a rule is broken (the findings are on stdout)
`

// usageError is a command line that cannot be run.
type usageError string

func (e usageError) Error() string { return string(e) }

// global flags: name → takes a value.
var global = map[string]bool{"policy": true, "seed": true, "color": true, "skip-invalid": false, "strict": false, "now": true}

// commands: each command's own flags.
var commands = map[string]map[string]bool{
	"plan":    {"filename": true, "output": true},
	"explain": {"filename": true, "pod": true},
	"check":   {"filename": true, "decisions": true, "admission": false, "output": true},
}

var short = map[byte]string{'f': "filename", 'o': "output", 'h': "help", 'V': "version"}

// parsed is a command line.
type parsed struct {
	command     string
	flags       map[string]string
	filenames   []string
	decisions   []string
	positionals []string
	help        string
}

func parse(argv []string) (*parsed, error) {
	p := &parsed{flags: map[string]string{}}
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		var name, value string
		hasValue := false
		switch {
		case arg == "--":
			p.positionals = append(p.positionals, argv[i+1:]...)
			i = len(argv)
			continue
		case strings.HasPrefix(arg, "--"):
			name = arg[2:]
			if eq := strings.IndexByte(name, '='); eq >= 0 {
				name, value, hasValue = name[:eq], name[eq+1:], true
			}
		case strings.HasPrefix(arg, "-") && len(arg) > 1:
			n, ok := short[arg[1]]
			if !ok {
				return nil, usageError(fmt.Sprintf("unexpected argument '%s' found", arg))
			}
			name = n
			if len(arg) > 2 {
				value, hasValue = strings.TrimPrefix(arg[2:], "="), true
			}
		case p.command == "":
			if _, ok := commands[arg]; !ok {
				return nil, usageError(fmt.Sprintf("unrecognized subcommand '%s'", arg))
			}
			p.command = arg
			continue
		default:
			p.positionals = append(p.positionals, arg)
			continue
		}
		if name == "help" || name == "version" {
			p.help = name
			return p, nil
		}
		takes, ok := global[name]
		if !ok && p.command != "" {
			takes, ok = commands[p.command][name]
		}
		if !ok {
			return nil, usageError(fmt.Sprintf("unexpected argument '--%s' found", name))
		}
		if takes && !hasValue {
			i++
			if i >= len(argv) {
				return nil, usageError(fmt.Sprintf("a value is required for '--%s' but none was supplied", name))
			}
			value = argv[i]
		}
		if !takes && hasValue {
			return nil, usageError(fmt.Sprintf("unexpected value '%s' for '--%s' found", value, name))
		}
		switch name {
		case "filename":
			p.filenames = append(p.filenames, strings.Split(value, ",")...)
		case "decisions":
			p.decisions = append(p.decisions, strings.Split(value, ",")...)
		default:
			if _, dup := p.flags[name]; dup {
				return nil, usageError(fmt.Sprintf("the argument '--%s' cannot be used multiple times", name))
			}
			p.flags[name] = value
		}
	}
	if p.command == "" {
		return nil, usageError("a subcommand is required")
	}
	if len(p.filenames) == 0 {
		return nil, usageError("the following required arguments were not provided:\n  --filename <PATH>")
	}
	if p.command == "explain" {
		if len(p.positionals) > 1 {
			return nil, usageError(fmt.Sprintf("unexpected argument '%s' found", p.positionals[1]))
		}
		if _, pod := p.flags["pod"]; pod && len(p.positionals) == 1 {
			return nil, usageError("the argument '[PODGROUP]' cannot be used with '--pod <NAMESPACE/NAME>'")
		}
	} else if len(p.positionals) > 0 {
		return nil, usageError(fmt.Sprintf("unexpected argument '%s' found", p.positionals[0]))
	}
	return p, nil
}

// choice checks a flag's value against its allowed values.
func choice(flag, value string, allowed []string, fold bool) (string, error) {
	for _, a := range allowed {
		if value == a || fold && strings.EqualFold(value, a) {
			return value, nil
		}
	}
	return "", usageError(fmt.Sprintf("invalid value '%s' for '--%s': possible values: %s", value, flag, strings.Join(allowed, ", ")))
}

// read is the paths' manifests; "-" is standard input.
func read(paths []string, stdin io.Reader) gangpack.Input {
	var ins []gangpack.Input
	for _, p := range paths {
		if p == "-" {
			b, err := io.ReadAll(stdin)
			if err != nil {
				return gangpack.Files("<stdin>") // fails, naming stdin
			}
			ins = append(ins, gangpack.Named("<stdin>", b))
			continue
		}
		ins = append(ins, gangpack.Files(p))
	}
	return gangpack.Join(ins...)
}

// request turns a parsed command line into the module's request.
func request(p *parsed, stdout *os.File, stdin io.Reader) (gangpack.CLIRequest, error) {
	r := gangpack.CLIRequest{Command: p.command, Files: read(p.filenames, stdin)}
	if v, ok := p.flags["policy"]; ok {
		if strings.EqualFold(v, "fragmentation-aware") {
			r.Policy = "fragmentation-aware" // deprecated and hidden, as natively
		} else {
			c, err := choice("policy", v, []string{"best-fit", "spread", "stranding", "fgd", "gang-aware"}, true)
			if err != nil {
				return r, err
			}
			r.Policy = c
		}
	}
	if v, ok := p.flags["seed"]; ok {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return r, usageError(fmt.Sprintf("invalid value '%s' for '--seed <N>': invalid digit found in string", v))
		}
		r.Seed = &n
	}
	color := "auto"
	if v, ok := p.flags["color"]; ok {
		c, err := choice("color", v, []string{"auto", "always", "never"}, false)
		if err != nil {
			return r, err
		}
		color = c
	}
	r.Color = color == "always" || color == "auto" && isTerminal(stdout) && os.Getenv("NO_COLOR") == ""
	_, r.SkipInvalid = p.flags["skip-invalid"]
	_, r.Strict = p.flags["strict"]
	r.Now = p.flags["now"]
	if v, ok := p.flags["output"]; ok {
		c, err := choice("output", v, []string{"table", "yaml", "json"}, false)
		if err != nil {
			return r, err
		}
		r.Output = c
	}
	if len(p.positionals) == 1 {
		r.Group = p.positionals[0]
	}
	r.Pod = p.flags["pod"]
	_, r.Admission = p.flags["admission"]
	if len(p.decisions) > 0 {
		d := read(p.decisions, stdin)
		r.Decisions = &d
	}
	return r, nil
}

func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// run runs one command line and returns the exit status.
func run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr *os.File) int {
	p, err := parse(argv)
	var r gangpack.CLIRequest
	if err == nil && p.help == "" {
		r, err = request(p, stdout, stdin)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n\nFor more information, try '--help'.\n", err)
		return exitInvalid
	}
	switch p.help {
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version":
		v, err := gangpack.Version(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "gangpack %s\n", v)
		return 0
	}
	res, err := gangpack.RunCLI(ctx, r)
	if err != nil {
		var ge *gangpack.Error
		if errors.As(err, &ge) && ge.Kind == gangpack.KindIoError {
			fmt.Fprintf(stderr, "error: %s\n", ge.Message)
			return exitFailure
		}
		fmt.Fprintf(stderr, "error: %v\n", err)
		return exitFailure
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	fmt.Fprint(stdout, res.Stdout)
	for _, e := range res.Errors {
		fmt.Fprintf(stderr, "error: %s\n", e)
	}
	return res.Code
}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
