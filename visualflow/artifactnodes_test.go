package visualflow

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// pins builds editor pin declarations; "exec-in"/"exec-out" are exec pins.
func artPins(ids ...string) []any {
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		typ := "any"
		if strings.HasPrefix(id, "exec-") {
			typ = "execution"
		}
		out = append(out, map[string]any{"id": id, "label": id, "type": typ})
	}
	return out
}

func artEdge(src, sh, dst, th string) map[string]any {
	return map[string]any{"source": src, "sourceHandle": sh, "target": dst, "targetHandle": th}
}

// artifactRoundTripFlow: start → import_workspace_file → read_artifact →
// export_artifact → end, with the interesting outputs wired to the end.
func artifactRoundTripFlow() map[string]any {
	endPins := []string{"artifact_id", "import_ct", "size_bytes", "source_path", "ref",
		"content_type", "content_family", "content", "text", "json", "binary_base64", "is_binary",
		"warnings", "truncated", "filename", "bytes", "sha256", "exported"}
	edges := []any{
		artEdge("start", "exec-out", "imp", "exec-in"),
		artEdge("imp", "exec-out", "read", "exec-in"),
		artEdge("read", "exec-out", "exp", "exec-in"),
		artEdge("exp", "exec-out", "end", "exec-in"),
		artEdge("start", "file_path", "imp", "file_path"),
		artEdge("start", "content_type", "imp", "content_type"),
		artEdge("imp", "artifact", "read", "artifact"),
		artEdge("imp", "artifact_id", "exp", "artifact"),
		artEdge("start", "out_path", "exp", "file_path"),
		artEdge("imp", "artifact_id", "end", "artifact_id"),
		artEdge("imp", "content_type", "end", "import_ct"),
		artEdge("imp", "size_bytes", "end", "size_bytes"),
		artEdge("imp", "source_path", "end", "source_path"),
		artEdge("imp", "artifact_ref", "end", "ref"),
		artEdge("exp", "bytes", "end", "bytes"),
		artEdge("exp", "sha256", "end", "sha256"),
		artEdge("exp", "file_path", "end", "exported"),
	}
	for _, p := range []string{"content_type", "content_family", "content", "text", "json", "binary_base64",
		"is_binary", "warnings", "truncated", "filename"} {
		edges = append(edges, artEdge("read", p, "end", p))
	}
	return map[string]any{
		"id": "artifacts", "entryNode": "start",
		"nodes": []any{
			map[string]any{"id": "start", "type": "on_flow_start", "data": map[string]any{
				"inputs": []any{}, "outputs": artPins("exec-out", "file_path", "content_type", "out_path")}},
			map[string]any{"id": "imp", "type": "import_workspace_file", "data": map[string]any{
				"inputs":  artPins("exec-in", "file_path", "content_type"),
				"outputs": artPins("exec-out", "artifact", "artifact_ref", "artifact_id", "content_type", "size_bytes", "source_path")}},
			map[string]any{"id": "read", "type": "read_artifact", "data": map[string]any{
				"inputs": artPins("exec-in", "artifact"),
				"outputs": artPins("exec-out", "artifact", "artifact_ref", "artifact_id", "content_type", "content_family",
					"size_bytes", "filename", "source_path", "content", "text", "json", "binary_base64", "is_binary", "warnings", "truncated")}},
			map[string]any{"id": "exp", "type": "export_artifact", "data": map[string]any{
				"inputs":  artPins("exec-in", "artifact", "file_path"),
				"outputs": artPins("exec-out", "artifact_id", "file_path", "bytes", "sha256", "content_type")}},
			map[string]any{"id": "end", "type": "on_flow_end", "data": map[string]any{
				"inputs": artPins(append([]string{"exec-in"}, endPins...)...), "outputs": []any{}}},
		},
		"edges": edges,
	}
}

// runArtifactFlow runs flow on a runtime with arts (nil: no store).
func runArtifactFlow(t *testing.T, flow map[string]any, arts artifact.Store, vars map[string]any) *durable.RunState {
	t.Helper()
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	reg, err := runtime.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Put(wf); err != nil {
		t.Fatal(err)
	}
	n := 0
	rt, err := runtime.New(runtime.Config{
		Store: memory.New(), Registry: reg, MaxSteps: 1000, Artifacts: arts,
		Clock: func() time.Time { return fixedClock },
		NewID: func() string { n++; return fmt.Sprintf("run-%d", n) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s, want completed (output %s)", st.Status, jsonText(t, st.Output))
	}
	return st
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestArtifactNodesRoundTrip(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte{0xff, 0x00, 0x01}, 50000) // 150000 bytes, not UTF-8
	cases := []struct {
		name, file, contentType string
		data                    []byte
		check                   func(t *testing.T, out map[string]any)
	}{
		{name: "text", file: "notes.txt", data: []byte("héllo\nworld"), check: func(t *testing.T, out map[string]any) {
			want := map[string]any{"import_ct": "text/plain", "content_type": "text/plain", "content_family": "text",
				"text": "héllo\nworld", "content": "héllo\nworld", "json": nil, "binary_base64": "",
				"is_binary": false, "truncated": false, "filename": "notes.txt"}
			checkFields(t, out, want)
		}},
		{name: "json", file: "data.json", data: []byte(`{"a": [1, "x"]}`), check: func(t *testing.T, out map[string]any) {
			checkFields(t, out, map[string]any{"import_ct": "application/json", "content_family": "json",
				"text": `{"a": [1, "x"]}`, "is_binary": false, "binary_base64": ""})
			if got := jsonText(t, out["json"]); got != jsonText(t, map[string]any{"a": []any{int64(1), "x"}}) {
				t.Errorf("json = %s", got)
			}
			if jsonText(t, out["content"]) != jsonText(t, out["json"]) {
				t.Errorf("content %s != json %s", jsonText(t, out["content"]), jsonText(t, out["json"]))
			}
		}},
		{name: "binary", file: "blob.bin", data: big, check: func(t *testing.T, out map[string]any) {
			b64 := base64.StdEncoding.EncodeToString(big[:131072])
			checkFields(t, out, map[string]any{"import_ct": "application/octet-stream", "content_family": "document",
				"is_binary": true, "truncated": true, "binary_base64": b64, "text": "", "json": nil})
			if c, _ := out["content"].(map[string]any); c["encoding"] != "base64" || c["data"] != b64 {
				t.Errorf("content = %v", out["content"])
			}
			w, _ := out["warnings"].([]any)
			if len(w) != 1 || !strings.HasPrefix(fmt.Sprint(w[0]), "#TRUNCATION:") {
				t.Errorf("warnings = %v", out["warnings"])
			}
		}},
		{name: "pin_content_type", file: "page.dat", contentType: " Text/HTML ", data: []byte("<p>hi</p>"), check: func(t *testing.T, out map[string]any) {
			// The family is the name's (unknown suffix: document); the
			// text/html content type still selects the text projection.
			checkFields(t, out, map[string]any{"import_ct": "text/html", "content_family": "document", "text": "<p>hi</p>", "content": "<p>hi</p>"})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if err := os.WriteFile(filepath.Join(root, tc.file), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			arts := artifact.NewMemory()
			vars := map[string]any{"file_path": tc.file, "content_type": tc.contentType,
				"out_path": "exported/sub/" + tc.file, "workspace_root": root}
			st := runArtifactFlow(t, artifactRoundTripFlow(), arts, vars)
			out := st.Output
			if out["success"] != true {
				t.Fatalf("output %s", jsonText(t, out))
			}
			id := artifact.ComputeID(st.RunID, tc.data)
			checkFields(t, out, map[string]any{"artifact_id": id, "size_bytes": int64(len(tc.data)),
				"source_path": tc.file, "bytes": int64(len(tc.data)), "sha256": sha256Hex(tc.data),
				"exported": "exported/sub/" + tc.file})
			ref, _ := out["ref"].(map[string]any)
			if ref["$artifact"] != id || ref["artifact_id"] != id || ref["run_id"] != st.RunID || ref["filename"] != tc.file {
				t.Errorf("ref = %v", ref)
			}
			got, err := os.ReadFile(filepath.Join(root, "exported", "sub", tc.file))
			if err != nil || !bytes.Equal(got, tc.data) {
				t.Errorf("exported bytes differ (err %v)", err)
			}
			meta, err := arts.Metadata(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			wantTags := map[string]string{"kind": "run_input", "target": "server", "source": "workspace",
				"path": tc.file, "filename": tc.file, "modality": "", "sha256": sha256Hex(tc.data)}
			if fmt.Sprint(meta.Tags) != fmt.Sprint(wantTags) {
				t.Errorf("tags = %v, want %v", meta.Tags, wantTags)
			}
			if meta.RunID != st.RunID {
				t.Errorf("artifact run id %q, want %q", meta.RunID, st.RunID)
			}
			tc.check(t, out)
		})
	}
}

// checkFields compares selected output fields as JSON.
func checkFields(t *testing.T, out, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if g, w := jsonText(t, out[k]), jsonText(t, v); g != w {
			t.Errorf("%s = %s, want %s", k, g, w)
		}
	}
}

func TestImportIsReplaySafe(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("same"), 0o644); err != nil {
		t.Fatal(err)
	}
	arts := artifact.NewMemory()
	s := &step{ctx: context.Background(), run: &durable.RunState{RunID: "r1", SessionID: "sess"}}
	in := map[string]any{"file_path": "a.txt", "workspace_root": root}
	a, err := s.importWorkspaceFile(context.Background(), arts, in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.importWorkspaceFile(context.Background(), arts, in)
	if err != nil {
		t.Fatal(err)
	}
	if jsonText(t, a) != jsonText(t, b) {
		t.Errorf("re-import differs:\n%s\n%s", jsonText(t, a), jsonText(t, b))
	}
	all, _ := arts.ListAll(context.Background(), 0)
	if len(all) != 1 || all[0].Tags["session_id"] != "sess" {
		t.Errorf("artifacts after two imports: %d (tags %v)", len(all), all[0].Tags)
	}
}

// The last-resort UTF-8 projection (reference: _create_read_artifact_handler)
// cuts only content to 262144 characters; the text output keeps the whole
// decoded text, and the warning has the reference's wording.
func TestReadArtifactTextTruncation(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("é", artifactTextMaxChars+10)
	out := putAndReadArtifact(t, artifact.NewMemory(), []byte(text), "application/octet-stream")
	if s, _ := out["text"].(string); s != text {
		t.Errorf("text pin has %d chars, want the whole %d-char text", len([]rune(s)), len([]rune(text)))
	}
	if s, _ := out["content"].(string); len([]rune(s)) != artifactTextMaxChars || out["truncated"] != true || out["is_binary"] != false {
		t.Errorf("content runes %d, truncated %v, is_binary %v", len([]rune(s)), out["truncated"], out["is_binary"])
	}
	want := "#TRUNCATION: text projection truncated to 262144 bytes."
	if w, _ := out["warnings"].([]any); len(w) != 1 || w[0] != want {
		t.Errorf("warnings = %#v, want [%q]", out["warnings"], want)
	}
}

// The text limit is tested on the byte length (len(raw)), then the text is
// cut in characters: 200000 two-byte characters (400000 bytes) are
// reported truncated though content keeps every character.
func TestReadArtifactTextLimitIsOnBytes(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("é", 200000)
	out := putAndReadArtifact(t, artifact.NewMemory(), []byte(text), "application/octet-stream")
	if out["truncated"] != true {
		t.Errorf("truncated = %v, want true (len(raw)=%d > 262144)", out["truncated"], len(text))
	}
	if s, _ := out["content"].(string); s != text {
		t.Errorf("content has %d runes, want all 200000", len([]rune(s)))
	}
}

// The binary projection's warning has the reference's exact wording.
func TestReadArtifactBinaryTruncationWarningText(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte{0xff}, 150000)
	out := putAndReadArtifact(t, artifact.NewMemory(), data, "application/octet-stream")
	want := "#TRUNCATION: binary projection truncated to 131072 bytes before base64 encoding."
	if w, _ := out["warnings"].([]any); len(w) != 1 || w[0] != want {
		t.Errorf("warnings = %#v, want [%q]", out["warnings"], want)
	}
}

// The content_type output is the stored type stripped and lower-cased
// (str(meta.content_type or "").strip().lower()), else the default; the
// ref object keeps the stored value.
func TestReadArtifactContentTypeOutputNormalised(t *testing.T) {
	t.Parallel()
	out := putAndReadArtifact(t, artifact.NewMemory(), []byte("hi"), " Text/Plain ")
	if out["content_type"] != "text/plain" {
		t.Errorf("content_type = %#v, want \"text/plain\"", out["content_type"])
	}
	if ref, _ := out["artifact"].(map[string]any); ref["content_type"] != " Text/Plain " {
		t.Errorf("ref content_type = %#v, want the stored value", ref["content_type"])
	}
}

// JSON is projected only for a content type equal to "application/json"
// (or a json-family name): "application/json; charset=utf-8" with a name of
// unknown family falls to the UTF-8 branch (content = text, json = null).
func TestReadArtifactJSONWithParametersIsText(t *testing.T) {
	t.Parallel()
	out := putAndReadArtifact(t, artifact.NewMemory(), []byte(`{"a": 1}`), "application/json; charset=utf-8")
	if out["content"] != `{"a": 1}` || out["json"] != nil {
		t.Errorf("content %#v json %#v, want the text and null", out["content"], out["json"])
	}
}

// The JSON projection warning quotes Python's JSONDecodeError text,
// "<msg>: line L column C (char N)".
func TestReadArtifactJSONWarningText(t *testing.T) {
	t.Parallel()
	out := putAndReadArtifact(t, artifact.NewMemory(), []byte(""), "application/json")
	want := "JSON projection failed: Expecting value: line 1 column 1 (char 0)"
	if w, _ := out["warnings"].([]any); len(w) == 0 || w[0] != want {
		t.Errorf("warnings = %#v, want first %q", out["warnings"], want)
	}
}

// import_workspace_file guesses as mimetypes.guess_type(filename), which
// strips a compression suffix and types the inner name: "notes.txt.gz" is
// stored as text/plain.
func TestImportGuessTypeUnderCompressionSuffix(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt.gz"), []byte{0x1f, 0x8b, 0x08, 0x00}, 0o644); err != nil {
		t.Fatal(err)
	}
	arts := artifact.NewMemory()
	vars := map[string]any{"file_path": "notes.txt.gz", "workspace_root": root}
	runArtifactFlow(t, singleNodeFlow("import_workspace_file", "file_path"), arts, vars)
	all, err := arts.ListAll(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].ContentType != "text/plain" {
		var cts []string
		for _, m := range all {
			cts = append(cts, m.ContentType)
		}
		t.Errorf("stored content types %v, want [text/plain]", cts)
	}
}

// putAndReadArtifact stores content as contentType in arts and returns
// what read_artifact gives for its id.
func putAndReadArtifact(t *testing.T, arts artifact.Store, content []byte, contentType string) map[string]any {
	t.Helper()
	meta, err := arts.Put(context.Background(), artifact.PutParams{Content: content, ContentType: contentType})
	if err != nil {
		t.Fatal(err)
	}
	r, err := readArtifact(context.Background(), arts, map[string]any{"artifact": meta.ArtifactID})
	if err != nil {
		t.Fatal(err)
	}
	return r.(map[string]any)
}

// singleNodeFlow is start → <typ> → end, the node's inputs from vars.
func singleNodeFlow(typ string, in ...string) map[string]any {
	edges := []any{artEdge("start", "exec-out", "n", "exec-in"), artEdge("n", "exec-out", "end", "exec-in")}
	for _, p := range in {
		edges = append(edges, artEdge("start", p, "n", p))
	}
	return map[string]any{
		"id": "single", "entryNode": "start",
		"nodes": []any{
			map[string]any{"id": "start", "type": "on_flow_start", "data": map[string]any{
				"inputs": []any{}, "outputs": artPins(append([]string{"exec-out"}, in...)...)}},
			map[string]any{"id": "n", "type": typ, "data": map[string]any{
				"inputs": artPins(append([]string{"exec-in"}, in...)...), "outputs": artPins("exec-out")}},
			map[string]any{"id": "end", "type": "on_flow_end", "data": map[string]any{
				"inputs": artPins("exec-in"), "outputs": []any{}}},
		},
		"edges": edges,
	}
}

func TestArtifactNodeErrors(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, typ string
		in        []string
		vars      map[string]any
		noStore   bool
		want      string
	}{
		{"import_no_store", "import_workspace_file", []string{"file_path"}, map[string]any{"file_path": "a.txt"}, true,
			"import_workspace_file requires an artifact store, but runtime.Config.Artifacts is not set"},
		{"read_no_store", "read_artifact", []string{"artifact"}, map[string]any{"artifact": "abc"}, true,
			"read_artifact requires an artifact store, but runtime.Config.Artifacts is not set"},
		{"export_no_store", "export_artifact", []string{"artifact", "file_path"}, map[string]any{"artifact": "abc", "file_path": "o.txt"}, true,
			"export_artifact requires an artifact store, but runtime.Config.Artifacts is not set"},
		{"read_not_found", "read_artifact", []string{"artifact"}, map[string]any{"artifact": map[string]any{"$artifact": "deadbeef"}}, false,
			"read_artifact: artifact not found: deadbeef"},
		{"export_not_found", "export_artifact", []string{"artifact", "file_path"}, map[string]any{"artifact": map[string]any{"artifact_id": "nope"}, "file_path": "o.txt"}, false,
			"export_artifact: artifact not found: nope"},
		{"read_no_artifact", "read_artifact", []string{"artifact"}, map[string]any{"artifact": "  "}, false,
			"read_artifact requires an artifact (an artifact ref object or an artifact id)"},
		{"export_no_artifact", "export_artifact", []string{"artifact", "file_path"}, map[string]any{"artifact": nil, "file_path": "o.txt"}, false,
			"export_artifact requires an artifact (an artifact ref object or an artifact id)"},
		{"export_empty_path", "export_artifact", []string{"artifact", "file_path"}, map[string]any{"artifact": "abc", "file_path": ""}, false,
			"export_artifact requires a non-empty 'file_path' input."},
		{"import_missing_file", "import_workspace_file", []string{"file_path"}, map[string]any{"file_path": "nope.txt"}, false,
			"File not found: nope.txt"},
		{"import_escape", "import_workspace_file", []string{"file_path"}, map[string]any{"file_path": "../x"}, false,
			"import_workspace_file path rejected by workspace policy: path escapes the workspace root: \"../x\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var arts artifact.Store
			if !tc.noStore {
				arts = artifact.NewMemory()
			}
			tc.vars["workspace_root"] = root
			st := runArtifactFlow(t, singleNodeFlow(tc.typ, tc.in...), arts, tc.vars)
			if st.Output["success"] != false || st.Output["error"] != tc.want || st.Output["node"] != "n" {
				t.Errorf("output %s, want error %q", jsonText(t, st.Output), tc.want)
			}
		})
	}
}

// read_artifact cuts only its last-resort UTF-8 projection: a text/*
// artifact is returned whole (spec §6.10), so a long imported log or CSV
// keeps its end.
func TestReadArtifactTextPlainNotTruncated(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("a", artifactTextMaxChars+100)
	out := putAndReadArtifact(t, artifact.NewMemory(), []byte(text), "text/plain")
	got, _ := out["text"].(string)
	content, _ := out["content"].(string)
	if len(got) != len(text) || len(content) != len(text) || out["truncated"] != false {
		t.Errorf("%d-char text/plain artifact: text %d chars, content %d chars, truncated %v; want the whole text",
			len(text), len(got), len(content), out["truncated"])
	}
}

// The text and binary_base64 projections are strings, "" for the branch
// not taken, never null, so a string node wired to them gets "".
func TestReadArtifactEmptyProjectionsAreStrings(t *testing.T) {
	t.Parallel()
	arts := artifact.NewMemory()
	bin, err := arts.Put(context.Background(), artifact.PutParams{Content: []byte{0xff, 0xfe, 0x00, 0x81}, ContentType: "application/octet-stream"})
	if err != nil {
		t.Fatal(err)
	}
	txt, err := arts.Put(context.Background(), artifact.PutParams{Content: []byte("hello"), ContentType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := readArtifact(context.Background(), arts, map[string]any{"artifact": bin.ArtifactID})
	if err != nil {
		t.Fatal(err)
	}
	if v := r.(map[string]any)["text"]; v != "" {
		t.Errorf("binary artifact: text = %#v, want \"\"", v)
	}
	r, err = readArtifact(context.Background(), arts, map[string]any{"artifact": txt.ArtifactID})
	if err != nil {
		t.Fatal(err)
	}
	if v := r.(map[string]any)["binary_base64"]; v != "" {
		t.Errorf("text artifact: binary_base64 = %#v, want \"\"", v)
	}
}

// Text and JSON artifacts whose bytes are not UTF-8 are decoded strictly:
// the failure is a warning quoting Python's decode error and the bytes
// come back losslessly as base64, not as text with U+FFFD.
func TestReadArtifactInvalidUTF8IsBinary(t *testing.T) {
	t.Parallel()
	arts := artifact.NewMemory()
	cases := []struct {
		contentType string
		data        []byte
		warning     string
	}{
		{"text/csv", []byte("caf\xe9;na\xefve\n"),
			"UTF-8 text projection failed: 'utf-8' codec can't decode byte 0xe9 in position 3: invalid continuation byte"},
		{"application/json", []byte("{\"a\": \"\xe2\x82\""),
			"JSON projection failed: 'utf-8' codec can't decode bytes in position 7-8: invalid continuation byte"},
		{"text/plain", []byte("ok\xe2\x82"),
			"UTF-8 text projection failed: 'utf-8' codec can't decode bytes in position 2-3: unexpected end of data"},
		{"text/plain", []byte("\x80"),
			"UTF-8 text projection failed: 'utf-8' codec can't decode byte 0x80 in position 0: invalid start byte"},
	}
	for _, tc := range cases {
		out := putAndReadArtifact(t, arts, tc.data, tc.contentType)
		if out["is_binary"] != true || out["binary_base64"] != base64.StdEncoding.EncodeToString(tc.data) || out["text"] != "" {
			t.Errorf("%s %q: is_binary %v, binary_base64 %#v, text %#v; want the bytes as base64",
				tc.contentType, tc.data, out["is_binary"], out["binary_base64"], out["text"])
		}
		if w, _ := out["warnings"].([]any); len(w) != 1 || w[0] != tc.warning {
			t.Errorf("%s %q: warnings = %#v, want [%q]", tc.contentType, tc.data, out["warnings"], tc.warning)
		}
	}
}

// An artifact input object's id is `$artifact or artifact_id` with
// Python's `or` (spec §4.9): an empty "$artifact", the editor literal's
// default, falls through to artifact_id.
func TestArtifactInputEmptyDollarFallsBackToArtifactID(t *testing.T) {
	t.Parallel()
	arts := artifact.NewMemory()
	meta, err := arts.Put(context.Background(), artifact.PutParams{Content: []byte("hello"), ContentType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	ref := map[string]any{"$artifact": "", "artifact_id": meta.ArtifactID, "content_type": "text/plain"}
	r, err := readArtifact(context.Background(), arts, map[string]any{"artifact": ref})
	if err != nil {
		t.Fatalf("read_artifact of %v: %v; want the artifact named by artifact_id", ref, err)
	}
	if got := r.(map[string]any)["text"]; got != "hello" {
		t.Errorf("text = %#v, want \"hello\"", got)
	}
}
