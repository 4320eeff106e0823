package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteFile refuses, and does not write, a bundle that would not read
// back (here a flow whose raw bytes are not JSON).
func TestWriteFileRefusesBundleThatWouldNotReadBack(t *testing.T) {
	m, err := ParseManifest([]byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "bad"}))))
	if err != nil {
		t.Fatal(err)
	}
	b := &Bundle{Manifest: m, Flows: map[string]map[string]any{"main": leafFlow("main")},
		FlowBytes: map[string][]byte{"main": []byte("{not json")}}
	path := filepath.Join(t.TempDir(), "bad.flow")
	if err := WriteFile(path, b); err == nil || !strings.Contains(err.Error(), "would not read back") {
		t.Fatalf("WriteFile of an unreadable bundle: err = %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("WriteFile left a file behind: stat err = %v", err)
	}
}

// Write stores each flow's raw bytes when available (§7.1 "raw bytes of
// the source file"), not a re-encoding of the decoded flow.
func TestWriteKeepsRawFlowBytes(t *testing.T) {
	m, err := ParseManifest([]byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "raw"}))))
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte("{\"id\":   \"main\", \"nodes\": [], \"edges\": [], \"n\": 1.50}\n")
	b := &Bundle{Manifest: m, Flows: map[string]map[string]any{"main": leafFlow("main")},
		FlowBytes: map[string][]byte{"main": raw}}
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadBytes(buf.Bytes(), "raw.flow")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.FlowBytes["main"], raw) {
		t.Fatalf("flow bytes after Write/Read = %q, want the raw bytes %q", back.FlowBytes["main"], raw)
	}
}
