package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// The example run stops at its question when nobody answers, and a second
// invocation on the same data directory continues that same run.
func TestExampleContinuesWaitingRun(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	ctx := context.Background()
	invoke := func(answer string) string {
		st, err := sqlite.New(ctx, sqlite.Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		reg, _ := runtime.NewRegistry(exampleWorkflow())
		rt, _ := runtime.New(runtime.Config{Store: st, Registry: reg})
		var out bytes.Buffer
		if err := exampleRun(ctx, rt, answer, strings.NewReader(""), &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	first := invoke("")
	if !strings.Contains(first, "started run") || !strings.Contains(first, "waits for an answer") {
		t.Fatalf("first invocation:\n%s", first)
	}
	second := invoke("yes")
	if !strings.Contains(second, "continuing run") || !strings.Contains(second, `completed: {"answer":"yes","shipped":true}`) {
		t.Fatalf("second invocation:\n%s", second)
	}
	runID := strings.Fields(first[strings.Index(first, "started run"):])[2]
	if !strings.Contains(second, runID) {
		t.Fatalf("second invocation did not continue run %s:\n%s", runID, second)
	}
}
