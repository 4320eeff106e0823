package runtime_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

// fzSnapshot is what a refused host call must leave as it was.
type fzSnapshot struct {
	status  durable.RunStatus
	version int64
	waitKey string
	records int
	vars    string
}

func (s fzSnapshot) noVersion() fzSnapshot { s.version = 0; return s }

func fzTake(t testing.TB, e *fzEnv, id string) fzSnapshot {
	t.Helper()
	run := fzState(t, e, id)
	recs, err := e.rt.GetLedger(fzCtx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	s := fzSnapshot{status: run.Status, version: int64(run.Version), records: len(recs), vars: fzCanon(t, run.Vars)}
	if run.Waiting != nil {
		s.waitKey = run.Waiting.WaitKey
	}
	return s
}

// FuzzHostResume: Resume with a fuzzed wait key and payload (decoded
// JSON plus an injected Go value) of a run that is waiting on ASK_USER,
// completed, cancelled, paused or not yet ticked (running), on both
// stores. Properties:
//   - a refused resume changes nothing durable (status, version, wait key,
//     vars, ledger length) and leaves no run running that was not; a wrong
//     key or a run not waiting gives a *StaleResumeError; a payload that
//     is not JSON is refused naming its key path under "payload";
//   - an accepted resume is only of a waiting run with its key (or none),
//     completes the run with the payload (normalised) as its answer, the
//     store holding what Resume returned, one terminal record, last;
//   - the same resume again is a *StaleResumeError and changes nothing;
//   - whatever the outcome, the run exports.
func FuzzHostResume(f *testing.F) {
	f.Add(uint8(0), uint8(0), "", []byte(`{"text":"yes"}`), uint8(0), "k", false)
	f.Add(uint8(0), uint8(1), "user:x:ask", []byte(`{"text":"no"}`), uint8(0), "k", true)
	f.Add(uint8(0), uint8(2), "", []byte(`{}`), uint8(1), "nan", false)
	f.Add(uint8(1), uint8(0), "", []byte(`{"text":"again"}`), uint8(0), "k", true)
	f.Add(uint8(2), uint8(0), "", []byte(`{"text":"late"}`), uint8(0), "k", false)
	f.Add(uint8(3), uint8(0), "", []byte(`{"text":"paused"}`), uint8(0), "k", true)
	f.Add(uint8(4), uint8(2), "", []byte(`{"text":"running"}`), uint8(0), "k", false)
	f.Add(uint8(0), uint8(3), " ", []byte(`[1,2,3]`), uint8(14), "deep", true)
	f.Add(uint8(0), uint8(0), "", []byte(`{"text":{"nested":[1,{"a":null}]}}`), uint8(5), "typed", false)
	f.Fuzz(func(t *testing.T, state, keyMode uint8, key string, payloadJSON []byte, kind uint8, pkey string, useFile bool) {
		if len(key) > 128 || len(payloadJSON) > 4096 || len(pkey) > 64 {
			t.Skip()
		}
		e := fzNewEnv(t, useFile)
		ctx := fzCtx(t)
		id, err := e.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		var waitKey string
		if state%5 != 4 { // 4: left running, never ticked
			st, err := e.rt.Tick(ctx, id, runtime.TickOptions{})
			if err != nil || st.Status != durable.RunWaiting {
				t.Fatalf("tick: %v %v", st, err)
			}
			waitKey = st.Waiting.WaitKey
		}
		switch state % 5 {
		case 1:
			if _, err := e.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: waitKey, Payload: map[string]any{"text": "first"}}); err != nil {
				t.Fatal(err)
			}
		case 2:
			if _, err := e.rt.Cancel(ctx, id, "fuzz"); err != nil {
				t.Fatal(err)
			}
		case 3:
			if _, err := e.rt.Pause(ctx, id, "fuzz"); err != nil {
				t.Fatal(err)
			}
		}
		before := fzTake(t, e, id)
		switch keyMode % 4 {
		case 0:
			key = waitKey
		case 2:
			key = ""
		case 3:
			key = waitKey + key
		}
		payload := fzDecodeObject(payloadJSON)
		if payload == nil && kind%20 != 0 {
			payload = map[string]any{}
		}
		path, bad := fzInject(payload, "payload", pkey, kind)
		var given any
		if payload != nil {
			given = pyjson.Clone(payload)
		}
		p := runtime.ResumeParams{RunID: id, WaitKey: key, Payload: payload}
		st, err := e.rt.Resume(ctx, p)
		if err != nil {
			after := fzTake(t, e, id)
			if after != before {
				t.Fatalf("refused resume (%v) changed the run: %+v -> %+v", err, before, after)
			}
			var stale *runtime.StaleResumeError
			switch {
			case before.status == durable.RunWaiting && before.waitKey == key || key == "" && before.status == durable.RunWaiting:
				// the wait matched: only the payload or the pause can be at fault
				if bad && !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), "payload") {
					t.Fatalf("payload with a bad value at %s refused by an error not naming it: %v", path, err)
				}
				if !bad && !errors.Is(err, runtime.ErrRunPaused) && !strings.Contains(err.Error(), "payload") {
					t.Fatalf("resume of the waiting run with its key refused: %v", err)
				}
			case errors.Is(err, runtime.ErrRunPaused):
			case !errors.As(err, &stale):
				if !(bad && strings.Contains(err.Error(), "payload")) {
					t.Fatalf("resume of a run %s on %q with key %q: %v; want a StaleResumeError", before.status, before.waitKey, key, err)
				}
			}
			run := fzState(t, e, id)
			recs := fzCheckLedger(t, e, run)
			fzExport(t, e, id, len(recs))
			return
		}
		if bad {
			t.Fatalf("resume accepted a payload with a value that is not JSON at %s", path)
		}
		if before.status != durable.RunWaiting || (key != "" && key != before.waitKey) {
			t.Fatalf("resume with key %q accepted for a run %s waiting on %q", key, before.status, before.waitKey)
		}
		if st.Status != durable.RunCompleted {
			t.Fatalf("resumed run ended %s (%s), want completed", st.Status, st.Error)
		}
		if given != nil {
			n, err := pyjson.Normalize(given)
			if err != nil {
				t.Fatalf("accepted payload does not normalise: %v", err)
			}
			if got, want := fzCanon(t, st.Output["answer"]), fzCanon(t, n); got != want {
				t.Fatalf("answer %s, payload %s", got, want)
			}
		}
		e.reopen(t)
		run := fzState(t, e, id)
		if run.Status != st.Status || fzCanon(t, run.Output) != fzCanon(t, st.Output) {
			t.Fatalf("store holds %s %v, Resume returned %s %v", run.Status, run.Output, st.Status, st.Output)
		}
		recs := fzCheckLedger(t, e, run)
		mid := fzTake(t, e, id)
		_, err = e.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"text": "again"}})
		var stale *runtime.StaleResumeError
		if !errors.As(err, &stale) {
			t.Fatalf("second resume of the completed run: %v, want a StaleResumeError", err)
		}
		if after := fzTake(t, e, id); after != mid {
			t.Fatalf("second resume changed the run: %+v -> %+v", mid, after)
		}
		fzExport(t, e, id, len(recs))
	})
}
