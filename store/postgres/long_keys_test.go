package postgres_test

import (
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestLongKeysCommit: keys are free text a workflow or an API caller
// gives (a wait_event's wait_key is the text of any payload value; a
// session id comes from the caller), and the memory, SQLite and JSON
// stores keep one of any length. PostgreSQL caps a btree index entry at
// 2704 bytes: with btree indexes on wait_key and session_id (before
// migration 003), a ~3 KB key that does not compress made every commit of
// the run fail with SQLSTATE 54000, the run stuck at its last checkpoint.
func TestLongKeysCommit(t *testing.T) {
	testURL(t)
	t.Parallel()
	s := openSchema(t, testSchema(t))
	mem := memory.New()
	ctx := t.Context()
	randomText := func(n int) string { // does not compress, as hex of random bytes
		b := make([]byte, n/2)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}
	for _, st := range []store.Store{mem, s} {
		name := "postgres"
		if st == store.Store(mem) {
			name = "memory"
		}
		// A run that goes to wait on an event whose key is 3000 bytes long.
		r := testRun("waits-" + name)
		if err := st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatalf("%s: creating the run: %v", name, err)
		}
		key := "evt:session:s1:" + randomText(3000)
		r.Status = durable.RunWaiting
		r.Waiting = &durable.WaitState{Reason: durable.WaitEvent, WaitKey: key, ResumeToNode: "next",
			Until: durable.NewTime(t0.Add(time.Hour))}
		if err := st.RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{testRecord(r.RunID, "wait")}}); err != nil {
			t.Errorf("%s: committing a wait on a %d-byte event key: %.200v", name, len(key), err)
		} else if got, err := st.RunList(ctx, &store.RunListParams{WaitKeys: []string{key}}); err != nil || len(got) != 1 {
			t.Errorf("%s: RunList by the long wait key = %d runs, %v; want the waiting run", name, len(got), err)
		}
		// A run created in a session whose id is 3000 bytes long.
		r2 := testRun("session-" + name)
		r2.SessionID = randomText(3000)
		if err := st.RunCommit(ctx, &store.CommitParams{Run: r2, Create: true}); err != nil {
			t.Errorf("%s: creating a run with a %d-byte session id: %.200v", name, len(r2.SessionID), err)
		}
	}
}
