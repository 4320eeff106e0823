package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// exampleWorkflow greets, asks a question, waits a moment and completes.
// It exists so a fresh checkout has something durable to run.
func exampleWorkflow() *runtime.Workflow {
	n := func(fn func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return fn(run, rc), nil
		}
	}
	return &runtime.Workflow{ID: "example_order", Entry: "greet", Nodes: map[string]runtime.NodeFunc{
		"greet": n(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAnswerUser,
				Payload: map[string]any{"message": "Hello! This run is durable: stop it at the question and run the command again."}}, "ask")
		}),
		"ask": n(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "Ship the order?", "choices": []any{"yes", "no"}}, ResultKey: "answer"}, "pause")
		}),
		"pause": n(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			until := durable.FormatTime(rc.Now().Add(500 * time.Millisecond))
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": until}}, "done")
		}),
		"done": n(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			ans, _ := run.Vars["answer"].(map[string]any)
			return runtime.Complete(map[string]any{"shipped": strings.EqualFold(fmt.Sprint(ans["text"]), "yes"), "answer": ans["text"]})
		}),
	}}
}

const exampleUsage = `usage: abstractgateway example [--answer TEXT] [--data-dir DIR] [--store auto|sqlite|json]

Runs the example workflow (greet, ask "Ship the order?", wait half a
second, complete) on a durable store in --data-dir. Stop it at the
question (Ctrl-C, or no answer on stdin) and run the command again: it
continues the run it left waiting instead of starting another.

` + storeHelp + `
flags:
`

// runExample is the "example" subcommand.
func runExample(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &outWriter{w: stdout}
	return out.exit("example", stderr, runExampleMain(ctx, args, out, stderr))
}

func runExampleMain(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	fs := flag.NewFlagSet("example", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "data", "data directory of the store")
	storeName := fs.String("store", string(storeAuto), storeFlagUsage)
	answer := fs.String("answer", "", "answer to the question (prompts on stdin when empty)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), exampleUsage); fs.PrintDefaults() }
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return wrongArgs(fs, "")
	}
	kind, err := parseStoreKind(*storeName)
	if err != nil {
		fmt.Fprintf(stderr, "example: %v\n", err)
		return 2
	}
	if *dataDir == "" {
		fmt.Fprintln(stderr, "example: --data-dir is empty: the example keeps its run in a data dir")
		return 2
	}
	ds, err := openDataStore(ctx, *dataDir, kind)
	if err != nil {
		fmt.Fprintf(stderr, "example: %v\n", err)
		return 1
	}
	defer func() {
		if err := ds.close(); err != nil {
			fmt.Fprintf(stderr, "example: %v\n", err)
			code = 1
		}
	}()
	reg, _ := runtime.NewRegistry(exampleWorkflow())
	rt, err := runtime.New(runtime.Config{Store: ds.st, Registry: reg})
	if err != nil {
		fmt.Fprintf(stderr, "example: %v\n", err)
		return 1
	}
	if err := exampleRun(ctx, rt, *answer, os.Stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "example: %v\n", err)
		return 1
	}
	return 0
}

func exampleRun(ctx context.Context, rt *runtime.Runtime, answer string, in io.Reader, out io.Writer) error {
	// Continue a run a previous invocation left waiting, else start one.
	var runID string
	for _, status := range []durable.RunStatus{durable.RunWaiting, durable.RunRunning} {
		rows, err := rt.Store().RunIndex(ctx, &store.RunIndexParams{Status: status, WorkflowID: "example_order", Limit: 1})
		if err != nil {
			return err
		}
		if len(rows) > 0 && runID == "" {
			runID = rows[0].RunID
			fmt.Fprintf(out, "continuing run %s (%s)\n", runID, rows[0].Status)
		}
	}
	if runID == "" {
		var err error
		if runID, err = rt.Start(ctx, runtime.StartParams{WorkflowID: "example_order"}); err != nil {
			return err
		}
		fmt.Fprintf(out, "started run %s\n", runID)
	}
	var seen int64
	for {
		st, err := rt.Tick(ctx, runID, runtime.TickOptions{})
		if err != nil {
			return err
		}
		recs, err := rt.GetLedger(ctx, runID)
		if err != nil {
			return err
		}
		for _, r := range recs[seen:] {
			printRecord(out, r)
		}
		seen = int64(len(recs))
		switch {
		case st.Status.Terminal():
			b, _ := pyjson.Marshal(st.Output, pyjson.Style{Compact: true})
			fmt.Fprintf(out, "run %s %s: %s\n", runID, st.Status, b)
			if st.Status != durable.RunCompleted {
				// A script running the example must not take a failed or
				// cancelled run for success (exit 1, as bundle run).
				return fmt.Errorf("run %s %s: %s", runID, st.Status, st.Error)
			}
			return nil
		case runtime.IsPaused(st):
			fmt.Fprintf(out, "run %s is paused by its host; nothing in this command lifts a pause\n", runID)
			return nil
		case st.Status == durable.RunWaiting && st.Waiting == nil:
			return fmt.Errorf("run %s is waiting with no wait state (damaged data?)", runID)
		case st.Status == durable.RunWaiting && st.Waiting.Reason == durable.WaitUser:
			text := answer
			if text == "" {
				fmt.Fprintf(out, "%s %v > ", st.Waiting.Prompt, st.Waiting.Choices)
				line, err := readLine(ctx, bufio.NewReader(in))
				// Ctrl-C at the question is the documented way to stop:
				// the run stays waiting, as with no answer on stdin.
				interrupted := ctx.Err() != nil
				if err != nil && !errors.Is(err, io.EOF) && !interrupted {
					return err
				}
				if text = strings.TrimSpace(line); interrupted || text == "" && errors.Is(err, io.EOF) {
					fmt.Fprintf(out, "\nrun %s waits for an answer; run the command again (or with --answer TEXT) to continue it\n", runID)
					return nil
				}
			}
			if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: runID, WaitKey: st.Waiting.WaitKey,
				Payload: map[string]any{"text": text}, MaxSteps: -1}); err != nil {
				return err
			}
		case st.Status == durable.RunWaiting && !st.Waiting.Until.IsZero():
			select {
			case <-ctx.Done():
				fmt.Fprintf(out, "run %s waits until %s; run the command again to continue it\n", runID, durable.FormatTime(st.Waiting.Until.Time))
				return nil
			case <-time.After(time.Until(st.Waiting.Until.Time)):
			}
		case st.Status == durable.RunWaiting:
			fmt.Fprintf(out, "run %s waits for %s %q, which this command cannot give\n", runID, st.Waiting.Reason, st.Waiting.WaitKey)
			return nil
		}
	}
}

func printRecord(out io.Writer, r *durable.StepRecord) {
	kind := "complete"
	if r.Effect != nil {
		kind = string(r.Effect.Type)
	}
	fmt.Fprintf(out, "  #%d %-8s %-10s %-13s", r.Seq, r.NodeID, r.Status, kind)
	if r.Result != nil {
		b, _ := pyjson.Marshal(r.Result, pyjson.Style{Compact: true})
		fmt.Fprintf(out, " %s", b)
	}
	if r.Error != "" {
		fmt.Fprintf(out, " error=%s", r.Error)
	}
	fmt.Fprintln(out)
}
