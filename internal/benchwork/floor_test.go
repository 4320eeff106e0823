package benchwork

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// recorder is a memory store that keeps a copy of every commit it takes.
type recorder struct {
	*memory.Store
	commits []store.CommitParams
}

func (r *recorder) RunCommit(ctx context.Context, p *store.CommitParams) error {
	c := store.CommitParams{Run: p.Run.Clone(), Create: p.Create}
	for _, rec := range p.Records {
		c.Records = append(c.Records, rec.Clone())
	}
	if err := r.Store.RunCommit(ctx, p); err != nil {
		return err
	}
	r.commits = append(r.commits, c)
	return nil
}

// recordCommits runs one run of a workload on a memory store and returns
// the store commits it made, in order.
func recordCommits(b *testing.B, workload string) []store.CommitParams {
	ctx := context.Background()
	rec := &recorder{Store: memory.New()}
	env := &Env{Kind: StoreMemory}
	reg, err := runtime.NewRegistry(Workflows(&env.steps)...)
	if err != nil {
		b.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: rec, Registry: reg})
	if err != nil {
		b.Fatal(err)
	}
	wf := map[string]string{W1Chain: WorkflowW1, W2AskResume: WorkflowW2}[workload]
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf})
	if err != nil {
		b.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: MaxSteps})
	if err != nil {
		b.Fatal(err)
	}
	if workload == W2AskResume {
		if st, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey,
			Payload: map[string]any{"text": "yes"}}); err != nil {
			b.Fatal(err)
		}
	}
	if st.Status != durable.RunCompleted {
		b.Fatalf("%s run ended %s", workload, st.Status)
	}
	return rec.commits
}

// BenchmarkStoreFloor replays the exact store commits of one W1 or W2
// run (recorded on the memory store) against a fresh SQLite store, with
// no kernel around them: what the store alone costs per run, encoding and
// cache included. Against the workload benchmarks it splits a run's time
// between the store and the kernel; against the Python peer's figure it
// bounds the ratio any kernel could reach on this store and schema.
func BenchmarkStoreFloor(b *testing.B) {
	for _, workload := range []string{W1Chain, W2AskResume} {
		for _, kind := range []string{StoreSQLite, StoreSQLiteFull} {
			b.Run(workload+"/"+kind, func(b *testing.B) {
				commits := recordCommits(b, workload)
				st, err := OpenStore(context.Background(), kind, filepath.Join(b.TempDir(), "db"))
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				// The runs to replay, built before the clock starts.
				runs := make([][]store.CommitParams, b.N)
				for i := range runs {
					id := fmt.Sprintf("floor-%d-%d", time.Now().UnixNano(), i)
					for _, c := range commits {
						r := c.Run.Clone()
						r.RunID = id
						var recs []*durable.StepRecord
						for _, rec := range c.Records {
							rec = rec.Clone()
							rec.RunID, rec.Seq = id, 0
							recs = append(recs, rec)
						}
						runs[i] = append(runs[i], store.CommitParams{Run: r, Create: c.Create, Records: recs})
					}
				}
				ctx := context.Background()
				b.ResetTimer()
				for i := range b.N {
					for j := range runs[i] {
						if err := st.RunCommit(ctx, &runs[i][j]); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(len(commits)), "commits/op")
			})
		}
	}
}
