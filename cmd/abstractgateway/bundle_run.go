package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// Exit codes of bundle run besides 0 (completed), 1 (failed, cancelled or
// an error) and 2 (usage).
const exitWaiting = 3 // the run waits for an answer or an event nobody gives

const bundleRunUsage = `usage: abstractgateway bundle run FILE[:flow] [--input JSON] [--answer TEXT]... [--data-dir DIR]

Runs an entrypoint of a bundle in this process on the embedded SQLite store
and a file artifact store (in a temporary directory unless --data-dir is
given), prints ledger records to
stderr as they are written, answers ask_user waits with the --answer values
in order (then on the terminal, when stdin is one), sleeps through
wait_until waits, and prints the run as JSON on stdout at the end.
Exit code: 0 completed, 1 failed or cancelled, 3 still waiting.
`

// bundleRun is "bundle run".
func bundleRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return bundleRunWith(ctx, args, os.Stdin, stdout, stderr)
}

func bundleRunWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bundle run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	flowID := fs.String("flow", "", "entrypoint flow id (default: FILE:flow, else the bundle's default entrypoint)")
	input := fs.String("input", "{}", "run input vars as a JSON object")
	dataDir := fs.String("data-dir", "", "directory of the SQLite store (default: a temporary directory)")
	var answers stringList
	fs.Var(&answers, "answer", "answer to the next ask_user wait (repeatable)")
	fs.Usage = func() { fmt.Fprint(stderr, bundleRunUsage); fs.PrintDefaults() }
	// The file may come before or after the flags.
	var target string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		target, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if target == "" && fs.NArg() == 1 {
		target = fs.Arg(0)
	} else if target == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	path, ep := splitFlowTarget(target)
	if *flowID != "" {
		ep = *flowID
	}
	vars, err := pyjson.DecodeObject([]byte(*input))
	if err != nil {
		fmt.Fprintf(stderr, "bundle run: --input: %v\n", err)
		return 2
	}
	b, err := bundle.Read(path)
	if err != nil {
		fmt.Fprintf(stderr, "bundle run: %v\n", err)
		return 1
	}
	if ep == "" {
		ep = b.Manifest.DefaultEntrypoint
	}
	if ep == "" && len(b.Manifest.Entrypoints) > 0 {
		ep = b.Manifest.Entrypoints[0].FlowID
	}
	if _, ok := b.Manifest.Entrypoint(ep); !ok {
		fmt.Fprintf(stderr, "bundle run: bundle %s: flow %q is not an entrypoint\n", b.Ref(), ep)
		return 1
	}
	cb, err := visualflow.CompileBundle(b, visualflow.BundleOptions{ReactPlaceholders: true})
	if err != nil {
		fmt.Fprintf(stderr, "bundle run: %v\n", err)
		return 1
	}
	if fi, ok := cb.Flow(ep); ok && fi.NeedsLLM {
		fmt.Fprintf(stderr, "bundle run: note: flow %s uses llm_call; no LLM provider is wired in this command yet, so LLM steps fail\n", ep)
	}
	st, dir, closeStore, err := openRunStore(ctx, *dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "bundle run: %v\n", err)
		return 1
	}
	defer closeStore()
	arts, err := artifact.NewFS(dir)
	if err != nil {
		fmt.Fprintf(stderr, "bundle run: %v\n", err)
		return 1
	}
	obs := observe.Wrap(st)
	follow := obs.Subscribe("", 4096)
	defer follow.Cancel()
	reg, _ := runtime.NewRegistry()
	if err := cb.Register(reg); err != nil {
		fmt.Fprintf(stderr, "bundle run: %v\n", err)
		return 1
	}
	rt, err := runtime.New(runtime.Config{Store: obs, Registry: reg, Artifacts: arts, MaxSteps: 10000})
	if err != nil {
		fmt.Fprintf(stderr, "bundle run: %v\n", err)
		return 1
	}
	d := &bundleDriver{rt: rt, follow: follow, answers: answers, in: bufio.NewReader(stdin),
		interactive: isTerminal(stdin), out: stderr}
	run, err := d.run(ctx, bundle.WorkflowID(b.Manifest.BundleID, b.Manifest.BundleVersion, ep), vars)
	d.printRecords()
	if err != nil {
		fmt.Fprintf(stderr, "bundle run: %v\n", err)
		return 1
	}
	out := map[string]any{"run_id": run.RunID, "workflow_id": run.WorkflowID, "status": string(run.Status), "output": run.Output}
	if run.Error != "" {
		out["error"] = run.Error
	}
	if run.Waiting != nil {
		out["waiting"] = run.Waiting.Map()
	}
	text, err := pyjson.Marshal(out, pyjson.Style{SortKeys: true, Indent: 2})
	if err != nil {
		fmt.Fprintf(stderr, "bundle run: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, string(text))
	switch run.Status {
	case durable.RunCompleted:
		return 0
	case durable.RunWaiting, durable.RunRunning:
		return exitWaiting
	}
	return 1
}

// splitFlowTarget splits FILE[:flow]; a colon inside the file name itself
// (no such file) is kept.
func splitFlowTarget(target string) (path, flow string) {
	i := strings.LastIndexByte(target, ':')
	if i <= 0 {
		return target, ""
	}
	if _, err := os.Stat(target); err == nil {
		return target, ""
	}
	return target[:i], target[i+1:]
}

// openRunStore opens the SQLite store in dir, or in a temporary directory
// removed on close, and returns the directory (artifacts go there too).
func openRunStore(ctx context.Context, dir string) (store.Store, string, func(), error) {
	cleanup := func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "abstractgateway-run-")
		if err != nil {
			return nil, "", nil, err
		}
		dir = tmp
		cleanup = func() { os.RemoveAll(tmp) }
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", nil, err
	}
	st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(dir, "runtime.sqlite3")})
	if err != nil {
		cleanup()
		return nil, "", nil, err
	}
	return st, dir, func() { st.Close(); cleanup() }, nil
}

// bundleDriver drives one run to its end from the command line.
type bundleDriver struct {
	rt          *runtime.Runtime
	follow      *observe.Subscription
	answers     []string
	in          *bufio.Reader
	interactive bool
	out         io.Writer
}

func (d *bundleDriver) run(ctx context.Context, workflowID string, vars map[string]any) (*durable.RunState, error) {
	id, err := d.rt.Start(ctx, runtime.StartParams{WorkflowID: workflowID, Vars: vars})
	if err != nil {
		return nil, err
	}
	st, err := d.rt.Tick(ctx, id, runtime.TickOptions{})
	for err == nil {
		d.printRecords()
		if st.Status != durable.RunWaiting || st.Waiting == nil {
			return st, nil
		}
		// The run, or the deepest of the subflows it waits on, waits for a
		// person or a time: answer it or sleep through it, and the kernel
		// resumes the runs above it.
		target, terr := d.deepestWaiting(ctx, st)
		if terr != nil || target == nil {
			return st, terr
		}
		w := target.Waiting
		switch {
		case w.Reason == durable.WaitUser && w.WaitKey != "":
			text, ok := d.answer(ctx, w)
			if !ok {
				return st, ctx.Err()
			}
			_, err = d.rt.Resume(ctx, runtime.ResumeParams{RunID: target.RunID, WaitKey: w.WaitKey,
				Payload: map[string]any{"response": text}})
		case !w.Until.IsZero():
			fmt.Fprintf(d.out, "… waiting until %s\n", w.Until)
			if err := sleepUntil(ctx, w.Until.Time); err != nil {
				return st, err
			}
			_, err = d.rt.Tick(ctx, target.RunID, runtime.TickOptions{})
		default:
			fmt.Fprintf(d.out, "… waiting for %s %q (nothing in this command can deliver it)\n", w.Reason, w.WaitKey)
			return st, nil
		}
		if err == nil {
			st, err = d.rt.GetState(ctx, id)
		}
	}
	return st, err
}

// deepestWaiting follows the chain of runs waiting on a child from st (a
// waiting run) down to the last one, which waits for something else: st
// itself when it does; nil when a run of the chain no longer waits.
func (d *bundleDriver) deepestWaiting(ctx context.Context, st *durable.RunState) (*durable.RunState, error) {
	cur := st
	for range maxSubflowDepth {
		if cur.Waiting == nil || cur.Waiting.Reason != durable.WaitSubworkflow {
			return cur, nil
		}
		child := runtime.WaitedChild(cur)
		if child == "" {
			return nil, nil
		}
		cs, err := d.rt.GetState(ctx, child)
		if err != nil {
			return nil, err
		}
		if cs.Status != durable.RunWaiting || cs.Waiting == nil {
			return nil, nil
		}
		cur = cs
	}
	return nil, fmt.Errorf("run %s: subflows waiting more than %d levels deep", st.RunID, maxSubflowDepth)
}

// maxSubflowDepth bounds the chain deepestWaiting follows.
const maxSubflowDepth = 100

// sleepUntil waits until t, or fails when ctx ends first (a signal).
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// readLine reads a line from r, giving up when ctx ends (Ctrl-C, SIGTERM):
// a terminal read cannot be interrupted, so it is left to finish in the
// background while the command exits.
func readLine(ctx context.Context, r *bufio.Reader) (string, error) {
	type result struct {
		line string
		err  error
	}
	c := make(chan result, 1)
	go func() {
		line, err := r.ReadString('\n')
		c <- result{line, err}
	}()
	select {
	case res := <-c:
		return res.line, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// answer returns the next scripted answer, else one read from the
// terminal; ok is false when there is none (or ctx ended).
func (d *bundleDriver) answer(ctx context.Context, w *durable.WaitState) (string, bool) {
	prompt := w.Prompt
	if len(w.Choices) > 0 {
		prompt += " " + fmt.Sprint(w.Choices)
	}
	if len(d.answers) > 0 {
		text := d.answers[0]
		d.answers = d.answers[1:]
		fmt.Fprintf(d.out, "? %s\n> %s\n", prompt, text)
		return text, true
	}
	if !d.interactive {
		fmt.Fprintf(d.out, "? %s\n(no --answer left and stdin is not a terminal)\n", prompt)
		return "", false
	}
	fmt.Fprintf(d.out, "? %s\n> ", prompt)
	line, err := readLine(ctx, d.in)
	if err != nil && line == "" {
		return "", false
	}
	return strings.TrimRight(line, "\r\n"), true
}

// printRecords prints the ledger records written since the last call.
func (d *bundleDriver) printRecords() {
	for {
		select {
		case ev, ok := <-d.follow.C:
			if !ok {
				return
			}
			for _, r := range ev.Records {
				printLedgerLine(d.out, r)
			}
		default:
			return
		}
	}
}

func printLedgerLine(out io.Writer, r *durable.StepRecord) {
	kind := "complete"
	if r.Effect != nil {
		kind = string(r.Effect.Type)
	}
	run := r.RunID
	if len(run) > 8 {
		run = run[:8]
	}
	line := fmt.Sprintf("  %s #%-3d %-22s %-10s %s", run, r.Seq, r.NodeID, r.Status, kind)
	if r.Error != "" {
		line += "  error: " + r.Error
	}
	fmt.Fprintln(out, line)
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
