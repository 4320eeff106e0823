package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestExportOfPaddedRunID: a run Start created under an explicit padded
// id (" padded ", and " "; the stores keep ids byte for byte, and
// START_SUBWORKFLOW's payload.run_id is such an id too) exports under that
// id, and a padded child's records are in its parent's bundle. Export
// stripped the id it was given and each child id (Python's defensive
// str(...).strip()): " padded " was "not found", " " was "run id is
// required", and a child " c " came out as the empty ledger of a run "c"
// that does not exist (found by FuzzHostStartIdentity and
// FuzzHostStartVars).
func TestExportOfPaddedRunID(t *testing.T) {
	for _, useFile := range []bool{false, true} {
		e := fzNewEnv(t, useFile)
		ctx := context.Background()
		start := func(id, parent string) {
			t.Helper()
			if _, err := e.rt.Start(ctx, runtime.StartParams{WorkflowID: "echo", RunID: id, ParentRunID: parent}); err != nil {
				t.Fatal(err)
			}
			if st, err := e.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
				t.Fatalf("tick of %q: %v %v", id, st, err)
			}
		}
		start(" padded ", "")
		start(" c ", " padded ")
		start(" ", "")
		if _, err := history.Export(ctx, history.Source{Runs: e.st, Ledger: e.st}, " ", history.Options{}); err != nil {
			t.Fatalf("file store %v: export of run %q: %v", useFile, " ", err)
		}
		b, err := history.Export(ctx, history.Source{Runs: e.st, Ledger: e.st}, " padded ", history.Options{LedgerMode: history.LedgerFull})
		if err != nil {
			t.Fatalf("file store %v: export of run %q: %v", useFile, " padded ", err)
		}
		if b["root_run_id"] != " padded " {
			t.Fatalf("file store %v: bundle rooted at %q", useFile, b["root_run_id"])
		}
		ledgers := b["ledgers"].(map[string]any)
		child, ok := ledgers[" c "].(map[string]any)
		if !ok {
			keys := []string{}
			for k := range ledgers {
				keys = append(keys, k)
			}
			t.Fatalf("file store %v: bundle ledgers %q, want the child %q", useFile, keys, " c ")
		}
		if items := child["items"].([]any); len(items) == 0 {
			t.Fatalf("file store %v: child %q exported with no records", useFile, " c ")
		}
		// A caller's padding around an existing id is still forgiven.
		start("plain", "")
		if _, err := history.Export(ctx, history.Source{Runs: e.st, Ledger: e.st}, " plain\n", history.Options{}); err != nil {
			t.Fatalf("file store %v: export of %q: %v", useFile, " plain\n", err)
		}
	}
}
