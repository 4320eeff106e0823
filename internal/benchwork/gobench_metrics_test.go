package benchwork

import (
	"flag"
	"testing"
)

// The Go benchmarks of the workloads report, beside their rate, what a
// run leaves in the store: ledger records, ledger bytes and state bytes
// per run (bench README: "report … the records/commits/bytes per run
// beside the rates"), as the bench command's JSON line does.
func TestGoBenchmarksReportRecordsAndBytesPerRun(t *testing.T) {
	bt := flag.Lookup("test.benchtime")
	if bt == nil {
		t.Fatal("no -test.benchtime flag")
	}
	old := bt.Value.String()
	if err := bt.Value.Set("5x"); err != nil {
		t.Fatal(err)
	}
	defer bt.Value.Set(old)
	r := testing.Benchmark(func(b *testing.B) { benchRun(b, benchEnv(b, StoreMemory), W1Chain) })
	if r.N == 0 {
		t.Fatal("the benchmark did not run")
	}
	// W1 on any store: 2 records a run (the completion and its status
	// event), each over a hundred bytes, and a state of about 1 KB.
	if got := r.Extra["records/op"]; got != 2 {
		t.Errorf("records/op = %v, want 2 (metrics %v)", got, r.Extra)
	}
	if got := r.Extra["ledger-B/op"]; got < 200 {
		t.Errorf("ledger-B/op = %v, want the two records' bytes (metrics %v)", got, r.Extra)
	}
	if got := r.Extra["state-B/op"]; got < 500 {
		t.Errorf("state-B/op = %v, want the final state's bytes (metrics %v)", got, r.Extra)
	}
}
