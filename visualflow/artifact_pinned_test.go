package visualflow

import (
	"bytes"
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// readTaggedArtifact stores content with the given content type and tags and
// returns what read_artifact gives for it.
func readTaggedArtifact(t *testing.T, content []byte, contentType string, tags map[string]string) map[string]any {
	t.Helper()
	arts := artifact.NewMemory()
	meta, err := arts.Put(context.Background(), artifact.PutParams{Content: content, ContentType: contentType, Tags: tags})
	if err != nil {
		t.Fatal(err)
	}
	r, err := readArtifact(context.Background(), arts, map[string]any{"artifact": meta.ArtifactID})
	if err != nil {
		t.Fatal(err)
	}
	return r.(map[string]any)
}

// read_artifact projects JSON for a json family (from the file name) even
// when the content type is not application/json (spec §6.10).
func TestReadArtifactJSONByFamily(t *testing.T) {
	out := readTaggedArtifact(t, []byte(`{"a": 1}`), "application/octet-stream", map[string]string{"filename": "d.json"})
	if m, ok := out["json"].(map[string]any); !ok || m["a"] != int64(1) {
		t.Fatalf("json = %#v, want {\"a\": 1}", out["json"])
	}
}

// The content family comes from the file name before the source path:
// a.png stored from x/b.json is an image.
func TestReadArtifactFamilyPrefersFilename(t *testing.T) {
	out := readTaggedArtifact(t, []byte{0x89, 'P', 'N', 'G'}, "image/png", map[string]string{"filename": "a.png", "path": "x/b.json"})
	if out["content_family"] != "image" {
		t.Fatalf("content_family = %v, want image", out["content_family"])
	}
}

// The text limit is exceeded only past 262144 bytes (Python: len(raw) >
// max): exactly that many bytes are returned whole, untruncated.
func TestReadArtifactTextAtLimitNotTruncated(t *testing.T) {
	data := bytes.Repeat([]byte("a"), artifactTextMaxChars)
	out := readTaggedArtifact(t, data, "application/octet-stream", nil)
	if out["truncated"] != false || out["content"] != string(data) {
		t.Fatalf("truncated = %v, content length %d; want untruncated", out["truncated"], len(out["content"].(string)))
	}
}

// A suffix alias is looked up lower-cased, as Python's mimetypes does
// (ext.lower() in suffix_map): "a.TGZ" is a tar archive like "a.tgz".
func TestGuessContentTypeUpperCaseAlias(t *testing.T) {
	if got := guessContentType("a.TGZ"); got != "application/x-tar" {
		t.Fatalf("guessContentType(a.TGZ) = %q, want application/x-tar", got)
	}
}
