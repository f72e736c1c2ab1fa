package peerbench

import (
	"context"
	"testing"
)

// sink keeps the benchmarks' results alive.
var sink int

// BenchmarkPeer times upstream's allocator on each workload, as the scheduler would
// pay for it per pod. Rows (`BenchmarkPeer/<workload>/<row>`; gangpack's criterion rows
// `peer/<workload>/<row>` hold the gangpack counterpart):
//
//   - <one node>/filter: Filter on the node (Allocate), the pod's PreFilter done once
//     outside the timing.
//   - <one node>/per_pod: PreFilter (claims looked up, allocated state copied, slices
//     listed, NewAllocator) + Filter on the node.
//   - 4096x8_1_gpu_every_node/per_pod: PreFilter + Filter on each of the 4,096 nodes,
//     each fitting node's results kept by name.
//   - 4096x8_1_gpu_every_node/filter_every_node: the same without PreFilter (for
//     the split).
//   - 4096x8_gang_64x8/pod_by_pod: the 64 pods one after the other: PreFilter, Filter
//     on nodes in name order until one fits, Reserve (its devices added to the
//     allocated set the next PreFilter copies). Each round starts from the loaded
//     state; the copy of that state is outside the timing.
func BenchmarkPeer(b *testing.B) {
	dir := fixturesOrSkip(b)
	names, err := Workloads(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range names {
		c := load(b, dir, name)
		if len(c.Pods) == 0 || len(c.Nodes) == 0 {
			b.Fatalf("%s: no pod or no node", name)
		}
		pod := c.Pods[0]
		switch name {
		case "1_gpu", "8_gpus_match_numa", "8_of_7_rejected":
			node := c.Nodes[0]
			want := c.Expect.FirstFit[0] != nil
			b.Run(name+"/filter", func(b *testing.B) {
				cycle, err := c.PreFilter(ctx, pod)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					res, err := cycle.Filter(ctx, node)
					if err != nil || (res != nil) != want {
						b.Fatalf("fits %v (%v), want %v", res != nil, err, want)
					}
					sink += len(res)
				}
			})
			b.Run(name+"/per_pod", func(b *testing.B) {
				for range b.N {
					cycle, err := c.PreFilter(ctx, pod)
					if err != nil {
						b.Fatal(err)
					}
					res, err := cycle.Filter(ctx, node)
					if err != nil || (res != nil) != want {
						b.Fatalf("fits %v (%v), want %v", res != nil, err, want)
					}
					sink += len(res)
				}
			})
		case "4096x8_1_gpu_every_node":
			b.Run(name+"/per_pod", func(b *testing.B) {
				for range b.N {
					n, err := c.FittingNodes(ctx, pod)
					if err != nil || n != c.Expect.FittingNodes {
						b.Fatalf("%d nodes fit (%v), want %d", n, err, c.Expect.FittingNodes)
					}
					sink += n
				}
			})
			b.Run(name+"/filter_every_node", func(b *testing.B) {
				cycle, err := c.PreFilter(ctx, pod)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					n := 0
					for _, node := range c.Nodes {
						res, err := cycle.Filter(ctx, node)
						if err != nil {
							b.Fatal(err)
						}
						if res != nil {
							n++
						}
					}
					if n != c.Expect.FittingNodes {
						b.Fatalf("%d nodes fit, want %d", n, c.Expect.FittingNodes)
					}
					sink += n
				}
			})
		case "4096x8_gang_64x8":
			b.Run(name+"/pod_by_pod", func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					run := c.Clone()
					b.StartTimer()
					placed := 0
					for _, p := range run.Pods {
						node, _, err := run.FirstFit(ctx, p)
						if err != nil {
							b.Fatal(err)
						}
						if node >= 0 {
							placed++
						}
					}
					if placed != len(run.Pods) {
						b.Fatalf("%d of %d pods placed", placed, len(run.Pods))
					}
					sink += placed
				}
			})
		default:
			b.Fatalf("no benchmark rows for workload %s", name)
		}
	}
}
