package hashchain_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// Chain a run's ledger, verify it, then detect an edit of the ledger file.
func ExampleVerifyLedgerChain() {
	dir, err := os.MkdirTemp("", "hashchain-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	files, err := jsonfile.New(jsonfile.Config{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer files.Close()

	pay := &runtime.Workflow{ID: "pay", Entry: "pay", Nodes: map[string]runtime.NodeFunc{
		"pay": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"amount": 100}), nil
		},
	}}
	reg, err := runtime.NewRegistry(pay)
	if err != nil {
		log.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: hashchain.Wrap(files), Registry: reg})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "pay"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		log.Fatal(err)
	}
	ledger, err := rt.GetLedger(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	report := hashchain.VerifyLedgerChain(ledger)
	fmt.Println("ok:", report.OK, "records:", report.Count)

	// Someone edits the amount in the ledger file behind the store's back.
	path := filepath.Join(dir, "ledger_"+id+".jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"amount": 100`), []byte(`"amount": 900`), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		log.Fatal(err)
	}
	if ledger, err = rt.GetLedger(ctx, id); err != nil {
		log.Fatal(err)
	}
	report = hashchain.VerifyLedgerChain(ledger)
	fmt.Println("ok:", report.OK, "first bad:", *report.FirstBadIndex, report.Errors[0].Type)
	// Output:
	// ok: true records: 2
	// ok: false first bad: 0 record_hash_mismatch
}
