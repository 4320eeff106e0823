package code

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Limits bound one execution. The zero value means the defaults.
type Limits struct {
	// Timeout is the wall-clock budget. Default 5s.
	Timeout time.Duration
	// MaxSteps is the Starlark step budget. Default 10,000,000.
	MaxSteps uint64
	// MaxMemory is the approximate heap growth allowed, in bytes (checked
	// every 5ms against the process heap, so concurrent work elsewhere in
	// the process counts too; past it the heap is collected and checked
	// again, so garbage does not count). Default 256 MiB; -1 disables the
	// watchdog.
	MaxMemory int64
}

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = 5 * time.Second
	}
	if l.MaxSteps == 0 {
		l.MaxSteps = 10_000_000
	}
	if l.MaxMemory == 0 {
		l.MaxMemory = 256 << 20
	}
	return l
}

// Stats describes one execution.
type Stats struct {
	Duration time.Duration
	Steps    uint64
}

// fileOptions enables the Python constructs user code commonly needs.
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}

// ErrLimit is wrapped by errors caused by a sandbox limit.
var ErrLimit = errors.New("sandbox limit exceeded")

// Run executes src (a module defining funcName) and calls funcName(input).
// input is any value ToStarlark takes: a node's input object, or a scalar
// or list bus handed over as is.
//
// Its errors carry the texts of the reference's CodeExecutionError, by
// the phase that failed: "Syntax error: <e>" (parsing), "Execution error:
// <e>" (running the module), "Function '<name>' not defined in code",
// "'<name>' is not a callable function", "Runtime error: <e>" (the call,
// limits included). An error converting the result, a step of ours the
// reference does not have, keeps its own text.
func Run(ctx context.Context, src, funcName string, input any, lim Limits) (any, Stats, error) {
	arg, err := ToStarlark(input)
	if err != nil {
		return nil, Stats{}, fmt.Errorf("converting input: %w", err)
	}
	// prefix is the wrapper of the phase running; execute turns the
	// phase's error into its message (limits, cleaning, cap), so the
	// wrapper is added after it.
	prefix := ""
	v, st, err := execute(ctx, lim, func(th *starlark.Thread) (starlark.Value, error) {
		// starlark.ExecFileOptions, with the code guarded between parsing
		// and resolving.
		prefix = syntaxError
		f, err := fileOptions.Parse("code", src, 0)
		if err != nil {
			return nil, err
		}
		env := predeclared()
		guardCode(th, f, env)
		prog, err := starlark.FileProgram(f, env.Has)
		if err != nil {
			prefix, err = resolveFailure(src, err)
			return nil, err
		}
		// The globals are left unfrozen, as Python's are: transform may
		// update a module-level list or dict. Each Run executes the
		// module afresh, so nothing is shared between runs.
		prefix = executionError
		globals, err := prog.Init(th, env)
		if err != nil {
			return nil, err
		}
		prefix = ""
		fn, ok := globals[funcName]
		if !ok || fn == starlark.None { // Python: local_vars.get(name) is None
			return nil, fmt.Errorf("Function '%s' not defined in code", funcName)
		}
		if _, ok := fn.(starlark.Callable); !ok {
			return nil, fmt.Errorf("'%s' is not a callable function", funcName)
		}
		prefix = runtimeError
		v, err := starlark.Call(th, fn, starlark.Tuple{arg}, nil)
		if err == nil {
			prefix = "" // what fails now is the result's conversion
		}
		return v, err
	})
	if err != nil && prefix != "" {
		err = fmt.Errorf("%s%w", prefix, err) // errors.Is(err, ErrLimit) still holds
	}
	return v, st, err
}

// Eval evaluates one expression with the given names bound.
func Eval(ctx context.Context, expr string, names map[string]any, lim Limits) (any, Stats, error) {
	env := starlark.StringDict{}
	for k, v := range predeclared() {
		env[k] = v
	}
	for k, v := range names {
		sv, err := ToStarlark(v)
		if err != nil {
			return nil, Stats{}, fmt.Errorf("converting %s: %w", k, err)
		}
		env[k] = sv
	}
	return execute(ctx, lim, func(th *starlark.Thread) (starlark.Value, error) {
		// starlark.EvalOptions, with the code guarded between parsing and
		// resolving.
		e, err := fileOptions.ParseExpr("expression", expr, 0)
		if err != nil {
			return nil, err
		}
		e = guardCode(th, e, env).(syntax.Expr) // after names: no name can replace a guard
		return starlark.EvalExprOptions(fileOptions, th, e, env)
	})
}

// execute runs body on a fresh thread under the limits.
func execute(ctx context.Context, lim Limits, body func(*starlark.Thread) (starlark.Value, error)) (any, Stats, error) {
	lim = lim.withDefaults()
	th := &starlark.Thread{
		Name:  "visualflow-code",
		Print: func(*starlark.Thread, string) {}, // print() is a no-op
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, errors.New("load() is not allowed in the sandbox")
		},
	}
	th.SetMaxExecutionSteps(lim.MaxSteps)
	g := &guard{maxItems: -1, maxBytes: -1}
	if lim.MaxMemory > 0 {
		g.maxItems, g.maxBytes = lim.MaxMemory/valueSize, lim.MaxMemory
	}
	g.heapBase = heapObjects()
	th.SetLocal(guardKey, g)
	start := time.Now()
	done := make(chan struct{})
	defer close(done) // the watchdog also covers the result's conversion
	go watch(ctx, th, g, lim, done)
	v, err := callRecovering(th, body)
	st := Stats{Duration: time.Since(start), Steps: th.ExecutionSteps()}
	if r := g.stop.Load(); r != nil {
		// Also when the code returned: a builtin's loop ends quietly at
		// the stop (our ranges stop iterating), and Starlark may not look
		// at the cancellation again before the code returns, so the value
		// may be cut short (len(filter(None, range(10**9))) gave a count).
		return nil, st, fmt.Errorf("%w: %s", ErrLimit, *r)
	}
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*starlark.EvalError); ok {
			msg = ee.Msg
		}
		if strings.Contains(msg, "too many steps") && th.ExecutionSteps() >= lim.MaxSteps {
			return nil, st, fmt.Errorf("%w: exceeded %d execution steps", ErrLimit, lim.MaxSteps)
		}
		return nil, st, errors.New(capMessage(cleanMessage(msg)))
	}
	out, err := (&converter{g: g, th: th}).value(v)
	if r := g.stop.Load(); r != nil {
		return nil, st, fmt.Errorf("%w: %s", ErrLimit, *r)
	}
	return out, st, err
}

// callRecovering calls body, turning a panic inside Starlark or one of
// our builtins (list(range(1 << 62)) makes a slice Go refuses) into an
// error: the node fails as user code does, not the run.
func callRecovering(th *starlark.Thread, body func(*starlark.Thread) (starlark.Value, error)) (v starlark.Value, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, fmt.Errorf("internal error: %v", p)
		}
	}()
	return body(th)
}

var posRE = regexp.MustCompile(`^code:\d+:\d+: `)

func cleanMessage(s string) string { return posRE.ReplaceAllString(s, "") }

// maxMessage is the longest error message of user code the sandbox
// returns whole: a message quoting a large value (fail(), an error of
// Starlark's naming an operand) is cut, as it is stored with the run.
const maxMessage = 4 << 10

// capMessage is s, cut to maxMessage bytes (at a rune's start) with a
// note of its length when it is longer.
func capMessage(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// guard lets builtins that loop in Go (sum, map, filter) see the
// watchdog's cancellation, which Starlark checks only between its own
// steps: one such call over a huge range would outlive the timeout and
// the memory limit. (Their items are not counted as steps, as those of
// Starlark's own builtins are not.)
type guard struct {
	stop atomic.Pointer[string] // why the watchdog stopped the code
	// maxItems caps what one builtin may allocate at once (the memory
	// limit in Starlark values; -1: no cap): a single allocation past it
	// would be a fatal out-of-memory error, which no watchdog can stop.
	maxItems int64
	// maxBytes is the same cap in bytes, for strings (-1: no cap).
	maxBytes int64
	// heapBase is the process's heap (heapObjects) when the execution
	// started: the memory limit is on its growth.
	heapBase int64
}

// heapObjects is the size of the process's heap objects, live or not yet
// collected.
func heapObjects() int64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return int64(sample[0].Value.Uint64())
}

// checkHeap stops th and reports true when the heap grew past the memory
// limit since the execution started. The heap read counts garbage not
// yet collected, which in a busy process can be far more than the limit
// while the code holds little: so past the limit it collects, and stops
// th only when the heap is still past it.
func (g *guard) checkHeap(th *starlark.Thread) bool {
	if g.maxBytes < 0 {
		return false
	}
	cycles := gcCycles()
	if heapObjects()-g.heapBase <= g.maxBytes {
		return false
	}
	collect(cycles)
	if heapObjects()-g.heapBase <= g.maxBytes {
		return false
	}
	g.cancel(th, fmt.Sprintf("memory limit of %s exceeded", sizeText(g.maxBytes)))
	return true
}

// collectMu serializes the collections of collect.
var collectMu sync.Mutex

// collect runs a garbage collection unless one completed since the GC
// cycle count was cycles: the watchdogs of concurrent executions past
// their limit share one collection instead of queueing one each.
func collect(cycles uint64) {
	collectMu.Lock()
	defer collectMu.Unlock()
	if gcCycles() == cycles {
		runtime.GC()
	}
}

// gcCycles is the number of completed GC cycles of the process.
func gcCycles() uint64 {
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// guardKey is the thread-local name of the execution's guard.
const guardKey = "visualflow.code.guard"

// valueSize is the size of one starlark.Value (an interface) in a list.
const valueSize = 16

// refuse stops the code because a builtin would allocate past the memory
// limit, and returns the error that ends the builtin.
func (g *guard) refuse(th *starlark.Thread, what string, n int) error {
	return g.refuseReason(th, fmt.Sprintf("%s of %d items would exceed the memory limit", what, n))
}

// refuseReason stops the code for reason, an allocation past the memory
// limit, and returns the error that ends the operation.
func (g *guard) refuseReason(th *starlark.Thread, reason string) error {
	g.cancel(th, reason)
	return errors.New(reason)
}

// cancel stops th, recording the first reason.
func (g *guard) cancel(th *starlark.Thread, reason string) {
	g.stop.CompareAndSwap(nil, &reason)
	th.Cancel(reason)
}

// pulse is called by a builtin at each item i of its loop; every 1,024
// items it reports a cancellation as an error that ends the call.
func pulse(th *starlark.Thread, i int) error {
	if i&1023 != 1023 {
		return nil
	}
	if g := threadGuard(th); g != nil {
		if r := g.stop.Load(); r != nil {
			return errors.New(*r)
		}
	}
	return nil
}

// watch cancels the thread on timeout, context cancellation or heap
// growth beyond the limit.
func watch(ctx context.Context, th *starlark.Thread, g *guard, lim Limits, done <-chan struct{}) {
	timer := time.NewTimer(lim.Timeout)
	defer timer.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			g.cancel(th, "context cancelled")
			return
		case <-timer.C:
			g.cancel(th, fmt.Sprintf("timeout after %s", lim.Timeout))
			return
		case <-tick.C:
			if lim.MaxMemory < 0 {
				continue
			}
			if g.checkHeap(th) {
				return
			}
		}
	}
}

// guardCode rewrites the parsed code n (a file or an expression, before it
// is resolved) so that the operations go.starlark.net does in one Go
// allocation or loop, out of the watchdog's reach, are checked against the
// memory limit first (repeat.go, amplify.go), and so that comparisons,
// %, splitlines, ... have Python's semantics (pyops.go), and adds to env
// the builtins the rewritten code calls. It returns n, or the expression
// replacing it (a dict literal, dictlit.go; a comparison, pyops.go).
// Without a memory limit only the rewrites for Python's semantics are
// made: there is nothing to check against.
func guardCode(th *starlark.Thread, n syntax.Node, env starlark.StringDict) syntax.Node {
	g := threadGuard(th)
	limited := g != nil && g.maxItems >= 0
	if limited {
		n = guardDictLiterals(n) // first: the others see the calls it writes
		guardRepeats(n)
	}
	n = guardCompares(n)
	guardAmplifiers(n)
	for name, b := range newCompareGuards(g) {
		env[name] = b
	}
	for name, b := range newAmplifyGuards(th, g) {
		env[name] = b
	}
	if limited {
		guardIndexes(n) // last: also the indexes the others wrote
		env[repeatGuardName] = newRepeatGuard(th)
		env[indexGuardName] = newIndexGuard()
		env[dictEntryGuardName] = newDictEntryGuard()
	}
	return n
}
