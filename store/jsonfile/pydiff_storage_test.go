package jsonfile_test

// Differential tests (from a review that called both implementations directly): the JSON-file store against Python's
// JsonFileRunStore / JsonlCommandStore (abstractruntime 0.4.28), called
// directly with the same inputs. Expected values are what the Python calls
// returned (see the comment on each).

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

func zzOpen(t *testing.T) *jsonfile.Store {
	t.Helper()
	s, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func zzTime(t *testing.T, s string) durable.Time {
	t.Helper()
	v, err := durable.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func zzCreate(t *testing.T, s *jsonfile.Store, r *durable.RunState) {
	t.Helper()
	r.Vars, r.WorkflowID, r.CurrentNode = map[string]any{}, "wf", "n"
	if r.Status == "" {
		r.Status = durable.RunRunning
	}
	if err := s.RunCommit(context.Background(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
}

func zzIDs(runs []*durable.RunState) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.RunID
	}
	return out
}

// Python JsonlCommandStore.append strips command_id and run_id:
// appending (command_id " c1 ", run_id " r1 ") then ("c1", "r1") gave
// seq=1 then duplicate=True seq=1, and list_after(after=0) showed
// ('c1', 'r1', 1); the commands.jsonl line has "command_id": "c1",
// "run_id": "r1".
func TestDiffStoreCommandIDsAreTrimmed(t *testing.T) {
	ctx := context.Background()
	s := zzOpen(t)
	ts := zzTime(t, "2024-01-01T00:00:00+00:00")
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: " c1 ", RunID: " r1 ", Type: "pause", TS: ts}); err != nil {
		t.Fatal(err)
	}
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause", TS: ts})
	if err != nil {
		t.Fatal(err)
	}
	// Python: JsonlCommandStore.append(command_id="c1") -> accepted=False, duplicate=True, seq=1
	if !res.Duplicate || res.Seq != 1 {
		t.Errorf("append \"c1\" after \" c1 \": got %+v, Python gives duplicate=True seq=1", res)
	}
	cmds, _, err := s.CommandListAfter(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Python: list_after(after=0) -> [('c1', 'r1', 1), ...]
	if len(cmds) == 0 || cmds[0].CommandID != "c1" || cmds[0].RunID != "r1" {
		t.Errorf("stored command: got (%q, %q), Python stores ('c1', 'r1')", cmds[0].CommandID, cmds[0].RunID)
	}
}
