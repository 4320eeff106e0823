package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// The example's help (and the README) name Ctrl-C at the question as the
// way to stop it and continue later. Interrupted there, the command failed
// with "context canceled" (exit 1); it now ends the way "no answer on
// stdin" does: the run is kept waiting and the command says how to
// continue it.
func TestExampleCtrlCAtQuestionKeepsTheRunWaiting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	st, err := sqlite.New(context.Background(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg, _ := runtime.NewRegistry(exampleWorkflow())
	rt, _ := runtime.New(runtime.Config{Store: st, Registry: reg})

	pr, pw := io.Pipe() // a terminal nobody types into
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuf
	done := make(chan error, 1)
	go func() { done <- exampleRun(ctx, rt, "", pr, &out) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "Ship the order?") {
		if time.Now().After(deadline) {
			t.Fatalf("no prompt:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel() // Ctrl-C at the question
	if err := <-done; err != nil {
		t.Fatalf("Ctrl-C at the question (the documented way to stop the example) failed the command: %v\noutput:\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "waits for an answer") {
		t.Fatalf("interrupted example did not say how to continue the run:\n%s", out.String())
	}
}
