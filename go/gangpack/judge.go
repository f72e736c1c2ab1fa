package gangpack

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
)

// judges maps a shrink's judge context (the number the module passes back to
// gangpack_host.judge) to its Go judge.
var (
	judges   sync.Map // uint64 → func([]byte) int32
	judgeSeq atomic.Uint64
)

func registerJudge(f func([]byte) int32) (uint64, func()) {
	id := judgeSeq.Add(1)
	judges.Store(id, f)
	return id, func() { judges.Delete(id) }
}

// hostJudge is gangpack_host.judge(ctx, ptr, len): the candidate's text handed to the
// judge registered under ctx; 2 (stop) when there is none.
func hostJudge(_ context.Context, m api.Module, id uint64, ptr, n uint32) int32 {
	f, ok := judges.Load(id)
	if !ok {
		return 2
	}
	view, ok := m.Memory().Read(ptr, n)
	if !ok {
		return 2
	}
	return f.(func([]byte) int32)(append([]byte(nil), view...))
}
