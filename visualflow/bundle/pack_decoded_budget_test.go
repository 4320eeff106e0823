package bundle

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Packing reads VisualFlow files that may come from anyone (a shared flows
// folder, a downloaded flow): each file chosen by the subflow ids of the
// one before. Reading a bundle estimates each JSON file's decoded size from
// its text and refuses a bundle past maxDecodedSize (read.go,
// decoded_budget_test.go); packing decoded every file with no such budget,
// so a small flow file decoding to a huge structure took the memory, and
// the bundle it built was one no reader would open. Spec visualflow.md
// §7.3 (packing) and §7 (a bundle is what a host reads); the limits are
// this package's own, Python's packer has none.

// paddedJSON is the JSON of flow with a "pad" member holding n one-member
// objects: 8 bytes of text each, a map each once decoded.
func paddedJSON(t *testing.T, flow map[string]any, n int) string {
	t.Helper()
	pad := strings.TrimSuffix(strings.Repeat(`{"a":0},`, n), ",")
	return strings.TrimSuffix(mustJSON(t, flow), "}") + `,"pad":[` + pad + "]}"
}

// packMeasured packs root.json of dir and returns what the pack allocated
// in all (an upper bound of how much the heap grew during it).
func packMeasured(dir string) (*Bundle, uint64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	runtime.ReadMemStats(&after)
	return b, after.TotalAlloc - before.TotalAlloc, err
}

func TestPackRefusesRootFlowDecodingPastBudget(t *testing.T) {
	lowerDecodedBudget(t, 8<<20)
	dir := t.TempDir()
	// 1 MiB of text, far under the 64 MiB file limit; ~50 MiB decoded.
	writeFile(t, filepath.Join(dir, "root.json"), []byte(paddedJSON(t, leafFlow("root"), 1<<17)))
	b, alloc, err := packMeasured(dir)
	runtime.KeepAlive(b)
	if !errors.Is(err, errDecodedTooLarge) || !strings.Contains(err.Error(), "root.json") || !strings.Contains(err.Error(), "limit 8.0 MiB") {
		t.Fatalf("packing a 1 MiB root flow decoding to ~50 MiB: err = %v (the pack allocated %d MiB); want errDecodedTooLarge naming root.json and the 8.0 MiB limit", err, alloc>>20)
	}
	t.Logf("refused after allocating %d KiB in all: %v", alloc>>10, err)
	if alloc > 16<<20 {
		t.Errorf("refusing the root flow allocated %d MiB; want it refused before decoding (< 16 MiB)", alloc>>20)
	}
}

func TestPackRefusesSubflowDecodingPastBudget(t *testing.T) {
	lowerDecodedBudget(t, 8<<20)
	dir := packDir(t, map[string]map[string]any{"root": packFlow("root", "child")})
	writeFile(t, filepath.Join(dir, "child.json"), []byte(paddedJSON(t, leafFlow("child"), 1<<17)))
	b, alloc, err := packMeasured(dir)
	runtime.KeepAlive(b)
	if !errors.Is(err, errDecodedTooLarge) || !strings.Contains(err.Error(), "child.json") || !strings.Contains(err.Error(), "limit 8.0 MiB") {
		t.Fatalf("packing a 1 MiB subflow decoding to ~50 MiB: err = %v (the pack allocated %d MiB); want errDecodedTooLarge naming child.json and the 8.0 MiB limit", err, alloc>>20)
	}
	t.Logf("refused after allocating %d KiB in all: %v", alloc>>10, err)
	if alloc > 16<<20 {
		t.Errorf("refusing the subflow allocated %d MiB; want it refused before decoding (< 16 MiB)", alloc>>20)
	}
}

// The budget is the bundle's, as a reader charges it: flows each under it
// are refused together once their sum is past it.
func TestPackRefusesFlowsDecodingPastBudgetTogether(t *testing.T) {
	flows := map[string]map[string]any{
		"root": packFlow("root", "a"), "a": packFlow("a", "b"), "b": packFlow("b", "c"), "c": leafFlow("c"),
	}
	dir := t.TempDir()
	var cost int64
	for id, f := range flows {
		text := paddedJSON(t, f, 1<<14)
		cost = max(cost, decodedCostOf(t, text))
		writeFile(t, filepath.Join(dir, id+".json"), []byte(text))
	}
	// Each flow alone is under a third of the budget; the four are past it.
	lowerDecodedBudget(t, 3*cost+cost/2)
	_, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if !errors.Is(err, errDecodedTooLarge) || !strings.Contains(err.Error(), "c.json") {
		t.Fatalf("four flows each a third of the decoded budget: err = %v; want errDecodedTooLarge naming c.json, the fourth", err)
	}

	// Under the budget the same files pack.
	lowerDecodedBudget(t, 4*cost+cost/2)
	if _, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{}); err != nil {
		t.Fatalf("four flows within the decoded budget: %v", err)
	}
}
