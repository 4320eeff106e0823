package main

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// packFlows writes the flows (file name → JSON) into dir/src, packs the
// one named root and returns the bundle path.
func packFlows(t *testing.T, dir, root string, flows map[string]string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range flows {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, strings.TrimSuffix(root, ".json")+".flow")
	if code, stdout, stderr := call(t, "pack", "-o", out, filepath.Join(src, root)); code != 0 {
		t.Fatalf("pack: code %d: %s%s", code, stdout, stderr)
	}
	return out
}

// Ctrl-C (or SIGTERM) during a subflow's wait_until: the command says how
// to continue the run, and --run-id continues it, starting nothing again.
func TestBundleRunInterruptedPrintsHowToContinue(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "parent.json", map[string]string{
		"parent.json": napParentFlow,
		"nap.json":    strings.Replace(napChildFlow, `"duration":0.2`, `"duration":1`, 1),
	})
	data := t.TempDir()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuf
	done := make(chan int)
	go func() {
		done <- bundleRunWith(ctx, []string{path, "--data-dir", data}, strings.NewReader(""), &stdout, &stderr)
	}()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "waiting until") })
	cancel()
	if code := <-done; code != 1 {
		t.Fatalf("interrupted: exit %d, want 1\n%s", code, stderr.String())
	}
	// The line printed at the start names the run too, but it has scrolled
	// away by the time the user presses Ctrl-C: the command must come
	// again after "interrupted".
	errOut := stderr.String()
	last := strings.LastIndex(errOut, "bundle run: interrupted")
	if last < 0 {
		t.Fatalf("no \"interrupted\" message:\n%s", errOut)
	}
	i := strings.Index(errOut[last:], "--run-id ")
	if i < 0 {
		t.Fatalf("after \"interrupted\" the command that continues the run is not printed:\n%s", errOut[last:])
	}
	id := strings.Fields(errOut[last+i:])[1]
	if want := "abstractgateway bundle run " + path + " --data-dir " + data + " --run-id " + id; !strings.Contains(errOut[last:], want) {
		t.Fatalf("continue command missing, want %q in:\n%s", want, errOut)
	}

	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", id)
	res := cliResult(t, out)
	if code != 0 || res["run_id"] != id || res["status"] != "completed" {
		t.Fatalf("continuing run %s: exit %d\n%s%s", id, code, out, errOut)
	}
	if strings.Contains(errOut, "start_subworkflow") {
		t.Errorf("continuing the run started its subflow again:\n%s", errOut)
	}
}

// --run-id creates the run under that id when absent; on an existing run
// it needs the same identity (entrypoint, --input) and re-runs nothing.
func TestBundleRunRunIDIdentity(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	data := t.TempDir()
	args := []string{path, "--data-dir", data, "--run-id", "order-1", "--input", `{"name":"ada"}`}

	code, out, errOut := cliRun(t, strings.NewReader(""), append(args, "--answer", "fine")...)
	if res := cliResult(t, out); code != 0 || res["run_id"] != "order-1" {
		t.Fatalf("--run-id order-1 on an empty data dir: exit %d\n%s%s", code, out, errOut)
	}
	// Again: the completed run is returned as it is.
	code, out, errOut = cliRun(t, strings.NewReader(""), args...)
	if res := cliResult(t, out); code != 0 || res["status"] != "completed" || strings.Contains(errOut, "ask_user") {
		t.Fatalf("--run-id of a completed run: exit %d\n%s%s", code, out, errOut)
	}
	// Another --input is another run: refused, not mixed up.
	code, _, errOut = cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", "order-1", "--input", `{"name":"bob"}`)
	if code != 1 || !strings.Contains(errOut, "--run-id order-1") || !strings.Contains(errOut, "different identity") {
		t.Fatalf("--run-id with another --input: exit %d\n%s", code, errOut)
	}
	// A temporary data dir has no run to continue.
	if code, _, errOut := cliRun(t, strings.NewReader(""), path, "--run-id", "x"); code != 2 || !strings.Contains(errOut, "--data-dir") {
		t.Fatalf("--run-id without --data-dir: exit %d %s", code, errOut)
	}
}

// A Python JSON-file data dir is run on the JSON-file store, and a run it
// leaves waiting is continued there.
func TestBundleRunContinuesOnTheJSONFileStore(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	data := t.TempDir()
	copyTree(t, filepath.Join("..", "..", "store", "e2etest", "testdata", "python", "json"), data)

	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data)
	if code != exitWaiting {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	id := cliResult(t, out)["run_id"].(string)
	code, out, errOut = cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", id, "--answer", "ok")
	if res := cliResult(t, out); code != 0 || res["run_id"] != id {
		t.Fatalf("continuing %s: exit %d\n%s%s", id, code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(data, sqliteFile)); err == nil {
		t.Errorf("%s created in a JSON-file data dir", sqliteFile)
	}
	st, err := jsonfile.New(jsonfile.Config{Dir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.RunGet(context.Background(), id)
	if err != nil || run.Status != "completed" {
		t.Fatalf("run %s in the JSON-file store: %+v, %v", id, run, err)
	}
}

// --store and the auto rule: what each data dir gets.
func TestDataDirStoreSelection(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	runIn := func(data string, extra ...string) (int, string, string) {
		return cliRun(t, strings.NewReader(""), append([]string{path, "--data-dir", data, "--answer", "ok"}, extra...)...)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	// A Python gateway's SQLite data dir: its gateway.sqlite3 is the store,
	// opened shared (here while another connection holds a read
	// transaction open, as a running Python gateway may), and no
	// runtime.sqlite3 appears beside it.
	py := t.TempDir()
	pyDB := filepath.Join(py, pythonSQLiteFile)
	live := openPythonGatewayDB(t, pyDB)
	code, out, errOut := runIn(py)
	if code != 0 || exists(filepath.Join(py, sqliteFile)) {
		t.Fatalf("gateway.sqlite3 data dir: exit %d\n%s%s", code, out, errOut)
	}
	if err := live.Commit(); err != nil {
		t.Fatal(err)
	}
	var status string
	if err := live.db.QueryRow(`SELECT status FROM runs WHERE run_id = ?`, cliResult(t, out)["run_id"]).Scan(&status); err != nil || status != "completed" {
		t.Errorf("the run in gateway.sqlite3: status %q, %v", status, err)
	}

	// --store json on a new dir; --store sqlite forces SQLite beside JSON files.
	js := filepath.Join(t.TempDir(), "new")
	if code, out, errOut := runIn(js, "--store", "json"); code != 0 || !exists(filepath.Join(js, "run_"+cliResult(t, out)["run_id"].(string)+".json")) {
		t.Errorf("--store json: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runIn(js, "--store", "sqlite"); code != 0 || !exists(filepath.Join(js, sqliteFile)) {
		t.Errorf("--store sqlite: exit %d\n%s", code, errOut)
	}
	// auto on an empty dir: SQLite.
	empty := t.TempDir()
	if code, _, errOut := runIn(empty); code != 0 || !exists(filepath.Join(empty, sqliteFile)) {
		t.Errorf("auto on an empty dir: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runIn(empty, "--store", "postgres"); code != 2 || !strings.Contains(errOut, `--store "postgres"`) {
		t.Errorf("--store postgres: exit %d\n%s", code, errOut)
	}

	// example follows the same rule.
	var exOut, exErr bytes.Buffer
	if code := run(context.Background(), []string{"example", "--data-dir", py, "--answer", "yes"}, &exOut, &exErr); code != 0 || exists(filepath.Join(py, sqliteFile)) {
		t.Errorf("example on a gateway.sqlite3 data dir: exit %d\n%s", code, exErr.String())
	}
}

// liveConn is a connection to a database holding a read transaction open,
// as a running Python gateway's connection may.
type liveConn struct {
	db *sql.DB
	tx *sql.Tx
}

func (l *liveConn) Commit() error { return l.tx.Commit() }

// openPythonGatewayDB creates the database a Python gateway writes at
// path (WAL, the runtime's tables: runs and ledger suffice for the
// command) and leaves a read transaction open on it.
func openPythonGatewayDB(t *testing.T, path string) *liveConn {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`PRAGMA journal_mode=WAL`,
		`CREATE TABLE runs (run_id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, status TEXT NOT NULL,
		  wait_reason TEXT, wait_until TEXT, parent_run_id TEXT, actor_id TEXT, session_id TEXT,
		  created_at TEXT, updated_at TEXT, run_json TEXT NOT NULL)`,
		`CREATE TABLE ledger (run_id TEXT NOT NULL, seq INTEGER NOT NULL, record_json TEXT NOT NULL,
		  PRIMARY KEY (run_id, seq))`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM runs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return &liveConn{db: db, tx: tx}
}

// example runs on the JSON-file store of a Python data dir.
func TestExampleOnAJSONFileDataDir(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	copyTree(t, filepath.Join("..", "..", "store", "e2etest", "testdata", "python", "json"), data)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"example", "--data-dir", data, "--answer", "yes"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	st, err := jsonfile.New(jsonfile.Config{Dir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.RunIndex(context.Background(), &store.RunIndexParams{WorkflowID: "example_order"})
	if err != nil || len(rows) != 1 || rows[0].Status != "completed" {
		t.Fatalf("example runs in the JSON-file store: %+v, %v\n%s", rows, err, out.String())
	}
	if _, err := os.Stat(filepath.Join(data, sqliteFile)); err == nil {
		t.Errorf("%s created in a JSON-file data dir", sqliteFile)
	}
}

// -h prints the usage of every command on stdout, nothing on stderr.
func TestHelpGoesToStdout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"example", "-h"}, "Runs the example workflow"},
		{[]string{"example", "--help"}, "usage: abstractgateway example"},
		{[]string{"bench", "-h"}, "usage: abstractgateway bench"},
		{[]string{"bundle", "run", "-h"}, "--run-id"},
		{[]string{"bundle", "run", "x.flow", "--help"}, "usage: abstractgateway bundle run"},
		{[]string{"bundle", "pack", "-h"}, "usage: abstractgateway bundle pack"},
		{[]string{"bundle", "inspect", "-h"}, "usage: abstractgateway bundle inspect"},
		{[]string{"bundle", "validate", "-h"}, "usage: abstractgateway bundle validate"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errb)
		if code != 0 || !strings.Contains(out.String(), tc.want) || errb.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", strings.Join(tc.args, " "), code, out.String(), errb.String())
		}
	}
	// A bad flag is still a usage error, on stderr.
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"bundle", "pack", "-nope"}, &out, &errb); code != 2 || out.Len() != 0 ||
		!strings.Contains(errb.String(), "-nope") {
		t.Errorf("bad flag: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// Every command exits non-zero, with one message, when its output cannot
// be written.
func TestOutputWriteFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := packGreet(t, dir)
	for _, args := range [][]string{
		{"version"},
		{"help"},
		{"bundle", "help"},
		{"bundle", "inspect", path},
		{"bundle", "validate", path},
		{"bundle", "pack", "-o", filepath.Join(dir, "again.flow"), filepath.Join(dir, "src", "greet.json")},
		{"bundle", "run", path, "--answer", "ok"},
		{"bundle", "validate", "-h"},
		{"bundle", "run", "-h"},
		{"bench", "-h"},
		{"example", "-h"},
		{"example", "--data-dir", t.TempDir(), "--answer", "no"},
	} {
		var errb bytes.Buffer
		code := run(context.Background(), args, failingWriter{}, &errb)
		if code == 0 || strings.Count(errb.String(), "no space left on device") != 1 {
			t.Errorf("%s with a failing stdout: exit %d, stderr %q", strings.Join(args, " "), code, errb.String())
		}
	}
}

// pack checks -id and -version against the registry rules before they
// become a file name, and a root flow id that cannot be one.
func TestPackChecksIDAndVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "shout.json")
	if err := os.WriteFile(src, []byte(shoutFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-id", "../escaped"}, `-id "../escaped": a bundle id may hold only A-Z a-z 0-9 _ - (try "escaped")`},
		{[]string{"-id", "a/b"}, `-id "a/b"`},
		{[]string{"-id", "a.b"}, `-id "a.b"`},
		{[]string{"-version", "1/2"}, `-version "1/2"`},
		{[]string{"-version", "1 2"}, `-version "1 2"`},
	} {
		code, _, errOut := call(t, append(append([]string{"pack"}, tc.args...), src)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("pack %v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
	odd := filepath.Join(dir, "odd.json")
	if err := os.WriteFile(odd, []byte(strings.Replace(shoutFlow, `"id":"shout"`, `"id":"my flow"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := call(t, "pack", odd); code != 1 || !strings.Contains(errOut, `the root flow's id "my flow"`) {
		t.Errorf("pack of a root flow whose id is no file name: exit %d, %s", code, errOut)
	}
	out := filepath.Join(dir, "x.flow")
	if code, _, errOut := call(t, "pack", "-o", out, "-id", "ok_id-1", "-version", "1.0.0-rc.1", src); code != 0 {
		t.Errorf("valid -id and -version: exit %d, %s", code, errOut)
	}
}

// validate names each directory that holds no bundle, and, given several
// arguments, each bundle by its path.
func TestValidateNamesTheEmptyDirectory(t *testing.T) {
	t.Parallel()
	full, empty := t.TempDir(), t.TempDir()
	packGreet(t, full)
	code, out, errOut := call(t, "validate", full, empty)
	if code != 1 || !strings.Contains(out, "ok   "+filepath.Join(full, "greet@1.0.0.flow")) || !strings.Contains(errOut, "no bundles found in "+empty) {
		t.Errorf("validate of a directory with a bundle and one without: exit %d\n%s%s", code, out, errOut)
	}
}

// Readers that are no terminal: a pipe, /dev/null, a buffer.
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for name, in := range map[string]io.Reader{"pipe": r, "/dev/null": devnull, "buffer": strings.NewReader("")} {
		if isTerminal(in) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"greet@1.0.0.flow:main": "greet@1.0.0.flow:main",
		"/tmp/a_b-c":            "/tmp/a_b-c",
		"my data":               "'my data'",
		`{"a":"it's"}`:          `'{"a":"it'\''s"}'`,
		"":                      "''",
		"$HOME":                 "'$HOME'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
