package history_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// doneRecord is a completed record of runID at exportAt.
func doneRecord(runID, step string, eff *durable.Effect, result map[string]any) *durable.StepRecord {
	return &durable.StepRecord{RunID: runID, StepID: step, NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		StartedAt: durable.NewTime(exportAt), EndedAt: durable.NewTime(exportAt), Effect: eff, Result: result}
}

// putRunWithRecords creates r in st with recs as its ledger.
func putRunWithRecords(t *testing.T, st store.RunStore, r *durable.RunState, recs ...*durable.StepRecord) {
	t.Helper()
	if err := st.RunCommit(context.Background(), &store.CommitParams{Run: r, Create: true, Records: recs}); err != nil {
		t.Fatal(err)
	}
}

// exportTurn exports run id of st (with arts when not nil) with its
// session section and returns its only turn.
func exportTurn(t *testing.T, st *memory.Store, arts artifact.Store, id string) map[string]any {
	t.Helper()
	src := history.Source{Runs: st, Ledger: st}
	if arts != nil {
		src.Artifacts = arts
	}
	b, err := history.Export(context.Background(), src, id, history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 1 {
		t.Fatalf("turns %v, want one", turns)
	}
	return obj(t, turns[0], "turn")
}

// Parent links that loop (a foreign store's damage: r1's parent is its
// own child) still list each run once: without the seen set the walk
// would go round until MaxSubruns, repeating both runs' timelines.
func TestExportCyclicParentLinksListEachRunOnce(t *testing.T) {
	st := memory.New()
	putRunWithRecords(t, st, completedRun("r1", "c1", exportAt), doneRecord("r1", "s1", nil, map[string]any{}))
	putRunWithRecords(t, st, completedRun("c1", "r1", exportAt), doneRecord("c1", "s1", nil, map[string]any{}))
	b, err := history.Export(context.Background(), history.Source{Runs: st, Ledger: st}, "r1", history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := timelineRuns(t, b); len(got) != 2 {
		t.Fatalf("timeline runs %v, want r1 and c1 once each", got)
	}
}

// appendingLedger appends extra to the ledger right after the first count,
// as a run still ticking does between the tail export's count and list.
type appendingLedger struct {
	*memory.Store
	extra *durable.StepRecord
}

func (l *appendingLedger) LedgerCount(ctx context.Context, runID string) (int64, error) {
	n, err := l.Store.LedgerCount(ctx, runID)
	if err == nil && l.extra != nil {
		err = l.Store.LedgerAppend(ctx, runID, []*durable.StepRecord{l.extra})
		l.extra = nil
	}
	return n, err
}

// A record appended between the tail window's count and its listing is in
// the window, so total covers it (total ≥ cursor_end): a total left at the
// stale count would say the ledger ends before its own last cursor.
func TestTailBundleTotalCoversRecordAppendedAfterCount(t *testing.T) {
	st := memory.New()
	putRunWithRecords(t, st, completedRun("r1", "", exportAt),
		doneRecord("r1", "s1", nil, map[string]any{}), doneRecord("r1", "s2", nil, map[string]any{}),
		doneRecord("r1", "s3", nil, map[string]any{}))
	ledger := &appendingLedger{Store: st, extra: doneRecord("r1", "s4", nil, map[string]any{})}
	b, err := history.Export(context.Background(), history.Source{Runs: st, Ledger: ledger}, "r1",
		history.Options{LedgerMaxItems: 2})
	if err != nil {
		t.Fatal(err)
	}
	l := ledgerOf(t, b, "r1")
	if got := cursors(t, l); len(got) != 2 || got[1] != 4 {
		t.Fatalf("cursors %v, want [3 4]", got)
	}
	if total := num(t, l["total"], "total"); total != 4 {
		t.Fatalf("total = %d, want 4 (the last cursor listed)", total)
	}
}

// A record with an end but no start has no duration (Python computes one
// only when both times parse): measuring from the zero time would export
// a duration of two thousand years.
func TestTimelineRecordWithoutStartHasNoDuration(t *testing.T) {
	st := memory.New()
	rec := doneRecord("r1", "s1", nil, map[string]any{})
	rec.StartedAt = durable.Time{}
	putRunWithRecords(t, st, completedRun("r1", "", exportAt), rec)
	b, err := history.Export(context.Background(), history.Source{Runs: st, Ledger: st}, "r1", history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tl := list(t, b["timeline"], "timeline")
	if len(tl) != 1 {
		t.Fatalf("timeline %v", tl)
	}
	if d := obj(t, tl[0], "entry")["duration_ms"]; d != nil {
		t.Fatalf("duration_ms = %v, want null for a record without started_at", d)
	}
}

// A snapshot ref whose artifact_id is null or false names no artifact
// (Python: str(artifact_id or "").strip()): str() of it ("None",
// "False") is not an id.
func TestBundleDropsSnapshotRefWithFalsyArtifactID(t *testing.T) {
	for _, id := range []any{nil, false} {
		st := memory.New()
		r := completedRun("r1", "", exportAt)
		r.Vars = map[string]any{"_runtime": map[string]any{"workflow_snapshot": map[string]any{
			"workflow_id": "w", "format": "visualflow", "artifact_id": id}}}
		putRunAsIs(t, st, r)
		b, err := history.Export(context.Background(), history.Source{Runs: st, Ledger: st}, "r1", history.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if b["workflow_snapshot"] != nil {
			t.Errorf("artifact_id %v: workflow_snapshot = %v, want null", id, b["workflow_snapshot"])
		}
	}
}

// With MaxInlineBytes 0 the offload threshold is the default 262144
// bytes: a 10 KB input value stays inline.
func TestExportDefaultInlineThresholdKeepsMidSizedInput(t *testing.T) {
	st := memory.New()
	mid := strings.Repeat("m", 10_000)
	r := completedRun("r1", "", exportAt)
	r.Vars = map[string]any{"mid": mid}
	putRunAsIs(t, st, r)
	b, err := history.Export(context.Background(), history.Source{Runs: st, Ledger: st, Artifacts: artifact.NewMemory()},
		"r1", history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj(t, b["input_data"], "input_data")["mid"]; got != mid {
		t.Fatalf("input_data.mid is %T, want the 10 KB value inline", got)
	}
}

// The ledger fallback of a turn's answer reads the turn's own run, not
// the last run of its tree: a child's ledger without an answer must not
// hide the root's ANSWER_USER.
func TestSessionAnswerFromRootLedgerNotChilds(t *testing.T) {
	st := memory.New()
	r := sessionRoot()
	putRunWithRecords(t, st, r, doneRecord("r1", "s1",
		&durable.Effect{Type: durable.EffectAnswerUser, Payload: map[string]any{"message": "from root"}},
		map[string]any{"message": "from root"}))
	putRunWithRecords(t, st, completedRun("c1", "r1", exportAt), doneRecord("c1", "s1", nil, map[string]any{}))
	if got := exportTurn(t, st, nil, "r1")["answer"]; got != "from root" {
		t.Fatalf("answer = %v, want the root's ANSWER_USER message", got)
	}
}

// A chat turn's prompt is the last message whose role is "user" once
// stripped, as Python compares it.
func TestSessionPromptFromPaddedUserRole(t *testing.T) {
	st := memory.New()
	r := sessionRoot()
	r.Vars = map[string]any{"context": messages(map[string]any{"role": " user ", "content": "hello"})}
	putRunAsIs(t, st, r)
	if got := exportTurn(t, st, nil, "r1")["prompt"]; got != "hello" {
		t.Fatalf("prompt = %v, want hello", got)
	}
}

// A turn's answer falls back to the output's nested "output" envelope
// when there is no "result" one (Python _extract_answer_from_run_output).
func TestSessionAnswerFromNestedOutput(t *testing.T) {
	st := memory.New()
	r := sessionRoot()
	r.Output = map[string]any{"output": map[string]any{"answer": "nested"}}
	putRunAsIs(t, st, r)
	if got := exportTurn(t, st, nil, "r1")["answer"]; got != "nested" {
		t.Fatalf("answer = %v, want nested", got)
	}
}

// putOutputArtifact stores text as an output-offload artifact of runID.
func putOutputArtifact(t *testing.T, arts artifact.Store, runID, id, text string) {
	t.Helper()
	if _, err := arts.Put(context.Background(), artifact.PutParams{Content: []byte(text), ContentType: "text/plain",
		RunID: runID, ArtifactID: id, Tags: map[string]string{"source": offload.SourceRunOutput}}); err != nil {
		t.Fatal(err)
	}
}

// An offloaded answer under the nested result envelope is read back:
// resolveOutput must put the restored envelope back into the output it
// returns, or the answer stays a ref and the turn has none.
func TestSessionAnswerOffloadedUnderResult(t *testing.T) {
	arts := artifact.NewMemory()
	putOutputArtifact(t, arts, "r1", "ans", "long answer")
	st := memory.New()
	r := sessionRoot()
	r.Output = map[string]any{"result": map[string]any{"answer": map[string]any{"$artifact": "ans"}}}
	putRunAsIs(t, st, r)
	if got := exportTurn(t, st, arts, "r1")["answer"]; got != "long answer" {
		t.Fatalf("answer = %v, want the offloaded text", got)
	}
}

// Only the run's own output artifacts are read back: a ref to another
// run's output-offload artifact stays a ref, so the turn has no answer
// rather than another run's content.
func TestSessionAnswerIgnoresOtherRunsOutputArtifact(t *testing.T) {
	arts := artifact.NewMemory()
	putOutputArtifact(t, arts, "r0", "theirs", "another run's answer")
	st := memory.New()
	r := sessionRoot()
	r.Output = map[string]any{"answer": map[string]any{"$artifact": "theirs"}}
	putRunAsIs(t, st, r)
	if got := exportTurn(t, st, arts, "r1")["answer"]; got != nil {
		t.Fatalf("answer = %v, want null: the artifact belongs to run r0", got)
	}
}

// A turn's artifacts are capped at MaxArtifactsPerRun over its whole
// tree, not per run.
func TestSessionTurnArtifactsCappedOverTree(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	st := memory.New()
	r := sessionRoot()
	putRunAsIs(t, st, r)
	putRunAsIs(t, st, completedRun("c1", "r1", exportAt))
	for _, rid := range []string{"r1", "c1"} {
		for i := range 300 {
			if _, err := arts.Put(ctx, artifact.PutParams{Content: []byte("x"), ContentType: "text/plain",
				RunID: rid, ArtifactID: fmt.Sprintf("%s_%03d", rid, i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := list(t, exportTurn(t, st, arts, "r1")["artifacts"], "artifacts"); len(got) != history.MaxArtifactsPerRun {
		t.Fatalf("turn artifacts %d, want %d", len(got), history.MaxArtifactsPerRun)
	}
}

// snapshotAt is a run with no snapshot ref, for PersistWorkflowSnapshot.
func snapshotAt(t *testing.T) *memory.Store {
	t.Helper()
	st := memory.New()
	putRunAsIs(t, st, completedRun("r1", "", exportAt))
	return st
}

// theirRef is a snapshot ref another writer recorded.
var theirRef = map[string]any{"workflow_id": "w", "format": "visualflow", "sha256": "x", "artifact_id": "theirs"}

// racingRuns commits race's change to the run before the first commit
// passes through (which then conflicts), and counts commits; failWith,
// when set, fails every commit.
type racingRuns struct {
	*memory.Store
	race     func()
	failWith error
	commits  int
}

func (r *racingRuns) RunCommit(ctx context.Context, p *store.CommitParams) error {
	r.commits++
	if r.failWith != nil {
		return r.failWith
	}
	if f := r.race; f != nil {
		r.race = nil
		f()
	}
	return r.Store.RunCommit(ctx, p)
}

// recordTheirRef writes theirRef to r1 as another writer would.
func recordTheirRef(t *testing.T, st *memory.Store) {
	ctx := context.Background()
	run, err := st.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	run.Vars["_runtime"] = map[string]any{"workflow_snapshot": theirRef}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
}

// A conflicting commit whose writer recorded a ref first leaves that ref:
// the retry returns it instead of overwriting it with a second snapshot.
func TestPersistSnapshotConflictKeepsRefRecordedMeanwhile(t *testing.T) {
	ctx := context.Background()
	st := snapshotAt(t)
	runs := &racingRuns{Store: st}
	runs.race = func() { recordTheirRef(t, st) }
	ref, err := history.PersistWorkflowSnapshot(ctx, runs, artifact.NewMemory(), history.SnapshotParams{
		RunID: "r1", WorkflowID: "w", Snapshot: map[string]any{"a": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if ref["artifact_id"] != "theirs" {
		t.Fatalf("ref %v, want the ref recorded meanwhile", ref)
	}
	run, _ := st.RunGet(ctx, "r1")
	if got := obj(t, obj(t, run.Vars["_runtime"], "_runtime")["workflow_snapshot"], "ref")["artifact_id"]; got != "theirs" {
		t.Fatalf("stored ref names %v, want theirs", got)
	}
}

// Only a conflict is retried: another commit failure fails at once.
func TestPersistSnapshotDoesNotRetryOtherCommitErrors(t *testing.T) {
	boom := errors.New("disk full")
	runs := &racingRuns{Store: snapshotAt(t), failWith: boom}
	_, err := history.PersistWorkflowSnapshot(context.Background(), runs, artifact.NewMemory(), history.SnapshotParams{
		RunID: "r1", WorkflowID: "w", Snapshot: map[string]any{"a": 1}})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want disk full", err)
	}
	if runs.commits != 1 {
		t.Fatalf("%d commits, want 1 (no retry of a non-conflict error)", runs.commits)
	}
}

// racingHost is a VarsUpdater under which another writer recorded
// theirRef before the update's turn came.
type racingHost struct{ st *memory.Store }

func (h racingHost) UpdateVars(ctx context.Context, runID string, mutate func(map[string]any) (bool, error)) error {
	run, err := h.st.RunGet(ctx, runID)
	if err != nil {
		return err
	}
	run.Vars["_runtime"] = map[string]any{"workflow_snapshot": theirRef}
	changed, err := mutate(run.Vars)
	if err != nil || !changed {
		return err
	}
	return h.st.RunCommit(ctx, &store.CommitParams{Run: run})
}

// Through a host, a ref found when the update runs is kept and returned,
// not replaced.
func TestPersistSnapshotThroughHostKeepsRefRecordedMeanwhile(t *testing.T) {
	st := snapshotAt(t)
	ref, err := history.PersistWorkflowSnapshot(context.Background(), st, artifact.NewMemory(), history.SnapshotParams{
		RunID: "r1", WorkflowID: "w", Snapshot: map[string]any{"a": 1}, Host: racingHost{st}, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	if ref["artifact_id"] != "theirs" {
		t.Fatalf("ref %v, want the ref recorded meanwhile", ref)
	}
}

// sessionRoot is run r1, completed at exportAt, the root of session s1.
func sessionRoot() *durable.RunState {
	r := completedRun("r1", "", exportAt)
	r.SessionID = "s1"
	return r
}
