package artifact_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// pyArtifacts runs a Python snippet against the peer's FileArtifactStore
// on dir (argv[1]) and returns what it prints; it skips without python3
// or the peer source.
func pyArtifacts(t *testing.T, dir, body string) string {
	t.Helper()
	src := os.Getenv("PEER_SRC")
	if src == "" {
		src = "/work/peer/src"
	}
	if _, err := os.Stat(filepath.Join(src, "abstractruntime", "storage", "artifacts.py")); err != nil {
		t.Skipf("the Python AbstractRuntime source is not at %s: %v", src, err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("python3 not found: %v", err)
	}
	script := "import sys, json\nimport abstractruntime.core.models\n" +
		"from abstractruntime.storage.artifacts import FileArtifactStore\n" +
		"s = FileArtifactStore(sys.argv[1])\n" + body
	cmd := exec.Command(py, "-c", script, dir)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// doc.go: "FS keeps the Python FileArtifactStore layout, so both runtimes
// can read each other's artifacts". The layout includes
// artifacts/artifact_catalog.sqlite3 (spec §4.8: "upserted on every
// metadata write"), which Python's FileArtifactStore answers list_by_run,
// list_all, search and gc from, and rebuilds only when it is empty. FS
// writes no catalog rows, so on a directory Python has used (non-empty
// catalog) an artifact FS stores is invisible to Python's listings, and
// Python's gc() — whose referenced set comes from list_all — deletes its
// blob: the Go artifact's content is destroyed.
func TestPythonGCKeepsBlobsOfArtifactsFSStored(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pyArtifacts(t, dir, `s.store(b"written by python", content_type="text/plain", run_id="py-run")`)
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Put(ctx, artifact.PutParams{Content: []byte("written by go"), ContentType: "text/plain", RunID: "go-run"})
	if err != nil {
		t.Fatal(err)
	}
	listed := pyArtifacts(t, dir, `print(json.dumps([m.artifact_id for m in s.list_by_run("go-run")]))`)
	report := pyArtifacts(t, dir, `print(json.dumps(s.gc(dry_run=False)))`)
	if _, _, err := st.Get(ctx, m.ArtifactID); err != nil {
		t.Errorf("after Python's gc (report %s), Get of the artifact FS stored: %v", report, err)
	}
	if !strings.Contains(listed, m.ArtifactID) {
		t.Errorf("Python list_by_run(go-run) = %s, want it to list %s", listed, m.ArtifactID)
	}
}
