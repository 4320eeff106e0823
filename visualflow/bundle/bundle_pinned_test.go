package bundle

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"
)

// Namespace (§8.3): a subflow reference is compared trimmed, so a padded
// " child " naming a flow of the same manifest is rewritten to that flow's
// namespaced id.
func TestNamespacePaddedSubflowRef(t *testing.T) {
	b := &Bundle{
		Manifest: Manifest{BundleID: "demo", BundleVersion: "1.0.0",
			Flows: map[string]string{"main": "flows/main.json", "child": "flows/child.json"}},
		Flows: map[string]map[string]any{
			"main": {"id": "main", "nodes": []any{map[string]any{"id": "call", "type": "subflow",
				"data": map[string]any{"subflowId": " child "}}}},
			"child": {"id": "child", "nodes": []any{}},
		},
	}
	ns, err := Namespace(b)
	if err != nil {
		t.Fatal(err)
	}
	data := nodeData(nodeList(ns["demo@1.0.0:main"])[0])
	if got := data["subflowId"]; got != "demo@1.0.0:child" {
		t.Fatalf("subflowId = %q, want demo@1.0.0:child", got)
	}
}

// latest (§8.5): when a version is not semver-like, the newest is the
// greatest (created_at, version): a later created_at wins over a greater
// version text.
func TestLatestNonSemverByCreatedAtFirst(t *testing.T) {
	older := &Bundle{Manifest: Manifest{BundleID: "b", BundleVersion: "zeta", CreatedAt: "2026-01-01T00:00:00Z"}}
	newer := &Bundle{Manifest: Manifest{BundleID: "b", BundleVersion: "alpha", CreatedAt: "2026-02-01T00:00:00Z"}}
	if got := latest([]*Bundle{older, newer}); got != newer {
		t.Fatalf("latest = %s, want b@alpha (created later)", got.Ref())
	}
	if got := latest([]*Bundle{newer, older}); got != newer {
		t.Fatalf("latest = %s, want b@alpha (created later)", got.Ref())
	}
}

// IDText is Python's str(v or "").strip(): a falsy id (0, false, "") is
// no id, so FlowID passes over it to the next key.
func TestIDTextFalsyIsEmpty(t *testing.T) {
	for _, v := range []any{int64(0), false, 0.0} {
		if got := IDText(v); got != "" {
			t.Errorf("IDText(%v) = %q, want \"\"", v, got)
		}
	}
	if got := FlowID(map[string]any{"id": int64(0), "flow_id": "f1"}); got != "f1" {
		t.Errorf("FlowID = %q, want f1 (id 0 is falsy)", got)
	}
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// readLimited accepts a file of exactly maxEntrySize bytes (the bound is
// "larger than"), and refuses one byte more.
func TestReadLimitedExactBound(t *testing.T) {
	if _, err := readLimited(io.LimitReader(zeros{}, maxEntrySize)); err != nil {
		t.Fatalf("a file of exactly %d bytes: %v", maxEntrySize, err)
	}
	if _, err := readLimited(io.LimitReader(zeros{}, maxEntrySize+1)); err == nil {
		t.Fatalf("a file of %d bytes was accepted", maxEntrySize+1)
	}
}

// NodeType normalises an enum spelling: "NodeType.AGENT" is "agent", so
// Namespace still finds the agent node to set its ReAct workflow id.
func TestNodeTypeEnumSpellingLowered(t *testing.T) {
	if got := NodeType(map[string]any{"type": "NodeType.AGENT"}); got != "agent" {
		t.Fatalf("NodeType = %q, want agent", got)
	}
}

// FlowID prefers id over flow_id over workflow_id.
func TestFlowIDKeyPrecedence(t *testing.T) {
	if got := FlowID(map[string]any{"workflow_id": "c", "flow_id": "b", "id": "a"}); got != "a" {
		t.Errorf("FlowID = %q, want a (id first)", got)
	}
	if got := FlowID(map[string]any{"workflow_id": "c", "flow_id": "b"}); got != "b" {
		t.Errorf("FlowID = %q, want b (flow_id before workflow_id)", got)
	}
}

// An entry flagged UTF-8 (general purpose bit 11) whose name is not valid
// UTF-8 makes the archive unreadable, as Python's zipfile refuses it,
// even when the manifest does not name that entry.
func TestFlaggedInvalidUTF8EntryNameRefused(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	files := []struct{ name, body string }{
		{"manifest.json", mustJSON(t, fixtureManifest(fixtureOptions{ID: "demo"}))},
		{"flows/main.json", mustJSON(t, leafFlow("main"))},
		{"assets/\xff.txt", "x"},
	}
	for _, f := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.name, Flags: 0x800, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBytes(buf.Bytes(), "bad.flow"); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("ReadBytes = %v, want an error naming the invalid UTF-8 name", err)
	}
}
