package upstream

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// TestShow prints one scenario and both answers (-diff.only=SEED).
func TestShow(t *testing.T) {
	if *flagOnly == 0 {
		t.Skip("set -diff.only")
	}
	gp := gangpackUnderTest(t)
	sc := Generate(*flagOnly, sizeFor(*flagOnly))
	y, _ := sc.YAML()
	os.Stdout.Write(y)
	for _, node := range sc.NodeNames() {
		up := NewDriver().Allocate(context.Background(), &sc.Cluster, node, sc.Pending)
		out, err := gp.Allocate(context.Background(), y, node, sc.Pending)
		fmt.Printf("== %s\nupstream: err=%v %s\n", node, up.Err, Summary(up.Results))
		if err != nil {
			fmt.Printf("gangpack: err=%v\n", err)
		} else {
			fmt.Printf("gangpack: %s %s %s\n", out.Outcome, out.Reason, Summary(out.Results))
		}
	}
}
