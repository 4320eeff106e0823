package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/benchwork"
)

// silentBenchChildEnv, when set, makes this test binary, run as the bench
// child, exit 0 having printed no sample.
const silentBenchChildEnv = "AGW_TEST_BENCH_SILENT_CHILD"

func init() {
	if os.Getenv(silentBenchChildEnv) != "" && len(os.Args) > 1 && os.Args[1] == "bench" {
		os.Exit(0)
	}
}

// TestBenchChildWithoutSamplesFails: a child process that exits 0 but
// prints fewer samples than the workloads it measured is a failure of
// those workloads (exit 1, naming the pair), not a silently missing line.
func TestBenchChildWithoutSamplesFails(t *testing.T) {
	t.Setenv(silentBenchChildEnv, "1")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"bench", "--stores", benchwork.StoreMemory, "--workloads", benchwork.W2AskResume,
		"--runs", "1", "--repeats", "1", "--ceiling-seconds", "0", "--dir", t.TempDir()}, &stdout, &stderr)
	pair := benchwork.W2AskResume + "/" + benchwork.StoreMemory
	if code != 1 || stdout.Len() != 0 || !strings.Contains(stderr.String(), pair) {
		t.Fatalf("silent child: exit %d, stdout %q, stderr %q; want exit 1 naming %s", code, stdout.String(), stderr.String(), pair)
	}
}

// TestBenchLedgerReadHasNoCeilingRatio: W4 (ledger reads) commits
// nothing, so its line carries no go_vs_ceiling or commits_per_s, while
// W1 on the same SQLite store does (benchwork.Sample.GoVsCeiling: the
// workloads that commit, W1 to W3b).
func TestBenchLedgerReadHasNoCeilingRatio(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the ceilings")
	}
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{
		"--stores", benchwork.StoreSQLite, "--workloads", benchwork.W1Chain + "," + benchwork.W4LedgerRead, "--runs", "3", "--repeats", "1",
		"--isolate=false", "--ceiling-seconds", "0.01", "--ceiling-samples", "1", "--dir", t.TempDir(),
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	_, lines := benchLines(t, stdout.String())
	w1, w4 := lines[benchwork.W1Chain+"/"+benchwork.StoreSQLite], lines[benchwork.W4LedgerRead+"/"+benchwork.StoreSQLite]
	if w1 == nil || w4 == nil || w1["go_vs_ceiling"] == nil {
		t.Fatalf("want W1 (with go_vs_ceiling) and W4 lines:\n%s", stdout.String())
	}
	for _, k := range []string{"go_vs_ceiling", "commits_per_s"} {
		if v, ok := w4[k]; ok {
			t.Errorf("W4 line has %s = %v; a workload that does not commit has no ceiling ratio", k, v)
		}
	}
}
