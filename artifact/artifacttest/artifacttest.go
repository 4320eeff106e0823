// Package artifacttest is the conformance suite every artifact.Store runs:
// artifacttest.Run(t, newStore), where newStore returns a fresh, empty,
// isolated store.
package artifacttest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
)

// Clocked is implemented by stores whose clock the suite can drive
// (artifact.Memory and artifact.FS). Ordering tests skip other stores.
type Clocked interface {
	SetClock(now func() time.Time)
}

// Run runs the suite against the stores newStore returns.
func Run(t *testing.T, newStore func(t *testing.T) artifact.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, st artifact.Store)
	}{
		{"PutGet", testPutGet},
		{"IDs", testIDs},
		{"SameContentSameRun", testSameContentSameRun},
		{"ExplicitID", testExplicitID},
		{"InvalidIDs", testInvalidIDs},
		{"NotFound", testNotFound},
		{"TextJSONHelpers", testTextJSON},
		{"Refs", testRefs},
		{"Descriptor", testDescriptor},
		{"MediaInspection", testMedia},
		{"Search", testSearch},
		{"CountFacetsStats", testCountFacetsStats},
		{"AccessStats", testAccess},
		{"Delete", testDelete},
		{"DeleteByRun", testDeleteByRun},
		{"ListByRunExact", testListByRunExact},
		{"UpdateMetadata", testUpdateMetadata},
		{"ResultsAreCopies", testCopies},
		{"Concurrent", testConcurrent},
		{"CloseTwiceStaysUsable", testCloseTwice},
		{"OpenStreamsContent", testOpen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

// tickClock returns a clock that starts at base and advances one second
// per reading.
func tickClock(base time.Time) func() time.Time {
	var mu sync.Mutex
	n := 0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return base.Add(time.Duration(n) * time.Second)
	}
}

func sha(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func mustPut(t *testing.T, st artifact.Store, p artifact.PutParams) *artifact.Metadata {
	t.Helper()
	m, err := st.Put(context.Background(), p)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	return m
}

func testPutGet(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	content := []byte("hello artifact")
	m := mustPut(t, st, artifact.PutParams{Content: content, ContentType: "text/plain", RunID: "run-1",
		Tags: map[string]string{"k": "v"}, Metadata: map[string]any{"n": 1}})
	wantID := sha([]byte("run-1"), []byte{0}, content)[:32]
	if m.ArtifactID != wantID {
		t.Errorf("ArtifactID = %s, want %s", m.ArtifactID, wantID)
	}
	if m.BlobID != sha(content) {
		t.Errorf("BlobID = %s, want %s", m.BlobID, sha(content))
	}
	if m.SizeBytes != int64(len(content)) || m.ContentType != "text/plain" || m.RunID != "run-1" {
		t.Errorf("metadata = %+v", m)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.999999-07:00", m.CreatedAt); err != nil {
		t.Errorf("CreatedAt %q: %v", m.CreatedAt, err)
	}
	gm, got, err := st.Get(ctx, m.ArtifactID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !bytes.Equal(got, content) {
		t.Errorf("content = %q", got)
	}
	if gm.Tags["k"] != "v" || fmt.Sprint(gm.Metadata["n"]) != "1" {
		t.Errorf("tags/metadata = %v %v", gm.Tags, gm.Metadata)
	}
	if ok, err := st.Exists(ctx, m.ArtifactID); err != nil || !ok {
		t.Errorf("Exists = %v, %v", ok, err)
	}
	md, err := st.Metadata(ctx, m.ArtifactID)
	if err != nil || md.ArtifactID != m.ArtifactID || md.CreatedAt != m.CreatedAt {
		t.Errorf("Metadata = %+v, %v", md, err)
	}

	// Defaults: no content type, no run.
	m2 := mustPut(t, st, artifact.PutParams{Content: []byte{0, 1, 2}})
	if m2.ContentType != artifact.DefaultContentType || m2.RunID != "" {
		t.Errorf("defaults = %q %q", m2.ContentType, m2.RunID)
	}
	if want := sha([]byte{0, 1, 2})[:32]; m2.ArtifactID != want {
		t.Errorf("id without run = %s, want %s", m2.ArtifactID, want)
	}
}

func testIDs(t *testing.T, _ artifact.Store) {
	content := []byte("x")
	if got, want := artifact.ComputeID("r", content), sha([]byte("r\x00x"))[:32]; got != want {
		t.Errorf("ComputeID = %s, want %s", got, want)
	}
	if got, want := artifact.ComputeID("", content), sha(content)[:32]; got != want {
		t.Errorf("ComputeID no run = %s, want %s", got, want)
	}
	// Known vector: sha256("abc").
	if got := artifact.BlobID([]byte("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("BlobID(abc) = %s", got)
	}
	for id, want := range map[string]bool{"abc_DEF-123": true, "": false, "../x": false, "a/b": false, "a.b": false, "é": false, "a b": false} {
		if got := artifact.ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v", id, got)
		}
	}
}

func testSameContentSameRun(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	a := mustPut(t, st, artifact.PutParams{Content: []byte("same"), RunID: "r1", Tags: map[string]string{"v": "1"}})
	b := mustPut(t, st, artifact.PutParams{Content: []byte("same"), RunID: "r1", Tags: map[string]string{"v": "2"}})
	if a.ArtifactID != b.ArtifactID {
		t.Fatalf("ids differ: %s %s", a.ArtifactID, b.ArtifactID)
	}
	got, err := st.Metadata(ctx, a.ArtifactID)
	if err != nil || got.Tags["v"] != "2" {
		t.Errorf("metadata not overwritten: %v %v", got, err)
	}
	if l, _ := st.ListByRun(ctx, "r1"); len(l) != 1 {
		t.Errorf("ListByRun = %d items", len(l))
	}
	c := mustPut(t, st, artifact.PutParams{Content: []byte("same"), RunID: "r2"})
	if c.ArtifactID == a.ArtifactID || c.BlobID != a.BlobID {
		t.Errorf("other run: id %s blob %s (first %s %s)", c.ArtifactID, c.BlobID, a.ArtifactID, a.BlobID)
	}
}

func testExplicitID(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	m := mustPut(t, st, artifact.PutParams{Content: []byte("x"), ArtifactID: "my_id-1"})
	if m.ArtifactID != "my_id-1" {
		t.Fatalf("id = %s", m.ArtifactID)
	}
	if s, err := artifact.LoadText(ctx, st, "my_id-1"); err != nil || s != "x" {
		t.Errorf("LoadText = %q, %v", s, err)
	}
}

func testInvalidIDs(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	for _, id := range []string{"../x", "a/b", "..", "a.b", "/etc/passwd", ""} {
		check := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, artifact.ErrInvalidID) {
				t.Errorf("%s(%q) error = %v, want ErrInvalidID", op, id, err)
			}
		}
		_, _, err := st.Get(ctx, id)
		check("Get", err)
		_, err = st.Metadata(ctx, id)
		check("Metadata", err)
		ok, err := st.Exists(ctx, id)
		check("Exists", err)
		if ok {
			t.Errorf("Exists(%q) = true with an error", id)
		}
		_, err = st.Delete(ctx, id)
		check("Delete", err)
		_, err = st.UpdateMetadata(ctx, artifact.UpdateParams{ID: id, Tags: map[string]string{"a": "b"}})
		check("UpdateMetadata", err)
		_, err = st.RecordAccess(ctx, artifact.AccessParams{ID: id})
		check("RecordAccess", err)
		if id != "" {
			_, err = st.Put(ctx, artifact.PutParams{Content: []byte("x"), ArtifactID: id})
			check("Put", err)
		}
	}
}

func testNotFound(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	const id = "nope"
	if _, _, err := st.Get(ctx, id); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Get error = %v", err)
	}
	if _, err := st.Metadata(ctx, id); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Metadata error = %v", err)
	}
	if ok, err := st.Exists(ctx, id); ok || err != nil {
		t.Errorf("Exists = %v, %v", ok, err)
	}
	if ok, err := st.Delete(ctx, id); ok || err != nil {
		t.Errorf("Delete = %v, %v", ok, err)
	}
	if _, err := st.UpdateMetadata(ctx, artifact.UpdateParams{ID: id}); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("UpdateMetadata error = %v", err)
	}
	if _, err := st.RecordAccess(ctx, artifact.AccessParams{ID: id}); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("RecordAccess error = %v", err)
	}
}

func testTextJSON(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	m, err := artifact.PutText(ctx, st, "héllo", artifact.PutParams{RunID: "r"})
	if err != nil || m.ContentType != "text/plain" || m.SizeBytes != 6 {
		t.Fatalf("PutText = %+v, %v", m, err)
	}
	if s, err := artifact.LoadText(ctx, st, m.ArtifactID); err != nil || s != "héllo" {
		t.Errorf("LoadText = %q, %v", s, err)
	}
	v := map[string]any{"b": []any{1, "ü"}, "a": "<&>"}
	jm, err := artifact.PutJSON(ctx, st, v, artifact.PutParams{RunID: "r"})
	if err != nil || jm.ContentType != "application/json" {
		t.Fatalf("PutJSON = %+v, %v", jm, err)
	}
	_, raw, err := st.Get(ctx, jm.ArtifactID)
	if err != nil || string(raw) != `{"a":"<&>","b":[1,"ü"]}` {
		t.Errorf("JSON content = %s, %v", raw, err)
	}
	got, err := artifact.LoadJSON(ctx, st, jm.ArtifactID)
	if err != nil || fmt.Sprint(got) != "map[a:<&> b:[1 ü]]" {
		t.Errorf("LoadJSON = %v, %v", got, err)
	}
	if jm.Descriptor.RenderKind != "json" || jm.Descriptor.SemanticKind != "json" {
		t.Errorf("json descriptor = %+v", jm.Descriptor)
	}
}

func testRefs(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	m := mustPut(t, st, artifact.PutParams{Content: []byte("ref me")})
	ref := artifact.Ref(m.ArtifactID)
	if len(ref) != 1 || ref["$artifact"] != m.ArtifactID {
		t.Errorf("Ref = %v", ref)
	}
	id, ok := artifact.RefID(ref)
	if !ok || id != m.ArtifactID {
		t.Fatalf("RefID = %q, %v", id, ok)
	}
	if _, _, err := st.Get(ctx, id); err != nil {
		t.Errorf("resolving ref: %v", err)
	}
	if _, ok := artifact.RefID(map[string]any{"artifact_id": "x"}); ok {
		t.Error("RefID accepted artifact_id")
	}
	if id, ok := artifact.MediaRefID(map[string]any{"artifact_id": "x"}); !ok || id != "x" {
		t.Errorf("MediaRefID = %q, %v", id, ok)
	}
	if !artifact.IsRef(map[string]any{"$artifact": "x", "filename": "a.png"}) || artifact.IsRef("x") {
		t.Error("IsRef")
	}
}

func testDescriptor(t *testing.T, st artifact.Store) {
	cases := []struct {
		ct, render string
	}{
		{"image/png", "image"}, {"audio/mpeg", "audio"}, {"video/mp4", "video"},
		{"text/x-python", "code"}, {"application/json", "json"}, {"application/ld+json", "json"},
		{"text/markdown", "markdown"}, {"text/html", "html"}, {"text/plain", "text"},
		{"application/pdf", "document"}, {"application/octet-stream", "binary"},
	}
	for _, c := range cases {
		if got := artifact.RenderKind(c.ct); got != c.render {
			t.Errorf("RenderKind(%s) = %s, want %s", c.ct, got, c.render)
		}
	}
	m := mustPut(t, st, artifact.PutParams{Content: []byte("x"), ContentType: "text/plain", RunID: "r1"})
	d := m.Descriptor
	if d.Schema != artifact.DescriptorSchema || d.SchemaVersion != 1 || d.RenderKind != "text" ||
		d.SemanticKind != "text" || d.Modality != "text" || d.ClassificationSource != "runtime_mime_inferred" {
		t.Errorf("inferred descriptor = %+v", d)
	}
	if d.Provenance["run_id"] != "r1" {
		t.Errorf("provenance = %v", d.Provenance)
	}
	m = mustPut(t, st, artifact.PutParams{Content: []byte("y"), ContentType: "text/plain", RunID: "r1",
		Tags: map[string]string{"semantic_kind": "Evidence", "workflow": "wf", "node": "n1", "session_id": "s1",
			"turn": "t1", "step_cursor": "7", "effect_idempotency_key": "e1", "source": "tool", "actor_id": "a1"}})
	d = m.Descriptor
	if d.SemanticKind != "evidence" || d.ClassificationSource != "runtime_tags" || d.WorkflowID != "wf" ||
		d.NodeID != "n1" || d.SessionID != "s1" || d.TurnID != "t1" || d.LedgerCursor != "7" ||
		d.EffectID != "e1" || d.ActorID != "a1" || d.Provenance["source"] != "tool" {
		t.Errorf("tagged descriptor = %+v", d)
	}
	m = mustPut(t, st, artifact.PutParams{Content: []byte("z"), ContentType: "audio/mpeg",
		Tags: map[string]string{"task": "TTS"}})
	if m.Descriptor.SemanticKind != "voice" || m.Descriptor.Modality != "voice" || m.Descriptor.Task != "tts" {
		t.Errorf("tts descriptor = %+v", m.Descriptor)
	}
	m = mustPut(t, st, artifact.PutParams{Content: []byte("w"), ContentType: "text/plain",
		Tags:       map[string]string{"kind": "memory_note"},
		Descriptor: map[string]any{"render_kind": "Markdown", "producer": map[string]any{"name": "p"}}})
	d = m.Descriptor
	if d.ClassificationSource != "runtime_declared" || d.RenderKind != "markdown" || d.SemanticKind != "memory_note" ||
		d.Producer["name"] != "p" {
		t.Errorf("declared descriptor = %+v", d)
	}
}

func testMedia(t *testing.T, st artifact.Store) {
	m := mustPut(t, st, artifact.PutParams{Content: TinyPNG(3, 2), ContentType: "image/png"})
	media := m.Descriptor.Media
	if fmt.Sprint(media["width"]) != "3" || fmt.Sprint(media["height"]) != "2" || media["format"] != "png" || media["kind"] != "image" {
		t.Errorf("png media = %v", media)
	}
	m = mustPut(t, st, artifact.PutParams{Content: TinyWAV(8000, 1, 16, 4000), ContentType: "audio/wav"})
	media = m.Descriptor.Media
	if fmt.Sprint(media["duration_s"]) != "0.5" || fmt.Sprint(media["sample_rate"]) != "8000" ||
		fmt.Sprint(media["channels"]) != "1" || fmt.Sprint(media["frames"]) != "4000" {
		t.Errorf("wav media = %v", media)
	}
	m = mustPut(t, st, artifact.PutParams{Content: []byte("not an image"), ContentType: "image/png"})
	if m.Descriptor.Media["kind"] != "image" || (m.Descriptor.Media["inspection_error"] == nil && m.Descriptor.Media["inspection_status"] == nil) {
		t.Errorf("bad image media = %v", m.Descriptor.Media)
	}
	m = mustPut(t, st, artifact.PutParams{Content: []byte("v"), ContentType: "video/mp4"})
	if m.Descriptor.Media["inspection_status"] != "video_inspector_not_configured" {
		t.Errorf("video media = %v", m.Descriptor.Media)
	}
	m = mustPut(t, st, artifact.PutParams{Content: []byte("t"), ContentType: "text/plain"})
	if len(m.Descriptor.Media) != 0 {
		t.Errorf("text media = %v", m.Descriptor.Media)
	}
}

func testCopies(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	content := []byte("orig")
	m := mustPut(t, st, artifact.PutParams{Content: content, Tags: map[string]string{"a": "1"}, Metadata: map[string]any{"x": "y"}})
	content[0] = 'X'
	m.Tags["a"] = "mutated"
	m.Metadata["x"] = "mutated"
	m.Descriptor.Provenance["p"] = "mutated"
	got, raw, err := st.Get(ctx, m.ArtifactID)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != "orig" || got.Tags["a"] != "1" || got.Metadata["x"] != "y" || got.Descriptor.Provenance["p"] != nil {
		t.Errorf("store state changed through results: %q %+v", raw, got)
	}
	raw[0] = 'Z'
	if _, raw2, _ := st.Get(ctx, m.ArtifactID); string(raw2) != "orig" {
		t.Errorf("content changed through Get result: %q", raw2)
	}
	// Access actions are copied too: a shared map would let a caller's
	// change to a result reach the stored counts.
	acc, err := st.RecordAccess(ctx, artifact.AccessParams{ID: m.ArtifactID, Action: "preview"})
	if err != nil {
		t.Fatal(err)
	}
	acc.Access.Actions["preview"] = 99
	if got, err := st.Metadata(ctx, m.ArtifactID); err != nil || got.Access.Actions["preview"] != 1 {
		t.Fatalf("Metadata = %v, %v", got, err)
	} else {
		got.Access.Actions["preview"] = 98
	}
	if got, _ := st.Metadata(ctx, m.ArtifactID); got.Access.Actions["preview"] != 1 {
		t.Errorf("access actions changed through results: %v", got.Access.Actions)
	}
}

func testConcurrent(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				m, err := st.Put(ctx, artifact.PutParams{Content: fmt.Appendf(nil, "%d-%d", i, j%3), RunID: "r"})
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := st.RecordAccess(ctx, artifact.AccessParams{ID: m.ArtifactID, Action: "preview"}); err != nil {
					t.Error(err)
				}
				if _, err := st.Search(ctx, artifact.SearchParams{RunID: "r"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n, err := st.Count(ctx, artifact.SearchParams{RunID: "r"}); err != nil || n != 24 {
		t.Errorf("Count = %d, %v; want 24", n, err)
	}
}

// testCloseTwice checks the Close contract: a second Close is not an
// error, and a closed store still reads what it held and takes writes.
func testCloseTwice(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	before := mustPut(t, st, artifact.PutParams{Content: []byte("kept"), RunID: "run-close"})
	for i := 1; i <= 2; i++ {
		if err := st.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i, err)
		}
	}
	if _, got, err := st.Get(ctx, before.ArtifactID); err != nil || string(got) != "kept" {
		t.Fatalf("Get after Close = %q, %v; want the stored content", got, err)
	}
	after := mustPut(t, st, artifact.PutParams{Content: []byte("later"), RunID: "run-close"})
	list, err := st.ListByRun(ctx, "run-close")
	if err != nil {
		t.Fatalf("ListByRun after Close: %v", err)
	}
	if ids := idsOf(list); len(ids) != 2 || !(ids[0] == after.ArtifactID || ids[1] == after.ArtifactID) {
		t.Errorf("ListByRun after Close = %v, want %s and %s", ids, before.ArtifactID, after.ArtifactID)
	}
}

// testOpen: Open gives the metadata Get gives and the content as a stream
// that seeks; an unknown id is ErrNotFound.
func testOpen(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	content := []byte("0123456789 streamed content")
	m := mustPut(t, st, artifact.PutParams{Content: content, ContentType: "text/plain", RunID: "run-open"})
	om, r, err := st.Open(ctx, m.ArtifactID)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	if om.ArtifactID != m.ArtifactID || om.SizeBytes != int64(len(content)) || om.ContentType != "text/plain" {
		t.Errorf("Open metadata = %+v, want the artifact's", om)
	}
	all, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(all, content) {
		t.Fatalf("read = %q, %v; want the content", all, err)
	}
	if _, err := r.Seek(11, io.SeekStart); err != nil {
		t.Fatalf("Seek: %v", err)
	}
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "streamed content" {
		t.Errorf("read after Seek(11) = %q, %v; want %q", rest, err, "streamed content")
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, r, err := st.Open(ctx, "no_such_artifact"); !errors.Is(err, artifact.ErrNotFound) || r != nil {
		t.Errorf("Open of an unknown id = %v, %v; want ErrNotFound", r, err)
	}
	if _, _, err := st.Open(ctx, "../escape"); !errors.Is(err, artifact.ErrInvalidID) {
		t.Errorf("Open of an invalid id: %v; want ErrInvalidID", err)
	}
}
