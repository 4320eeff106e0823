package crashtest

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// FuzzCrashShapes: the fuzz input is a workflow shape (a program of 1–8
// steps), the store it runs on, the decorators of the process, and a kill
// point and phase. The program runs once unkilled (the reference), then
// on fresh data killed at the point (persistence calls of the run store
// and of the artifact store counted as one sequence, as RunClaimsArtifacts
// does) and restarted. Checked, beyond the harness's invariants
// (cfCheckLedgers: one terminal record per terminal run, none stuck, no
// key completed twice; no effect executed again after its completion was
// durable; checkNoDanglingRefs):
//   - every run in the store ends as in the reference (status, output,
//     error);
//   - each host-handler call runs a new attempt whose STARTED record is
//     durable, never twice for one step; in the reference every key runs
//     exactly once; after the restart a key runs at most once per durable
//     STARTED record (and at most twice: one kill);
//   - every node with a host effect completed once per visit (a loop's
//     identical effect once per repetition), each under its own key;
//   - with the hash chain decorator, every ledger verifies.

// Step kinds of a program.
const (
	fzPure = iota
	fzCharge
	fzAsk
	fzWaitPast
	fzWaitClock
	fzEventEmit
	fzEventDeadline
	fzChildSync
	fzChildAsync
	fzEmit
	fzNote
	fzNodeError
	fzLoop
	fzBigVar
	fzKinds
)

var fzKindNames = [...]string{"pure", "charge", "ask", "wait_past", "wait_clock", "event_emit", "event_deadline",
	"child_sync", "child_async", "emit", "note", "node_error", "loop", "big_var"}

type fzStep struct {
	kind int
	arg  int
}

type fzProgram struct {
	backend   int // index into cfBackends: memory, json, sqlite, sqlite_shared, postgres
	hashchain bool
	offload   bool
	claims    bool // runtimes claim runs; each restart is another owner, later
	kills     []fzKill
	steps     []fzStep
}

// fzKill is the kill of one life: a raw persistence point index (taken
// modulo the reference run's points) and a phase.
type fzKill struct {
	point int
	phase Phase
}

func (p *fzProgram) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "backend=%s hashchain=%v offload=%v claims=%v kills=%v steps=[", cfBackends()[p.backend].name,
		p.hashchain, p.offload, p.claims, p.kills)
	for i, s := range p.steps {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s(%d)", fzKindNames[s.kind], s.arg)
	}
	b.WriteString("]")
	return b.String()
}

// refKey identifies the reference run of a program (not its kill).
func (p *fzProgram) refKey() string {
	return fmt.Sprintf("%d %v %v %v %v", p.backend, p.hashchain, p.offload, p.claims, p.steps)
}

// fzDecode: byte 0 options (bits 0-1 store, 2 hash chain, 3 offload, 4-5
// phase of the first kill, 6 claims), then per kill (nkills of them) two
// bytes of kill index (the second kill's phase in byte 0's bit 7 and the
// index's top bit), then a (kind, arg) pair per step. A node error ends
// the program (what follows is unreachable). Store 3 is shared SQLite, or
// PostgreSQL when the first kill index's top bit is set and
// TEST_POSTGRES_URL names a server (shared SQLite otherwise).
func fzDecode(data []byte, nkills int) (*fzProgram, bool) {
	if len(data) < 1+2*nkills+2 {
		return nil, false
	}
	o := data[0]
	p := &fzProgram{backend: int(o & 3), hashchain: o&4 != 0, offload: o&8 != 0, claims: o&64 != 0}
	if p.backend == 3 && data[2]&0x80 != 0 && len(cfBackends()) > 4 {
		p.backend = 4
	}
	for k := range nkills {
		raw := int(binary.LittleEndian.Uint16(data[1+2*k:]))
		var ph Phase
		if k == 0 {
			ph = Phase(((o >> 4) & 3) % 3)
			if (o>>4)&3 == 3 {
				ph = After
			}
		} else {
			ph = Phase((raw>>15)&1|int(o>>7)<<1) % 3
			raw &= 0x7fff
		}
		p.kills = append(p.kills, fzKill{point: raw, phase: ph})
	}
	for i := 1 + 2*nkills; i+1 < len(data) && len(p.steps) < 8; i += 2 {
		s := fzStep{kind: int(data[i]) % fzKinds, arg: int(data[i+1])}
		p.steps = append(p.steps, s)
		if s.kind == fzNodeError {
			break
		}
	}
	return p, len(p.steps) > 0
}

func fzEncode(opts byte, kill uint16, steps ...int) []byte {
	b := []byte{opts, byte(kill), byte(kill >> 8)}
	return fzAppend(b, steps...)
}

func fzEncode2(opts byte, kill1, kill2 uint16, steps ...int) []byte {
	b := []byte{opts, byte(kill1), byte(kill1 >> 8), byte(kill2), byte(kill2 >> 8)}
	return fzAppend(b, steps...)
}

func fzAppend(b []byte, steps ...int) []byte {
	for _, s := range steps {
		b = append(b, byte(s))
	}
	return b
}

// fzChildPays is how often the child of arg n charges.
func fzChildPays(n int) int { return 1 + n%4/2 }

// fzLoops is how often a loop step repeats its identical charge.
func fzLoops(arg int) int { return arg%3 + 2 }

const (
	fzRoot    = "fz-root"
	fzSession = "fz-sess"
)

func fzNodeName(i int) string { return fmt.Sprintf("s%d", i) }

// fzWorkflows builds the program's workflow (fz_main) and the child it
// starts (fz_child: a person's answer when n is odd, then a charge).
func fzWorkflows(p *fzProgram) []*runtime.Workflow {
	n := cfNode
	nodes := map[string]runtime.NodeFunc{}
	next := func(i int) string {
		if i+1 < len(p.steps) {
			return fzNodeName(i + 1)
		}
		return "done"
	}
	for i, s := range p.steps {
		i, s, name, nx := i, s, fzNodeName(i), next(i)
		res := fmt.Sprintf("r%d", i)
		switch s.kind {
		case fzPure:
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				run.Vars[res] = int64(s.arg * 3)
				return runtime.Next(nx)
			})
		case fzCharge:
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				pl := map[string]any{"amount": int64(i*1000 + s.arg)}
				if s.arg%2 == 1 { // large enough to offload
					pl["memo"] = strings.Repeat("m", 120+s.arg)
				}
				return runtime.Request(&durable.Effect{Type: "charge", Payload: pl, ResultKey: res}, nx)
			})
		case fzAsk:
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
					Payload: map[string]any{"prompt": fmt.Sprintf("ok %d?", i)}, ResultKey: res}, nx)
			})
		case fzWaitPast:
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
					Payload: map[string]any{"until": durable.FormatTime(cfT0.Add(-time.Hour))}}, nx)
			})
		case fzWaitClock:
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				until := cfT0.Add(time.Duration(i+1)*time.Hour + time.Duration(s.arg)*time.Minute)
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
					Payload: map[string]any{"until": durable.FormatTime(until)}}, nx)
			})
		case fzEventEmit:
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
					Payload: map[string]any{"name": fmt.Sprintf("ev%d", i)}, ResultKey: res}, nx)
			})
		case fzEventDeadline:
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{
					"name": fmt.Sprintf("never%d", i), "timeout_s": float64(60 * (s.arg%5 + 1))}, ResultKey: res}, nx)
			})
		case fzChildSync, fzChildAsync:
			async := s.kind == fzChildAsync
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				pl := map[string]any{"workflow_id": "fz_child", "vars": map[string]any{"n": int64(s.arg)}}
				if async {
					pl["async"], pl["wait"] = true, true
				}
				return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: pl, ResultKey: res}, nx)
			})
		case fzEmit:
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent, Payload: map[string]any{
					"name": fmt.Sprintf("x%d", i), "session_id": "fz-other", "payload": map[string]any{"i": int64(i)}},
					ResultKey: "_emit"}, nx)
			})
		case fzNote:
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				pl := map[string]any{"note": fmt.Sprintf("note %d/%d", i, s.arg), "keep_in_context": s.arg%2 == 1}
				if s.arg%4 >= 2 {
					pl["scope"] = "session"
				}
				return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote, Payload: pl, ResultKey: "_note"}, nx)
			})
		case fzNodeError:
			nodes[name] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.StepPlan{}, fmt.Errorf("boom at step %d (%d)", i, s.arg)
			}
		case fzLoop:
			loops := fzLoops(s.arg)
			counter := name + "_count"
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: "charge",
					Payload: map[string]any{"amount": int64(77)}, ResultKey: res}, counter)
			})
			nodes[counter] = n(func(run *durable.RunState) runtime.StepPlan {
				k := fmt.Sprintf("loop%d", i)
				c, _ := runtime.AsInt(run.Vars[k])
				run.Vars[k] = c + 1
				if int(c+1) < loops {
					return runtime.Next(name)
				}
				return runtime.Next(nx)
			})
		case fzBigVar:
			nodes[name] = n(func(run *durable.RunState) runtime.StepPlan {
				run.Vars[res] = strings.Repeat(fmt.Sprintf("%c", 'a'+i), 150+s.arg)
				return runtime.Next(nx)
			})
		}
	}
	nodes["done"] = n(func(run *durable.RunState) runtime.StepPlan {
		out := map[string]any{}
		for i, s := range p.steps {
			v := run.Vars[fmt.Sprintf("r%d", i)]
			m, _ := v.(map[string]any)
			switch s.kind {
			case fzPure, fzBigVar:
				out[fmt.Sprint(i)] = v
			case fzCharge:
				out[fmt.Sprint(i)] = map[string]any{"id": m["id"], "memo": m["memo"]}
			case fzLoop:
				out[fmt.Sprint(i)] = map[string]any{"id": m["id"], "loops": run.Vars[fmt.Sprintf("loop%d", i)]}
			case fzAsk:
				out[fmt.Sprint(i)] = m["text"]
			case fzEventEmit:
				out[fmt.Sprint(i)] = map[string]any{"name": m["name"], "payload": m["payload"]}
			case fzEventDeadline:
				out[fmt.Sprint(i)] = map[string]any{"timed_out": m["timed_out"]}
			case fzChildSync, fzChildAsync:
				out[fmt.Sprint(i)] = m["output"]
			}
		}
		out["spans"] = int64(len(memorySpans(run)))
		out["notes"] = int64(contextNotes(run))
		return runtime.Complete(out)
	})
	main := &runtime.Workflow{ID: "fz_main", Entry: fzNodeName(0), Nodes: nodes}
	child := &runtime.Workflow{ID: "fz_child", Entry: "start", Nodes: map[string]runtime.NodeFunc{
		"start": n(func(run *durable.RunState) runtime.StepPlan {
			k, _ := runtime.AsInt(run.Vars["n"])
			if k%2 == 1 {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
					Payload: map[string]any{"prompt": "child?"}, ResultKey: "ans"}, "pay")
			}
			return runtime.Next("pay")
		}),
		"pay": n(func(run *durable.RunState) runtime.StepPlan {
			k, _ := runtime.AsInt(run.Vars["n"])
			return cfCharge(5000+k, "r", "again")
		}),
		// n%4 ≥ 2: the identical charge once more (its own key).
		"again": n(func(run *durable.RunState) runtime.StepPlan {
			k, _ := runtime.AsInt(run.Vars["n"])
			c, _ := runtime.AsInt(run.Vars["pays"])
			run.Vars["pays"] = c + 1
			if int(c+1) < fzChildPays(int(k)) {
				return runtime.Next("pay")
			}
			return runtime.Next("end")
		}),
		"end": n(func(run *durable.RunState) runtime.StepPlan {
			ans, _ := run.Vars["ans"].(map[string]any)
			return runtime.Complete(map[string]any{"r": cfReceipt(run, "r"), "ans": ans["text"], "pays": run.Vars["pays"]})
		}),
	}}
	return []*runtime.Workflow{main, child}
}

// fzLife is one process: its runtime and scheduler over the decorated
// store (killable in the life that is killed), with the world's clock,
// effect log and problems (cfWorld).
func fzLife(w *cfWorld, p *fzProgram, life int, st store.Store, arts artifact.Store, dead func() bool) (*cfEnv, error) {
	reg, err := runtime.NewRegistry(fzWorkflows(p)...)
	if err != nil {
		return nil, err
	}
	var calls sync.Mutex
	charge := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Lock()
		defer calls.Unlock()
		// An attempt is evidenced durably before the handler runs (read
		// through the process's store: unreadable once it is killed).
		if recs, err := req.Runtime.Store().LedgerList(ctx, &store.LedgerListParams{RunID: req.Run.RunID}); err == nil {
			found := false
			for _, r := range recs {
				if r.StepID == req.StepID && r.Status == durable.StepStarted && r.Attempt == req.Attempt && r.IdempotencyKey == req.IdempotencyKey {
					found = true
				}
			}
			if !found {
				w.problem("charge %s (node %s step %s) ran without a durable STARTED record", req.IdempotencyKey, req.NodeID, req.StepID)
			}
		} else if !dead() {
			w.problem("charge handler cannot read the ledger: %v", err)
		}
		w.log.add(req.IdempotencyKey)
		w.log.add("step " + req.StepID)
		if c := w.log.count("step " + req.StepID); c > 1 {
			w.problem("charge step %s (node %s) ran %d times", req.StepID, req.NodeID, c)
		}
		res := map[string]any{"id": fmt.Sprintf("rcpt-%v", req.Effect.Payload["amount"])}
		if memo, ok := req.Effect.Payload["memo"]; ok {
			res["memo"] = memo
		}
		return runtime.Completed(res), nil
	}
	var claims *runtime.Claims
	if p.claims && store.HasClaims(st) {
		claims = &runtime.Claims{Owner: fmt.Sprint("life-", life), TTL: noterTTL, RenewEvery: noterTTL / 3}
	}
	if p.claims && life > 1 {
		// A restart is another owner, once the dead one's claims expired.
		w.clock.advanceTo(w.clock.Now().Add(2 * noterTTL))
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: arts, Claims: claims,
		Clock: w.clock.Now, Sleep: w.clock.sleep, Logger: slog.New(slog.DiscardHandler),
		Handlers: map[durable.EffectType]runtime.Handler{"charge": {Func: charge}}})
	if err != nil {
		return nil, err
	}
	sch, err := scheduler.New(scheduler.Config{Runtime: rt})
	if err != nil {
		return nil, err
	}
	return &cfEnv{cfWorld: w, rt: rt, sch: sch, st: st}, nil
}

// fzHost drives the program from the start, as every life does: start
// (idempotent), then tick the root and serve its wait — answer people
// (the root's and its children's), move the clock to a deadline and let
// the scheduler's poll release it, emit the event a listener waits for —
// until the root ends.
func fzHost(ctx context.Context, e *cfEnv, p *fzProgram) error {
	if err := cfStart(ctx, e, "fz_main", fzRoot, fzSession); err != nil {
		return err
	}
	for range 80 {
		if err := e.sch.Recover(ctx); err != nil {
			return err
		}
		st, err := e.rt.Tick(ctx, fzRoot, runtime.TickOptions{})
		if err != nil {
			return err
		}
		if st.Status.Terminal() {
			return nil
		}
		if st.Status != durable.RunWaiting || st.Waiting == nil {
			continue
		}
		switch st.Waiting.Reason {
		case durable.WaitUser, durable.WaitSubworkflow:
			if err := cfAnswerUsers(ctx, e); err != nil {
				return err
			}
		case durable.WaitUntil, durable.WaitEvent:
			if !st.Waiting.Until.IsZero() {
				e.clock.advanceTo(st.Waiting.Until.Time)
				if _, err := e.sch.PollOnce(ctx); err != nil {
					return err
				}
				continue
			}
			var i int
			if _, err := fmt.Sscanf(st.CurrentNode, "s%d", &i); err != nil || i >= len(p.steps) || p.steps[i].kind != fzEventEmit {
				return fmt.Errorf("root waits for an event at node %q, which emits none", st.CurrentNode)
			}
			if _, err := e.rt.EmitEvent(ctx, runtime.EmitParams{Name: fmt.Sprintf("ev%d", i), SessionID: fzSession,
				Payload: fzEventPayload(i, p.steps[i].arg)}); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("the program did not end")
}

// fzEventPayload is the payload the host emits to step i's listener:
// with an odd arg, large enough to offload.
func fzEventPayload(i, arg int) map[string]any {
	pl := map[string]any{"from": "host", "i": int64(i)}
	if arg%2 == 1 {
		pl["blob"] = strings.Repeat("e", 130+arg)
	}
	return pl
}

// fzStack stacks the program's decorators over st.
func fzStack(p *fzProgram, st store.Store, arts artifact.Store) store.Store {
	if p.hashchain {
		st = hashchain.Wrap(st)
	}
	if p.offload {
		st = offload.Wrap(st, arts, offload.Config{MaxInlineBytes: 100})
	}
	return st
}

type fzRef struct {
	points int
	kinds  []string
	want   map[string]cfRun
}

var fzRefs = struct {
	sync.Mutex
	m map[string]*fzRef
}{m: map[string]*fzRef{}}

// fzReference runs the program unkilled (cached per program and store).
func fzReference(ctx context.Context, t *testing.T, p *fzProgram, backend Backend) *fzRef {
	key := p.refKey()
	fzRefs.Lock()
	ref := fzRefs.m[key]
	fzRefs.Unlock()
	if ref != nil {
		return ref
	}
	open := backend(t)
	st, closeFn := open(t)
	defer closeFn()
	w := newWorld()
	probe := Wrap(st, -1, Before)
	probeArts := WrapArtifacts(w.arts, probe)
	e, err := fzLife(w, p, 1, fzStack(p, probe, probeArts), probeArts, probe.Dead)
	if err != nil {
		t.Fatal(err)
	}
	if err := fzHost(ctx, e, p); err != nil {
		t.Fatalf("reference run: %v", err)
	}
	w.report(t)
	want := cfSnapshot(ctx, t, st)
	fzCheckFinal(ctx, t, p, st, w, want, 1)
	for k, n := range w.log.calls {
		if !strings.HasPrefix(k, "step ") && n != 1 {
			t.Errorf("reference run: effect %s executed %d times, want once", k, n)
		}
	}
	if t.Failed() {
		t.Fatalf("the reference run fails the checks: %v", want)
	}
	ref = &fzRef{points: probe.Calls(), kinds: probe.Kinds(), want: want}
	fzRefs.Lock()
	if len(fzRefs.m) > 512 {
		clear(fzRefs.m)
	}
	fzRefs.m[key] = ref
	fzRefs.Unlock()
	return ref
}

// fzCheckFinal checks the final store: the harness's ledger invariants,
// no dangling artifact ref, one completion per visit of a charging node,
// every ledger's hash chain, and (lives > 1: durable STARTED records of
// each key) no key executed more often than it was attempted, or than
// there were lives.
func fzCheckFinal(ctx context.Context, t *testing.T, p *fzProgram, st store.Store, w *cfWorld, runs map[string]cfRun, lives int) {
	t.Helper()
	cfCheckLedgers(ctx, t, st, runs)
	checkNoDanglingRefs(ctx, t, st, w.arts)
	visits := map[string]int{}
	sessionNotes := 0
	for i, s := range p.steps {
		switch s.kind {
		case fzNote:
			if s.arg%4 >= 2 {
				sessionNotes++
			}
		case fzCharge:
			visits[fzNodeName(i)] = 1
		case fzLoop:
			visits[fzNodeName(i)] = fzLoops(s.arg)
		}
	}
	if sessionNotes > 0 {
		// Every session-scoped note once in the session's memory owner.
		owner, err := st.RunGet(ctx, runtime.SessionMemoryRunID(fzSession))
		if err != nil {
			t.Errorf("session memory owner: %v", err)
		} else if n := len(memorySpans(owner)); n != sessionNotes {
			t.Errorf("session memory owner holds %d spans, want %d (one per session note)", n, sessionNotes)
		}
	}
	for id, r := range runs {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		if p.hashchain {
			if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
				t.Errorf("run %s: ledger hash chain broken: %+v", id, rep.Errors)
			}
		}
		keys := map[string]map[string]int{} // charging node → key → completions
		started := map[string]int{}
		for _, rec := range recs {
			if rec.Effect == nil || rec.Effect.Type != "charge" {
				continue
			}
			if rec.Status == durable.StepStarted {
				started[rec.IdempotencyKey]++
			}
			if rec.Status != durable.StepCompleted {
				continue
			}
			if keys[rec.NodeID] == nil {
				keys[rec.NodeID] = map[string]int{}
			}
			keys[rec.NodeID][rec.IdempotencyKey]++
		}
		want := map[string]int{}
		if r.Workflow == "fz_main" {
			want = visits
		} else if r.Workflow == "fz_child" && r.Status == durable.RunCompleted {
			child, err := st.RunGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			k, _ := runtime.AsInt(child.Vars["n"])
			want = map[string]int{"pay": fzChildPays(int(k))}
		}
		if r.Status == durable.RunCompleted {
			for node, v := range want {
				if len(keys[node]) != v {
					t.Errorf("run %s: node %s completed its charge under %d keys (%v), want %d (one per visit)", id, node, len(keys[node]), keys[node], v)
				}
			}
		}
		for node, ks := range keys {
			if _, ok := want[node]; !ok && r.Workflow == "fz_main" {
				t.Errorf("run %s: unexpected charge completed at node %s", id, node)
			}
			for k, n := range ks {
				if n != 1 {
					t.Errorf("run %s: node %s key %s completed %d times", id, node, k, n)
				}
				calls := w.log.count(k)
				if calls < 1 {
					t.Errorf("run %s: node %s key %s completed without its handler running", id, node, k)
				}
				if lives > 1 && (calls > started[k] || calls > lives) {
					t.Errorf("run %s: node %s key %s executed %d times for %d durable attempts (%d lives)", id, node, k, calls, started[k], lives)
				}
			}
		}
	}
}

// Seed option bits (fzDecode).
const (
	fzMem, fzJSON, fzSQL      = 0, 1, 2
	fzShared                  = 3 // PostgreSQL when the first kill index has bit 15 set (fzPG)
	fzPG                      = 0x8000
	fzHC, fzOff, fzClaims     = 4, 8, 64
	fzBefore, fzAfter, fzBetw = 0x00, 0x10, 0x20
)

func FuzzCrashShapes(f *testing.F) {
	// Seeds: each step kind, each store, each phase, with and without
	// the decorators and claims.
	f.Add(fzEncode(fzMem|fzBefore, 3, fzPure, 1, fzCharge, 2, fzAsk, 0))
	f.Add(fzEncode(fzJSON|fzBetw|fzHC, 5, fzCharge, 1, fzWaitPast, 0, fzWaitClock, 3, fzCharge, 4))
	f.Add(fzEncode(fzSQL|fzAfter|fzHC|fzOff, 7, fzEventEmit, 0, fzEventDeadline, 2, fzCharge, 3))
	f.Add(fzEncode(fzMem|fzAfter|fzOff|fzClaims, 4, fzChildSync, 1, fzChildAsync, 2, fzEmit, 0))
	f.Add(fzEncode(fzJSON|fzAfter|fzOff|fzHC, 9, fzNote, 1, fzNote, 2, fzBigVar, 5, fzCharge, 7))
	f.Add(fzEncode(fzSQL|fzBefore|fzClaims, 2, fzCharge, 0, fzNodeError, 0))
	f.Add(fzEncode(fzMem|fzBetw|fzHC, 11, fzLoop, 1, fzPure, 0, fzLoop, 0))
	f.Add(fzEncode(fzJSON|fzBefore|fzOff, 6, fzBigVar, 0, fzChildAsync, 3, fzEventEmit, 1))
	f.Add(fzEncode(fzSQL|fzAfter|fzOff|fzClaims, 12, fzNote, 3, fzChildSync, 0, fzAsk, 1, fzLoop, 2))
	f.Add(fzEncode(fzJSON|fzBetw, 8, fzChildSync, 3, fzEventDeadline, 0, fzNodeError, 1))
	f.Add(fzEncode(fzShared|fzAfter|fzHC|fzClaims, 5, fzCharge, 1, fzAsk, 0, fzChildAsync, 2))
	f.Add(fzEncode(fzShared|fzBetw|fzOff|fzClaims, fzPG|6, fzEventEmit, 0, fzCharge, 2, fzWaitClock, 1))
	f.Fuzz(func(t *testing.T, data []byte) { fzRunInput(t, data, 1) })
}

// FuzzCrashShapesTwice is FuzzCrashShapes with a second kill: the life
// that restarts after the first kill is killed too (at its own count of
// persistence points), so that what a restart writes to recover —
// interrupted attempts ended, a dead owner's claims taken over, follow-ups
// redone — must itself survive a kill. A key may then run once per life.
func FuzzCrashShapesTwice(f *testing.F) {
	f.Add(fzEncode2(fzMem|fzAfter, 3, 0, fzCharge, 2, fzAsk, 0, fzCharge, 3))
	f.Add(fzEncode2(fzJSON|fzBetw|fzHC|fzOff|0x80, 4, 2, fzCharge, 1, fzLoop, 1, fzChildSync, 2))
	f.Add(fzEncode2(fzSQL|fzAfter|fzClaims, 6, 1, fzChildAsync, 1, fzEventEmit, 0, fzWaitClock, 0))
	f.Add(fzEncode2(fzMem|fzBefore|fzClaims|fzOff, 5, 0x8003, fzNote, 3, fzBigVar, 1, fzEventDeadline, 1))
	f.Add(fzEncode2(fzJSON|fzAfter|0x80, 2, 0x0002, fzCharge, 0, fzEmit, 1, fzNodeError, 0))
	f.Add(fzEncode2(fzSQL|fzBetw|fzHC, 9, 0x8004, fzAsk, 0, fzWaitPast, 0, fzLoop, 2, fzPure, 4))
	f.Add(fzEncode2(fzShared|fzAfter|fzClaims, 4, 0x0003, fzCharge, 1, fzChildSync, 1, fzEventDeadline, 0))
	f.Add(fzEncode2(fzShared|fzBefore|fzHC|fzClaims|0x80, fzPG|3, 0x8002, fzAsk, 1, fzCharge, 0, fzLoop, 1))
	f.Fuzz(func(t *testing.T, data []byte) { fzRunInput(t, data, 2) })
}

func fzRunInput(t *testing.T, data []byte, nkills int) {
	p, ok := fzDecode(data, nkills)
	if !ok {
		return
	}
	t.Log(p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A hang fails loudly (with the program) instead of blocking.
	watchdog := time.AfterFunc(120*time.Second, func() { panic(fmt.Sprintf("hang: %v", p)) })
	defer watchdog.Stop()
	fzCheckProgram(ctx, t, p)
}

// fzCheckProgram runs the reference, then the program killed at its
// points (one life per kill, each restarted on the same data), then a
// last life that finishes it, and checks the properties.
func fzCheckProgram(ctx context.Context, t *testing.T, p *fzProgram) {
	backend := cfBackends()[p.backend].fresh
	ref := fzReference(ctx, t, p, backend)
	if ref.points == 0 {
		t.Fatal("the reference run made no persistence call")
	}
	open := backend(t)
	w := newWorld()
	durableDone := map[string]int{}
	life := 1
	for k, kill := range p.kills {
		st, closeFn := open(t)
		point := kill.point % ref.points
		phase := kill.phase
		if phase == Between && store.IsAtomic(st) {
			phase = Before
		}
		killer := Wrap(st, point, phase)
		killArts := WrapArtifacts(w.arts, killer)
		e, err := fzLife(w, p, life, fzStack(p, killer, killArts), killArts, killer.Dead)
		if err != nil {
			t.Fatal(err)
		}
		life++
		herr := fzHost(ctx, e, p)
		closeFn()
		if !killer.Dead() {
			if k == 0 {
				t.Skipf("the kill at point %d never happened (the run took another path)", point)
			}
			if herr != nil {
				t.Fatalf("life %d (not killed): %v", life-1, herr)
			}
			t.Logf("kill %d at %d never happened: life %d finished", k, point, life-1)
			break
		}
		kinds := killer.Kinds()
		t.Logf("life %d killed at %d (%s) %s", life-1, point, kinds[len(kinds)-1], phase)
		st, closeFn = open(t)
		for _, id := range cfAllRuns(ctx, t, st) {
			recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if r.Status == durable.StepCompleted && r.IdempotencyKey != "" {
					if _, ok := durableDone[r.IdempotencyKey]; !ok {
						durableDone[r.IdempotencyKey] = w.log.count(r.IdempotencyKey)
					}
				}
			}
		}
		closeFn()
	}

	st, closeFn := open(t)
	defer closeFn()
	e, err := fzLife(w, p, life, fzStack(p, st, w.arts), w.arts, func() bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if err := fzHost(ctx, e, p); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	got := cfSnapshot(ctx, t, st)
	if !reflect.DeepEqual(got, ref.want) {
		t.Errorf("after restart the runs differ from the reference run:\n got %v\nwant %v", got, ref.want)
	}
	for k, n := range durableDone {
		if c := w.log.count(k); c != n {
			t.Errorf("effect %s re-executed after its completion was durable (%d → %d)", k, n, c)
		}
	}
	w.report(t)
	fzCheckFinal(ctx, t, p, st, w, got, life)
}
