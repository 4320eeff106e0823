package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// BenchmarkSubworkflowLoopSQLite runs a parent whose loop body starts a
// child and waits for it (a VisualFlow while over a subflow node) for n
// turns on the SQLite store, and reports the time per turn: flat in n
// when a turn's ledger look-ups do not rescan the parent's ledger, which
// the store's cache lets go of while the parent waits.
func BenchmarkSubworkflowLoopSQLite(b *testing.B) {
	for _, n := range []int{500, 2000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ctx := context.Background()
			loop := &Workflow{ID: "loop", Entry: "spawn", Nodes: map[string]NodeFunc{
				"spawn": errNode(func(run *durable.RunState) StepPlan {
					return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
						Payload: map[string]any{"workflow_id": "leaf", "async": true, "wait": true}, ResultKey: "child"}, "count")
				}),
				"count": errNode(func(run *durable.RunState) StepPlan {
					var i int
					switch v := run.Vars["i"].(type) { // int until a read gives it back
					case int:
						i = v
					case json.Number:
						k, _ := v.Int64()
						i = int(k)
					}
					if i++; i < n {
						run.Vars["i"] = i
						return Next("spawn")
					}
					return Complete(map[string]any{"turns": i})
				}),
			}}
			leaf := &Workflow{ID: "leaf", Entry: "done", Nodes: map[string]NodeFunc{
				"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
			}}
			reg, err := NewRegistry(loop, leaf)
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(b.TempDir(), "runtime.sqlite3")})
				if err != nil {
					b.Fatal(err)
				}
				rt, err := New(Config{Store: st, Registry: reg})
				if err != nil {
					b.Fatal(err)
				}
				id, err := rt.Start(ctx, StartParams{WorkflowID: "loop"})
				if err != nil {
					b.Fatal(err)
				}
				for {
					s, err := rt.Tick(ctx, id, TickOptions{})
					if err != nil {
						b.Fatal(err)
					}
					if s.Status == durable.RunCompleted {
						break
					}
					if s.Status != durable.RunWaiting && s.Status != durable.RunRunning {
						b.Fatalf("run %s: %s %s", id, s.Status, s.Error)
					}
					if child := WaitedChild(s); child != "" {
						if _, err := rt.Tick(ctx, child, TickOptions{}); err != nil {
							b.Fatal(err)
						}
					}
				}
				_ = st.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/turn")
		})
	}
}
