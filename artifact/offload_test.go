package artifact_test

import (
	"context"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

const limit = 64

type offloadBundle struct {
	st   *artifact.Memory
	opts artifact.OffloadOptions
}

func setupOffload(t *testing.T) offloadBundle {
	t.Helper()
	return offloadBundle{
		st:   artifact.NewMemory(),
		opts: artifact.OffloadOptions{RunID: "run-1", MaxInlineBytes: limit, BaseTags: map[string]string{"source": "test"}, RootPath: "root"},
	}
}

// refMeta returns the metadata of the artifact v refers to.
func refMeta(t *testing.T, st artifact.Store, v any) (*artifact.Metadata, []byte) {
	t.Helper()
	id, ok := artifact.RefID(v)
	if !ok {
		t.Fatalf("not a ref: %#v", v)
	}
	m, content, err := st.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return m, content
}

func TestOffload_SmallUntouched(t *testing.T) {
	t.Parallel()
	b := setupOffload(t)
	in := map[string]any{"a": "small", "b": []any{1, "two"}, "n": nil}
	out, err := artifact.Offload(context.Background(), b.st, in, b.opts)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(out).Pointer() != reflect.ValueOf(in).Pointer() {
		t.Error("unchanged value was copied")
	}
	if n, _ := b.st.Count(context.Background(), artifact.SearchParams{}); n != 0 {
		t.Errorf("%d artifacts stored", n)
	}
}

func TestOffload_Kinds(t *testing.T) {
	t.Parallel()
	b := setupOffload(t)
	ctx := context.Background()
	big := strings.Repeat("é", limit) // 2*limit UTF-8 bytes
	many := make([]any, 20)
	for i := range many {
		many[i] = "abcdef"
	}
	in := map[string]any{
		"text":  big,
		"bytes": []byte{1, 2},
		"blob":  []byte(strings.Repeat("b", limit)), // base64: 88 bytes
		"list":  []any{"x", big + "!"},              // distinct content: same bytes in one run share one id
		"many":  many,
		"ref":   map[string]any{"$artifact": "keep", "pad": big},
		"small": "s",
	}
	snapshot := pyjson.Clone(in)
	outAny, err := artifact.Offload(ctx, b.st, in, b.opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, snapshot) {
		t.Error("input mutated")
	}
	out := outAny.(map[string]any)
	if out["small"] != "s" || !reflect.DeepEqual(out["ref"], in["ref"]) {
		t.Errorf("untouched members changed: %v", out)
	}

	m, content := refMeta(t, b.st, out["text"])
	if string(content) != big || m.ContentType != "text/plain" || m.RunID != "run-1" ||
		!reflect.DeepEqual(m.Tags, map[string]string{"source": "test", "path": "root.text", "kind": "text"}) {
		t.Errorf("text artifact = %+v", m)
	}
	// A []byte is the base64 string the stores encode it as.
	if !reflect.DeepEqual(out["bytes"], []byte{1, 2}) {
		t.Errorf("small bytes = %#v, want them inline", out["bytes"])
	}
	m, content = refMeta(t, b.st, out["blob"])
	if want := base64.StdEncoding.EncodeToString(in["blob"].([]byte)); string(content) != want ||
		m.ContentType != "text/plain" || m.Tags["kind"] != "text" || m.Tags["path"] != "root.blob" {
		t.Errorf("bytes artifact = %+v %q", m, content)
	}
	list := out["list"].([]any)
	if list[0] != "x" {
		t.Errorf("list = %v", list)
	}
	if m, _ = refMeta(t, b.st, list[1]); m.Tags["path"] != "root.list[1]" {
		t.Errorf("list item path = %v", m.Tags)
	}
	m, content = refMeta(t, b.st, out["many"])
	want, _ := pyjson.Marshal(many, pyjson.Canonical)
	if string(content) != string(want) || m.ContentType != "application/json" || m.Tags["kind"] != "json" || m.Tags["path"] != "root.many" {
		t.Errorf("json artifact = %+v %s", m, content)
	}
}

func TestOffload_ParentAfterChildren(t *testing.T) {
	t.Parallel()
	b := setupOffload(t)
	// Once its big child is a ref, the parent is small enough to stay.
	in := map[string]any{"outer": map[string]any{"big": strings.Repeat("x", 200), "k": "v"}}
	out, err := artifact.Offload(context.Background(), b.st, in, b.opts)
	if err != nil {
		t.Fatal(err)
	}
	outer := out.(map[string]any)["outer"].(map[string]any)
	if outer["k"] != "v" || !artifact.IsRef(outer["big"]) {
		t.Errorf("outer = %v", outer)
	}
	if n, _ := b.st.Count(context.Background(), artifact.SearchParams{}); n != 1 {
		t.Errorf("%d artifacts, want 1", n)
	}
}

func TestOffload_Root(t *testing.T) {
	t.Parallel()
	b := setupOffload(t)
	ctx := context.Background()
	big := strings.Repeat("y", 100)
	out, err := artifact.Offload(ctx, b.st, big, b.opts)
	if err != nil || out != big {
		t.Errorf("root replaced without AllowRootReplace: %v, %v", out, err)
	}
	many := map[string]any{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		many[k] = "123456789"
	}
	out, err = artifact.Offload(ctx, b.st, many, b.opts)
	if err != nil || !reflect.DeepEqual(out, many) {
		t.Errorf("root object replaced: %v, %v", out, err)
	}
	opts := b.opts
	opts.AllowRootReplace = true
	out, err = artifact.Offload(ctx, b.st, many, opts)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := refMeta(t, b.st, out); m.Tags["path"] != "root" || m.Tags["kind"] != "json" {
		t.Errorf("root artifact tags = %v", m.Tags)
	}
	// An empty root path gives bare keys and indices.
	opts = b.opts
	opts.RootPath = ""
	out, err = artifact.Offload(ctx, b.st, []any{big}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := refMeta(t, b.st, out.([]any)[0]); m.Tags["path"] != "[0]" {
		t.Errorf("path = %q", m.Tags["path"])
	}
}

func TestOffload_AllowFuncAndDisabled(t *testing.T) {
	t.Parallel()
	b := setupOffload(t)
	ctx := context.Background()
	in := map[string]any{"keep": strings.Repeat("k", 100), "go": strings.Repeat("g", 100)}
	opts := b.opts
	opts.AllowFunc = func(path string, _ any) bool { return path != "root.keep" }
	out, err := artifact.Offload(ctx, b.st, in, opts)
	if err != nil {
		t.Fatal(err)
	}
	m := out.(map[string]any)
	if m["keep"] != in["keep"] || !artifact.IsRef(m["go"]) {
		t.Errorf("veto ignored: %v", m)
	}
	opts = b.opts
	opts.MaxInlineBytes = -1
	in["b"] = []byte("x")
	out, err = artifact.Offload(ctx, b.st, in, opts)
	if err != nil || reflect.ValueOf(out).Pointer() != reflect.ValueOf(in).Pointer() {
		t.Errorf("disabled offload changed the value: %v, %v", out, err)
	}
}

func TestOffload_Cycle(t *testing.T) {
	t.Parallel()
	b := setupOffload(t)
	m := map[string]any{"a": "x"}
	m["self"] = m
	out, err := artifact.Offload(context.Background(), b.st, m, b.opts)
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("cycle error = %v", err)
	}
	if reflect.ValueOf(out).Pointer() != reflect.ValueOf(m).Pointer() {
		t.Error("value not returned unchanged on error")
	}
	l := []any{nil}
	l[0] = l
	if _, err := artifact.Offload(context.Background(), b.st, map[string]any{"l": l}, b.opts); err == nil {
		t.Error("list cycle not detected")
	}
}

func TestMaxInlineBytes(t *testing.T) {
	t.Setenv(artifact.EnvMaxInlineBytes, "")
	if got := artifact.MaxInlineBytes(0); got != artifact.DefaultMaxInlineBytes {
		t.Errorf("default = %d", got)
	}
	t.Setenv(artifact.EnvMaxInlineBytes, " 1000 ")
	if got := artifact.MaxInlineBytes(0); got != 1000 {
		t.Errorf("env = %d", got)
	}
	if got := artifact.MaxInlineBytes(5); got != 5 {
		t.Errorf("explicit = %d", got)
	}
	t.Setenv(artifact.EnvMaxInlineBytes, "0")
	if got := artifact.MaxInlineBytes(0); got != 0 {
		t.Errorf("env 0 = %d", got)
	}
	t.Setenv(artifact.EnvMaxInlineBytes, "junk")
	if got := artifact.MaxInlineBytes(0); got != artifact.DefaultMaxInlineBytes {
		t.Errorf("env junk = %d", got)
	}
	// Read as Python's int() reads it (Atoi refused the underscore).
	t.Setenv(artifact.EnvMaxInlineBytes, "1_000")
	if got := artifact.MaxInlineBytes(0); got != 1000 {
		t.Errorf("env 1_000 = %d, want 1000 (Python's int())", got)
	}
	// Python strips the value with str.strip() before int(): the separator
	// controls U+001C..U+001F are whitespace to strip() but not to int().
	t.Setenv(artifact.EnvMaxInlineBytes, "\x1f100\x1c")
	if got := artifact.MaxInlineBytes(0); got != 100 {
		t.Errorf("env \\x1f100\\x1c = %d, want 100 (Python's int(raw.strip()))", got)
	}
}

// Two paths holding the same large text share one artifact (content
// addressed), whose "path" tag the last put sets. Map order made that tag
// change from one run of the same data to the next; the walk now goes in
// key order, so the later key ("b") sets it every time.
func TestOffloadSharedContentTaggedDeterministically(t *testing.T) {
	big := strings.Repeat("x", 300)
	for range 20 {
		st := artifact.NewMemory()
		out, err := artifact.Offload(t.Context(), st, map[string]any{"a": big, "b": big}, artifact.OffloadOptions{RunID: "r", MaxInlineBytes: 100})
		if err != nil {
			t.Fatal(err)
		}
		id, _ := artifact.RefID(out.(map[string]any)["a"].(map[string]any))
		meta, err := st.Metadata(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if meta.Tags["path"] != "b" {
			t.Fatalf("shared artifact tagged path %q, want \"b\" (the last key in order)", meta.Tags["path"])
		}
	}
}

// TestOffloadKeepsSmallTypedContainers: a typed Go container is walked in
// its JSON form, but one with nothing to offload is returned as it was,
// not as that form.
func TestOffloadKeepsSmallTypedContainers(t *testing.T) {
	ctx := context.Background()
	st := artifact.NewMemory()
	for _, v := range []any{[]string{"a", "b"}, map[string]string{"k": "v"}, []map[string]any{{"n": 1}}, []string(nil)} {
		out, err := artifact.Offload(ctx, st, v, artifact.OffloadOptions{MaxInlineBytes: 100, AllowRootReplace: true})
		if err != nil {
			t.Fatal(err)
		}
		if reflect.TypeOf(out) != reflect.TypeOf(v) || !reflect.DeepEqual(out, v) {
			t.Errorf("Offload(%#v) = %#v, want it unchanged", v, out)
		}
	}
	big := strings.Repeat("z", 200)
	out, err := artifact.Offload(ctx, st, map[string]any{"lines": []string{"short", big}}, artifact.OffloadOptions{MaxInlineBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := out.(map[string]any)["lines"].([]any)
	if len(lines) != 2 || lines[0] != "short" || !artifact.IsRef(lines[1]) {
		t.Errorf("lines = %#v, want [\"short\", ref]", out.(map[string]any)["lines"])
	}
}

// TestOffloadStringAtTheThresholdStaysInline: a string is offloaded when
// it is longer than the threshold (Python: len(encoded) >
// max_inline_bytes); one of exactly the threshold stays inline, as a
// container whose JSON is exactly that long does.
func TestOffloadStringAtTheThresholdStaysInline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := artifact.NewMemory()
	at := strings.Repeat("é", 50) // 100 bytes in UTF-8
	over := at + "x"
	out, err := artifact.Offload(ctx, st, map[string]any{"at": at, "over": over},
		artifact.OffloadOptions{MaxInlineBytes: 100, RootPath: "v"})
	if err != nil {
		t.Fatal(err)
	}
	m := out.(map[string]any)
	if m["at"] != at {
		t.Errorf("a %d-byte string at a 100-byte threshold became %v; want it inline", len(at), m["at"])
	}
	if !artifact.IsRef(m["over"]) {
		t.Errorf("a %d-byte string stayed inline (%d bytes); want a ref", len(over), len(over))
	}
}
