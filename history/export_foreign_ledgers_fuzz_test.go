package history_test

// FuzzExportForeignLedgers: ledgers of fuzzed records (as a Python writer
// could leave them: unknown members, odd types the reader tolerates,
// ask/answer pairs, subruns) exported with history.Export and read into
// session turns.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
)

var fzRunIDs = []string{"root", "child", "turn0"}

// fzRuns are the runs of the fuzzed session: turn0 (an earlier turn),
// root (the exported turn) and its child.
func fzRuns(vars, output map[string]any, sel uint8) []*durable.RunState {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	statuses := []durable.RunStatus{durable.RunCompleted, durable.RunRunning, durable.RunFailed, durable.RunWaiting}
	root := &durable.RunState{RunID: "root", WorkflowID: "chat", Status: statuses[int(sel)%len(statuses)], CurrentNode: "n",
		Vars: vars, Output: output, SessionID: "sess", CreatedAt: durable.NewTime(at.Add(time.Minute)), UpdatedAt: durable.NewTime(at.Add(2 * time.Minute))}
	if root.Status == durable.RunWaiting {
		root.Waiting = &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k", Prompt: "?"}
	}
	child := &durable.RunState{RunID: "child", WorkflowID: "helper", Status: durable.RunCompleted, CurrentNode: "n",
		Vars: map[string]any{}, ParentRunID: "root", SessionID: "sess", CreatedAt: durable.NewTime(at.Add(90 * time.Second)), UpdatedAt: durable.NewTime(at.Add(100 * time.Second))}
	turn0 := &durable.RunState{RunID: "turn0", WorkflowID: "chat", Status: durable.RunCompleted, CurrentNode: "n",
		Vars: map[string]any{"prompt": "first"}, Output: map[string]any{"answer": "one"}, SessionID: "sess",
		CreatedAt: durable.NewTime(at), UpdatedAt: durable.NewTime(at.Add(time.Second))}
	if sel&0x40 != 0 {
		turn0.Vars = map[string]any{"context": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}}
	}
	return []*durable.RunState{turn0, root, child}
}

// fzLines splits the fuzzed ledger text into lines, each assigned to one
// of fzRunIDs in turn.
func fzLines(raw []byte) map[string][][]byte {
	out := map[string][][]byte{}
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rid := fzRunIDs[i%len(fzRunIDs)]
		out[rid] = append(out[rid], line)
	}
	return out
}

func fzObject(doc []byte) map[string]any {
	m, err := pyjson.DecodeObject(doc)
	if err != nil {
		return nil
	}
	return m
}

// fzOpen builds the store: through the memory store's appends (records
// decoded, then written), or as a JSON-file directory whose ledger files
// hold the lines as written.
func fzOpen(t *testing.T, ctx context.Context, runs []*durable.RunState, lines map[string][][]byte, jsonFiles bool) (store.Store, bool) {
	if !jsonFiles {
		st := memory.New()
		for _, r := range runs {
			if err := st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
				return nil, false // vars a store refuses: not this target's concern
			}
		}
		for _, rid := range fzRunIDs {
			for _, line := range lines[rid] {
				rec, err := durable.UnmarshalRecord(line)
				if err != nil {
					continue
				}
				// A store may refuse a record (not JSON-encodable); the rest
				// of the ledger goes on.
				_ = st.LedgerAppend(ctx, rid, []*durable.StepRecord{rec})
			}
		}
		return st, true
	}
	dir := t.TempDir()
	st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if err := st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			st.Close()
			return nil, false
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, rid := range fzRunIDs {
		var b bytes.Buffer
		for _, line := range lines[rid] {
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, "ledger_"+rid+".jsonl"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err = jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, true
}

// fzFaultStore fails its n-th read (counting from 1; never when n ≤ 0)
// and records which run (or session) that read was for.
type fzFaultStore struct {
	store.Store
	n, calls int
	failedOn string
}

var errFzInjected = errors.New("injected read failure")

func (s *fzFaultStore) fail(id string) error {
	s.calls++
	if s.calls == s.n {
		s.failedOn = id
		return errFzInjected
	}
	return nil
}

func (s *fzFaultStore) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if err := s.fail(id); err != nil {
		return nil, err
	}
	return s.Store.RunGet(ctx, id)
}

func (s *fzFaultStore) RunListChildren(ctx context.Context, id string, st durable.RunStatus) ([]*durable.RunState, error) {
	if err := s.fail(id); err != nil {
		return nil, err
	}
	return s.Store.RunListChildren(ctx, id, st)
}

func (s *fzFaultStore) RunIndex(ctx context.Context, p *store.RunIndexParams) ([]store.RunIndexRow, error) {
	if err := s.fail(p.SessionID); err != nil {
		return nil, err
	}
	return s.Store.RunIndex(ctx, p)
}

func (s *fzFaultStore) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	if err := s.fail(p.RunID); err != nil {
		return nil, err
	}
	return s.Store.LedgerList(ctx, p)
}

func (s *fzFaultStore) LedgerCount(ctx context.Context, id string) (int64, error) {
	if err := s.fail(id); err != nil {
		return 0, err
	}
	return s.Store.LedgerCount(ctx, id)
}

func fzRecordLine(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

func FuzzExportForeignLedgers(f *testing.F) {
	base := func(step, status, typ string, payload, result any) map[string]any {
		m := map[string]any{"run_id": "root", "step_id": step, "node_id": "n", "status": status,
			"started_at": "2026-03-04T05:07:07.000001+00:00", "ended_at": "2026-03-04T05:07:08+00:00",
			"attempt": 1, "result": result, "error": nil, "actor_id": nil, "session_id": "sess", "idempotency_key": nil,
			"prev_hash": nil, "record_hash": nil, "signature": nil}
		if typ != "" {
			m["effect"] = map[string]any{"type": typ, "payload": payload, "result_key": "_temp.x"}
		} else {
			m["effect"] = nil
		}
		return m
	}
	ask := base("a1", "waiting", "ask_user", map[string]any{"prompt": "Continue?"}, map[string]any{"wait": map[string]any{"reason": "user"}})
	answer := base("a1", "completed", "ask_user", map[string]any{"prompt": "Continue?"}, map[string]any{"answer": "yes"})
	llm := base("l1", "completed", " llm_call ", map[string]any{"prompt": "p"},
		map[string]any{"content": "c", "usage": map[string]any{"prompt_tokens": "7", "completion_tokens": 2.9, "total": true}})
	sub := base("s1", "completed", "start_subworkflow", map[string]any{"workflow_id": "helper"}, map[string]any{"sub_run_id": "child", "output": map[string]any{"answer": "sub"}})
	odd := base("o1", "completed", "answer_user", map[string]any{"message": 12}, nil)
	odd["attempt"] = "2"
	odd["started_at"] = "yesterday"
	odd["ended_at"] = "2026-03-04T05:07:08Z"
	odd["future_member"] = map[string]any{"x": []any{1.5, nil}}
	tools := base("t1", "completed", "tool_calls", map[string]any{"tool_calls": []any{nil, map[string]any{"name": "a"}, "b"}}, map[string]any{"output": "  done  "})
	started := base("t2", "started", "tool_calls", map[string]any{}, nil)
	delete(started, "ended_at")
	started["node_id"] = nil
	lines := strings.Join([]string{fzRecordLine(ask), fzRecordLine(llm), fzRecordLine(sub), fzRecordLine(answer), fzRecordLine(odd),
		fzRecordLine(tools), fzRecordLine(started), `{"not":"a record"}`, `garbage`}, "\n")
	vars := `{"prompt":"<runtime_metadata>{\"m\":1}</runtime_metadata> hello","context":{"attachments":[{"a":1},2]},"_runtime":{"workflow_snapshot":{"artifact_id":7}}}`
	f.Add([]byte(lines), []byte(vars), []byte(`{"result":{"answer":"  x "},"meta":{"k":1}}`), uint8(0), uint8(3))
	f.Add([]byte(lines), []byte(`{"context":{"messages":[{"role":"user","content":"q","metadata":{"runtime_metadata":{"a":""}}}]}}`), []byte(`{"answer":{"$artifact":"0123456789abcdef0123456789abcdef"}}`), uint8(0x85), uint8(1))
	f.Add([]byte(fzRecordLine(llm)+"\n"+fzRecordLine(llm)), []byte(`{}`), []byte(`null`), uint8(0x42), uint8(0))
	f.Add([]byte(`{"run_id":null,"step_id":1,"status":"completed","effect":{"type":"llm_call","payload":[]},"result":{"usage":{"total_tokens":1e400}}}`), []byte(`{"input_data":{"prompt":"p"}}`), []byte(`{}`), uint8(0x80), uint8(2))
	huge := base("h1", "completed", "llm_call", map[string]any{}, map[string]any{"usage": map[string]any{"input_tokens": json.Number("9223372036854775807"), "output_tokens": 1}})
	f.Add([]byte(fzRecordLine(huge)+"\n"+fzRecordLine(huge)+"\n"+fzRecordLine(huge)+"\n"+fzRecordLine(huge)), []byte(`{}`), []byte(`{}`), uint8(0), uint8(9))
	f.Fuzz(func(t *testing.T, ledgerText, varsDoc, outputDoc []byte, sel, tailSel uint8) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		vars := fzObject(varsDoc)
		if vars == nil {
			vars = map[string]any{}
		}
		runs := fzRuns(vars, fzObject(outputDoc), sel)
		lines := fzLines(ledgerText)
		st, ok := fzOpen(t, ctx, runs, lines, sel&0x80 != 0)
		if !ok {
			return
		}
		arts := artifact.NewMemory()
		src := history.Source{Runs: st, Ledger: st, Artifacts: arts}
		clock := func() time.Time { return time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC) }
		opts := history.Options{IncludeSession: true, LedgerMode: history.LedgerFull, Now: clock, MaxInlineBytes: 64}
		bundle, err := history.Export(ctx, src, "root", opts)
		if err != nil {
			t.Fatalf("export over healthy stores failed: %v", err)
		}

		// JSON-safe, in pyjson.Decode's form, re-encoding stably.
		enc, err := json.Marshal(bundle)
		if err != nil {
			t.Fatalf("bundle does not encode: %v", err)
		}
		back, err := pyjson.Decode(enc)
		if err != nil {
			t.Fatalf("bundle does not decode: %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(back, any(bundle)) {
			b2, _ := json.Marshal(back)
			t.Fatalf("bundle is not in decoded form:\n%s\n%s", enc, b2)
		}
		enc2, _ := json.Marshal(back)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("re-encoding differs:\n%s\n%s", enc, enc2)
		}
		// The same export again gives the same bundle (into a fresh
		// artifact store: a bundle lists the artifacts an earlier export
		// made).
		src2 := src
		src2.Artifacts = artifact.NewMemory()
		again, err := history.Export(ctx, src2, "root", opts)
		if err != nil {
			t.Fatal(err)
		}
		if enc3, _ := json.Marshal(again); !bytes.Equal(enc, enc3) {
			t.Fatalf("a second export differs:\n%s\n%s", enc, enc3)
		}

		// Every record of each exported run appears once, in ledger order,
		// as the store lists it, in the items and the timeline.
		ledgers := obj(t, bundle["ledgers"], "ledgers")
		if got := keys(ledgers); !reflect.DeepEqual(got, []string{"child", "root"}) {
			t.Fatalf("ledgers of %v", got)
		}
		timeline := list(t, bundle["timeline"], "timeline")
		ti := 0
		listed := map[string][]*durable.StepRecord{}
		for _, rid := range []string{"root", "child"} {
			recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: rid})
			if err != nil {
				t.Fatal(err)
			}
			listed[rid] = recs
			sec := ledgerOf(t, bundle, rid)
			items := list(t, sec["items"], rid+".items")
			if len(items) != len(recs) {
				t.Fatalf("run %s: %d items, %d records", rid, len(items), len(recs))
			}
			prev := int64(0)
			for i, it := range items {
				item := obj(t, it, "item")
				c := num(t, item["cursor"], "cursor")
				if c != recs[i].Seq || c <= prev {
					t.Errorf("run %s item %d: cursor %d, record seq %d, previous %d", rid, i, c, recs[i].Seq, prev)
				}
				prev = c
				if want := wire(t, recs[i].JSONValue(true)); !reflect.DeepEqual(item["record"], want) {
					t.Errorf("run %s item %d:\n got %v\nwant %v", rid, i, item["record"], want)
				}
				if ti >= len(timeline) {
					t.Fatalf("timeline has %d entries, too few", len(timeline))
				}
				te := obj(t, timeline[ti], "timeline entry")
				if te["run_id"] != rid || num(t, te["cursor"], "timeline cursor") != c {
					t.Errorf("timeline entry %d is %v, want run %s cursor %d", ti, te, rid, c)
				}
				ti++
			}
			total := num(t, sec["total"], "total")
			if len(recs) > 0 {
				if s, e := num(t, sec["cursor_start"], "start"), num(t, sec["cursor_end"], "end"); s != recs[0].Seq || e != recs[len(recs)-1].Seq || total < e {
					t.Errorf("run %s: start %d end %d total %d for seqs %d..%d", rid, s, e, total, recs[0].Seq, recs[len(recs)-1].Seq)
				}
			}
		}
		if ti != len(timeline) {
			t.Errorf("timeline has %d entries, %d records", len(timeline), ti)
		}

		// A tail window holds the last records of the full export.
		tail := 1 + int(tailSel%6)
		topts := opts
		topts.LedgerMode, topts.LedgerMaxItems, topts.IncludeSession = history.LedgerTail, tail, sel&1 != 0
		tb, err := history.Export(ctx, src, "root", topts)
		if err != nil {
			t.Fatalf("tail export: %v", err)
		}
		for _, rid := range []string{"root", "child"} {
			full := list(t, ledgerOf(t, bundle, rid)["items"], "items")
			got := list(t, ledgerOf(t, tb, rid)["items"], "items")
			want := full[max(0, len(full)-tail):]
			if !reflect.DeepEqual(got, want) {
				t.Errorf("run %s tail %d:\n got %v\nwant %v", rid, tail, got, want)
			}
			for _, k := range []string{"total", "cursor_end"} {
				if a, b := ledgerOf(t, tb, rid)[k], ledgerOf(t, bundle, rid)[k]; !reflect.DeepEqual(a, b) {
					t.Errorf("run %s tail %s %v, full %v", rid, k, a, b)
				}
			}
		}

		// Session turns: oldest first, each once, the exported run among
		// them unless a chat rule left it out; stats bounded by the
		// records.
		session := obj(t, bundle["session"], "session")
		turns := list(t, session["turns"], "turns")
		seen := map[string]bool{}
		var order []string
		for _, tv := range turns {
			turn := obj(t, tv, "turn")
			id, _ := turn["run_id"].(string)
			if seen[id] || (id != "root" && id != "turn0") {
				t.Fatalf("turns %v", turns)
			}
			seen[id] = true
			order = append(order, id)
			stats := obj(t, turn["stats"], "stats")
			n := len(listed["root"]) + len(listed["child"])
			if id == "turn0" {
				recs, _ := st.LedgerList(ctx, &store.LedgerListParams{RunID: "turn0"})
				n = len(recs)
			}
			if c := num(t, stats["llm_calls"], "llm_calls") + num(t, stats["tool_calls"], "tool_calls"); c < 0 {
				t.Errorf("negative counts %v", stats)
			}
			if c := num(t, stats["llm_calls"], "llm_calls"); c > int64(n) {
				t.Errorf("turn %s: %d llm calls from %d records", id, c, n)
			}
			usage := obj(t, stats["usage"], "usage")
			for _, k := range []string{"input_tokens", "output_tokens", "total_tokens"} {
				if c := num(t, usage[k], k); c < 0 {
					t.Errorf("turn %s: %s = %d", id, k, c)
				}
			}
			if tok, ok := stats["tok_s"].(json.Number); ok {
				if f, err := tok.Float64(); err != nil || f < 0 {
					t.Errorf("turn %s: tok_s %v", id, tok)
				}
			}
			if d := num(t, stats["duration_ms"], "duration"); d < 0 {
				t.Errorf("turn %s: duration %d", id, d)
			}
		}
		if fmt.Sprint(order) != "[turn0 root]" && fmt.Sprint(order) != "[root]" && fmt.Sprint(order) != "[turn0]" {
			t.Errorf("turn order %v", order)
		}
		if !seen["root"] && !(sel&0x40 != 0 && classifiedChat(vars) == false) {
			t.Errorf("the exported run is not a turn: %v (vars %v)", order, vars)
		}

		// A read that fails fails the export, naming the run (or the
		// session) it was for.
		count := &fzFaultStore{Store: st}
		if _, err := history.Export(ctx, history.Source{Runs: count, Ledger: count}, "root", opts); err != nil {
			t.Fatal(err)
		}
		fs := &fzFaultStore{Store: st, n: 1 + int(tailSel>>3)%count.calls}
		_, err = history.Export(ctx, history.Source{Runs: fs, Ledger: fs}, "root", opts)
		if !errors.Is(err, errFzInjected) {
			t.Fatalf("read %d of %d (for %q) failed, export gave %v", fs.n, count.calls, fs.failedOn, err)
		}
		if msg := strings.TrimPrefix(err.Error(), `history: export run "root": `); !strings.Contains(msg, fs.failedOn) && fs.failedOn != "root" {
			t.Errorf("read %d failed for %q, error does not name it: %v", fs.n, fs.failedOn, err)
		}
	})
}

// classifiedChat is whether vars make a chat turn (vars.context.messages
// is a list).
func classifiedChat(vars map[string]any) bool {
	c, _ := vars["context"].(map[string]any)
	_, ok := c["messages"].([]any)
	return ok
}
