package sqlite_test

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestKillAnywhereChild is the child of the kill test: it writes
// until killed, printing each acknowledged write.
func TestKillAnywhereChild(t *testing.T) {
	path := os.Getenv("SQLITE_KILL_TEST_DB")
	if path == "" {
		t.Skip("child only")
	}
	sync := os.Getenv("SQLITE_KILL_TEST_SYNC")
	ctx := t.Context()
	variant, _ := strconv.Atoi(os.Getenv("SQLITE_KILL_TEST_VARIANT"))
	cfg := sqlite.Config{Path: path, Synchronous: sync, CheckpointPages: 30, IdleCheckpoint: 3 * time.Millisecond}
	switch variant {
	case 1:
		cfg.CacheBytes = 20000 // evicts: slow paths, chosen-id creates asking the database
	case 2:
		cfg.UnbatchedWAL = true
	case 3:
		cfg.NoRedoLog = true
	}
	s, err := sqlite.New(ctx, cfg)
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	runs := make([]*durable.RunState, 6)
	nrec := make([]int, len(runs))
	for i := 0; ; i++ {
		k := i % len(runs)
		create := false
		if runs[k] == nil {
			id := fmt.Sprintf("run-%d", k)
			got, err := s.RunGet(ctx, id)
			switch {
			case err == nil:
				runs[k] = got
				n, err := s.LedgerCount(ctx, id)
				if err != nil {
					fmt.Println("ERR", err)
					return
				}
				nrec[k] = int(n)
			case errors.Is(err, store.ErrNotFound):
				runs[k], create = testRun(id), true
				nrec[k] = 0
			default:
				fmt.Println("ERR", err)
				return
			}
		}
		r := runs[k]
		r.Vars = map[string]any{"i": i, "pad": strings.Repeat("x", 100*(i%13)+(i%3)*10000)}
		rec := &durable.StepRecord{RunID: r.RunID, StepID: fmt.Sprint("s", i), Status: durable.StepCompleted, IdempotencyKey: fmt.Sprint("k", i)}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: create, RandomID: create && k%2 == 0, Records: []*durable.StepRecord{rec}}); err != nil {
			fmt.Println("ERR", err)
			return
		}
		nrec[k]++
		fmt.Printf("RUN %s %d %d %d\n", r.RunID, r.Version, i, nrec[k])
		if i%4 == 1 {
			big := strings.Repeat("y", (i%7)*3000)
			if err := s.LedgerAppend(ctx, r.RunID, []*durable.StepRecord{{RunID: r.RunID, StepID: fmt.Sprint("a", i), Status: durable.StepStarted, Result: big}}); err != nil {
				fmt.Println("ERR", err)
				return
			}
			nrec[k]++
			fmt.Printf("RUN %s %d %d %d\n", r.RunID, r.Version, i, nrec[k])
		}
		if i%37 == 36 {
			if err := s.Close(); err != nil {
				fmt.Println("ERR", err)
				return
			}
			if s, err = sqlite.New(ctx, cfg); err != nil {
				fmt.Println("ERR", err)
				return
			}
			for j := range runs {
				runs[j] = nil // read back from the reopened store
			}
		}
		if i%5 == 2 {
			res, err := s.CommandAppend(ctx, &durable.CommandRecord{RunID: r.RunID, Type: "pause", CommandID: fmt.Sprint("c", i, "-", os.Getpid())})
			if err != nil {
				fmt.Println("ERR", err)
				return
			}
			fmt.Printf("CMD %d\n", res.Seq)
			if err := s.CursorSave(ctx, "gw", res.Seq); err != nil {
				fmt.Println("ERR", err)
				return
			}
			fmt.Printf("CUR %d\n", res.Seq)
		}
	}
}

// TestKillAnywhere kills a real process, where the crash tests copy files
// with the writer turn held: a child process writes (commits from the
// cache and through the database, chosen-id and random-id creates, ledger
// appends, commands, cursors, closes and reopens) and is SIGKILLed at a
// random moment, sometimes while it opens and replays the previous life's
// redo log. Every write it acknowledged must be in the database when it is
// opened again (owned, owned without cache, shared), each run at its
// acknowledged state or the one write after it, its state and ledger
// together (doc.go "Redo log": a commit is durable when RunCommit returns
// and the database ends as a prefix of the writes in their order).
func TestKillAnywhere(t *testing.T) {
	for _, sync := range []string{"NORMAL", "FULL"} {
		for round := range 2 {
			path := filepath.Join(t.TempDir(), "k.sqlite3")
			lives := 3
			type ack struct {
				version int64
				i       int
				nrec    int
			}
			variant := rand.IntN(4)
			runs := map[string]ack{}
			var cmdSeq, cur int64
			for life := range lives {
				cmd := exec.Command(os.Args[0], "-test.run=^TestKillAnywhereChild$", "-test.count=1", "-test.v=false")
				cmd.Env = append(os.Environ(), "SQLITE_KILL_TEST_DB="+path, "SQLITE_KILL_TEST_SYNC="+sync, "SQLITE_KILL_TEST_VARIANT="+strconv.Itoa(variant))
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				var stderr strings.Builder
				cmd.Stderr = &stderr
				started := time.Now()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				watchdog := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Signal(syscall.SIGQUIT) })
				sc := bufio.NewScanner(out)
				want := 1 + rand.IntN(150)
				early := time.AfterFunc(time.Hour, func() {})
				if rand.IntN(3) == 0 { // sometimes while it opens (replaying the previous life's redo log)
					early = time.AfterFunc(time.Duration(rand.IntN(40))*time.Millisecond, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
				}
				var lines []string
				killed := false
				for sc.Scan() {
					lines = append(lines, sc.Text())
					if !killed && len(lines) >= want {
						_ = cmd.Process.Signal(syscall.SIGKILL)
						killed = true
					}
				}
				_ = cmd.Wait()
				early.Stop()
				if !watchdog.Stop() {
					t.Fatalf("%s: the child hung after %d lines (last %q); its goroutines:\n%s", sync, len(lines), lines[max(0, len(lines)-1):], stderr.String())
				}
				t.Logf("%s variant %d round %d life %d: %d lines in %v", sync, variant, round, life, len(lines), time.Since(started))
				for _, l := range lines {
					f := strings.Fields(l)
					switch f[0] {
					case "ERR":
						t.Fatalf("%s round %d life %d: child: %s", sync, round, life, l)
					case "RUN":
						v, _ := strconv.ParseInt(f[2], 10, 64)
						i, _ := strconv.Atoi(f[3])
						n, _ := strconv.Atoi(f[4])
						runs[f[1]] = ack{v, i, n}
					case "CMD":
						cmdSeq, _ = strconv.ParseInt(f[1], 10, 64)
					case "CUR":
						cur, _ = strconv.ParseInt(f[1], 10, 64)
					}
				}
				s, err := sqlite.New(t.Context(), sqlite.Config{Path: path, Synchronous: sync, IdleCheckpoint: -1, Shared: life%2 == 1, CacheBytes: int64(life%3 - 1)})
				if err != nil {
					t.Fatalf("%s round %d life %d: reopening after the kill: %v", sync, round, life, err)
				}
				for id, a := range runs {
					got, err := s.RunGet(t.Context(), id)
					if err != nil {
						t.Fatalf("%s round %d life %d: run %s acknowledged at version %d: %v", sync, round, life, id, a.version, err)
					}
					if got.Version < a.version || got.Version > a.version+1 {
						t.Errorf("%s round %d life %d: run %s at version %d, acknowledged %d", sync, round, life, id, got.Version, a.version)
					}
					recs, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: id})
					if err != nil {
						t.Fatal(err)
					}
					n := len(recs)
					okState := (got.Version == a.version && (n == a.nrec || n == a.nrec+1)) || (got.Version == a.version+1 && n == a.nrec+1)
					if !okState {
						t.Errorf("%s variant %d round %d life %d: run %s at version %d with %d records; acknowledged version %d with %d records",
							sync, variant, round, life, id, got.Version, n, a.version, a.nrec)
					}
					for j, rec := range recs {
						if rec.Seq != int64(j+1) {
							t.Errorf("%s: run %s record %d has seq %d", sync, id, j, rec.Seq)
							break
						}
					}
					if got.Version == a.version && fmt.Sprint(got.Vars["i"]) != fmt.Sprint(a.i) {
						t.Errorf("%s: run %s vars i=%v want %d", sync, id, got.Vars["i"], a.i)
					}
					// What the database holds is what the next life goes on from.
					i, _ := strconv.Atoi(fmt.Sprint(got.Vars["i"]))
					runs[id] = ack{got.Version, i, len(recs)}
				}
				if n, err := s.CommandLastSeq(t.Context()); err != nil || n < cmdSeq {
					t.Errorf("%s round %d life %d: last command seq %d (%v), acknowledged %d", sync, round, life, n, err, cmdSeq)
				}
				if c, err := s.CursorLoad(t.Context(), "gw"); err != nil || c < cur {
					t.Errorf("%s round %d life %d: cursor %d (%v), acknowledged %d", sync, round, life, c, err, cur)
				} else {
					cur = c
				}
				if n, err := s.CommandLastSeq(t.Context()); err == nil {
					cmdSeq = n
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if t.Failed() {
					return
				}
			}
		}
	}
}
