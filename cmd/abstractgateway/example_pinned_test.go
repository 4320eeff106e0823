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

// exampleWithStdin runs the example workflow to its end in a fresh store,
// answering the question with stdin, and returns what it printed.
func exampleWithStdin(t *testing.T, stdin string) string {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), sqliteFile)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg, _ := runtime.NewRegistry(exampleWorkflow())
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := exampleRun(ctx, rt, "", strings.NewReader(stdin), &out); err != nil {
		t.Fatalf("exampleRun: %v\n%s", err, out.String())
	}
	return out.String()
}

// TestExampleAnswerFromStdinIsTrimmed: the answer typed on stdin is
// taken without its surrounding blanks and newline.
func TestExampleAnswerFromStdinIsTrimmed(t *testing.T) {
	t.Parallel()
	if out := exampleWithStdin(t, "  yes \n"); !strings.Contains(out, `completed: {"answer":"yes","shipped":true}`) {
		t.Fatalf("answer \"  yes \\n\" on stdin:\n%s", out)
	}
}

// TestExampleLastLineWithoutNewlineIsAnAnswer: a last stdin line with
// no newline (`printf YES | abstractgateway example`) is still the answer,
// and "yes" ships the order in any letter case.
func TestExampleLastLineWithoutNewlineIsAnAnswer(t *testing.T) {
	t.Parallel()
	if out := exampleWithStdin(t, "YES"); !strings.Contains(out, `completed: {"answer":"YES","shipped":true}`) {
		t.Fatalf("answer \"YES\" at EOF on stdin:\n%s", out)
	}
}

// TestExampleRefusesAnEmptyDataDir: `example --data-dir ""` is a usage
// error (exit 2) naming --data-dir, not a run in a throwaway directory that
// could never be continued.
func TestExampleRefusesAnEmptyDataDir(t *testing.T) {
	t.Parallel()
	code, out, errOut := runExampleCommand(t, "--data-dir", "", "--answer", "yes")
	if code != 2 || !strings.Contains(errOut, "--data-dir") || strings.Contains(out, "started run") {
		t.Fatalf("example --data-dir \"\": exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
