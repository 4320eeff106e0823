package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// The artifact ref and read_artifact's source_path
// take the "path" tag, else the "source_path" tag.
//
// Python (AbstractRuntime visual executor, _runtime_artifact_ref):
//
//	source_path = str(tags.get("path") or tags.get("source_path") or "").strip()
//	if source_path: ref["source_path"] = source_path
//
// and _create_read_artifact_handler:
//
//	source_path = str(tags.get("path") or tags.get("source_path") or "").strip()
//	... "source_path": source_path
//
// so an artifact that carries its client path as a "source_path" tag
// (the key the §4.9 ref uses) keeps it.
func TestArtifactRefSourcePathTagFallback(t *testing.T) {
	t.Parallel()
	arts := artifact.NewMemory()
	meta, err := arts.Put(context.Background(), artifact.PutParams{
		Content: []byte("hello"), ContentType: "text/plain", RunID: "r1",
		Tags: map[string]string{"filename": "a.txt", "source_path": "client:docs/a.txt"},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := readArtifact(context.Background(), arts, map[string]any{"artifact": meta.ArtifactID})
	if err != nil {
		t.Fatal(err)
	}
	out := r.(map[string]any)
	if got := out["source_path"]; got != "client:docs/a.txt" {
		t.Errorf("read_artifact source_path = %#v, want %q (Python: tags.path or tags.source_path)", got, "client:docs/a.txt")
	}
	ref, _ := out["artifact"].(map[string]any)
	if got := ref["source_path"]; got != "client:docs/a.txt" {
		t.Errorf("artifact ref source_path = %#v, want %q (Python _runtime_artifact_ref)", got, "client:docs/a.txt")
	}
}

// The ref's filename and source_path are stripped.
//
// Python _runtime_artifact_ref: filename = str(tags.get("filename") or
// "").strip() (same for source_path), and read_artifact's "filename"
// output is stripped too. import_workspace_file stores the file name
// as is (path.name), so a file named "report.txt " (trailing blank, as
// some uploads/OS copies produce) yields the tag "report.txt " but a ref
// filename "report.txt".
func TestArtifactRefFilenameStripped(t *testing.T) {
	t.Parallel()
	arts := artifact.NewMemory()
	meta, err := arts.Put(context.Background(), artifact.PutParams{
		Content: []byte("x"), ContentType: "text/plain", RunID: "r1",
		Tags: map[string]string{"filename": "report.txt ", "path": " docs/report.txt "},
	})
	if err != nil {
		t.Fatal(err)
	}
	ref := artifactRefObject(meta)
	if ref["filename"] != "report.txt" || ref["source_path"] != "docs/report.txt" {
		t.Errorf("ref filename/source_path = %#v / %#v, want stripped %q / %q (Python .strip())",
			ref["filename"], ref["source_path"], "report.txt", "docs/report.txt")
	}
}
