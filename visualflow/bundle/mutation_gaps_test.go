package bundle

// Tests added by a mutation-testing pass over visualflow/bundle: each
// guards a promised behaviour (spec visualflow.md §7–§8 or a doc comment)
// that no other test checked.

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// manifestWith returns fixtureManifest(o) with the given keys replaced.
func manifestWith(o fixtureOptions, set map[string]any) map[string]any {
	m := fixtureManifest(o)
	for k, v := range set {
		m[k] = v
	}
	return m
}

// zipOfManifest builds a bundle zip from a manifest object, with a leaf
// flow for every id in flows.
func zipOfManifest(t *testing.T, m map[string]any, flows ...string) []byte {
	t.Helper()
	files := map[string]string{"manifest.json": mustJSON(t, m)}
	for _, f := range flows {
		files["flows/"+f+".json"] = mustJSON(t, leafFlow(f))
	}
	return makeZip(t, files)
}

// A null snake_case key does not hide its camelCase alias: pickOK takes
// "the first alias present with a non-null value".
func TestManifestNullSnakeCaseKeyFallsBackToCamelCaseAlias(t *testing.T) {
	m := manifestWith(fixtureOptions{ID: "x"}, map[string]any{
		"bundle_id": nil, "bundleId": "camel",
		"bundle_version": nil, "bundleVersion": "2.0.0",
	})
	got, err := ParseManifest([]byte(mustJSON(t, m)))
	if err != nil {
		t.Fatalf("ParseManifest: %v", err)
	}
	if got.BundleID != "camel" || got.BundleVersion != "2.0.0" {
		t.Fatalf("bundle_id, bundle_version = %q, %q; want the camelCase aliases camel, 2.0.0", got.BundleID, got.BundleVersion)
	}
}

// §7.2: an entrypoint description is a string (default ""); another type
// makes the manifest invalid.
func TestManifestEntrypointDescriptionMustBeString(t *testing.T) {
	m := fixtureManifest(fixtureOptions{ID: "x"})
	m["entrypoints"] = []any{map[string]any{"flow_id": "main", "description": 5}}
	if _, err := ParseManifest([]byte(mustJSON(t, m))); err == nil || !strings.Contains(err.Error(), "description must be a string") {
		t.Fatalf("ParseManifest with a numeric description: err = %v", err)
	}
	m["entrypoints"] = []any{map[string]any{"flow_id": "main", "description": nil}}
	got, err := ParseManifest([]byte(mustJSON(t, m)))
	if err != nil || got.Entrypoints[0].Description != "" {
		t.Fatalf("null description: %+v, %v; want \"\"", got.Entrypoints, err)
	}
}

// deflateZeros returns a raw deflate stream of n zero bytes (n = k MiB +
// r, r < 1 MiB), built from self-contained blocks so it is cheap.
func deflateZeros(t *testing.T, mib, extra int) ([]byte, uint32) {
	t.Helper()
	block := func(data []byte) []byte {
		var b bytes.Buffer
		fw, err := flate.NewWriter(&b, flate.BestSpeed)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
		fw.Flush()
		return b.Bytes()
	}
	chunk := make([]byte, 1<<20)
	one := block(chunk)
	var comp bytes.Buffer
	var crc uint32
	for range mib {
		comp.Write(one)
		crc = crc32.Update(crc, crc32.IEEETable, chunk)
	}
	if extra > 0 {
		comp.Write(block(make([]byte, extra)))
		crc = crc32.Update(crc, crc32.IEEETable, make([]byte, extra))
	}
	comp.Write([]byte{0x03, 0x00}) // the final, empty block
	return comp.Bytes(), crc
}

// An entry one byte over maxEntrySize (64 MiB) is refused, not read
// truncated or accepted.
func TestReadRefusesEntryOneByteOverEntryLimit(t *testing.T) {
	comp, crc := deflateZeros(t, maxEntrySize>>20, 1)
	m := fixtureManifest(fixtureOptions{ID: "big"})
	m["assets"] = map[string]any{"blob": "assets/blob.bin"}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range map[string]string{"manifest.json": mustJSON(t, m), "flows/main.json": mustJSON(t, leafFlow("main"))} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
	}
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "assets/blob.bin", Method: zip.Deflate,
		CRC32: crc, CompressedSize64: uint64(len(comp)), UncompressedSize64: maxEntrySize + 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := ReadBytes(buf.Bytes(), "big.flow")
	if err == nil || !strings.Contains(err.Error(), "file larger than") {
		n := -1
		if b != nil {
			n = len(b.Assets["blob"])
		}
		t.Fatalf("an asset of maxEntrySize+1 bytes: err = %v (asset of %d bytes); want it refused", err, n)
	}
}

// An entry declaring an absurd size (past int64) is refused as too large
// from its declared size, before anything is inflated: the size must not
// wrap to a negative count that lets the bundle through the budget.
func TestReadRefusesEntryDeclaringSizePastInt64(t *testing.T) {
	m := fixtureManifest(fixtureOptions{ID: "liar"})
	m["assets"] = map[string]any{"blob": "assets/blob.bin"}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range map[string]string{"manifest.json": mustJSON(t, m), "flows/main.json": mustJSON(t, leafFlow("main"))} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
	}
	payload := []byte("tiny")
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "assets/blob.bin", Method: zip.Store,
		CRC32: crc32.ChecksumIEEE(payload), CompressedSize64: uint64(len(payload)), UncompressedSize64: 1<<63 + 7})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(payload)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBytes(buf.Bytes(), "liar.flow"); err == nil || !strings.Contains(err.Error(), "larger than 256 MiB in all") {
		t.Fatalf("an entry declaring 2^63+7 bytes: err = %v; want it refused as too large", err)
	}
}

func versions(vs ...[2]string) []*Bundle {
	var out []*Bundle
	for _, v := range vs {
		out = append(out, &Bundle{Manifest: Manifest{BundleID: "b", BundleVersion: v[0], CreatedAt: v[1]}})
	}
	return out
}

// §8.5: semver-like versions are compared on their first three parts.
func TestLatestComparesThirdSemverPart(t *testing.T) {
	for _, vs := range [][]*Bundle{
		versions([2]string{"1.2.9", ""}, [2]string{"1.2.10", ""}),
		versions([2]string{"1.2.10", ""}, [2]string{"1.2.9", ""}),
	} {
		if got := latest(vs).Manifest.BundleVersion; got != "1.2.10" {
			t.Errorf("latest(1.2.9, 1.2.10) = %s, want 1.2.10", got)
		}
	}
	// Parts after the third are ignored: 1.2.3.9 ties with 1.2.3 (first wins).
	if got := latest(versions([2]string{"1.2.3", ""}, [2]string{"1.2.3.9", ""})).Manifest.BundleVersion; got != "1.2.3" {
		t.Errorf("latest(1.2.3, 1.2.3.9) = %s, want 1.2.3 (a tie on the first three parts)", got)
	}
}

// §8.5: non-semver versions rank by the (created_at, version) pair, so
// equal created_at falls to the greater version string.
func TestLatestBreaksCreatedAtTieByVersion(t *testing.T) {
	for _, vs := range [][]*Bundle{
		versions([2]string{"alpha", "2026-01-01"}, [2]string{"main", "2026-01-01"}),
		versions([2]string{"main", "2026-01-01"}, [2]string{"alpha", "2026-01-01"}),
	} {
		if got := latest(vs).Manifest.BundleVersion; got != "main" {
			t.Errorf("latest(alpha, main) with equal created_at = %s, want main", got)
		}
	}
}

// IsDraft: only a version starting with "draft." (any case, surrounding
// whitespace ignored) is a draft, as gateway-api §2 and Python's
// _is_draft_bundle_version have it; a plain "draft" is published, so latest
// does not pass it over for an older published version.
func TestPlainDraftVersionIsPublished(t *testing.T) {
	for v, want := range map[string]bool{
		"draft": false, "drafty": false, "Draft.1": true, " draft.x ": true, "draft.": true, "1.0.0": false,
	} {
		if got := (&Bundle{Manifest: Manifest{BundleVersion: v}}).IsDraft(); got != want {
			t.Errorf("IsDraft(%q) = %v, want %v", v, got, want)
		}
	}
	// Both published and not all semver: the greatest (created_at,
	// version) wins, as Python's _pick_latest_version.
	if got := latest(versions([2]string{"draft", "2027-01-01"}, [2]string{"dev", "2026-01-01"})).Manifest.BundleVersion; got != "draft" {
		t.Errorf("latest(draft@2027, dev@2026) = %s, want draft", got)
	}
}

// registryOf writes each named bundle zip into a fresh directory and opens
// it as a registry.
func registryOf(t *testing.T, files map[string][]byte) *Registry {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		writeFile(t, filepath.Join(dir, name), data)
	}
	r, errs := OpenRegistry(dir, nil)
	if len(errs) != 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	return r
}

// §8.5: without a flow id, the manifest's default_entrypoint is used
// (not the first entrypoint).
func TestResolveEntrypointUsesDefaultEntrypoint(t *testing.T) {
	m := manifestWith(fixtureOptions{ID: "multi", Flows: []string{"first", "second"}}, map[string]any{
		"entrypoints": []any{
			map[string]any{"flow_id": "first", "name": "First"},
			map[string]any{"flow_id": "second", "name": "Second"},
		},
		"default_entrypoint": "second",
	})
	r := registryOf(t, map[string][]byte{"multi.flow": zipOfManifest(t, m, "first", "second")})
	b, flow, err := r.ResolveEntrypoint("multi", "")
	if err != nil || b.Ref() != "multi@1.0.0" || flow != "second" {
		t.Fatalf("ResolveEntrypoint(multi) = %v, %q, %v; want the default entrypoint second", b, flow, err)
	}
}

// §8.5: an entrypoint name must match exactly one bundle; a name shared by
// two bundles resolves to none.
func TestEntrypointNameMatchingTwoBundlesDoesNotResolve(t *testing.T) {
	named := func(id string) []byte {
		m := manifestWith(fixtureOptions{ID: id}, map[string]any{
			"entrypoints": []any{map[string]any{"flow_id": "main", "name": "Chat"}},
		})
		return zipOfManifest(t, m, "main")
	}
	r := registryOf(t, map[string][]byte{"one.flow": named("one"), "two.flow": named("two")})
	if b, flow, err := r.ResolveEntrypoint("chat", ""); err == nil || !errors.Is(err, ErrNotFound) {
		t.Fatalf("ResolveEntrypoint(chat) with two bundles naming an entrypoint Chat = %v, %q, %v; want not found", b, flow, err)
	}
	// With only one such bundle the name resolves.
	r = registryOf(t, map[string][]byte{"one.flow": named("one")})
	if b, flow, err := r.ResolveEntrypoint("CHAT", ""); err != nil || b.Manifest.BundleID != "one" || flow != "main" {
		t.Fatalf("ResolveEntrypoint(CHAT) = %v, %q, %v; want one, main", b, flow, err)
	}
}

// A reference that is a bundle id picks that bundle's default entrypoint,
// even when another bundle has an entrypoint named like that id.
func TestBundleIDRefIsNotTakenOverByAnotherBundlesEntrypointName(t *testing.T) {
	alpha := zipOfManifest(t, fixtureManifest(fixtureOptions{ID: "alpha"}), "main")
	beta := zipOfManifest(t, manifestWith(fixtureOptions{ID: "beta", Flows: []string{"other"}}, map[string]any{
		"entrypoints": []any{map[string]any{"flow_id": "other", "name": "alpha"}},
	}), "other")
	r := registryOf(t, map[string][]byte{"alpha.flow": alpha, "beta.flow": beta})
	b, flow, err := r.ResolveEntrypoint("alpha", "")
	if err != nil || b.Manifest.BundleID != "alpha" || flow != "main" {
		t.Fatalf("ResolveEntrypoint(alpha) = %v, %q, %v; want alpha, main", b, flow, err)
	}
}

// SplitWorkflowID: an id whose bundle part is empty is not namespaced.
func TestSplitWorkflowIDRefusesEmptyBundleID(t *testing.T) {
	for _, id := range []string{"@1.0:flow", "@:flow"} {
		if b, v, f, ok := SplitWorkflowID(id); ok {
			t.Errorf("SplitWorkflowID(%q) = %q, %q, %q, true; want ok=false", id, b, v, f)
		}
	}
}

// packDir writes flows (id → flow) as <id>.json in a fresh directory.
func packDir(t *testing.T, flows map[string]map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	for id, f := range flows {
		writeFile(t, filepath.Join(dir, id+".json"), []byte(mustJSON(t, f)))
	}
	return dir
}

func flowKeys(b *Bundle) []string {
	var out []string
	for id := range b.Manifest.Flows {
		out = append(out, id)
	}
	return out
}

// §7.3: every on_event node is a root of the reachability walk, so a
// subflow reached only from an event handler is packed.
func TestPackCollectsSubflowReachedFromOnEvent(t *testing.T) {
	root := packFlow("root", "child")
	exec := map[string]any{"id": "exec-out", "type": "execution"}
	execIn := map[string]any{"id": "exec-in", "type": "execution"}
	root["nodes"] = append(root["nodes"].([]any),
		map[string]any{"id": "ev", "type": "on_event", "data": map[string]any{"outputs": []any{exec}}},
		map[string]any{"id": "evcall", "type": "subflow", "data": map[string]any{
			"inputs": []any{execIn}, "outputs": []any{exec}, "subflowId": "handler"}},
	)
	root["edges"] = append(root["edges"].([]any),
		map[string]any{"source": "ev", "sourceHandle": "exec-out", "target": "evcall", "targetHandle": "exec-in"})
	dir := packDir(t, map[string]map[string]any{"root": root, "child": leafFlow("child"), "handler": leafFlow("handler")})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Manifest.Flows["handler"]; !ok {
		t.Fatalf("packed flows = %v; want handler (reached from an on_event node)", flowKeys(b))
	}
}

// §7.3: with neither the root nor the default given among the
// entrypoints, default_entrypoint is the first entrypoint.
func TestPackDefaultEntrypointIsFirstWhenRootIsNotAnEntrypoint(t *testing.T) {
	dir := packDir(t, map[string]map[string]any{
		"root": packFlow("root", "child"), "child": packFlow("child", "grand"), "grand": leafFlow("grand"),
	})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{Entrypoints: []string{"grand", "child"}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Manifest.DefaultEntrypoint != "grand" {
		t.Fatalf("default_entrypoint = %q, want the first entrypoint grand", b.Manifest.DefaultEntrypoint)
	}
}

// §7.3: reachability follows exec edges only; a data edge into a subflow
// node does not make it reachable (here its child does not exist).
func TestPackIgnoresDataEdgesForReachability(t *testing.T) {
	root := packFlow("root", "child")
	root["edges"] = append(root["edges"].([]any),
		map[string]any{"source": "start", "sourceHandle": "prompt", "target": "orphan", "targetHandle": "prompt"})
	dir := packDir(t, map[string]map[string]any{"root": root, "child": leafFlow("child")})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err != nil {
		t.Fatalf("Pack with a data edge into an unreachable subflow node: %v", err)
	}
	if len(b.Manifest.Flows) != 2 {
		t.Fatalf("packed flows = %v, want root and child", flowKeys(b))
	}
}

// §7.3: the entryNode, when it is an exec node, is the root, even when
// another exec node without incoming edge comes first in the node list.
func TestPackStartsFromEntryNode(t *testing.T) {
	root := packFlow("root", "child")
	nodes := root["nodes"].([]any)
	var orphan any
	var rest []any
	for _, n := range nodes {
		if n.(map[string]any)["id"] == "orphan" {
			orphan = n
		} else {
			rest = append(rest, n)
		}
	}
	root["nodes"] = append([]any{orphan}, rest...)
	dir := packDir(t, map[string]map[string]any{"root": root, "child": leafFlow("child")})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err != nil {
		t.Fatalf("Pack: %v (the orphan subflow node listed first is not reachable from entryNode start)", err)
	}
	if _, ok := b.Manifest.Flows["child"]; !ok {
		t.Fatalf("packed flows = %v; want child (reached from entryNode)", flowKeys(b))
	}
}

// §7.3: a subflow node naming its child with the legacy flowId key is
// followed too.
func TestPackFollowsFlowIdAlias(t *testing.T) {
	root := packFlow("root", "child")
	for _, n := range root["nodes"].([]any) {
		node := n.(map[string]any)
		if node["id"] == "call" {
			data := node["data"].(map[string]any)
			delete(data, "subflowId")
			data["flowId"] = "child"
		}
	}
	dir := packDir(t, map[string]map[string]any{"root": root, "child": leafFlow("child")})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Manifest.Flows["child"]; !ok {
		t.Fatalf("packed flows = %v; want child (named by flowId)", flowKeys(b))
	}
}

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
