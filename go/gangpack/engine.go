package gangpack

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// The module built by scripts/go-wasm.sh from the crate gangpack-abi.
//
//go:embed gangpack.wasm
var wasmModule []byte

// engine is the runtime, the module compiled once, and the pool of idle instances.
type engine struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	// idle holds instances ready for a call; an instance is in it or in use by exactly
	// one call (or session), never both.
	idle chan *instance
}

var (
	engineOnce sync.Once
	theEngine  *engine
	engineErr  error

	cacheMu sync.Mutex
	cache   wazero.CompilationCache
	started bool // the module is compiled (or failed to): the cache is fixed
)

// SetCompilationCache makes the module's compiled code persist in dir (created if
// missing) across processes, which saves most of the start-up cost after the first
// run. Off by default. It must be called before the first call of the package; later
// it returns an error and changes nothing.
func SetCompilationCache(dir string) error {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if started {
		return errors.New("gangpack: SetCompilationCache after the module was compiled")
	}
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return fmt.Errorf("gangpack: compilation cache %s: %w", dir, err)
	}
	cache = c
	return nil
}

// getEngine compiles the module on first use (once per process).
func getEngine() (*engine, error) {
	engineOnce.Do(func() {
		cacheMu.Lock()
		defer cacheMu.Unlock()
		started = true
		theEngine, engineErr = newEngine(context.Background(), cache)
	})
	return theEngine, engineErr
}

func newEngine(ctx context.Context, c wazero.CompilationCache) (*engine, error) {
	// The compiler where wazero supports it (amd64, arm64), else the interpreter.
	config := wazero.NewRuntimeConfig().WithCloseOnContextDone(true)
	if c != nil {
		config = config.WithCompilationCache(c)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, config)
	_, err := rt.NewHostModuleBuilder("gangpack_host").
		NewFunctionBuilder().WithFunc(hostJudge).Export("judge").
		Instantiate(ctx)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("gangpack: host module: %w", err)
	}
	compiled, err := rt.CompileModule(ctx, wasmModule)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("gangpack: compiling the module: %w", err)
	}
	return &engine{
		rt:       rt,
		compiled: compiled,
		idle:     make(chan *instance, 2*runtime.GOMAXPROCS(0)),
	}, nil
}

// instance is one instantiated module: its memory is private to one call at a time.
type instance struct {
	mod       api.Module
	alloc     api.Function
	free      api.Function
	lastPanic api.Function
	ops       map[string]api.Function
}

// Every operation the module exports, by name after `gangpack_`.
var operations = []string{
	"plan", "explain", "check", "diff", "capacity", "taint", "gen", "shrink", "cli",
	"allocate", "version", "session_new", "session_call", "session_free",
}

var instanceSeq atomic.Uint64

func (e *engine) newInstance(ctx context.Context) (*instance, error) {
	name := fmt.Sprintf("gangpack-%d", instanceSeq.Add(1))
	mod, err := e.rt.InstantiateModule(ctx, e.compiled,
		wazero.NewModuleConfig().WithName(name).WithStartFunctions())
	if err != nil {
		return nil, fmt.Errorf("gangpack: instantiating the module: %w", err)
	}
	in := &instance{
		mod:       mod,
		alloc:     mod.ExportedFunction("gangpack_alloc"),
		free:      mod.ExportedFunction("gangpack_free"),
		lastPanic: mod.ExportedFunction("gangpack_last_panic"),
		ops:       make(map[string]api.Function, len(operations)),
	}
	for _, op := range operations {
		f := mod.ExportedFunction("gangpack_" + op)
		if f == nil {
			mod.Close(ctx)
			return nil, fmt.Errorf("gangpack: the module lacks gangpack_%s", op)
		}
		in.ops[op] = f
	}
	if in.alloc == nil || in.free == nil || in.lastPanic == nil {
		mod.Close(ctx)
		return nil, errors.New("gangpack: the module lacks its allocator exports")
	}
	return in, nil
}

// get takes an idle instance, or makes one.
func (e *engine) get(ctx context.Context) (*instance, error) {
	select {
	case in := <-e.idle:
		return in, nil
	default:
		return e.newInstance(ctx)
	}
}

// put returns a healthy instance to the pool (closed when the pool is full).
func (e *engine) put(in *instance) {
	select {
	case e.idle <- in:
	default:
		in.mod.Close(context.Background())
	}
}

// call runs operation op on an instance taken from the pool.
func call(ctx context.Context, op string, request any) (json.RawMessage, error) {
	e, err := getEngine()
	if err != nil {
		return nil, err
	}
	in, err := e.get(ctx)
	if err != nil {
		return nil, err
	}
	out, healthy, err := in.call(ctx, op, request)
	e.release(in, healthy)
	return out, err
}

// release returns an instance after a call: to the pool when healthy, else closed
// (an instance that trapped may hold broken state and is never reused).
func (e *engine) release(in *instance, healthy bool) {
	if healthy {
		e.put(in)
	} else {
		in.mod.Close(context.Background())
	}
}

// call runs op with request marshalled as JSON: the `ok` of the response, or its
// error. healthy is false when the instance trapped or was cut off (it must be
// discarded, never reused).
func (in *instance) call(ctx context.Context, op string, request any) (json.RawMessage, bool, error) {
	body, err := json.Marshal(request)
	if err != nil {
		return nil, true, &Error{Kind: KindInvalidArgument, Message: err.Error(),
			Problems: []Problem{{Line: err.Error(), Message: err.Error()}}}
	}
	f, ok := in.ops[op]
	if !ok {
		return nil, true, fmt.Errorf("gangpack: unknown operation %q", op)
	}
	res, err := in.alloc.Call(ctx, uint64(len(body)))
	if err != nil {
		return nil, false, in.trap(ctx, op, err)
	}
	ptr := uint32(res[0])
	if !in.mod.Memory().Write(ptr, body) {
		return nil, false, fmt.Errorf("gangpack: %s: request buffer out of range", op)
	}
	res, err = f.Call(ctx, uint64(ptr), uint64(len(body)))
	if err != nil {
		return nil, false, in.trap(ctx, op, err)
	}
	out, err := in.take(ctx, res[0])
	if err != nil {
		return nil, false, err
	}
	var envelope struct {
		Ok    json.RawMessage `json:"ok"`
		Error *Error          `json:"error"`
	}
	if err := json.Unmarshal(out, &envelope); err != nil {
		return nil, true, fmt.Errorf("gangpack: %s: unreadable response: %w", op, err)
	}
	if envelope.Error != nil {
		return nil, true, envelope.Error
	}
	return envelope.Ok, true, nil
}

// take copies out and frees a response buffer, `(ptr << 32) | len`.
func (in *instance) take(ctx context.Context, packed uint64) ([]byte, error) {
	ptr, n := uint32(packed>>32), uint32(packed)
	view, ok := in.mod.Memory().Read(ptr, n)
	if !ok {
		return nil, errors.New("gangpack: response buffer out of range")
	}
	out := append([]byte(nil), view...)
	if _, err := in.free.Call(ctx, uint64(ptr), uint64(n)); err != nil {
		return nil, fmt.Errorf("gangpack: freeing a response: %w", err)
	}
	return out, nil
}

// trap turns a failed call into an error: the context's when it ended the call, else
// Internal with the panic's message when the module recorded one.
func (in *instance) trap(ctx context.Context, op string, cause error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("gangpack: %s: %w", op, ctx.Err())
	}
	message := cause.Error()
	if !in.mod.IsClosed() {
		if res, err := in.lastPanic.Call(context.Background()); err == nil {
			if text, err := in.take(context.Background(), res[0]); err == nil && len(text) > 0 {
				message = string(text)
			}
		}
	}
	line := fmt.Sprintf("%s: the module panicked: %s", op, message)
	return &Error{Kind: KindInternal, Message: line, Problems: []Problem{{Line: line, Message: message}}}
}
