package gangpack

import (
	"testing"
)

// A trap (here a request pointer outside the module's memory, which the module reads)
// is an Internal error, and the instance is closed, not returned to the pool.
func TestTrapDiscardsTheInstance(t *testing.T) {
	e, err := getEngine()
	if err != nil {
		t.Fatal(err)
	}
	in, err := e.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = in.ops["plan"].Call(ctx, 0xfffff000, 64)
	if err == nil {
		t.Fatal("reading outside memory did not trap")
	}
	terr := in.trap(ctx, "plan", err)
	if e := kindOf(t, terr); e.Kind != KindInternal || e.Problems[0].Message == "" {
		t.Errorf("got %+v", e)
	}
	e.release(in, false)
	if !in.mod.IsClosed() {
		t.Error("a trapped instance stayed open")
	}
	for i := 0; i < cap(e.idle)+1; i++ {
		select {
		case got := <-e.idle:
			if got == in {
				t.Fatal("the trapped instance is in the pool")
			}
			defer e.put(got)
		default:
		}
	}
	if _, err := Version(ctx); err != nil {
		t.Errorf("a call after the trap: %v", err)
	}
}
