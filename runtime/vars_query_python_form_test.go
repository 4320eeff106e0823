package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// §3.9: VARS_QUERY's output is Python's json.dumps(out, ensure_ascii=False,
// indent=2, sort_keys=True) of the value as json.loads read it. A number
// another writer spelt its own way (a JavaScript client sends 0.0000001 as
// 1e-7, a price as 1.50, …) is a float or int to Python and is written
// back in Python's form, as the "type" already says; the literal as read
// is kept only in run files and ledger lines (docs/compatibility.md).
//
// Expected texts produced with CPython 3.11:
//
//	json.dumps({"path": "scratchpad.n", "type": type(v).__name__, "value": v},
//	           ensure_ascii=False, indent=2, sort_keys=True, default=str)
//	for v = json.loads(lit)
func TestVarsQueryWritesNumbersInPythonForm(t *testing.T) {
	f := memSetup(t, false)
	for lit, want := range map[string]string{
		"1e-7":  "{\n  \"path\": \"scratchpad.n\",\n  \"type\": \"float\",\n  \"value\": 1e-07\n}",
		"1.50":  "{\n  \"path\": \"scratchpad.n\",\n  \"type\": \"float\",\n  \"value\": 1.5\n}",
		"1E5":   "{\n  \"path\": \"scratchpad.n\",\n  \"type\": \"float\",\n  \"value\": 100000.0\n}",
		"-0":    "{\n  \"path\": \"scratchpad.n\",\n  \"type\": \"int\",\n  \"value\": 0\n}",
		"1e400": "{\n  \"path\": \"scratchpad.n\",\n  \"type\": \"float\",\n  \"value\": Infinity\n}",
	} {
		run := f.runSteps(t, runtime.StartParams{Vars: map[string]any{
			"scratchpad": map[string]any{"n": json.Number(lit)}}},
			step(durable.EffectVarsQuery, map[string]any{"path": "scratchpad.n"}))
		mustComplete(t, run)
		r := res(t, run, 0)
		if r["success"] != true {
			t.Errorf("%s: VARS_QUERY failed: %v", lit, r["error"])
			continue
		}
		if got := r["output"]; got != want {
			t.Errorf("scratchpad.n = %s: output\n%q\nwant (Python json.dumps)\n%q", lit, got, want)
		}
		// The run keeps the literal as read.
		sp, _ := run.Vars["scratchpad"].(map[string]any)
		if got := sp["n"]; got != json.Number(lit) {
			t.Errorf("scratchpad.n = %s: stored as %#v after the query; want the literal kept", lit, got)
		}
	}
}

// §3.9 / Python _handle_vars_query: "if target_run_id is not None:
// target_run_id = str(target_run_id).strip() or None". Any value but null
// and a blank string names a run: inspect_vars(target_run_id=0) or a pin
// sending false asks for run "0" / "False", which does not exist, and is
// answered success:false, not with the calling run's own vars.
func TestVarsQueryFalsyTargetRunIDIsARunID(t *testing.T) {
	f := memSetup(t, false)
	for _, tc := range []struct {
		target any
		want   string
	}{
		{int64(0), "Unknown target_run_id: 0"},
		{false, "Unknown target_run_id: False"},
		{json.Number("0.0"), "Unknown target_run_id: 0.0"},
	} {
		run := f.runSteps(t, runtime.StartParams{Vars: map[string]any{
			"scratchpad": map[string]any{"secret": "mine"}}},
			step(durable.EffectVarsQuery, map[string]any{"target_run_id": tc.target}))
		mustComplete(t, run)
		r := res(t, run, 0)
		if r["success"] != false || r["error"] != tc.want {
			t.Errorf("target_run_id %#v: success=%v error=%v output=%v; want success false, error %q",
				tc.target, r["success"], r["error"], r["output"], tc.want)
		}
	}
	// Null and a blank id are the calling run.
	for _, target := range []any{nil, "  "} {
		run := f.runSteps(t, runtime.StartParams{Vars: map[string]any{
			"scratchpad": map[string]any{"secret": "mine"}}},
			step(durable.EffectVarsQuery, map[string]any{"target_run_id": target, "path": "scratchpad.secret"}))
		mustComplete(t, run)
		if r := res(t, run, 0); r["success"] != true {
			t.Errorf("target_run_id %#v: %v; want the calling run's vars", target, r["error"])
		}
	}
}

// ---------------------------------------------------------------------------
// VARS_QUERY answers "Unknown target_run_id: <id>" for every error of the
// store's read of the target, not only for a missing run: a transient
// store failure (I/O, a cancelled context, a database restart) is reported
// as a completed effect claiming the run does not exist, and never retried.
// Python's handler lets the store's exception escape (the effect fails:
// "Effect handler raised exception: …", subject to the retry policy); the
// memory effects here make the same distinction (baseRun: ErrNotFound →
// "Unknown target_run_id", other errors → "loading target run …").
type flakyGetStore struct {
	store.Store
	failID string
}

func (s *flakyGetStore) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if id == s.failID {
		return nil, errors.New("injected: database connection reset")
	}
	return s.Store.RunGet(ctx, id)
}

func TestPyFidelityVarsQueryStoreErrorIsNotUnknownRun(t *testing.T) {
	fs := &flakyGetStore{Store: memory.New()}
	f := memSetupStore(t, fs, false)
	other := f.runSteps(t, runtime.StartParams{Vars: map[string]any{"scratchpad": map[string]any{"x": int64(1)}}})
	mustComplete(t, other)
	fs.failID = other.RunID
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectVarsQuery, map[string]any{"target_run_id": other.RunID, "path": "scratchpad.x"}))
	if run.Status != durable.RunCompleted {
		return // the failure surfaced (failed effect): fine
	}
	r := res(t, run, 0)
	if msg := fmt.Sprint(r["error"]); strings.HasPrefix(msg, "Unknown target_run_id") {
		t.Errorf("store failure reported as %q (success %v): run %s exists; the read failed", msg, r["success"], other.RunID)
	}
}
