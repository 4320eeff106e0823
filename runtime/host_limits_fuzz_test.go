package runtime_test

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// FuzzHostLimits: UpdateLimits with a fuzzed map (decoded JSON plus an
// injected Go value) on a run whose vars._limits is the default or a
// fuzzed start value, then CheckLimits / GetLimitStatus, on both stores.
// Properties:
//   - a refused update names one of the keys given (or vars._limits when
//     that is not an object) and changes nothing durable;
//   - an accepted update is stored: each key of vars._limits reads back
//     (after a reopen) as the normalised value given, the other limits
//     unchanged, the run still running at its node, no record added;
//   - CheckLimits and GetLimitStatus answer (no error) for the run and
//     agree: every warning's kind is iterations or tokens, and iterations
//     are reported exceeded iff the status's current >= max > 0;
//   - the run still ticks to completion and exports.
func FuzzHostLimits(f *testing.F) {
	f.Add([]byte(`{"max_iterations":10}`), []byte(``), uint8(0), "k", false)
	f.Add([]byte(`{"current_iteration":60}`), []byte(``), uint8(0), "k", true)
	f.Add([]byte(`{"max_tokens":"12"}`), []byte(`{"_limits":"nope"}`), uint8(0), "k", false)
	f.Add([]byte(`{"warn_iterations_pct":null}`), []byte(``), uint8(0), "k", true)
	f.Add([]byte(`{}`), []byte(``), uint8(1), "max_tokens", false)
	f.Add([]byte(`{"max_history_messages":[]}`), []byte(`{"_limits":{"max_iterations":2,"current_iteration":1}}`), uint8(9), "max_iterations", true)
	f.Add([]byte(`{"nope":1}`), []byte(``), uint8(0), "k", false)
	f.Add([]byte(`{"estimated_tokens_used":1e3,"max_tokens":2.5}`), []byte(``), uint8(11), "max_input_tokens", false)
	f.Fuzz(func(t *testing.T, updJSON, startJSON []byte, kind uint8, key string, useFile bool) {
		if len(updJSON) > 2048 || len(startJSON) > 2048 || len(key) > 64 {
			t.Skip()
		}
		e := fzNewEnv(t, useFile)
		ctx := fzCtx(t)
		vars := fzDecodeObject(startJSON)
		id, err := e.rt.Start(ctx, runtime.StartParams{WorkflowID: "echo", Vars: vars})
		if err != nil {
			return // Start's own refusals are FuzzHostStartVars's
		}
		updates := fzDecodeObject(updJSON)
		if updates == nil {
			updates = map[string]any{}
		}
		path, bad := fzInject(updates, "vars._limits", key, kind)
		given := pyjson.Clone(updates).(map[string]any)
		before := fzTake(t, e, id)
		oldRun := fzState(t, e, id)
		err = e.rt.UpdateLimits(ctx, id, updates)
		if err != nil {
			if after := fzTake(t, e, id); after != before {
				t.Fatalf("refused update (%v) changed the run: %+v -> %+v", err, before, after)
			}
			msg := err.Error()
			named := strings.Contains(msg, "vars._limits")
			for k := range given {
				if strings.Contains(msg, k) || strings.Contains(msg, strconv.Quote(k)) {
					named = true
				}
			}
			if !named {
				t.Fatalf("UpdateLimits(%v) refused naming no key: %v", slices.Sorted(maps.Keys(given)), err)
			}
		} else {
			if bad {
				t.Fatalf("UpdateLimits accepted a value that is not JSON at %s", path)
			}
			e.reopen(t)
			run := fzState(t, e, id)
			l, ok := run.Vars["_limits"].(map[string]any)
			if !ok {
				t.Fatalf("vars._limits after an update is %T", run.Vars["_limits"])
			}
			oldL, _ := oldRun.Vars["_limits"].(map[string]any)
			for k, v := range given {
				n, err := pyjson.Normalize(v)
				if err != nil {
					t.Fatalf("accepted limit %s = %#v does not normalise: %v", k, v, err)
				}
				if got, want := fzCanon(t, l[k]), fzCanon(t, n); got != want {
					t.Fatalf("vars._limits.%s stored %s, given %s", k, got, want)
				}
			}
			for k, v := range oldL {
				if _, upd := given[k]; !upd && fzCanon(t, l[k]) != fzCanon(t, v) {
					t.Fatalf("vars._limits.%s changed by an update not naming it: %s -> %s", k, fzCanon(t, v), fzCanon(t, l[k]))
				}
			}
			if run.Status != durable.RunRunning || run.CurrentNode != oldRun.CurrentNode {
				t.Fatalf("update moved the run: %s at %q", run.Status, run.CurrentNode)
			}
			if recs := fzCheckLedger(t, e, run); len(recs) != before.records {
				t.Fatalf("update appended %d records", len(recs)-before.records)
			}
		}
		ws, err := e.rt.CheckLimits(ctx, id)
		if err != nil {
			t.Fatalf("CheckLimits: %v", err)
		}
		status, err := e.rt.GetLimitStatus(ctx, id)
		if err != nil {
			t.Fatalf("GetLimitStatus: %v", err)
		}
		it := status["iterations"].(map[string]any)
		cur, _ := runtime.AsInt(it["current"])
		maxV, _ := runtime.AsInt(it["max"])
		exceeded := false
		for _, w := range ws {
			if w.LimitType != "iterations" && w.LimitType != "tokens" {
				t.Fatalf("warning of kind %q", w.LimitType)
			}
			if w.LimitType == "iterations" && w.Status == "exceeded" {
				exceeded = true
			}
		}
		if want := maxV > 0 && cur >= maxV; exceeded != want {
			t.Fatalf("CheckLimits exceeded=%v but status says current %d max %d (%v)", exceeded, cur, maxV, ws)
		}
		st, err := e.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil && !errors.Is(err, store.ErrConflict) {
			t.Fatalf("tick after the update: %v", err)
		}
		if st == nil || st.Status == durable.RunRunning {
			t.Fatalf("run left running after its tick: %v %v", st, err)
		}
		run := fzState(t, e, id)
		recs := fzCheckLedger(t, e, run)
		fzExport(t, e, id, len(recs))
	})
}
