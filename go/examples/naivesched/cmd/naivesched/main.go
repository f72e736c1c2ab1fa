// Command naivesched runs the naive gang scheduler of package naivesched on
// manifests and prints its decisions (claim status patches, claims made from
// templates, Bindings) as YAML for `gangpack check --decisions`:
//
//	naivesched [-fixed] FILE... > decisions.yaml
//
// Without -fixed it has its planted bug (it forgets which devices are taken).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gangpack/gangpack/go/examples/naivesched"
)

func main() {
	fixed := flag.Bool("fixed", false, "without the planted bug")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: naivesched [-fixed] FILE... > decisions.yaml")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	cluster := &naivesched.Cluster{}
	for _, path := range flag.Args() {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "naivesched:", err)
			os.Exit(2)
		}
		c, err := naivesched.Decode(b)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(2)
		}
		cluster.Append(c)
	}
	opts := naivesched.Buggy
	if *fixed {
		opts = naivesched.Fixed
	}
	out, err := naivesched.Schedule(cluster, opts).YAML()
	if err != nil {
		fmt.Fprintln(os.Stderr, "naivesched:", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}
