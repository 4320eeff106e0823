package main

// Found by a review of the command-line tool: each test reproduces a
// defect a user hit and failed before its fix. The numbered comments
// describe the behaviour as it was.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// cliRun runs "bundle run" in-process with the given stdin.
func cliRun(t *testing.T, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := bundleRunWith(context.Background(), args, stdin, &out, &errb)
	return code, out.String(), errb.String()
}

// cliResult decodes the run JSON bundle run prints on stdout.
func cliResult(t *testing.T, stdout string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("bundle run stdout is not JSON: %v\n%s", err, stdout)
	}
	return m
}

// 1. `bundle run FILE --data-dir D` stops at a question with exit 3 ("still
// waiting") and keeps the waiting run in D, but a second invocation on the
// same data dir never continues it: it starts a brand-new run (re-running
// every effect before the question) and the first run stays waiting
// forever. The example command on the same store continues its run; the
// README describes runs that "survive restarts and resume exactly where
// they stopped". Same after Ctrl-C at the prompt or during a wait_until.
//
// Adjusted to the owner's design: a second invocation does not pick a
// waiting run by itself (which one, of several, with which --input?); a
// new run starts, as before. Instead the command that leaves a run
// waiting (or is interrupted) prints the run id and the command that
// continues it, and --run-id continues that run: its question is answered
// and nothing it already did runs again. (Ctrl-C: see
// TestBundleRunInterruptedPrintsHowToContinue.)
func TestCLI_BundleRunContinuesTheWaitingRunOnTheSameDataDir(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	data := t.TempDir()

	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data)
	if code != exitWaiting {
		t.Fatalf("first invocation without an answer: exit %d, want %d\n%s%s", code, exitWaiting, out, errOut)
	}
	first := cliResult(t, out)
	if first["status"] != "waiting" {
		t.Fatalf("first invocation: %s", out)
	}
	id, _ := first["run_id"].(string)
	if want := "abstractgateway bundle run " + path + " --data-dir " + data + " --run-id " + id; !strings.Contains(errOut, want) {
		t.Errorf("exit 3 left run %s waiting without printing the command that continues it (%s):\n%s", id, want, errOut)
	}

	code, out, errOut = cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", id, "--answer", "happy")
	if code != 0 {
		t.Fatalf("second invocation with --run-id and --answer: exit %d\n%s%s", code, out, errOut)
	}
	second := cliResult(t, out)
	if second["run_id"] != id || second["status"] != "completed" {
		t.Errorf("second invocation with --run-id %s: run %v, status %v; want the waiting run completed\nstderr:\n%s",
			id, second["run_id"], second["status"], errOut)
	}
	if mood := second["output"].(map[string]any)["mood"]; mood != "happy" {
		t.Errorf("output mood = %v, want the --answer of the second invocation", mood)
	}

	// Nothing ran twice: each node of the run started once, and the data
	// dir holds that run and its one subflow run only.
	st, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(data, sqliteFile)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	started := map[string]int{}
	for _, r := range recs {
		if r.Status == durable.StepStarted {
			started[r.NodeID]++
		}
	}
	for node, n := range started {
		if n != 1 {
			t.Errorf("node %s of run %s started %d times, want once (ledger %v)", node, id, n, started)
		}
	}
	runs, err := st.RunIndex(context.Background(), &store.RunIndexParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Errorf("data dir holds %d runs, want 2 (the run and its subflow run): %+v", len(runs), runs)
	}
}

// loopFlow: a `for` loop of 6000 iterations (the spec's guard is 10000)
// whose body says the index with answer_user: 12,000 ledger records.
const loopFlow = `{"id":"loopy","name":"loopy","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"},{"id":"n","type":"number"}],"pinDefaults":{"n":6000}}},
 {"id":"for","type":"for","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"start","type":"number"},{"id":"end","type":"number"},{"id":"step","type":"number"}],"outputs":[{"id":"loop","type":"execution"},{"id":"done","type":"execution"},{"id":"i","type":"number"},{"id":"index","type":"number"}],"pinDefaults":{"start":0,"step":1}}},
 {"id":"say","type":"answer_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"message","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"message","type":"string"}]}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"for","targetHandle":"exec-in"},
 {"source":"start","sourceHandle":"n","target":"for","targetHandle":"end"},
 {"source":"for","sourceHandle":"loop","target":"say","targetHandle":"exec-in"},
 {"source":"for","sourceHandle":"i","target":"say","targetHandle":"message"},
 {"source":"for","sourceHandle":"done","target":"end","targetHandle":"exec-in"}]}`

// 2. A run that needs more steps than one tick's budget (MaxSteps 10000)
// between waits is left "running": the driver returns as soon as the tick
// does, prints status "running" and exits 3 ("still waiting") although
// nothing is awaited and the run would complete on the next tick. No
// message says why.
func TestCLI_BundleRunFinishesARunLongerThanOneTickBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "loopy.json")
	if err := os.WriteFile(src, []byte(loopFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	flow := filepath.Join(dir, "loopy.flow")
	if code, out, errOut := call(t, "pack", "-o", flow, src); code != 0 {
		t.Fatalf("pack: %d %s %s", code, out, errOut)
	}
	code, out, _ := cliRun(t, strings.NewReader(""), flow)
	res := cliResult(t, out)
	if code != 0 || res["status"] != "completed" {
		t.Fatalf("a 6000-iteration for loop (no wait anywhere): exit %d, status %v; want exit 0, completed\n%s", code, res["status"], out)
	}
}

// copyTree copies a directory of regular files.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// 3. --data-dir pointing at a data directory written by the Python
// gateway's default (JSON-file) backend: run_<id>.json / ledger_<id>.jsonl.
// The command neither uses that store nor refuses: it silently creates a
// second, SQLite store (runtime.sqlite3) beside the Python runs, writes
// its artifacts into the Python store's artifacts/ folder, and exits 0;
// the new run is invisible to the gateway that owns the directory.
func TestCLI_BundleRunOnAPythonJSONFileDataDir(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	data := t.TempDir()
	copyTree(t, filepath.Join("..", "..", "store", "e2etest", "testdata", "python", "json"), data)

	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--answer", "ok")
	_, sqlErr := os.Stat(filepath.Join(data, "runtime.sqlite3"))
	if code == 0 {
		res := cliResult(t, out)
		if _, err := os.Stat(filepath.Join(data, "run_"+res["run_id"].(string)+".json")); err != nil || sqlErr == nil {
			t.Errorf("--data-dir holds a Python JSON-file store (run_*.json, ledger_*.jsonl); bundle run exited 0 "+
				"but stored run %v in a new SQLite file beside it (runtime.sqlite3 created: %v, run_<id>.json written: %v): "+
				"it should use the JSON-file store or refuse the directory",
				res["run_id"], sqlErr == nil, err == nil)
		}
		return
	}
	if sqlErr == nil || errOut == "" {
		t.Errorf("refused the Python JSON-file data dir (exit %d) but created runtime.sqlite3 in it (%v) or said nothing: %q",
			code, sqlErr == nil, errOut)
	}
}

// 4. `bundle validate DIR` on a directory without any .flow bundle (empty,
// a typo'd folder of flow JSON files, ...) prints nothing and exits 0, so
// a CI step "validate bundles/" passes having validated nothing.
func TestCLI_ValidateADirectoryWithoutBundlesFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "greet.json"), []byte(askFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := call(t, "validate", dir)
	if code == 0 || strings.TrimSpace(out+errOut) == "" {
		t.Fatalf("validate of a directory holding no .flow bundle: exit %d, output %q; want a non-zero exit and a message saying no bundle was found", code, out+errOut)
	}
}

// 5. `abstractgateway bundle help` says run uses "an in-memory store";
// it runs on the embedded SQLite store (in a temporary directory unless
// --data-dir), as `bundle run -h` and the README say.
func TestCLI_BundleHelpDescribesTheStoreRunUses(t *testing.T) {
	t.Parallel()
	code, out, _ := call(t, "help")
	if code != 0 {
		t.Fatalf("bundle help: exit %d", code)
	}
	if strings.Contains(out, "in-memory store") {
		t.Errorf("bundle help says run uses an in-memory store; it uses the embedded SQLite store (--data-dir keeps it):\n%s", out)
	}
}

// 6. Asking for help with -h exits 2 (the usage-error code) for
// example and every bundle subcommand, while `help`, `bundle help` and
// `bench -h` exit 0 (and Go's own flag.ExitOnError exits 0 on -h).
// `example -h` also prints only "Usage of example:" and its flags.
func TestCLI_DashHExitsZero(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"bench", "-h"},
		{"example", "-h"},
		{"bundle", "run", "-h"},
		{"bundle", "pack", "-h"},
		{"bundle", "inspect", "-h"},
		{"bundle", "validate", "-h"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Errorf("abstractgateway %s: exit %d, want 0 (as for `help` and `bench -h`)", strings.Join(args, " "), code)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write(p []byte) (int, error) { return 0, errors.New("no space left on device") }

// 7. `bundle run ... > out.json` on a full disk (or a closed pipe): the run
// JSON cannot be written, the error is ignored, and the command exits 0
// with an empty out.json. (`bundle inspect` checks the write and exits 1.)
func TestCLI_BundleRunFailsWhenItsOutputCannotBeWritten(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	var errb bytes.Buffer
	code := bundleRunWith(context.Background(), []string{path, "--answer", "ok"}, strings.NewReader(""), failingWriter{}, &errb)
	if code == 0 {
		t.Errorf("bundle run exited 0 although writing the run JSON to stdout failed; stderr:\n%s", errb.String())
	}
}

// 8. stdin redirected from /dev/null (cron, systemd, nohup, `</dev/null`)
// is taken for a terminal (isTerminal only checks ModeCharDevice): the
// command prints an interactive "> " prompt, reads EOF and exits 3
// without the documented "(no --answer left and stdin is not a
// terminal)" explanation.
func TestCLI_DevNullStdinIsNotATerminal(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	code, _, errOut := cliRun(t, devnull, path)
	if code != exitWaiting {
		t.Fatalf("exit %d, want %d", code, exitWaiting)
	}
	if !strings.Contains(errOut, "stdin is not a terminal") {
		t.Errorf("stdin=/dev/null was treated as a terminal (prompted and read EOF) instead of saying no answer is left:\n%q", errOut)
	}
}

// 9. A manifest.json with trailing garbage after the JSON object is
// accepted (`validate` says ok, `run` runs it), although manifest.json
// must be a JSON object (spec §7.1), Python's json.loads refuses it
// ("Extra data") and the reader refuses the same defect in a flow file.
func TestCLI_ValidateRefusesAManifestWithTrailingData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "trailing@1.flow")
	writeZip(t, p, map[string]string{
		"manifest.json":    `{"bundle_format_version":"1","bundle_id":"trailing","bundle_version":"1","entrypoints":[{"flow_id":"shout"}],"flows":{"shout":"flows/shout.json"}} garbage`,
		"flows/shout.json": shoutFlow,
	})
	code, out, _ := call(t, "validate", p)
	if code != 1 || !strings.Contains(out, "FAIL") {
		t.Errorf("manifest.json with trailing data after the object: validate exit %d\n%s", code, out)
	}
}

// 10. `bundle pack` derives its default output file name from the bundle
// id without checking it: `-id ../escaped` writes ../escaped@0.0.0.flow
// outside the current directory, `-id a/b` fails with a temp-file error
// about a missing directory. A bundle id no registry accepts (spec §7.2:
// [A-Za-z0-9_-]) should be refused, or at least not become a path.
// Not parallel: it changes the working directory.
func TestCLI_PackDefaultOutputStaysInTheCurrentDirectory(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "shout.json")
	if err := os.WriteFile(src, []byte(shoutFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	code, out, errOut := call(t, "pack", "-id", "../escaped", src)
	if _, err := os.Stat(filepath.Join(root, "escaped@0.0.0.flow")); err == nil {
		t.Errorf("bundle pack -id ../escaped (exit %d) wrote %s outside the current directory %s\n%s%s",
			code, filepath.Join(root, "escaped@0.0.0.flow"), work, out, errOut)
	}
}
