package sqlite_test

// A real Python AbstractRuntime 0.4.28 process and a
// shared store writing one SQLite file at the same time.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store/sqlite"
)

func peerPython(t *testing.T) (string, string) {
	t.Helper()
	src := os.Getenv("PEER_SRC")
	if src == "" {
		src = "/work/peer/src"
	}
	if _, err := os.Stat(filepath.Join(src, "abstractruntime", "storage", "sqlite.py")); err != nil {
		t.Skipf("no peer source: %v", err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("no python3: %v", err)
	}
	return py, src
}

// peerProc is a Python process driven line by line over stdin/stdout.
type peerProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *strings.Builder
}

// startPyPeer starts python3 on script (with the peer's sources on
// PYTHONPATH) and returns it to be driven with ask.
func startPyPeer(t *testing.T, script string, args ...string) *peerProc {
	t.Helper()
	py, src := peerPython(t)
	f := filepath.Join(t.TempDir(), "peer.py")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, append([]string{f}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &peerProc{cmd: cmd, in: in, out: bufio.NewScanner(out), stderr: &strings.Builder{}}
	p.out.Buffer(make([]byte, 1<<20), 1<<24)
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return p
}

func (p *peerProc) ask(t *testing.T, line string) string {
	t.Helper()
	if line != "" {
		fmt.Fprintln(p.in, line)
	}
	if !p.out.Scan() {
		t.Fatalf("python: no answer to %q: %v\n%s", line, p.out.Err(), p.stderr.String())
	}
	return p.out.Text()
}

// pyPeerScript opens the SQLite database argv[1] with the Python stores
// and answers one JSON request per stdin line (ops stress, ledger,
// commands, hold, load, save, sql) with one JSON line.
const pyPeerScript = `
import json, sys, uuid, time
from abstractruntime.core import models
from abstractruntime.storage import sqlite as S
from abstractruntime.storage import commands as C

db = S.SqliteDatabase(sys.argv[1])
runs, ledger, cmds = S.SqliteRunStore(db), S.SqliteLedgerStore(db), S.SqliteCommandStore(db)
cursor = S.SqliteCommandCursorStore(db)
print("ready", flush=True)
for line in sys.stdin:
    req = json.loads(line)
    op = req["op"]
    out = {}
    try:
        if op == "stress":
            errs = []
            for i in range(req["n"]):
                for rid in req["runs"]:
                    try:
                        ledger.append(models.StepRecord(run_id=rid, step_id=str(uuid.uuid4()), node_id="py%d" % i,
                            status=models.StepStatus.COMPLETED, idempotency_key="py-%s-%d" % (rid, i)))
                    except Exception as e:
                        errs.append("ledger: " + repr(e))
                try:
                    cmds.append(C.CommandRecord(command_id="py-%d" % i, run_id=req["runs"][0], type="pause", payload={"i": i}, ts=""))
                except Exception as e:
                    errs.append("command: " + repr(e))
            out["errors"] = errs
        elif op == "ledger":
            recs, cur = ledger.list_after(run_id=req["run"], after=0, limit=100000)
            conn = db.connection()
            seqs = [r[0] for r in conn.execute("SELECT seq FROM ledger WHERE run_id = ? ORDER BY seq", (req["run"],)).fetchall()]
            out = {"n": len(recs), "cursor": cur, "count": ledger.count(req["run"]), "seqs": seqs}
        elif op == "commands":
            recs, cur = cmds.list_after(after=0, limit=100000)
            out = {"seqs": [r.seq for r in recs], "ids": [r.command_id for r in recs], "last": cmds.get_last_seq()}
        elif op == "hold":
            # a write transaction held for req["s"] seconds
            conn = db.connection()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO command_cursors (consumer_id, cursor, updated_at) VALUES ('hold', 1, 'x') ON CONFLICT(consumer_id) DO UPDATE SET cursor = cursor + 1")
            print(json.dumps({"held": True}), flush=True)
            time.sleep(req["s"])
            conn.commit()
        elif op == "load":
            r = runs.load(req["run"])
            out = {"run": None if r is None else {"status": r.status.value, "current_node": r.current_node, "vars": r.vars}}
        elif op == "save":
            r = runs.load(req["run"])
            for k, v in req.get("vars", {}).items():
                r.vars[k] = v
            runs.save(r)
            out = {"ok": True}
        elif op == "sql":
            conn = db.connection()
            out = {"rows": [list(r) for r in conn.execute(req["q"], req.get("args", [])).fetchall()]}
        else:
            out = {"error": "unknown op " + op}
    except Exception as e:
        out = {"error": repr(e)}
    print(json.dumps(out), flush=True)
`

// A shared store opened while a Python process (the gateway it shares the
// file with) holds a write transaction longer than the busy timeout fails,
// as it should; but the error it returns says that the other process has
// the database open and that a store opens its database exclusively
// "unless Config.Shared is set", when Config.Shared is set and another
// process having the file open is the normal case. lockedHint (sqlite.go)
// is applied to every SQLITE_BUSY at open, whatever the store's mode.
func TestSharedOpenBusyErrorNamesTheCause(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "gateway.sqlite3")
	p := startPyPeer(t, pyPeerScript, path)
	if got := p.ask(t, ""); got != "ready" {
		t.Fatalf("python: %q %s", got, p.stderr.String())
	}
	if got := p.ask(t, `{"op":"hold","s":6.5}`); !strings.Contains(got, "held") {
		t.Fatalf("python: %q %s", got, p.stderr.String())
	}
	s, err := sqlite.New(ctx, sqlite.Config{Path: path, Shared: true})
	p.ask(t, "") // the hold's end
	if err == nil {
		s.Close()
		t.Skip("the open waited out the Python transaction (slow machine)")
	}
	if !strings.Contains(err.Error(), "SQLITE_BUSY") {
		t.Fatalf("shared open: %v; want SQLITE_BUSY", err)
	}
	if strings.Contains(err.Error(), "unless Config.Shared is set") {
		t.Errorf("a shared store's open, refused while a Python process held a write transaction, says: %v\n"+
			"the hint is for a store that owns its file; this store is shared (another process having the file open is expected), "+
			"what failed is waiting %s for that process's write transaction", err, "busy_timeout (5 s)")
	}
}
