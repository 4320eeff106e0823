package bundle

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The reader's budget was on raw bytes only (64 MiB a file, 256 MiB a
// bundle, read.go), but a bundle is hostile input and decoding JSON into
// map[string]any takes many times its text: `{"a":0},` (8 bytes) becomes a
// map of its own, ~370 bytes on the heap, so four legal 64 MiB flows could
// make the process hold gigabytes. Reading now estimates the decoded size of
// each JSON file from its text before decoding it and refuses a bundle past
// maxDecodedSize, naming the file (spec visualflow.md §7: a bundle is a zip
// a host loads; the limits are this package's own, Python's reader has
// none).

// lowerDecodedBudget sets maxDecodedSize for one test. Tests calling it
// must not be parallel: the variable is the package's.
func lowerDecodedBudget(t *testing.T, n int64) {
	t.Helper()
	old := maxDecodedSize
	maxDecodedSize = n
	t.Cleanup(func() { maxDecodedSize = old })
}

// paddedFlow returns the JSON of a leaf flow with a "pad" member holding n
// one-member objects: 8 bytes of text each, a map each once decoded.
func paddedFlow(t *testing.T, id string, n int) string {
	t.Helper()
	base := mustJSON(t, leafFlow(id))
	var sb strings.Builder
	sb.Grow(len(base) + 8*n + 16)
	sb.WriteString(strings.TrimSuffix(base, "}"))
	sb.WriteString(`,"pad":[`)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"a":0}`)
	}
	sb.WriteString("]}")
	return sb.String()
}

// readMeasured reads data as a bundle and returns what the read allocated
// in all (an upper bound of how much the heap grew during it).
func readMeasured(data []byte, name string) (*Bundle, uint64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b, err := ReadBytes(data, name)
	runtime.ReadMemStats(&after)
	return b, after.TotalAlloc - before.TotalAlloc, err
}

func TestFlowDecodingPastBudgetIsRefused(t *testing.T) {
	lowerDecodedBudget(t, 8<<20)
	// 1 MiB of text, far under the raw limits; ~50 MiB once decoded.
	flow := paddedFlow(t, "main", 1<<17)
	data := makeZip(t, map[string]string{
		"manifest.json":   mustJSON(t, fixtureManifest(fixtureOptions{ID: "inflate", Flows: []string{"main"}})),
		"flows/main.json": flow,
	})
	b, alloc, err := readMeasured(data, "inflate.flow")
	runtime.KeepAlive(b)
	if err == nil {
		t.Fatalf("a %d KiB flow that decodes to ~50 MiB loaded under an 8 MiB decoded budget (the read allocated %d MiB)",
			len(flow)>>10, alloc>>20)
	}
	if !errors.Is(err, errDecodedTooLarge) || !strings.Contains(err.Error(), "flows/main.json") || !strings.Contains(err.Error(), "limit 8.0 MiB") {
		t.Errorf("err = %v; want errDecodedTooLarge naming flows/main.json and the 8.0 MiB limit", err)
	}
	t.Logf("refused after allocating %d KiB in all: %v", alloc>>10, err)
	// Refused from its text: the read allocates about the raw bytes (zip
	// inflation, io.ReadAll's growth), not the ~50 MiB of decoded values.
	if alloc > 16<<20 {
		t.Errorf("refusing the bundle allocated %d MiB; want it refused before decoding (< 16 MiB)", alloc>>20)
	}
}

func TestFlowsDecodingPastBudgetTogetherAreRefused(t *testing.T) {
	one := paddedFlow(t, "f0", 1<<14)
	cost := decodedCostOf(t, one)
	// Each flow alone is a third of the budget; the four together are past it.
	lowerDecodedBudget(t, 3*cost+cost/2)
	ids := []string{"f0", "f1", "f2", "f3"}
	files := map[string]string{"manifest.json": mustJSON(t, fixtureManifest(fixtureOptions{ID: "four", Flows: ids}))}
	for _, id := range ids {
		files["flows/"+id+".json"] = paddedFlow(t, id, 1<<14)
	}
	_, err := ReadBytes(makeZip(t, files), "four.flow")
	if !errors.Is(err, errDecodedTooLarge) || !strings.Contains(err.Error(), "flows/f") {
		t.Fatalf("four flows each a third of the decoded budget: err = %v; want errDecodedTooLarge naming a flows/ entry", err)
	}

	// One entry named by two flow ids decodes into two maps: charged twice.
	lowerDecodedBudget(t, cost+cost/2)
	m := fixtureManifest(fixtureOptions{ID: "alias", Flows: []string{"f0", "f1"}})
	m["flows"] = map[string]any{"f0": "flows/f0.json", "f1": "flows/f0.json"}
	_, err = ReadBytes(makeZip(t, map[string]string{"manifest.json": mustJSON(t, m), "flows/f0.json": one}), "alias.flow")
	if !errors.Is(err, errDecodedTooLarge) {
		t.Fatalf("one entry named by two flow ids, each decode 2/3 of the budget: err = %v; want errDecodedTooLarge", err)
	}
}

func TestManifestDecodingPastBudgetIsRefused(t *testing.T) {
	lowerDecodedBudget(t, 8<<20)
	m := mustJSON(t, fixtureManifest(fixtureOptions{ID: "meta", Flows: []string{"main"}}))
	pad := strings.Repeat(`{"a":0},`, 1<<17)
	m = strings.TrimSuffix(m, "}") + `,"x_pad":[` + strings.TrimSuffix(pad, ",") + "]}"
	data := makeZip(t, map[string]string{"manifest.json": m, "flows/main.json": mustJSON(t, leafFlow("main"))})
	_, alloc, err := readMeasured(data, "meta.flow")
	if !errors.Is(err, errDecodedTooLarge) || !strings.Contains(err.Error(), "manifest.json") {
		t.Fatalf("a 1 MiB manifest decoding to ~50 MiB: err = %v (the read allocated %d MiB); want errDecodedTooLarge naming manifest.json", err, alloc>>20)
	}
	if alloc > 16<<20 {
		t.Errorf("refusing the bundle allocated %d MiB; want it refused before decoding (< 16 MiB)", alloc>>20)
	}
}

// The default budget leaves wide room for real bundles: each of the
// example bundles (manifest and flows) is estimated at a tiny fraction of
// it, and loads.
func TestSharedBundlesFitDecodedBudget(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedBundlesDir, "*.flow"))
	if len(files) == 0 {
		t.Skipf("no example bundles in %s; skipping", sharedBundlesDir)
	}
	for _, path := range files {
		if _, err := Read(path); err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
			continue
		}
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		var text, total int64
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			text += int64(len(data))
			total += decodedCostOf(t, string(data))
		}
		zr.Close()
		t.Logf("%s: %d bytes of JSON, estimated at %d KiB decoded (%.1fx; budget %d MiB)",
			filepath.Base(path), text, total>>10, float64(total)/float64(text), maxDecodedSize>>20)
		if total > maxDecodedSize/1000 {
			t.Errorf("%s: estimated at %d bytes decoded, more than a thousandth of the %d MiB budget", filepath.Base(path), total, maxDecodedSize>>20)
		}
	}
}

// decodedCost is meant to follow what decoding really keeps on the heap:
// under it, the budget would let a bundle take more than it says; far over
// it, real bundles would be refused early. Each shape is ~1 MiB of text.
func TestDecodedCostTracksHeldMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes some 100 MiB")
	}
	flow, _ := os.ReadFile(filepath.Join(sharedBundlesDir, "yoda@dev.flow"))
	list := func(item string, n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	var keys strings.Builder
	keys.WriteString("{")
	for i := range 1 << 16 {
		if i > 0 {
			keys.WriteByte(',')
		}
		fmt.Fprintf(&keys, `"key%d":0`, i)
	}
	keys.WriteString("}")
	shapes := map[string]string{
		"numbers":        list("0", 1<<19),
		"literals":       list("true", 1<<18),
		"short strings":  list(`"abcdefgh"`, 1<<17),
		"long strings":   list(`"`+strings.Repeat("x", 200)+`"`, 1<<12),
		"empty arrays":   list("[]", 1<<18),
		"empty objects":  list("{}", 1<<18),
		"small objects":  list(`{"a":0}`, 1<<17),
		"one big object": keys.String(),
	}
	if len(flow) > 0 {
		zr, err := zip.NewReader(bytes.NewReader(flow), int64(len(flow)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			if strings.HasPrefix(f.Name, "flows/") {
				rc, _ := f.Open()
				data, _ := io.ReadAll(rc)
				rc.Close()
				shapes["real flows"] = list(string(data), (1<<20)/max(len(data), 1))
			}
		}
	}
	for name, text := range shapes {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		v, err := DecodeFlow([]byte(`{"x":` + text + "}"))
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(v)
		if err != nil {
			t.Fatal(err)
		}
		held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		est := decodedCostOf(t, text)
		t.Logf("%-14s %7d bytes of text: held %9d (%4.1fx), estimated %9d (%4.1fx)",
			name, len(text), held, float64(held)/float64(len(text)), est, float64(est)/float64(len(text)))
		if float64(est) < 0.8*float64(held) || float64(est) > 3*float64(held) {
			t.Errorf("%s: estimated %d bytes, the heap held %d; want the estimate within 0.8x–3x of it", name, est, held)
		}
	}
}

// decodedCostOf is decodedCost of s, failing the test when it is not
// positive.
func decodedCostOf(t *testing.T, s string) int64 {
	t.Helper()
	n := decodedCost([]byte(s))
	if n <= 0 {
		t.Fatalf("decodedCost(%.40q…) = %d", s, n)
	}
	return n
}

// A bundle whose manifest and flow are estimated at exactly the decoded
// budget loads; one byte less of budget refuses it. A `>=` for `>` in
// chargeDecoded would refuse a bundle that fits.
func TestDecodedBudgetExactlyReachedIsAllowed(t *testing.T) {
	manifest := mustJSON(t, fixtureManifest(fixtureOptions{ID: "exact", Flows: []string{"main"}}))
	flow := mustJSON(t, leafFlow("main"))
	data := makeZip(t, map[string]string{"manifest.json": manifest, "flows/main.json": flow})
	cost := decodedCostOf(t, manifest) + decodedCostOf(t, flow)
	lowerDecodedBudget(t, cost)
	if _, err := ReadBytes(data, "exact.flow"); err != nil {
		t.Fatalf("a bundle estimated at exactly the %d-byte decoded budget: %v; want it read", cost, err)
	}
	lowerDecodedBudget(t, cost-1)
	if _, err := ReadBytes(data, "exact.flow"); !errors.Is(err, errDecodedTooLarge) {
		t.Fatalf("a bundle estimated one byte past the decoded budget: err = %v; want errDecodedTooLarge", err)
	}
}
