package artifact_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// ABSTRACTRUNTIME_MAX_INLINE_BYTES=0 disables offloading (spec §4.7:
// "<= 0 disables"), like a negative option: a threshold of 0 must not
// offload every non-empty value.
func TestOffloadDisabledByZeroFromEnvironment(t *testing.T) {
	t.Setenv(artifact.EnvMaxInlineBytes, "0")
	st := artifact.NewMemory()
	in := map[string]any{"text": "anything at all"}
	out, err := artifact.Offload(context.Background(), st, in, artifact.OffloadOptions{RunID: "r", AllowRootReplace: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("Offload with the threshold 0 from the environment = %v, want the value unchanged", out)
	}
	if n, _ := st.Count(context.Background(), artifact.SearchParams{}); n != 0 {
		t.Errorf("%d artifacts stored with offloading disabled", n)
	}
}

// A string and a container whose compact JSON is the same bytes, in one
// run, are two artifacts: the JSON one must not overwrite the text one
// (same id), or the string's ref would restore as the decoded list.
func TestOffloadTextAndJSONOfSameBytesStayApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupOffload(t)
	list := []any{}
	for range 10 {
		list = append(list, "0123456789")
	}
	text, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]any{"a": string(text), "b": list}
	out, err := artifact.Offload(ctx, b.st, in, b.opts)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(map[string]any)
	if reflect.DeepEqual(got["a"], got["b"]) {
		t.Fatalf("the text and the JSON share one ref %v", got["a"])
	}
	restored, err := artifact.Restore(ctx, b.st, got, func(*artifact.Metadata) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(restored, in) {
		t.Errorf("restored %#v, want %#v", restored, in)
	}
}

// A string that is not UTF-8 is offloaded as the text it reads back as
// inline: one U+FFFD per bad byte, not its raw bytes.
func TestOffloadInvalidUTF8StoresReplacementText(t *testing.T) {
	t.Parallel()
	b := setupOffload(t)
	s := strings.Repeat("a", limit) + "\xff\xfe"
	out, err := artifact.Offload(context.Background(), b.st, map[string]any{"s": s}, b.opts)
	if err != nil {
		t.Fatal(err)
	}
	_, content := refMeta(t, b.st, out.(map[string]any)["s"])
	if want := strings.Repeat("a", limit) + "\uFFFD\uFFFD"; string(content) != want {
		t.Errorf("content = %q, want %q", content, want)
	}
}

// The root path is stripped before it names the paths in tags.
func TestOffloadRootPathIsStripped(t *testing.T) {
	t.Parallel()
	b := setupOffload(t)
	b.opts.RootPath = "  out \n"
	out, err := artifact.Offload(context.Background(), b.st, map[string]any{"big": strings.Repeat("x", limit+1)}, b.opts)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := refMeta(t, b.st, out.(map[string]any)["big"])
	if m.Tags["path"] != "out.big" {
		t.Errorf("path tag = %q, want out.big", m.Tags["path"])
	}
}

// A store failure other than a missing artifact (here a cancelled
// context) fails Restore: taking it for a dangling ref would hand the
// reader a ref where the value was.
func TestRestoreReturnsStoreErrors(t *testing.T) {
	t.Parallel()
	st, err := artifact.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := mustPut(t, st, artifact.PutParams{Content: []byte("text"), ContentType: "text/plain"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, err := artifact.Restore(ctx, st, map[string]any{"x": artifact.Ref(m.ArtifactID)}, func(*artifact.Metadata) bool { return true })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Restore with a cancelled context = %v, %v; want context.Canceled", v, err)
	}
}

// Each artifact's tags are BaseTags + {"path", "kind"} (spec §4.7): a
// base tag of the same name does not replace the path or the kind the
// offload gives, which readers use to tell what the artifact holds.
func TestOffloadPathAndKindTagsWinOverBaseTags(t *testing.T) {
	t.Parallel()
	b := setupOffload(t)
	b.opts.BaseTags = map[string]string{"source": "test", "path": "base", "kind": "base"}
	out, err := artifact.Offload(context.Background(), b.st, map[string]any{"big": strings.Repeat("x", limit+1)}, b.opts)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := refMeta(t, b.st, out.(map[string]any)["big"])
	if m.Tags["path"] != "root.big" || m.Tags["kind"] != "text" || m.Tags["source"] != "test" {
		t.Errorf("tags = %v; want path root.big, kind text, source test", m.Tags)
	}
}

// A list holding a shorter slice of its own backing array (same first
// element pointer, another length) is not a cycle: the cycle check tells
// lists apart by pointer and length. Taking the pointer alone would refuse
// this finite value and leave it inline with an error.
func TestOffloadListHoldingItsOwnPrefixIsNoCycle(t *testing.T) {
	t.Parallel()
	b := setupOffload(t)
	list := make([]any, 2)
	list[0] = strings.Repeat("y", limit+1)
	list[1] = list[:1]
	out, err := artifact.Offload(context.Background(), b.st, map[string]any{"l": list}, b.opts)
	if err != nil {
		t.Fatalf("Offload of a list holding its own prefix: %v; it is no cycle", err)
	}
	if got := out.(map[string]any)["l"]; !artifact.IsRef(got) {
		t.Errorf("l = %v; want a ref (its JSON is past the threshold)", got)
	}
}

// Restore replaces only refs to JSON and text artifacts: a ref to a
// binary artifact (application/octet-stream) stays a ref even when mine
// accepts it, since its bytes are not a JSON value. Decoding it instead
// would fail the reader, or turn bytes that happen to parse into a value.
func TestRestoreKeepsRefsToBinaryArtifacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := artifact.NewMemory()
	m, err := st.Put(ctx, artifact.PutParams{Content: []byte(`{"a": 1}`), ContentType: "application/octet-stream", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := artifact.Restore(ctx, st, map[string]any{"v": artifact.Ref(m.ArtifactID)}, func(*artifact.Metadata) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if v := got.(map[string]any)["v"]; !artifact.IsRef(v) {
		t.Errorf("Restore of a binary artifact's ref = %v; want the ref kept", v)
	}
}

// Without an option or the environment variable the threshold is 256 KiB
// exactly (spec §4.7: 262144), and a string of exactly that many bytes
// stays inline: "exceeds" is strictly more. Comparing with the constant
// itself would not notice it changed.
func TestOffloadDefaultThresholdIs256KiB(t *testing.T) {
	t.Setenv(artifact.EnvMaxInlineBytes, "")
	if got := artifact.MaxInlineBytes(0); got != 262144 {
		t.Fatalf("MaxInlineBytes(0) = %d; want 262144", got)
	}
	st := artifact.NewMemory()
	in := map[string]any{"at": strings.Repeat("a", 262144), "past": strings.Repeat("p", 262145)}
	out, err := artifact.Offload(context.Background(), st, in, artifact.OffloadOptions{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(map[string]any)
	if artifact.IsRef(got["at"]) || !artifact.IsRef(got["past"]) {
		t.Errorf("at the default threshold: ref %v, one byte past: ref %v; want false, true",
			artifact.IsRef(got["at"]), artifact.IsRef(got["past"]))
	}
}
