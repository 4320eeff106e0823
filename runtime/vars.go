package runtime

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// SetPath writes v at a dotted path in vars, creating {} for every
// missing or non-object intermediate (overwriting scalars); an object of
// another Go type (map[string]string, a struct) is first converted in
// place to the types a read gives, keeping its members. An intermediate
// that is not JSON (a NaN, a cycle) is left in place and the write is
// dropped: the run's check at its commit fails it naming that value, which
// the write would otherwise have erased. No list indexing: this is
// Python's _set_nested.
func SetPath(vars map[string]any, path string, v any) {
	if path == "" {
		return
	}
	cur := vars
	for {
		i := strings.IndexByte(path, '.')
		if i < 0 {
			cur[path] = v
			return
		}
		seg := path[:i]
		path = path[i+1:]
		next, ok := cur[seg].(map[string]any)
		if !ok {
			if next, ok = writableObject(cur[seg]); ok {
				cur[seg] = next
			}
		}
		cur = next
	}
}

// namespace returns vars[key] as an object, creating it when missing or
// not an object. A value that is not JSON is left in place, as SetPath
// leaves it, and what is written into the object returned is dropped.
func namespace(vars map[string]any, key string) map[string]any {
	m, ok := vars[key].(map[string]any)
	if !ok {
		if m, ok = writableObject(vars[key]); ok {
			vars[key] = m
		}
	}
	return m
}

// asList is v as a []any when v is a JSON array of another Go type (a
// node's []string), in the types a read of the run would give it; else
// nil. For a read only: a write in v's place uses writableList.
func asList(v any) []any {
	l, _ := writableList(v)
	return l
}

// writableList is asList for a write that puts a list in v's place, with
// whether it may: not when v cannot be normalised (a NaN, a channel, a
// cycle), for the reason writableObject gives. A v that is not a list
// (missing, a scalar) may be replaced; the list returned is then nil.
func writableList(v any) ([]any, bool) {
	if v == nil {
		return nil, true
	}
	n, err := pyjson.Normalize(v)
	if err != nil {
		return nil, false
	}
	l, _ := n.([]any)
	return l, true
}

// writableObject is v as a map[string]any when v is a JSON object of
// another Go type (a node's map[string]string, a struct), in the types a
// read of the run would give it, so that a write into it keeps its
// members as it would after a checkpoint; else a new empty object. The
// bool reports whether the object may be put in v's place: not when v
// cannot be normalised (a NaN, a channel, a cycle), as that would erase
// v, and any valid members beside the bad one, without a word. Left in
// place, v fails the run at its commit with an error naming its path; the
// object returned then stands apart from the run.
func writableObject(v any) (map[string]any, bool) {
	if v == nil {
		return map[string]any{}, true
	}
	n, err := pyjson.Normalize(v)
	if err != nil {
		return map[string]any{}, false
	}
	if m, ok := n.(map[string]any); ok {
		return m, true
	}
	return map[string]any{}, true
}

// EnsureNamespaces creates context, scratchpad, _runtime and _temp as
// objects when missing (what the memory and vars handlers expect).
func EnsureNamespaces(vars map[string]any) {
	for _, k := range []string{"context", "scratchpad", "_runtime", "_temp"} {
		namespace(vars, k)
	}
}

// effectSeq reads vars._runtime.effect_seq: how many effects the run has
// committed. It scopes idempotency keys, so an identical effect repeated
// by a loop runs again while a replay after a crash reuses the result.
func effectSeq(vars map[string]any) int64 {
	rt, _ := vars["_runtime"].(map[string]any)
	n, _ := AsInt(rt["effect_seq"])
	return n
}

// hasEffectSeq reports whether the run has an effect_seq: every run this
// runtime started or stepped has one.
func hasEffectSeq(vars map[string]any) bool {
	rt, _ := vars["_runtime"].(map[string]any)
	_, ok := rt["effect_seq"]
	return ok
}

func setEffectSeq(vars map[string]any, n int64) {
	namespace(vars, "_runtime")["effect_seq"] = n
}

// AsInt reads a JSON number as an integer, whatever its Go type: a run
// read back from any store holds numbers as json.Number, while a value a
// node set in the current tick keeps the type it was given (int, int64,
// float64). Node code that reads a counter or a limit should use it, so it
// behaves the same before and after a checkpoint. It reports false for a
// non-number or a number with a fractional part.
func AsInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		return int64(x), x == float64(int64(x))
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, true
		}
		if f, err := x.Float64(); err == nil {
			return int64(f), f == float64(int64(f))
		}
	}
	return 0, false
}

// AsFloat is AsInt for any JSON number, read as a float64.
func AsFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		// Past the float range it is ±Inf, as Python's json.loads reads
		// 1e400 (ParseFloat gives ±Inf with ErrRange).
		f, err := x.Float64()
		return f, err == nil || math.IsInf(f, 0)
	}
	return 0, false
}

// recordTransition writes _temp.prev_node_id and _temp.prev_next_node.
// The values are interned per workflow so a transition allocates nothing.
func recordTransition(vars map[string]any, wf *Workflow, node, next string) {
	t := namespace(vars, "_temp")
	t["prev_node_id"] = wf.boxed(node)
	if next == "" {
		t["prev_next_node"] = nil
	} else {
		t["prev_next_node"] = wf.boxed(next)
	}
}

// controlOf returns vars._runtime.control, or nil.
func controlOf(vars map[string]any) map[string]any {
	rt, _ := vars["_runtime"].(map[string]any)
	c, _ := rt["control"].(map[string]any)
	return c
}

// IsPaused reports whether a host paused the run.
func IsPaused(run *durable.RunState) bool { return run.HostPaused() }

// isPauseWait reports whether the run sits in the synthetic pause wait.
func isPauseWait(run *durable.RunState) bool {
	w := run.Waiting
	if w == nil || w.Reason != durable.WaitUser {
		return false
	}
	if w.WaitKey == "pause:"+run.RunID {
		return true
	}
	k, _ := w.Details["kind"].(string)
	return k == "pause"
}

const maxTraceSteps = 100

// appendTrace adds an entry to vars._runtime.node_traces[node], keeping
// the last 100.
func appendTrace(vars map[string]any, node string, entry map[string]any, now string) {
	traces := namespace(namespace(vars, "_runtime"), "node_traces")
	t, ok := traces[node].(map[string]any)
	if !ok {
		t = map[string]any{"node_id": node, "steps": []any{}}
		traces[node] = t
	}
	steps, _ := t["steps"].([]any)
	steps = append(steps, entry)
	if len(steps) > maxTraceSteps {
		steps = append([]any(nil), steps[len(steps)-maxTraceSteps:]...)
	}
	t["steps"] = steps
	t["updated_at"] = now
}

func stringOr(v any, def string) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}

// truthy applies Python truthiness to a JSON value.
func truthy(v any) bool { return pyval.Truthy(v) }

// effectInFlightKey, under vars._runtime, holds in a checkpoint the plan
// of a node whose effect was being executed when it was taken (an
// external effect's STARTED record, a failed attempt before its retry, an
// interruption). Such a checkpoint commits the node's writes with the run
// still at the node; a run replayed from it executes this plan again
// instead of calling the node on its own writes (a node that branches on
// what it wrote, as the VisualFlow agent node does, would take the branch
// for "effect done"). The key is only ever in what is committed: the
// session adds it for the commit and takes it out of the vars it loads.
// It carries the checkpoint's updated_at: a Python runtime that continued
// the run keeps the key it does not know while it saves newer states, and
// such a stale plan must not be replayed.
const effectInFlightKey = "effect_in_flight"

func setEffectInFlight(vars map[string]any, node string, plan StepPlan, checkpointAt durable.Time) {
	namespace(vars, "_runtime")[effectInFlightKey] = map[string]any{
		"node":          node,
		"checkpoint_at": checkpointAt.String(),
		"plan_node":     plan.NodeID,
		"next_node":     nullable(plan.NextNode),
		"effect": map[string]any{
			"type":       string(plan.Effect.Type),
			"payload":    plan.Effect.Payload,
			"result_key": nullable(plan.Effect.ResultKey),
		},
	}
}

// touchUpdated sets run.UpdatedAt to now and moves the checkpoint_at of
// a plan in flight that the last checkpoint recorded along with it: our
// own writes between ticks (a host's pause, resume-run or limits, a memory
// note into the run) leave the plan to be executed again; only a save by a
// runtime that does not know the key makes it stale. The time of a
// Python save they write over is kept (keepPythonSave).
func touchUpdated(run *durable.RunState, now durable.Time) {
	prev := run.UpdatedAt
	run.UpdatedAt = now
	keepPythonSave(run.Vars, prev, now)
	rt, _ := run.Vars["_runtime"].(map[string]any)
	m, _ := rt[effectInFlightKey].(map[string]any)
	if m == nil {
		return
	}
	at, _ := m["checkpoint_at"].(string)
	if t, err := durable.ParseTime(at); err == nil && t.Equal(prev.Time) {
		m["checkpoint_at"] = now.String()
	}
}

// loadOtherRun reads a run other than the requesting one for a handler:
// the stored run without the plan in flight its checkpoint may hold
// (effectInFlightKey), which nodes and handlers never see. The run is the
// caller's copy; a handler that writes to a run reloads it (writeOwner),
// so that the plan is kept.
func loadOtherRun(ctx context.Context, r *Runtime, runID string) (*durable.RunState, error) {
	run, err := r.store.RunGet(ctx, runID)
	if err != nil {
		return nil, err
	}
	clearEffectInFlight(run.Vars)
	return run, nil
}

func clearEffectInFlight(vars map[string]any) {
	if rt, ok := vars["_runtime"].(map[string]any); ok {
		delete(rt, effectInFlightKey)
	}
}

// takeEffectInFlight removes the plan recorded by setEffectInFlight from
// vars and returns it if it was recorded at node by the checkpoint that
// saved the run last (updatedAt).
func takeEffectInFlight(vars map[string]any, node string, updatedAt durable.Time) (StepPlan, bool) {
	rt, _ := vars["_runtime"].(map[string]any)
	m, _ := rt[effectInFlightKey].(map[string]any)
	if m == nil {
		return StepPlan{}, false
	}
	delete(rt, effectInFlightKey)
	if m["node"] != node {
		return StepPlan{}, false
	}
	at, _ := m["checkpoint_at"].(string)
	if t, err := durable.ParseTime(at); err != nil || !t.Equal(updatedAt.Time) {
		return StepPlan{}, false // saved since by a runtime that does not know the key
	}
	e, _ := m["effect"].(map[string]any)
	typ, _ := e["type"].(string)
	if typ == "" {
		return StepPlan{}, false
	}
	payload, _ := e["payload"].(map[string]any)
	resultKey, _ := e["result_key"].(string)
	planNode, _ := m["plan_node"].(string)
	next, _ := m["next_node"].(string)
	return StepPlan{NodeID: planNode, NextNode: next,
		Effect: &durable.Effect{Type: durable.EffectType(typ), Payload: payload, ResultKey: resultKey}}, true
}

// pythonSaveKey, under vars._runtime, keeps for a run the Python runtime
// saved the time of that save ("at", on the Python host's clock) while
// this runtime saves the run over it ("kept_at": the updated_at of the
// save that kept it). Python's idempotency key has no step count: a
// completed record found under it is this effect's completion a kill
// left unsaved only if it ended after the state's last Python save, the
// only save whose time is on the record's clock. Our own saves (a tick's
// commits, a host's pause, resume-run or limits update) move updated_at
// with our clock and must not move that bound: it is kept here. "at" is
// raised to the end of a Python record we reused, or of the synthetic
// tool completion a resume wrote (notePythonRecordKept): the state
// accounts for it from then on, and a later loop turn must not reuse it. The
// key holds while updated_at is kept_at; a save by Python since (which
// keeps the key it does not know) makes updated_at the bound again. A run
// we started (it has an effect_seq) and Python never saved gets no key.
const pythonSaveKey = "python_save"

// pythonSaveBound returns the time up to which the records the Python
// runtime wrote are accounted for by run's state (see pythonSaveKey).
func pythonSaveBound(run *durable.RunState) durable.Time {
	if at, ok := keptPythonSave(run.Vars, run.UpdatedAt); ok {
		return at
	}
	return run.UpdatedAt
}

// keptPythonSave returns the Python save time pythonSaveKey keeps, if a
// save of ours with updated_at kept it.
func keptPythonSave(vars map[string]any, updatedAt durable.Time) (durable.Time, bool) {
	rt, _ := vars["_runtime"].(map[string]any)
	m, _ := rt[pythonSaveKey].(map[string]any)
	if m == nil {
		return durable.Time{}, false
	}
	kept, _ := m["kept_at"].(string)
	if t, err := durable.ParseTime(kept); err != nil || !t.Equal(updatedAt.Time) {
		return durable.Time{}, false
	}
	at, _ := m["at"].(string)
	t, err := durable.ParseTime(at)
	if err != nil {
		return durable.Time{}, false
	}
	return t, true
}

// notePythonSave records in vars that the records Python wrote up to at
// are accounted for by the state saved at updatedAt (see pythonSaveKey).
func notePythonSave(vars map[string]any, at, updatedAt durable.Time) {
	if rt := namespace(vars, "_runtime"); rt != nil {
		rt[pythonSaveKey] = map[string]any{"at": at.String(), "kept_at": updatedAt.String()}
	}
}

// notePythonRecordKept raises the Python save bound of a run Python saved
// (one keepPythonSave keeps the bound for) to end, the end of a record
// under Python's key that the state saved next accounts for. The bound
// never moves back. A run of ours needs nothing: its bound is its
// updated_at, which that save moves past end.
func notePythonRecordKept(run *durable.RunState, end durable.Time) {
	rt, _ := run.Vars["_runtime"].(map[string]any)
	if _, has := rt[pythonSaveKey]; !has && hasEffectSeq(run.Vars) {
		return
	}
	if bound := pythonSaveBound(run); bound.After(end.Time) {
		end = bound
	}
	notePythonSave(run.Vars, end, run.UpdatedAt)
}

// keepPythonSave is called when a save of ours moves a run's updated_at
// from prev to now: the time of the Python runtime's last save is kept in
// vars (pythonSaveKey) for a run Python saved last (one without an
// effect_seq, or one whose key a Python save made stale), and carried
// along once kept. A run of ours pays two map look-ups.
func keepPythonSave(vars map[string]any, prev, now durable.Time) {
	rt, _ := vars["_runtime"].(map[string]any)
	if _, has := rt[pythonSaveKey]; (!has && hasEffectSeq(vars)) || prev.IsZero() {
		return
	}
	at, ok := keptPythonSave(vars, prev)
	if !ok {
		at = prev // saved last by Python
	}
	notePythonSave(vars, at, now)
}
