package gangpack

import "testing"

// Each call on a small scenario, after start-up (the module compiled, an instance in
// the pool). The goal: under 1 ms per call.

func BenchmarkStartup(b *testing.B) {
	for i := 0; i < b.N; i++ {
		e, err := newEngine(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		in, err := e.newInstance(ctx)
		if err != nil {
			b.Fatal(err)
		}
		in.mod.Close(ctx)
		e.rt.Close(ctx)
	}
}

func BenchmarkVersion(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Version(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAllocate(b *testing.B) {
	in := Objects(allocScenario()...)
	for i := 0; i < b.N; i++ {
		if _, err := Allocate(ctx, in, "n1", []string{"ns/one"}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlan(b *testing.B) {
	in := Objects(allocScenario()...)
	for i := 0; i < b.N; i++ {
		if _, err := Plan(ctx, in, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	in := Objects(allocScenario()...)
	for i := 0; i < b.N; i++ {
		if _, err := Check(ctx, in, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlanGangRack(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Plan(ctx, gangRack, nil); err != nil {
			b.Fatal(err)
		}
	}
}
