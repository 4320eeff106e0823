package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// commandExecEnv makes this test binary act as the abstractgateway
// executable (main's signal handling included), so a test can run the
// command as a real process and kill it.
const commandExecEnv = "AGW_TEST_COMMAND_EXEC"

func init() {
	if os.Getenv(commandExecEnv) == "1" {
		os.Exit(runMain(os.Args[1:])) // main's
	}
}

// A bundle run killed with SIGKILL (the OOM killer, a reboot, `kill -9`
// of a stuck process) leaves its run in --data-dir, where --run-id ID
// continues it "where it stopped: ... nothing it already did runs
// again". The command printed the run's id only at the end (the JSON on
// stdout, the continue line on stderr) while its ledger lines name the run
// by the first 8 characters of its id, which --run-id does not accept: so
// after a kill nothing it printed let the user continue the run, and
// running the same command again started a second run repeating every
// effect of the first. It now names the run, with the continue command, as
// soon as the run exists.
func TestKilledBundleRunPrintedTheIDThatContinuesIt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	path := packMinuteNap(t)
	data := filepath.Join(t.TempDir(), "data")

	cmd := exec.Command(exe, "bundle", "run", path, "--data-dir", data)
	cmd.Env = append(os.Environ(), commandExecEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var printed strings.Builder
	waiting := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		b, _ := io.ReadAll(stdout)
		mu.Lock()
		printed.Write(b)
		mu.Unlock()
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			mu.Lock()
			printed.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if strings.Contains(sc.Text(), "waiting until") {
				once.Do(func() { close(waiting) })
			}
		}
	}()
	select {
	case <-waiting:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		wg.Wait()
		_ = cmd.Wait()
		t.Fatalf("the run never reached its wait:\n%s", printed.String())
	}
	// The run is durable now (it waits for its subflow's timer): kill it.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	_ = cmd.Wait()

	ctx := context.Background()
	st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(data, "runtime.sqlite3")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.RunIndex(ctx, &store.RunIndexParams{RootOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("data dir holds %d root runs, want 1: %+v", len(rows), rows)
	}
	id := rows[0].RunID
	if rows[0].Status != "waiting" {
		t.Fatalf("run %s is %s, want waiting", id, rows[0].Status)
	}
	out := printed.String()
	if !strings.Contains(out, id) {
		t.Errorf("bundle run was killed with its run %s waiting in %s, but nothing it printed names that run "+
			"in a form --run-id accepts, so the run cannot be continued and running the command again "+
			"starts another one; it printed:\n%s", id, data, out)
	}
}

// packMinuteNap packs the nap flows with a one-minute wait_until in the
// subflow: a `bundle run` of it waits long enough to be interrupted.
func packMinuteNap(t *testing.T) string {
	t.Helper()
	return packFlows(t, t.TempDir(), "parent.json", map[string]string{
		"parent.json": napParentFlow,
		"nap.json":    strings.Replace(napChildFlow, `"duration":0.2`, `"duration":60`, 1),
	})
}
