package artifact_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// catalogPath is Python's artifact catalog under dir.
func catalogPath(dir string) string {
	return filepath.Join(dir, "artifacts", artifact.CatalogFile)
}

// catalogRows reads every row of the catalog under dir, by artifact id.
func catalogRows(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+catalogPath(dir)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT * FROM artifact_catalog")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := map[string]any{}
		for i, c := range cols {
			row[c] = vals[i]
		}
		out[row["artifact_id"].(string)] = row
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// pyIDs runs expr (a list of ArtifactMetadata) in Python and returns the
// artifact ids, sorted.
func pyIDs(t *testing.T, dir, expr string) []string {
	t.Helper()
	var ids []string
	out := pyArtifacts(t, dir, "print(json.dumps([m.artifact_id for m in "+expr+"]))")
	if err := json.Unmarshal([]byte(out), &ids); err != nil {
		t.Fatalf("python printed %q: %v", out, err)
	}
	slices.Sort(ids)
	return ids
}

func mustPut(t *testing.T, st artifact.Store, p artifact.PutParams) *artifact.Metadata {
	t.Helper()
	m, err := st.Put(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func openFS(t *testing.T, dir string) *artifact.FS {
	t.Helper()
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return st
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The rows FS writes are the rows Python writes for the same .meta files:
// a copy of the directory, its catalog rebuilt by Python from the
// sidecars, has the same rows, column for column (JSON texts included).
func TestCatalogRowsEqualPythonRebuild(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pyArtifacts(t, dir, `s.store("déjà vu".encode(), content_type="text/markdown", run_id="py-run",
	tags={"kind": "note", "lang": "fr"}, metadata={"n": 1, "f": 0.5, "nested": {"z": [1, "é"], "a": None}},
	descriptor={"session_id": "sess-1", "workflow_id": "wf", "node_id": "n1", "producer": {"tool": "py"}})`)
	st := openFS(t, dir)
	a := mustPut(t, st, artifact.PutParams{
		Content: []byte("naïve ☃ text"), ContentType: "text/plain", RunID: "go-run",
		Tags:     map[string]string{"kind": "summary", "z": "last", "a": "first"},
		Metadata: map[string]any{"score": 0.25, "count": 3, "text": "ünïcode \"quoted\"\n", "list": []any{true, nil, map[string]any{"b": 2, "a": 1}}},
		Descriptor: map[string]any{
			"semantic_kind": "Report", "session_id": " sess-2 ", "workflow_id": "wf-go", "node_id": "node",
			"turn_id": "t-1", "task": "Summarize", "producer": map[string]any{"tool": "go", "v": 2},
			"source_refs": []any{map[string]any{"$artifact": "abc"}},
		},
	})
	mustPut(t, st, artifact.PutParams{Content: []byte(`{"k": "v"}`), ContentType: "application/json"}) // no run
	mustPut(t, st, artifact.PutParams{Content: []byte("\x89PNG not really"), ContentType: "image/png", RunID: "go-run"})
	if _, err := st.UpdateMetadata(ctx, artifact.UpdateParams{ID: a.ArtifactID, Tags: map[string]string{"extra": "ü"}, Metadata: map[string]any{"score": 1.5}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordAccess(ctx, artifact.AccessParams{ID: a.ArtifactID, Action: "download", ActorID: "me", SessionID: "sess-2"}); err != nil {
		t.Fatal(err)
	}

	copyDir := t.TempDir()
	copyTree(t, dir, copyDir)
	if n := pyArtifacts(t, copyDir, `print(s.rebuild_catalog())`); n != "4" {
		t.Fatalf("Python rebuilt %s rows, want 4", n)
	}
	got, want := catalogRows(t, dir), catalogRows(t, copyDir)
	if len(got) != len(want) {
		t.Errorf("FS's catalog has %d rows, Python's rebuild %d", len(got), len(want))
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("no row for %s", id)
			continue
		}
		for col, wv := range w {
			if !reflect.DeepEqual(g[col], wv) {
				t.Errorf("artifact %s column %s:\n got %#v\nwant %#v", id, col, g[col], wv)
			}
		}
	}
	// The JSON columns are written in Python's default style.
	if tags := got[a.ArtifactID]["tags_json"]; tags != `{"a": "first", "extra": "ü", "kind": "summary", "z": "last"}` {
		t.Errorf("tags_json = %v", tags)
	}
}

// A Go delete removes the row: Python stops listing the artifact, and a
// Python gc then keeps only the blobs of what is left.
func TestCatalogGoDeleteRemovesRow(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pyArtifacts(t, dir, `s.store(b"python", run_id="py-run")`)
	st := openFS(t, dir)
	a := mustPut(t, st, artifact.PutParams{Content: []byte("a"), RunID: "r1"})
	b := mustPut(t, st, artifact.PutParams{Content: []byte("b"), RunID: "r1"})
	c := mustPut(t, st, artifact.PutParams{Content: []byte("c"), RunID: "r2"})
	d := mustPut(t, st, artifact.PutParams{Content: []byte("d"), RunID: "r2"})
	if got, want := pyIDs(t, dir, `s.list_all()`), sortedIDs(a, b, c, d); !containsAll(got, want) {
		t.Fatalf("before the deletes Python lists %v, want %v among them", got, want)
	}
	if ok, err := st.Delete(ctx, a.ArtifactID); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if n, err := st.DeleteByRun(ctx, "r2"); err != nil || n != 2 {
		t.Fatalf("DeleteByRun = %d, %v", n, err)
	}
	if got, want := pyIDs(t, dir, `s.list_by_run("r1")`), sortedIDs(b); !slices.Equal(got, want) {
		t.Errorf("Python list_by_run(r1) = %v, want %v", got, want)
	}
	if got := pyIDs(t, dir, `s.list_by_run("r2")`); len(got) != 0 {
		t.Errorf("Python list_by_run(r2) = %v, want none", got)
	}
	if n := pyArtifacts(t, dir, `print(s.count())`); n != "2" {
		t.Errorf("Python count() = %s, want 2 (python's and b)", n)
	}
	pyArtifacts(t, dir, `s.gc(dry_run=False)`)
	if _, _, err := st.Get(ctx, b.ArtifactID); err != nil {
		t.Errorf("after Python's gc, Get(b): %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "artifacts", "blobs", a.BlobID+".bin")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("blob of the deleted artifact a survived Python's gc: %v", err)
	}
}

// Metadata rewrites (UpdateMetadata, RecordAccess, a second Put) update
// the row Python answers from.
func TestCatalogGoRewriteUpdatesRow(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pyArtifacts(t, dir, `s.store(b"python")`)
	st := openFS(t, dir)
	m := mustPut(t, st, artifact.PutParams{Content: []byte("go"), ContentType: "text/plain", RunID: "r", Tags: map[string]string{"kind": "draft"}})
	if _, err := st.UpdateMetadata(ctx, artifact.UpdateParams{ID: m.ArtifactID, Tags: map[string]string{"kind": "final"}, Descriptor: map[string]any{"session_id": "s-9"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordAccess(ctx, artifact.AccessParams{ID: m.ArtifactID, Action: "preview"}); err != nil {
		t.Fatal(err)
	}
	out := pyArtifacts(t, dir, `m = s.list_by_run("r")[0]
print(json.dumps([m.tags["kind"], m.descriptor.session_id, m.access.preview_count, s.count(session_id="s-9")]))`)
	if want := `["final", "s-9", 1, 1]`; out != want {
		t.Errorf("Python sees [kind, session_id, preview_count, count(session_id)] = %s, want %s", out, want)
	}
}

// Without a catalog FS creates none, whatever it writes or deletes.
func TestCatalogNotCreatedByFS(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openFS(t, dir)
	m := mustPut(t, st, artifact.PutParams{Content: []byte("x"), RunID: "r"})
	mustPut(t, st, artifact.PutParams{Content: []byte("y"), RunID: "r"})
	if _, err := st.UpdateMetadata(ctx, artifact.UpdateParams{ID: m.ArtifactID, Tags: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordAccess(ctx, artifact.AccessParams{ID: m.ArtifactID}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx, m.ArtifactID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeleteByRun(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GC(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.NewFS(dir); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(catalogPath(dir) + "*")
	if len(matches) > 0 {
		t.Errorf("FS created %v", matches)
	}
}

// Python may create the catalog while FS runs (its constructor does,
// filling it from the .meta files): FS's later writes reach it.
func TestCatalogCreatedWhileFSRuns(t *testing.T) {
	dir := t.TempDir()
	st := openFS(t, dir)
	a := mustPut(t, st, artifact.PutParams{Content: []byte("before"), RunID: "r"})
	pyArtifacts(t, dir, `s.store(b"python", run_id="r")`) // creates the catalog, with a's row
	if _, err := os.Stat(catalogPath(dir)); err != nil {
		t.Fatal(err)
	}
	b := mustPut(t, st, artifact.PutParams{Content: []byte("after"), RunID: "r"})
	if got := pyIDs(t, dir, `s.list_by_run("r")`); !containsAll(got, sortedIDs(a, b)) || len(got) != 3 {
		t.Errorf("Python list_by_run(r) = %v, want a, b and its own", got)
	}
}

// Artifacts whose row is missing (stored by an FS that did not keep the
// catalog) get it when an FS opens the directory.
func TestNewFSAddsMissingCatalogRows(t *testing.T) {
	dir := t.TempDir()
	pyArtifacts(t, dir, `s.store(b"python", run_id="r")`)
	st := openFS(t, dir)
	m := mustPut(t, st, artifact.PutParams{Content: []byte("go"), RunID: "r"})
	pyArtifacts(t, dir, fmt.Sprintf(`import sqlite3
with sqlite3.connect(sys.argv[1] + "/artifacts/artifact_catalog.sqlite3") as c:
    c.execute("DELETE FROM artifact_catalog WHERE artifact_id = ?", (%q,))`, m.ArtifactID))
	if got := pyIDs(t, dir, `s.list_by_run("r")`); slices.Contains(got, m.ArtifactID) {
		t.Fatalf("the row of %s was not removed: %v", m.ArtifactID, got)
	}
	openFS(t, dir)
	if got := pyIDs(t, dir, `s.list_by_run("r")`); !slices.Contains(got, m.ArtifactID) || len(got) != 2 {
		t.Errorf("after NewFS, Python list_by_run(r) = %v, want %s and its own", got, m.ArtifactID)
	}
}

// A catalog FS cannot update fails the write, after the .meta file: the
// artifact is on disk, but the caller learns Python's gc may drop it.
func TestFSPutReportsCatalogFailure(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openFS(t, dir)
	garbage := []byte("this is not an SQLite database, just text long enough to have a header.......................")
	if err := os.WriteFile(catalogPath(dir), garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	p := artifact.PutParams{Content: []byte("x"), RunID: "r"}
	_, err := st.Put(ctx, p)
	if err == nil || !strings.Contains(err.Error(), artifact.CatalogFile) {
		t.Fatalf("Put with an unreadable catalog: err = %v, want one naming the catalog", err)
	}
	if _, _, err := st.Get(ctx, artifact.ComputeID("r", p.Content)); err != nil {
		t.Errorf("the metadata is written before the row: Get = %v", err)
	}
	if b, _ := os.ReadFile(catalogPath(dir)); !slices.Equal(b, garbage) {
		t.Errorf("the catalog file was changed: %q", b)
	}
	if _, err := artifact.NewFS(dir); err == nil {
		t.Error("NewFS with an unreadable catalog succeeded")
	}
}

// Go and Python writing at once: SQLite's locking and both busy timeouts
// keep every row.
func TestCatalogConcurrentGoAndPythonWrites(t *testing.T) {
	dir := t.TempDir()
	pyArtifacts(t, dir, `pass`) // creates the catalog; skips without Python
	st := openFS(t, dir)
	const n = 100
	script := "import sys\nimport abstractruntime.core.models\nfrom abstractruntime.storage.artifacts import FileArtifactStore\n" +
		"s = FileArtifactStore(sys.argv[1])\nprint('ready', flush=True)\n" +
		fmt.Sprintf("for i in range(%d):\n    s.store(('py %%d' %% i).encode(), run_id='py')\n", n)
	src := os.Getenv("PEER_SRC")
	if src == "" {
		src = "/work/peer/src"
	}
	cmd := exec.Command("python3", "-c", script, dir)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Go writes once Python's loop starts, so that the two overlap.
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		_ = cmd.Wait()
		t.Fatalf("python printed %q (%v)\n%s", line, err, stderr.String())
	}
	var goIDs []string
	for i := range n {
		goIDs = append(goIDs, mustPut(t, st, artifact.PutParams{Content: fmt.Appendf(nil, "go %d", i), RunID: "go"}).ArtifactID)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	slices.Sort(goIDs)
	if got := pyIDs(t, dir, `s.list_by_run("go")`); !slices.Equal(got, goIDs) {
		t.Errorf("Python lists %d of Go's %d artifacts", len(got), len(goIDs))
	}
	if got := pyArtifacts(t, dir, `print(s.count(run_id="py"))`); got != fmt.Sprint(n) {
		t.Errorf("Python count(run_id=py) = %s, want %d", got, n)
	}
}

func sortedIDs(ms ...*artifact.Metadata) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ArtifactID
	}
	slices.Sort(out)
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// The catalog is opened through an SQLite URI: characters URIs give a
// meaning to are escaped in the directory's path.
func TestCatalogInDirectoryWithURICharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a b?c%20#d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pyArtifacts(t, dir, `s.store(b"python")`)
	st := openFS(t, dir)
	m := mustPut(t, st, artifact.PutParams{Content: []byte("go"), RunID: "r"})
	if got := pyIDs(t, dir, `s.list_by_run("r")`); !slices.Equal(got, []string{m.ArtifactID}) {
		t.Errorf("Python list_by_run(r) = %v, want [%s]", got, m.ArtifactID)
	}
	if matches, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "a b*")); len(matches) != 1 {
		t.Errorf("files next to the directory: %v", matches)
	}
}
