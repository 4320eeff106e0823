package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestBundleRunSaysARunPausedByItsHostIsPaused: continuing a run whose
// subflow its host paused (in a wait_until) leaves it waiting (exit 3)
// and says the subflow is paused, rather than calling it a wait nothing
// in the command can deliver. Would break if the driver did not check
// the pause.
func TestBundleRunSaysARunPausedByItsHostIsPaused(t *testing.T) {
	t.Parallel()
	path := packMinuteNap(t)
	data := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuf
	done := make(chan int, 1)
	go func() {
		done <- bundleRunWith(ctx, []string{path, "--data-dir", data, "--run-id", "R1"}, strings.NewReader(""), &stdout, &stderr)
	}()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "waiting until") })
	cancel()
	if code := <-done; code != 1 {
		t.Fatalf("interrupted: exit %d\n%s", code, stderr.String())
	}

	bg := context.Background()
	st, err := sqlite.New(bg, sqlite.Config{Path: filepath.Join(data, sqliteFile)})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := runtime.NewRegistry()
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	root, err := rt.GetState(bg, "R1")
	if err != nil {
		t.Fatal(err)
	}
	child := runtime.WaitedChild(root)
	if child == "" {
		t.Fatalf("R1 waits on no subflow: %+v", root.Waiting)
	}
	if _, err := rt.Pause(bg, child, "maintenance"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", "R1")
	if res := cliResult(t, out); code != exitWaiting || res["status"] != "waiting" || !strings.Contains(errOut, "run "+child+" is paused by its host") {
		t.Fatalf("continuing a run whose subflow is paused: exit %d, status %v; want %d, waiting, and the pause named\n%s%s",
			code, res["status"], exitWaiting, out, errOut)
	}
}
