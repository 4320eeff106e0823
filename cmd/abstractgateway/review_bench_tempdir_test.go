package main

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// bench's --dir: "default: a temporary directory, removed at the end".
// Found by mutating benchParent to keep that directory, which no test
// caught (every other bench test gives --dir).
func TestBenchRemovesItsTemporaryDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // os.MkdirTemp("", …) creates its directory here
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{"--stores", "memory", "--workloads", "w1_chain",
		"--runs", "2", "--repeats", "1", "--ceiling-seconds", "0", "--isolate=false"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("bench: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Fatalf("bench without --dir left %q in $TMPDIR; its temporary directory is to be removed at the end", names)
	}
}
