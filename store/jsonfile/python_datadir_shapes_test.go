package jsonfile_test

// A data directory written by the Python
// runtime's JsonFileRunStore / JsonlLedgerStore opens, lists, queries and
// writes back as Python reads it. Spec runtime-model.md §4.1, §4.3, §8;
// Python abstractruntime/storage/json_files.py (JsonFileRunStore.load:
// vars None -> {}, allow_free_text default True; JsonlLedgerStore.list:
// lines stripped, blank lines skipped).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

func sortedRunIDs(runs []*durable.RunState) []string {
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	slices.Sort(ids)
	return ids
}

// TestPythonDataDirEveryStatusAndReason: runs in every status and
// wait reason, written by Python 3.11's json.dump(indent=2,
// ensure_ascii=False) (one with ensure_ascii=True, one compact as newer
// writers do, one with a missing allow_free_text and unknown members, one
// with vars null, one without the optional members, one with NaN,
// ±Infinity, a 70-bit int and 1e+16) are listed by status, reason,
// workflow, session and parent, their deadlines are due in order, and a
// commit writes NaN/Infinity/big numbers back as Python wrote them.
func TestPythonDataDirEveryStatusAndReason(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := pyDataDirFiles(t)
	for name, text := range files {
		writeFile(t, filepath.Join(dir, name), text)
	}
	s := open(t, dir, true)
	ctx := t.Context()

	all, err := s.RunList(ctx, &store.RunListParams{Limit: 1000})
	if err != nil || len(all) != len(files) {
		t.Fatalf("RunList = %d runs, %v; want %d", len(all), err, len(files))
	}
	for _, c := range []struct {
		p    store.RunListParams
		want []string
	}{
		{store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitUser}, []string{"r_ascii", "r_extra", "r_user"}},
		{store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitUntil}, []string{"r_compact", "r_until_future", "r_until_past"}},
		{store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitEvent}, []string{"r_event", "r_event_until"}},
		{store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitJob}, []string{"r_job"}},
		{store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitSubworkflow}, []string{"r_sub"}},
		{store.RunListParams{Status: durable.RunRunning}, []string{"r_child", "r_nan", "r_noopt", "r_running", "r_varsnull"}},
		{store.RunListParams{Status: durable.RunCompleted}, []string{"r_done"}},
		{store.RunListParams{Status: durable.RunFailed}, []string{"r_failed"}},
		{store.RunListParams{Status: durable.RunCancelled}, []string{"r_cancelled"}},
		{store.RunListParams{WorkflowID: "wf_child"}, []string{"r_child"}},
		{store.RunListParams{ParentID: "r_sub"}, []string{"r_child"}},
		{store.RunListParams{WaitKeys: []string{"evt:session:s1:go"}}, []string{"r_event"}},
	} {
		got, err := s.RunList(ctx, &c.p)
		if err != nil || !slices.Equal(sortedRunIDs(got), c.want) {
			t.Errorf("RunList(%+v) = %v, %v; want %v", c.p, sortedRunIDs(got), err, c.want)
		}
	}
	due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	var dueIDs []string
	for _, d := range due {
		dueIDs = append(dueIDs, d.RunID)
	}
	if want := []string{"r_until_past", "r_event_until", "r_compact"}; err != nil || !slices.Equal(dueIDs, want) {
		t.Errorf("RunListDue = %v, %v; want %v (earliest first; Z and +00:00 both read)", dueIDs, err, want)
	}
	if ch, err := s.RunListChildren(ctx, "r_sub", ""); err != nil || len(ch) != 1 || ch[0].RunID != "r_child" {
		t.Errorf("RunListChildren(r_sub) = %v, %v", sortedRunIDs(ch), err)
	}
	for sess, want := range map[string][]string{"s1": {"r_event", "r_user"}, "sé": {"r_ascii"}} {
		rows, err := s.RunIndex(ctx, &store.RunIndexParams{SessionID: sess})
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.RunID)
		}
		slices.Sort(ids)
		if err != nil || !slices.Equal(ids, want) {
			t.Errorf("RunIndex(session %q) = %v, %v; want %v", sess, ids, err, want)
		}
	}
	if r, err := s.RunGet(ctx, "r_extra"); err != nil || r.Waiting == nil || !r.Waiting.AllowFreeText {
		t.Errorf("r_extra (no allow_free_text) = %+v, %v; want allow_free_text true", r, err)
	}
	if r, err := s.RunGet(ctx, "r_varsnull"); err != nil || r.Vars == nil {
		t.Errorf("r_varsnull = %+v, %v; want vars {}", r, err)
	}
	if r, err := s.RunGet(ctx, "r_ascii"); err != nil || r.Waiting == nil || r.Waiting.Prompt != "héllo 😀" {
		t.Errorf("r_ascii = %+v, %v; want the \\u escapes decoded", r, err)
	}

	// Written back unchanged: the literals Python wrote stay as they were.
	for _, id := range []string{"r_nan", "r_extra", "r_compact", "r_varsnull", "r_noopt"} {
		r, err := s.RunGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
			t.Fatalf("commit %s: %v", id, err)
		}
	}
	text := readFile(t, filepath.Join(dir, "run_r_nan.json"))
	for _, want := range []string{`"a": NaN`, `"b": Infinity`, `"c": -Infinity`, `"big": 1180591620717411303424`,
		`"f": 1e+16`, `"g": 1e-07`, `"u": "é😀"`} {
		if !strings.Contains(text, want) {
			t.Errorf("run_r_nan.json written back lacks %s:\n%s", want, text)
		}
	}
	// What we wrote, Python reads (json.load, then JsonFileRunStore.load's
	// accesses), when a python3 is at hand.
	if py, err := exec.LookPath("python3"); err == nil {
		script := `import json,sys
keys = ["run_id","workflow_id","status","current_node","vars","waiting","output","error","created_at","updated_at","actor_id","session_id","parent_run_id"]
for p in sys.argv[1:]:
    d = json.load(open(p, encoding="utf-8"))
    assert list(d) == keys, (p, list(d))
    w = d["waiting"]
    if w is not None:
        assert list(w) == ["reason","wait_key","until","resume_to_node","result_key","prompt","choices","allow_free_text","details"], (p, list(w))
print("ok")`
		args := []string{"-c", script}
		for _, id := range []string{"r_nan", "r_extra", "r_compact", "r_varsnull", "r_noopt"} {
			args = append(args, filepath.Join(dir, "run_"+id+".json"))
		}
		if out, err := exec.Command(py, args...).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Errorf("python3 cannot read the files written back: %v\n%s", err, out)
		}
	}
	closeStore(t, s)
	s2 := open(t, dir, true)
	if r, err := s2.RunGet(ctx, "r_compact"); err != nil || r.Waiting == nil || !r.Waiting.Until.Equal(time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("reopened r_compact = %+v, %v", r, err)
	}
}

// pyLedgerLine is a StepRecord line as JsonlLedgerStore.append writes it
// (json.dumps(asdict(record), ensure_ascii=False)); the prompt holds a raw
// U+2028, which JSON leaves unescaped.
func pyLedgerLine(runID string, i int, result string) string {
	return fmt.Sprintf(`{"run_id": %q, "step_id": "s%d", "node_id": "n1", "status": "completed", "effect": {"type": "ask_user", "payload": {"prompt": "x`+"\u2028"+`y"}, "result_key": "r"}, "result": %s, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "k%d", "prev_hash": null, "record_hash": null, "signature": null}`,
		runID, i, result, i)
}

// TestPythonLedgerShapes: ledgers as Python leaves them — the last
// record without its newline, CRLF line ends (Python's text mode on
// Windows), blank and whitespace-only lines, NaN in a result, a raw
// U+2028 in a string — list their records in order (Python's list strips
// each line and skips blank ones), find completed keys, and take an
// append on a line of its own.
func TestPythonLedgerShapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"nonl":  pyLedgerLine("nonl", 1, `{"v": 1}`) + "\n" + pyLedgerLine("nonl", 2, `{"v": 2}`),
		"crlf":  pyLedgerLine("crlf", 1, `{"v": 1}`) + "\r\n" + pyLedgerLine("crlf", 2, `{"v": 2}`) + "\r\n",
		"blank": "\n" + pyLedgerLine("blank", 1, `{"x": NaN}`) + "\n   \n" + pyLedgerLine("blank", 2, `{"v": 2}`) + "\n\n",
	}
	for id, text := range files {
		writeFile(t, filepath.Join(dir, "ledger_"+id+".jsonl"), text)
	}
	s := open(t, dir, true)
	ctx := t.Context()
	for id := range files {
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil || len(recs) != 2 || recs[0].StepID != "s1" || recs[1].StepID != "s2" || recs[1].Seq != 2 {
			t.Errorf("%s: LedgerList = %d records, %v", id, len(recs), err)
			continue
		}
		if p := recs[0].Effect.Payload["prompt"]; p != "x\u2028y" {
			t.Errorf("%s: prompt = %q", id, p)
		}
		if rec, err := s.LedgerFindCompleted(ctx, id, "k2"); err != nil || rec == nil || rec.Seq != 2 {
			t.Errorf("%s: LedgerFindCompleted(k2) = %+v, %v", id, rec, err)
		}
		add := &durable.StepRecord{RunID: id, StepID: "s3", NodeID: "n1", Status: durable.StepCompleted, Attempt: 1}
		if err := s.LedgerAppend(ctx, id, []*durable.StepRecord{add}); err != nil || add.Seq != 3 {
			t.Errorf("%s: append = seq %d, %v; want 3", id, add.Seq, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "ledger_"+id+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		// Python's reader: one json.loads per stripped non-blank line.
		var lines int
		for _, l := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if lines != 3 {
			t.Errorf("%s: file holds %d non-blank lines after the append, want 3 (the append on a line of its own):\n%q", id, lines, data)
		}
	}
	closeStore(t, s)
	s2 := open(t, dir, true)
	for id := range files {
		if n, err := s2.LedgerCount(ctx, id); err != nil || n != 3 {
			t.Errorf("%s: reopened count = %d, %v; want 3", id, n, err)
		}
	}
}

// pyDataDirFiles reads testdata/python_datadir: run files exactly as
// Python 3.11's json.dump(..., indent=2) wrote them (one compact, as newer
// writers do), by file name.
func pyDataDirFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := filepath.Join("testdata", "python_datadir")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}
