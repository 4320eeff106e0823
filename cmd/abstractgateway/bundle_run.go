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

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// Exit codes of bundle run besides 0 (completed), 1 (failed, cancelled or
// an error) and 2 (usage).
const exitWaiting = 3 // the run waits for an answer or an event nobody gives

// followBuffer is the size, in events (one per ledger append), of the
// subscription through which bundle run prints the ledger.
const followBuffer = 4096

const bundleRunUsage = `usage: abstractgateway bundle run FILE[:flow] [--input JSON] [--answer TEXT]...
                               [--data-dir DIR] [--store auto|sqlite|json] [--run-id ID]

Runs an entrypoint of a bundle in this process: the flow named by FILE:flow
or --flow, else the bundle's only entrypoint, else its default_entrypoint
(a bundle with several entrypoints and no default needs the flow named).
Prints ledger records to stderr as they are written, answers ask_user
waits (the run's, its subflows' and its event listeners') with the
--answer values in order (then on the terminal, when stdin is one), sleeps
through wait_until waits, and prints the run as JSON on stdout at the end.

The run is kept in the embedded SQLite store, or in the JSON-file store
(see --store), in --data-dir with a file artifact store beside it (default:
a temporary directory, removed at the end).

Without --run-id a new run starts. With --run-id ID (and --data-dir) the
run ID of the data dir is continued where it stopped: its wait is answered
(--answer, or the prompt) and nothing it already did runs again; when there
is no such run, one is created under that id. The run must be of the same
bundle entrypoint, and a run created with --run-id needs the same --input.
When the command exits leaving a run waiting, or is interrupted (Ctrl-C,
SIGTERM), it prints the command that continues it.

A question asked by an event listener or a subflow rather than the run is
prompted with the id of its run ("? [ID] Name?"). When the run ends, its
event listeners still in a branch are driven until they finish it or
wait for an event, and those waiting for an event are then cancelled
("Session completed"). A listener's question left unanswered then keeps
the listeners as they are: the run's JSON shows it completed, but the
command exits 3 and prints the command that continues it (a failed or
cancelled run still exits 1).

` + storeHelp + `
Exit code: 0 completed, 1 failed, cancelled or an error, 2 usage, 3 still waiting.

flags:
`

// bundleRun is "bundle run".
func bundleRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return bundleRunWith(ctx, args, os.Stdin, stdout, stderr)
}

// bundleRunWith is bundleRun reading answers from stdin (for tests).
func bundleRunWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &outWriter{w: stdout}
	code := bundleRunMain(ctx, args, stdin, out, stderr)
	return out.exit("bundle run", stderr, code)
}

// runFlags is the command line of bundle run.
type runFlags struct {
	target  string // FILE[:flow] as given
	flow    string // --flow
	input   string // --input
	dataDir string
	store   storeKind
	runID   string
	answers stringList
	set     map[string]bool // the flags given on the command line
}

// parseRunFlags parses the command line; ok is false when the command
// should exit with code.
func parseRunFlags(args []string, stdout, stderr io.Writer) (f runFlags, code int, ok bool) {
	fs := flag.NewFlagSet("bundle run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.flow, "flow", "", "entrypoint flow id (default: FILE:flow, else the bundle's only or default entrypoint)")
	fs.StringVar(&f.input, "input", "{}", "run input vars as a JSON object")
	fs.StringVar(&f.dataDir, "data-dir", "", "data directory of the store and the artifacts (default: a temporary directory)")
	storeName := fs.String("store", string(storeAuto), storeFlagUsage)
	fs.StringVar(&f.runID, "run-id", "", "continue the run of that id in --data-dir, or create it under that id")
	fs.Var(&f.answers, "answer", "answer to the next ask_user wait (repeatable)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), bundleRunUsage); fs.PrintDefaults() }
	// The file may come before or after the flags.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		f.target, args = args[0], args[1:]
	}
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return f, code, false
	}
	if f.target == "" && fs.NArg() == 1 {
		f.target = fs.Arg(0)
	} else if f.target != "" && fs.NArg() > 0 {
		// The file taken first, and more after the flags: name them all,
		// and say how flags and the file may be ordered.
		fmt.Fprintf(stderr, "bundle run: want one bundle file, got %q (flags go all before the file or all after it)\n",
			append([]string{f.target}, fs.Args()...))
		fs.Usage()
		return f, 2, false
	} else if f.target == "" || fs.NArg() > 0 {
		return f, wrongArgs(fs, "one bundle file"), false
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	usageError := func(err error) (runFlags, int, bool) {
		fmt.Fprintf(stderr, "bundle run: %v\n", err)
		return f, 2, false
	}
	var err error
	if f.store, err = parseStoreKind(*storeName); err != nil {
		return usageError(err)
	}
	if f.set["data-dir"] && f.dataDir == "" {
		return usageError(errors.New("--data-dir is empty: give a directory, or leave --data-dir out for a temporary one"))
	}
	if f.set["run-id"] && strings.TrimSpace(f.runID) == "" {
		return usageError(errors.New("--run-id: the run id is empty"))
	}
	if f.runID != "" && f.dataDir == "" {
		return usageError(errors.New("--run-id needs --data-dir: a temporary data dir holds no run to continue and keeps none"))
	}
	return f, 0, true
}

func bundleRunMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	f, code, ok := parseRunFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "bundle run: %v\n", err)
		return 1
	}
	path, ep := splitFlowTarget(f.target)
	if f.flow != "" {
		ep = f.flow
	}
	vars, err := pyjson.DecodeObject([]byte(f.input))
	if err != nil {
		fmt.Fprintf(stderr, "bundle run: --input: %v\n", err)
		return 2
	}
	b, err := bundle.Read(path)
	if err != nil {
		return fail(err)
	}
	if ep == "" {
		if ep, err = defaultEntrypoint(b); err != nil {
			fmt.Fprintf(stderr, "bundle run: %v\n", err)
			return 2
		}
	}
	if _, ok := b.Manifest.Entrypoint(ep); !ok {
		return fail(fmt.Errorf("bundle %s: flow %q is not an entrypoint", b.Ref(), ep))
	}
	cb, err := visualflow.CompileBundle(b, visualflow.BundleOptions{ReactPlaceholders: true})
	if err != nil {
		return fail(err)
	}
	if fi, ok := cb.Flow(ep); ok && fi.NeedsLLM {
		fmt.Fprintf(stderr, "bundle run: note: flow %s uses llm_call (itself or in a subflow); no LLM provider is wired in this command yet, so LLM steps fail\n", ep)
	}
	ds, err := openDataStore(ctx, f.dataDir, f.store)
	if err != nil {
		return fail(err)
	}
	defer func() {
		// Closing applies what the store holds back: a failure may lose
		// the end of the run, so it fails the command.
		if err := ds.close(); err != nil {
			code = fail(err)
		}
	}()
	arts, err := artifact.NewFS(ds.dir)
	if err != nil {
		return fail(err)
	}
	defer arts.Close() // its link to Python's artifact catalog, if any
	obs := observe.Wrap(ds.st)
	follow := obs.Subscribe("", followBuffer)
	defer follow.Cancel()
	reg, _ := runtime.NewRegistry()
	if err := cb.Register(reg); err != nil {
		return fail(err)
	}
	rt, err := runtime.New(runtime.Config{Store: obs, Registry: reg, Artifacts: arts, MaxSteps: tickSteps})
	if err != nil {
		return fail(err)
	}
	d := &bundleDriver{rt: rt, follow: follow, answers: f.answers, in: bufio.NewReader(stdin),
		interactive: isTerminal(stdin), out: stderr, wantID: f.runID,
		started: func(id string) { f.printStarted(stderr, ds, id) }}
	if fi, ok := cb.Flow(ep); ok {
		d.flow = fi
	}
	run, err := d.run(ctx, bundle.WorkflowID(b.Manifest.BundleID, b.Manifest.BundleVersion, ep), vars)
	d.printRecords()
	if err != nil {
		if conflict := (*runtime.IdentityConflictError)(nil); errors.As(err, &conflict) {
			return fail(fmt.Errorf("--run-id %s: %w (continue a run with the bundle entrypoint and --input it was started with)", f.runID, err))
		}
		if ctx.Err() != nil {
			err = errors.New("interrupted")
		}
		fail(err)
		if d.runID != "" {
			f.printContinue(stderr, ds, d.runID, d.unanswered, d.unansweredRun)
		}
		return 1
	}
	if err := printRunJSON(stdout, run); err != nil {
		return fail(err)
	}
	switch {
	case run.Status == durable.RunWaiting || run.Status == durable.RunRunning ||
		run.Status == durable.RunCompleted && d.unanswered != nil:
		// A completed run whose listener asks a question nobody answered
		// is not done with: its session stays open (listeners not
		// stopped) until the question is answered, as a waiting run's.
		f.printContinue(stderr, ds, run.RunID, d.unanswered, d.unansweredRun)
		return exitWaiting
	case run.Status == durable.RunCompleted:
		return 0
	case d.unanswered != nil:
		// Failed or cancelled: that is the outcome, but the listener's
		// question can still be answered by continuing the run.
		f.printContinue(stderr, ds, run.RunID, d.unanswered, d.unansweredRun)
	}
	return 1
}

// defaultEntrypoint is the flow bundle run starts when none is named: the
// bundle's only entrypoint, else its default_entrypoint. Otherwise it
// refuses, as the gateway's start_run does (gateway-api §3.2 "Flow
// selection rules"), rather than take the manifest's first: which flow
// runs must not depend on the order of a list.
func defaultEntrypoint(b *bundle.Bundle) (string, error) {
	m := b.Manifest
	switch {
	case len(m.Entrypoints) == 1:
		return m.Entrypoints[0].FlowID, nil
	case m.DefaultEntrypoint != "":
		return m.DefaultEntrypoint, nil
	case len(m.Entrypoints) == 0:
		return "", fmt.Errorf("bundle %s has no entrypoint", b.Ref())
	}
	ids := make([]string, len(m.Entrypoints))
	for i, e := range m.Entrypoints {
		ids[i] = e.FlowID
	}
	return "", fmt.Errorf("bundle %s has %d entrypoints (%s) and no default_entrypoint: "+
		"name the flow to run as FILE:flow or with --flow flow", b.Ref(), len(ids), strings.Join(ids, ", "))
}

// printRunJSON prints the outcome of a run on stdout.
func printRunJSON(stdout io.Writer, run *durable.RunState) error {
	out := map[string]any{"run_id": run.RunID, "workflow_id": run.WorkflowID, "status": string(run.Status), "output": run.Output}
	if run.Error != "" {
		out["error"] = run.Error
	}
	if run.Waiting != nil {
		out["waiting"] = run.Waiting.Map()
	}
	text, err := pyjson.Marshal(out, pyjson.Style{SortKeys: true, Indent: 2})
	if err != nil {
		return fmt.Errorf("encoding run %s: %w", run.RunID, err)
	}
	// A failed write is reported by the command's outWriter as it exits.
	fmt.Fprintln(stdout, string(text))
	return nil
}

// printContinue tells, on stderr, how to continue run id, which the
// data dir keeps (or that it was not kept: a temporary data dir).
func (f *runFlags) printContinue(stderr io.Writer, ds *dataStore, id string, question *durable.WaitState, asker string) {
	if ds.temp {
		fmt.Fprintf(stderr, "bundle run: run %s was kept in a temporary data dir, removed on exit; "+
			"give --data-dir DIR to keep a run that can be continued\n", id)
		return
	}
	fmt.Fprintf(stderr, "bundle run: run %s is kept in %s; continue it with:\n  %s\n", id, f.dataDir, f.continueCommand(id))
	switch {
	case question != nil && asker != "":
		fmt.Fprintf(stderr, "  (its run %s waits for an answer to %q: add --answer TEXT, or type it at the prompt)\n",
			asker, question.Prompt)
	case question != nil:
		fmt.Fprintf(stderr, "  (it waits for an answer to %q: add --answer TEXT, or type it at the prompt)\n", question.Prompt)
	}
}

// printStarted names run id on stderr as soon as it exists, with the
// command that continues it: a process killed outright (kill -9, out of
// memory) prints nothing more, and the ledger lines show a short id only.
func (f *runFlags) printStarted(stderr io.Writer, ds *dataStore, id string) {
	if ds.temp {
		return
	}
	fmt.Fprintf(stderr, "bundle run: run %s in %s; if interrupted, continue it with:\n  %s\n", id, f.dataDir, f.continueCommand(id))
}

// continueCommand is the shell command that continues run id.
func (f *runFlags) continueCommand(id string) string {
	args := []string{"abstractgateway", "bundle", "run", f.target}
	if f.flow != "" {
		args = append(args, "--flow", f.flow)
	}
	args = append(args, "--data-dir", f.dataDir)
	if f.store != storeAuto {
		args = append(args, "--store", string(f.store))
	}
	if f.set["input"] {
		args = append(args, "--input", f.input)
	}
	return shellCommand(append(args, "--run-id", id)...)
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
