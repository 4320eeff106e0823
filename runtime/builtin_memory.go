package runtime

// Shared machinery of the built-in memory effects (MEMORY_NOTE, MEMORY_COMPACT,
// MEMORY_QUERY, MEMORY_TAG, MEMORY_REHYDRATE): scope owner runs, the span
// index in vars._runtime.memory_spans, versioned writes to other runs,
// recall-level budgets and the tool-style result envelope.
//
// Owner runs (spec §1.13): scope "run" is the run itself (or
// payload.target_run_id), "session" is a synthetic run per session id
// (session_memory_<id>, or session_memory_sha_<hash> for unsafe ids) or,
// without a session id, the root of the parent chain; "global" is the
// synthetic run global_memory (ABSTRACTRUNTIME_GLOBAL_MEMORY_RUN_ID
// overrides it). Synthetic owners are created on first write.
//
// Writes to the requesting run change req.Run and are persisted with the
// step. Writes to any other run hold that run's in-process mutation lock
// (acquired without blocking, so a child can never deadlock on an ancestor
// whose tick is on the stack) and use load → modify → commit with the
// loaded version, retried on a version conflict.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// Synthetic memory owner runs.
const (
	// GlobalMemoryRunID is the default id of the global memory owner run.
	GlobalMemoryRunID = "global_memory"
	// GlobalMemoryRunEnv overrides GlobalMemoryRunID when it holds a safe
	// id ([A-Za-z0-9_-]+).
	GlobalMemoryRunEnv = "ABSTRACTRUNTIME_GLOBAL_MEMORY_RUN_ID"
	// SessionMemoryRunPrefix prefixes the id of a session memory owner run.
	SessionMemoryRunPrefix = "session_memory_"
	// SessionMemoryWorkflowID is the workflow id of session owner runs.
	SessionMemoryWorkflowID = "__session_memory__"
	// GlobalMemoryWorkflowID is the workflow id of the global owner run.
	GlobalMemoryWorkflowID = "__global_memory__"
)

// Bounds of the writes to other runs.
const (
	ownerCommitAttempts = 5                    // load→modify→commit tries on ErrConflict
	ownerLockTries      = 20                   // lock tries on an ordinary run
	ownerLockPause      = 5 * time.Millisecond // pause between lock tries
)

// safeRunID reports whether s matches [A-Za-z0-9_-]+.
func safeRunID(s string) bool { return artifact.ValidID(s) }

// SessionMemoryRunID returns the id of the memory owner run of a session:
// session_memory_<id>, or session_memory_sha_<first 32 hex of sha256(id)>
// when the id has characters outside [A-Za-z0-9_-]. The id is trimmed.
func SessionMemoryRunID(sessionID string) string {
	sid := pyval.Strip(sessionID)
	if safeRunID(sid) {
		return SessionMemoryRunPrefix + sid
	}
	sum := sha256.Sum256([]byte(sid))
	return SessionMemoryRunPrefix + "sha_" + hex.EncodeToString(sum[:])[:32]
}

// GlobalMemoryOwnerID returns the id of the global memory owner run: the
// environment override when it is a safe id, else GlobalMemoryRunID.
func GlobalMemoryOwnerID() string {
	if s := pyval.Strip(os.Getenv(GlobalMemoryRunEnv)); s != "" && safeRunID(s) {
		return s
	}
	return GlobalMemoryRunID
}

// memFail is a validation or lookup failure that ends the effect as a
// failed outcome with exactly this message (not a store error).
type memFail struct{ msg string }

func (e *memFail) Error() string { return e.msg }

func failf(format string, args ...any) error { return &memFail{msg: fmt.Sprintf(format, args...)} }

// memOutcome turns a handler error into its outcome: a *memFail becomes a
// failed outcome, anything else stays an error (reported by the kernel as
// a failed attempt too, with the error text).
func memOutcome(err error) (Outcome, error) {
	var mf *memFail
	if errors.As(err, &mf) {
		return Failed(mf.msg), nil
	}
	return Outcome{}, err
}

// memOwner names the run that owns a scope's span index.
type memOwner struct {
	id string
	// workflow is the workflow id of a synthetic owner (created on demand)
	// and "" for an ordinary run (which must exist).
	workflow  string
	sessionID string
}

func (o memOwner) synthetic() bool { return o.workflow != "" }

// normScope reads a scope as Python's str(scope or "run").strip().lower():
// trimmed, lower-cased, "run" when blank; a non-string scope is its text
// (5 names the unknown scope "5").
func normScope(v any) string {
	s := pyval.Lower(pyval.Strip(pyStrOrEmpty(v)))
	if s == "" {
		return "run"
	}
	return s
}

// memoryOwner resolves the owner run of scope for base.
func (r *Runtime) memoryOwner(ctx context.Context, base *durable.RunState, scope string) (memOwner, error) {
	switch scope {
	case "run":
		return memOwner{id: base.RunID}, nil
	case "session":
		if sid := pyval.Strip(base.SessionID); sid != "" {
			return memOwner{id: SessionMemoryRunID(sid), workflow: SessionMemoryWorkflowID, sessionID: sid}, nil
		}
		root, err := r.rootRunID(ctx, base)
		if err != nil {
			return memOwner{}, err
		}
		return memOwner{id: root}, nil
	case "global":
		return memOwner{id: GlobalMemoryOwnerID(), workflow: GlobalMemoryWorkflowID}, nil
	}
	return memOwner{}, failf("Unknown memory scope: %s", scope)
}

// memoryOwners resolves a scope that may be "all": the run, its session
// owner and the global owner, deduplicated, in that order.
func (r *Runtime) memoryOwners(ctx context.Context, base *durable.RunState, scope string) ([]memOwner, error) {
	if scope != "all" {
		o, err := r.memoryOwner(ctx, base, scope)
		if err != nil {
			return nil, err
		}
		return []memOwner{o}, nil
	}
	var out []memOwner
	seen := map[string]bool{}
	for _, s := range []string{"run", "session", "global"} {
		o, err := r.memoryOwner(ctx, base, s)
		if err != nil {
			return nil, err
		}
		if !seen[o.id] {
			seen[o.id] = true
			out = append(out, o)
		}
	}
	return out, nil
}

// rootRunID walks parent_run_id up from run and returns the topmost run
// found (a missing parent or a cycle ends the walk).
func (r *Runtime) rootRunID(ctx context.Context, run *durable.RunState) (string, error) {
	cur := run
	seen := map[string]bool{run.RunID: true}
	for {
		pid := pyval.Strip(cur.ParentRunID)
		if pid == "" || seen[pid] {
			return cur.RunID, nil
		}
		seen[pid] = true
		parent, err := r.store.RunGet(ctx, pid)
		if errors.Is(err, store.ErrNotFound) {
			return cur.RunID, nil
		}
		if err != nil {
			return "", fmt.Errorf("loading parent run %s of run %s: %w", pid, cur.RunID, err)
		}
		cur = parent
	}
}

// baseRun returns the run named by payload.target_run_id, or the
// requesting run. An unknown target is a failure. The id is read as
// Python's str(target_run_id or run.run_id).strip(): a number names the
// run of its text, not the requesting run.
func baseRun(ctx context.Context, req *EffectRequest) (*durable.RunState, error) {
	return baseRunByID(ctx, req, pyval.Strip(pyStrOrEmpty(req.Effect.Payload["target_run_id"])))
}

// baseRunByID is baseRun for a target id already read ("" = the
// requesting run).
func baseRunByID(ctx context.Context, req *EffectRequest, id string) (*durable.RunState, error) {
	if id == "" || id == req.Run.RunID {
		return req.Run, nil
	}
	run, err := loadOtherRun(ctx, req.Runtime, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, failf("Unknown target_run_id: %s", id)
	}
	if err != nil {
		return nil, fmt.Errorf("loading target run %s: %w", id, err)
	}
	EnsureNamespaces(run.Vars)
	return run, nil
}

// readOwner loads an owner for reading: the live req.Run for the
// requesting run, nil for a synthetic owner not created yet.
func readOwner(ctx context.Context, req *EffectRequest, o memOwner) (*durable.RunState, error) {
	if o.id == req.Run.RunID {
		return req.Run, nil
	}
	run, err := loadOtherRun(ctx, req.Runtime, o.id)
	if errors.Is(err, store.ErrNotFound) {
		if o.synthetic() {
			return nil, nil
		}
		return nil, failf("Unknown run: %s", o.id)
	}
	if err != nil {
		return nil, fmt.Errorf("loading memory owner run %s: %w", o.id, err)
	}
	return run, nil
}

// skipOnReplay reports whether a handler called again for a completed
// record a replay reuses (req.ReplayedResult set) must leave run id
// alone: only the requesting run's changes were lost with the state the
// kill cut off; a write to another run was committed by its own commit
// before the record, and making it again would undo what was done to
// that run since.
func skipOnReplay(req *EffectRequest, id string) bool {
	return req.ReplayedResult != nil && id != req.Run.RunID
}

// writeOwner applies mutate to an owner run and persists it. The
// requesting run is changed in place (saved with the step). Another run
// is locked, loaded, mutated and committed with its version, again from a
// fresh load when another writer got in first; a missing synthetic owner
// is created by the same commit. mutate may run more than once and must
// only depend on the run it is given; an error from it aborts the write.
func writeOwner(ctx context.Context, req *EffectRequest, o memOwner, mutate func(run *durable.RunState) error) error {
	r := req.Runtime
	if o.id == req.Run.RunID {
		EnsureNamespaces(req.Run.Vars)
		return mutate(req.Run)
	}
	unlock, err := r.lockOwner(ctx, o)
	if err != nil {
		return err
	}
	defer unlock()
	busy := func() error {
		return failf("memory owner run %s is busy (another runner is executing it); retry when it is idle", o.id)
	}
	var hold *claimHold // nil for a synthetic owner, or without claims
	if !o.synthetic() {
		// With several runners, an ordinary run is claimed as for a tick:
		// a write beside another runner's tick of it would fail that tick
		// on a version conflict.
		work, h, err := r.claim(ctx, o.id)
		if errors.Is(err, ErrRunClaimed) {
			return busy()
		}
		if err != nil {
			return err
		}
		hold = h
		defer hold.release()
		ctx = work
	}
	// createRefused records that a Create of the owner was refused as
	// existing after a load found none.
	createRefused := false
	for attempt := 1; attempt <= ownerCommitAttempts; attempt++ {
		run, err := r.store.RunGet(ctx, o.id)
		create := false
		switch {
		case errors.Is(err, store.ErrNotFound) && o.synthetic() && createRefused:
			// Again absent to a load while a row is there: not a writer
			// that created it meanwhile but a row the store cannot read
			// (SQLite and PostgreSQL read undecodable run_json as
			// absent). Overwriting it would lose what it holds.
			return fmt.Errorf("memory owner run %s is unreadable: the store holds it but cannot read its state (%v); repair or remove it", o.id, err)
		case errors.Is(err, store.ErrNotFound) && o.synthetic():
			run, create = r.newMemoryOwner(o), true
		case errors.Is(err, store.ErrNotFound):
			return failf("Unknown run: %s", o.id)
		case hold.lost() != nil: // a cancel through another runner took it
			return busy()
		case err != nil:
			return fmt.Errorf("loading memory owner run %s: %w", o.id, err)
		}
		if run.Vars == nil {
			run.Vars = map[string]any{}
		}
		EnsureNamespaces(run.Vars)
		if err := mutate(run); err != nil {
			return err
		}
		if o.synthetic() {
			// Never ticked, so no effect of it is ever replayed: the
			// marks touchUpdated keeps for a replay (Python's save time,
			// the plan in flight) have no use, and a first write, which
			// has no effect_seq, would note a Python save that never was.
			run.UpdatedAt = r.now()
		} else {
			touchUpdated(run, r.now())
		}
		if hold.lost() != nil {
			return busy()
		}
		err = r.store.RunCommit(ctx, &store.CommitParams{Run: run, Create: create})
		if err == nil {
			return nil
		}
		if hold.lost() != nil {
			return busy()
		}
		if !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("saving memory owner run %s: %w", o.id, err)
		}
		createRefused = create && errors.Is(err, store.ErrAlreadyExists)
	}
	return fmt.Errorf("saving memory owner run %s: still changed by other writers after %d attempts: %w",
		o.id, ownerCommitAttempts, store.ErrConflict)
}

// lockOwner takes the in-process mutation lock of an owner run.
//
// A synthetic owner is never ticked; its lock is only held for the short
// writes of other memory effects, so it is waited for (until ctx ends).
// An ordinary run whose lock stays held is being executed — possibly by an
// ancestor of the requesting run, further up this very call stack (a sync
// subworkflow) — and writing under it would either deadlock or make its
// tick fail on a version conflict, so after a short wait that is a failure
// the caller may retry.
func (r *Runtime) lockOwner(ctx context.Context, o memOwner) (func(), error) {
	l := r.ref(o.id)
	for tries := 0; ; {
		if l.tryAcquire() {
			l.sigMu.Lock()
			l.memoryHeld = true
			l.sigMu.Unlock()
			return func() {
				l.sigMu.Lock()
				l.memoryHeld = false
				l.sigMu.Unlock()
				l.release()
				r.unref(o.id, l)
			}, nil
		}
		// Another memory write into the run ends soon: only a tick of the
		// run (which may be waiting on this effect) counts as busy.
		l.sigMu.Lock()
		byWriter := l.memoryHeld
		l.sigMu.Unlock()
		if !byWriter {
			tries++
		}
		if !o.synthetic() && tries >= ownerLockTries {
			r.unref(o.id, l)
			return nil, failf("memory owner run %s is busy (a step of it is executing); retry when it is idle", o.id)
		}
		if err := sleepContext(ctx, ownerLockPause); err != nil {
			r.unref(o.id, l)
			return nil, fmt.Errorf("waiting for memory owner run %s: %w", o.id, err)
		}
	}
}

// newMemoryOwner builds a synthetic owner run (spec §1.13).
func (r *Runtime) newMemoryOwner(o memOwner) *durable.RunState {
	now := r.now()
	return &durable.RunState{
		RunID: o.id, WorkflowID: o.workflow, Status: durable.RunCompleted, CurrentNode: "done",
		Vars: map[string]any{
			"context":    map[string]any{"task": "", "messages": []any{}},
			"scratchpad": map[string]any{},
			"_runtime":   map[string]any{"memory_spans": []any{}},
			"_temp":      map[string]any{},
			"_limits":    map[string]any{},
		},
		Output:    map[string]any{"messages": []any{}},
		CreatedAt: now, UpdatedAt: now, SessionID: o.sessionID,
	}
}

// spanList returns vars._runtime.memory_spans as stored (nil if absent).
func spanList(run *durable.RunState) []any {
	if run == nil {
		return nil
	}
	rt, _ := run.Vars["_runtime"].(map[string]any)
	l, _ := rt["memory_spans"].([]any)
	return l
}

// loadSpanIndex puts run's vars._runtime.memory_spans in the shape
// spanList reads, before a memory effect reads or extends it: a list a
// node wrote in Go types ([]map[string]any) is normalised, and a list
// Python's offloading store replaced by a ref when the run ended
// ({"$artifact": id}, tagged source=run_store_offload) is read back from
// arts. Read as "no spans", either would be replaced by the next note's
// one-span list, dropping every older note from the index. An index that
// is not JSON (a NaN, a channel) fails the effect naming its path, left
// in place.
func loadSpanIndex(ctx context.Context, arts artifact.Store, run *durable.RunState) error {
	if run == nil {
		return nil
	}
	rt, _ := run.Vars["_runtime"].(map[string]any)
	v, ok := rt["memory_spans"]
	if !ok || v == nil {
		return nil
	}
	if _, isList := v.([]any); isList {
		return nil
	}
	if _, isRef := artifact.RefID(v); isRef && arts != nil {
		restored, err := artifact.Restore(ctx, arts, v, func(m *artifact.Metadata) bool {
			return m.RunID == run.RunID && m.Tags["source"] == artifact.SourceRunVars
		})
		if err != nil {
			return fmt.Errorf("reading the offloaded memory span index of run %s: %w", run.RunID, err)
		}
		v = restored
	}
	l, ok := writableList(v)
	if !ok {
		// Left in place: a new index written over it would erase the
		// spans it holds, and one read as empty would hide them.
		return failf("The memory span index of run %s is not JSON: %v", run.RunID, pyjson.Check(v, "vars._runtime.memory_spans"))
	}
	if l != nil {
		rt["memory_spans"] = l
	}
	return nil
}

// appendSpan appends a span record to vars._runtime.memory_spans.
func appendSpan(run *durable.RunState, span map[string]any) {
	rt := namespace(run.Vars, "_runtime")
	l, _ := rt["memory_spans"].([]any)
	rt["memory_spans"] = append(l, span)
}

// spanArtifactID returns a span's artifact id ("" when none).
func spanArtifactID(s any) string {
	m, _ := s.(map[string]any)
	id, _ := m["artifact_id"].(string)
	return pyval.Strip(id)
}

// findSpan returns the span record with an artifact id, or nil.
func findSpan(spans []any, id string) map[string]any {
	for _, s := range spans {
		if spanArtifactID(s) == id && id != "" {
			m, _ := s.(map[string]any)
			return m
		}
	}
	return nil
}

// spanRef is a span id given by a caller: an artifact id or a 1-based
// index into the owner's memory_spans (in stored order).
type spanRef struct {
	id    string
	index int64
	isIdx bool
	text  string // an index as Python's str() writes it: "True", "007"
}

func (s spanRef) String() string {
	if s.isIdx {
		return s.text
	}
	return s.id
}

// parseSpanRef reads one span id as Python's isinstance checks do: an int
// or a digit string (str.isdigit(), so any Unicode decimal digits too) is
// an index, another non-blank string an artifact id; ok is false
// otherwise. A bool is an int in Python (True is index 1); a float is not,
// even 1.0 (json.Number "1.0" after a store round trip, as float64(1) is
// in memory). A digit string int() refuses (superscripts: isdigit() but not
// decimal) is Python's ValueError, returned as err with the ref marked an
// index.
func parseSpanRef(v any) (ref spanRef, ok bool, err error) {
	switch x := v.(type) {
	case string:
		s := pyval.Strip(x)
		if s == "" {
			return spanRef{}, false, nil
		}
		if pyIsDigit(s) {
			// Python reads int(s) and names the index by it: "007" is 7.
			n, valid := pyval.ParseBigInt(s)
			if !valid {
				return spanRef{isIdx: true, text: s}, true,
					failf("invalid literal for int() with base 10: %s", pyval.Repr(s))
			}
			idx := int64(math.MaxInt64) // past int64: out of range as an index anyway
			if n.IsInt64() {
				idx = n.Int64()
			}
			return spanRef{index: idx, isIdx: true, text: n.String()}, true, nil
		}
		return spanRef{id: s}, true, nil
	case bool:
		if x {
			return spanRef{index: 1, isIdx: true, text: "True"}, true, nil
		}
		return spanRef{index: 0, isIdx: true, text: "False"}, true, nil
	case json.Number:
		if lit := string(x); isDigits(strings.TrimPrefix(lit, "-")) {
			// An integer literal (past int64 too: Python's int has no
			// bound, and such an index is out of range).
			n, err := strconv.ParseInt(lit, 10, 64)
			if err != nil {
				n = math.MaxInt64
				if lit[0] == '-' {
					n = math.MinInt64
				}
				return spanRef{index: n, isIdx: true, text: lit}, true, nil
			}
			return spanRef{index: n, isIdx: true, text: strconv.FormatInt(n, 10)}, true, nil
		}
		return spanRef{}, false, nil
	}
	if pyval.IsInt(v) {
		n, _ := AsInt(v)
		return spanRef{index: n, isIdx: true, text: strconv.FormatInt(n, 10)}, true, nil
	}
	return spanRef{}, false, nil
}

// isDigits reports a non-empty run of ASCII digits (a JSON integer
// literal's); span id strings use pyIsDigit.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// resolve returns the artifact id a ref names in spans ("" for an index
// out of range or a span without an id). An artifact id is returned as
// given (it may name a span of another owner). MEMORY_TAG counts indices
// in stored order; MEMORY_QUERY and MEMORY_REHYDRATE count them newest
// first (spansNewestFirst), as Python does.
func (s spanRef) resolve(spans []any) string {
	if !s.isIdx {
		return s.id
	}
	if s.index < 1 || s.index > int64(len(spans)) {
		return ""
	}
	return spanArtifactID(spans[s.index-1])
}

// spansNewestFirst returns the spans ordered by created_at, newest first
// (a stable sort on the text, as Python's list_memory_spans_from_run).
func spansNewestFirst(spans []any) []any {
	out := slices.Clone(spans)
	sort.SliceStable(out, func(i, j int) bool {
		a, _ := out[i].(map[string]any)
		b, _ := out[j].(map[string]any)
		return anyText(a["created_at"]) > anyText(b["created_at"])
	})
	return out
}

// querySpanIDs reads MEMORY_QUERY's explicit span ids as Python does:
// span_ids when it is a list, else span_id (one value or a list). A
// span_ids that is not a list is ignored, so a lone string span_ids
// leaves the query to its filters. given is false when neither names ids.
func querySpanIDs(p map[string]any) (raw []any, given bool) {
	raw, isList := p["span_ids"].([]any)
	if !isList {
		v := p["span_id"]
		if v == nil {
			return nil, false
		}
		if raw, isList = v.([]any); !isList {
			raw = []any{v}
		}
	}
	return raw, true
}

// rehydrateSpanRefs reads MEMORY_REHYDRATE's span ids as Python does:
// span_ids, or the legacy span_id only when span_ids is absent or null;
// a value that is not a list is one id. given is false when both are
// absent or null; err is parseSpanRefs'. n counts the values given,
// blank ones and values that are no span id included: refs drops those,
// but Python's no-op test (`if not span_ids`) is on the raw list.
func rehydrateSpanRefs(p map[string]any) (refs []spanRef, n int, given bool, err error) {
	v := p["span_ids"]
	if v == nil {
		v = p["span_id"]
	}
	if v == nil {
		return nil, 0, false, nil
	}
	raw, isList := v.([]any)
	if !isList {
		raw = []any{v}
	}
	refs, err = parseSpanRefs(raw)
	return refs, len(raw), true, err
}

// parseSpanRefs keeps the values of raw that are span ids. err is the
// first digit string int() refuses: Python's resolution raises on it.
func parseSpanRefs(raw []any) ([]spanRef, error) {
	var refs []spanRef
	for _, v := range raw {
		ref, ok, err := parseSpanRef(v)
		if err != nil {
			return nil, err
		}
		if ok {
			refs = append(refs, ref)
		}
	}
	return refs, nil
}

// cleanTags keeps the string→string entries of a tags object with a
// non-empty key and value, dropping the reserved key "kind".
func cleanTags(v any) map[string]any {
	m, _ := v.(map[string]any)
	out := map[string]any{}
	for k, val := range m {
		s, ok := val.(string)
		if !ok || k == "" || s == "" || k == "kind" {
			continue
		}
		out[k] = s
	}
	return out
}

// stringTags converts string-valued tags for the artifact store.
func stringTags(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// dedupStrings keeps the first occurrence of each non-blank string.
func dedupStrings(in []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(in))
	for _, s := range in {
		s = pyval.Strip(s)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// payloadInt reads an integer option the way Python's int(v or def)
// does: absent, null, false, 0 and "" give def; numbers are truncated;
// numeric strings are parsed; anything else gives def.
func payloadInt(v any, def int64) int64 {
	if !truthy(v) {
		return def
	}
	switch x := v.(type) {
	case bool:
		return 1
	case string:
		// Python's int(): underscores and any Unicode decimal digits
		// read; a value past int64 saturates (no practical limit).
		b, ok := pyval.ParseBigInt(x)
		if !ok {
			return def
		}
		switch {
		case b.IsInt64():
			return b.Int64()
		case b.Sign() < 0:
			return math.MinInt64
		}
		return math.MaxInt64
	}
	if f, ok := AsFloat(v); ok {
		if n, exact := AsInt(v); exact {
			return n
		}
		if f != f {
			return def
		}
		return pyval.SaturatedInt(f)
	}
	return def
}

// memoryEnvelope is the tool-style envelope of the memory effects: the
// one result has a "meta" member (null when meta is nil).
func memoryEnvelope(callID, name string, success bool, output any, errMsg string, meta map[string]any) map[string]any {
	env := toolResult(callID, name, success, output, errMsg)
	res := env["results"].([]any)[0].(map[string]any)
	if meta == nil {
		res["meta"] = nil
	} else {
		res["meta"] = meta
	}
	return env
}

// requireArtifacts returns the artifact store or the failure of an effect
// type that needs one.
func requireArtifacts(req *EffectRequest) (artifact.Store, error) {
	if a := req.Runtime.arts; a != nil {
		return a, nil
	}
	return nil, failf("%s requires an ArtifactStore; configure runtime.Config.Artifacts", strings.ToUpper(string(req.Effect.Type)))
}

// memNow is the current time as Python isoformat text.
func memNow(req *EffectRequest) string { return durable.FormatTime(req.Runtime.clock()) }

// recallPolicy is the budget envelope of one recall level (spec §3.8).
type recallPolicy struct {
	level                        string
	limitSpansDefault            int64
	limitSpansMax                int64
	deepAllowed                  bool
	deepLimitSpansMax            int64
	deepLimitMessagesPerSpanMax  int64
	connectedAllowed             bool
	neighborHopsMax              int64
	maxMessagesDefault           int64
	maxMessagesMax               int64
	rehydrateMaxMessagesDefault  int64
	rehydrateMaxMessagesMaxLimit int64
}

var recallPolicies = map[string]*recallPolicy{
	"urgent":   {"urgent", 2, 3, false, 0, 0, false, 0, 30, 60, 30, 60},
	"standard": {"standard", 5, 8, true, 25, 200, true, 1, 80, 150, 80, 200},
	"deep":     {"deep", 8, 20, true, 100, 400, true, 2, 200, 600, 200, 800},
}

// parseRecallLevel reads payload.recall_level: nil when absent or blank,
// a failure when present but unknown (no silent fallback).
func parseRecallLevel(v any) (*recallPolicy, error) {
	if v == nil {
		return nil, nil
	}
	if _, ok := v.(bool); ok {
		return nil, failf("recall_level must be a string")
	}
	s := pyval.Lower(pyval.Strip(pyval.Str(v))) // any other value as Python's str()
	if s == "" {
		return nil, nil
	}
	if p := recallPolicies[s]; p != nil {
		return p, nil
	}
	return nil, failf("Unknown recall_level: %s", s)
}

// effort is the recall-level report of a result: the level, the budgets
// applied and what was clamped.
type effort struct {
	policy   *recallPolicy
	applied  map[string]any
	warnings []string
}

// clamp caps a value at max and returns it, with Python's warning when it
// was over.
func (e *effort) clamp(name string, v, maxV int64) int64 {
	if v > maxV {
		e.warnf("clamped %s from %d to %d", name, v, maxV)
		v = maxV
	}
	return v
}

// warnf adds a warning prefixed with the level, as Python words them.
func (e *effort) warnf(format string, args ...any) {
	e.warnings = append(e.warnings, "recall_level="+e.policy.level+": "+fmt.Sprintf(format, args...))
}

// report returns {recall_level, applied} or nil without a level.
func (e *effort) report() map[string]any {
	if e == nil || e.policy == nil {
		return nil
	}
	return map[string]any{"recall_level": e.policy.level, "applied": e.applied}
}

func (e *effort) warningList() []any {
	if e == nil || len(e.warnings) == 0 {
		return nil
	}
	return toAny(e.warnings)
}
