package bundle

// Hostile bundles against the `.flow` reader and writer (spec
// visualflow.md §7–§8, gateway-api.md §2, Python's AbstractRuntime
// workflow_bundle). Each of the first seven tests guards against the bug
// its comment describes; the last three pin behaviour the reader and
// writer must keep.

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// zipEntries builds a zip from (name, data) pairs in order, deflated.
func zipEntries(t *testing.T, pairs ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range pairs {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: p[0], Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(p[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// read.go: "maxEntrySize bounds each file read from a bundle (64 MiB), and
// maxBundleSize all of them together (a small zip may inflate to far more
// than its size)"; budgeted "refuses to read more than maxBundleSize in
// all". The budget (and fits) charges an entry once however many manifest
// paths name it, but readFrom decodes it once per flow id and keeps every
// decoded copy. So a manifest naming one entry under many flow ids gets
// past every limit: measured, a 1 KiB .flow naming one 1 MiB `[{},{},…]`
// entry under 20 flow ids holds 430 MiB after ReadBytes (4 s of CPU);
// 1,000 ids would hold ~21 GB, and OpenRegistry reads every bundle of the
// directory, so one such file takes the host down at start. Here 33
// ids name one 8 MiB entry (264 MiB > maxBundleSize; the body is one small
// object plus trailing blanks so that this test stays fast on the current
// code). Fixed means: refused as too large, or decoded once and shared.
func TestAliasedFlowEntryIsNotDecodedPerFlowID(t *testing.T) {
	const ids = 33
	const size = 8 << 20 // ids*size > maxBundleSize
	body := `{"id":"main","nodes":[],"edges":[]}` + strings.Repeat(" ", size)
	data := zipEntries(t, [2]string{"manifest.json", aliasManifest(t, ids)}, [2]string{"flows/main.json", body})

	b, err := ReadBytes(data, "alias.flow")
	if err != nil {
		if strings.Contains(err.Error(), "larger than 256 MiB in all") {
			return // refused from the budget: fixed
		}
		t.Fatalf("ReadBytes: %v", err)
	}
	shared := reflect.ValueOf(b.Flows["f0"]).Pointer()
	for id, f := range b.Flows {
		if reflect.ValueOf(f).Pointer() != shared {
			t.Fatalf("a %d KiB bundle naming one %d MiB entry under %d flow ids was decoded once per id (%s is a separate copy): %d MiB of JSON decoded, past the %d MiB budget; want it refused as too large, or decoded once",
				len(data)>>10, size>>20, ids, id, ids*size>>20, maxBundleSize>>20)
		}
	}
}

// Write's doc: "Write writes b as a … `.flow` zip: manifest.json, each
// flow at its manifest path … and each asset", and a bundle it writes must
// read back (WriteFile refuses to write one that does not; bundle_test's
// round trip). ReadBytes accepts a manifest in which two flows share one
// path, or an asset sits at manifest.json (Python's reader too), but Write
// then emits two zip entries of one name: its own reader refuses the
// result ("duplicate zip entry"), and Python's zipfile takes the last
// entry, so for manifest.json it reads the asset instead of the manifest.
func TestWriteNeverEmitsDuplicateEntries(t *testing.T) {
	flow := mustJSON(t, leafFlow("main"))
	shared := fixtureManifest(fixtureOptions{ID: "shared", Flows: []string{"main"}})
	shared["flows"] = map[string]any{"main": "flows/main.json", "copy": "flows/main.json"}
	atManifest := fixtureManifest(fixtureOptions{ID: "asset", Flows: []string{"main"}})
	atManifest["assets"] = map[string]any{"raw_manifest": "manifest.json"}
	for name, m := range map[string]map[string]any{"two flows share a path": shared, "asset at manifest.json": atManifest} {
		t.Run(name, func(t *testing.T) {
			in := zipEntries(t, [2]string{"manifest.json", mustJSON(t, m)}, [2]string{"flows/main.json", flow})
			b, err := ReadBytes(in, "in.flow")
			if err != nil {
				t.Fatalf("ReadBytes of the input: %v", err)
			}
			var buf bytes.Buffer
			if err := Write(&buf, b); err != nil {
				return // refusing to write is acceptable
			}
			zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, f := range zr.File {
				if seen[f.Name] {
					_, rerr := ReadBytes(buf.Bytes(), "out.flow")
					t.Fatalf("Write emitted entry %q twice (read back: %v)", f.Name, rerr)
				}
				seen[f.Name] = true
			}
		})
	}
}

// Write's doc: "… each flow at its manifest path (flows/<id>.json by
// default …) and each asset". An asset in b.Assets without a path in
// b.Manifest.Assets is dropped without a word (a flow in the same case
// gets its default path), so the written bundle silently lacks content
// the caller handed over.
func TestWriteDoesNotSilentlyDropAssets(t *testing.T) {
	m, err := ParseManifest([]byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "assets"}))))
	if err != nil {
		t.Fatal(err)
	}
	b := &Bundle{Manifest: m, Flows: map[string]map[string]any{"main": leafFlow("main")},
		Assets: map[string][]byte{"logo": []byte("PNG")}}
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		return // an error naming the asset without a path is acceptable
	}
	back, err := ReadBytes(buf.Bytes(), "assets.flow")
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Assets["logo"]) != "PNG" {
		t.Fatalf("Write succeeded but asset logo is gone from the written bundle (assets read back: %v)", back.Manifest.Assets)
	}
}

// An entry encrypted with a password (zip -e; general-purpose flag bit 0)
// cannot be read; Python's zipfile says "File … is encrypted, password
// required for extraction". Ours reports a flate or zip-format error
// ("flate: corrupt input before offset 5", "zip: not a valid zip file")
// that does not tell the user what is wrong with the bundle.
func TestEncryptedEntryIsReportedAsEncrypted(t *testing.T) {
	man := []byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "enc"})))
	plain := []byte(mustJSON(t, leafFlow("main")))
	// 12-byte ZipCrypto header followed by "encrypted" bytes.
	cipher := append([]byte("\x8a\x11\x02\xfe\x7c\x90\x33\x01\xab\xcd\xef\x42"), bytes.Repeat([]byte{0x9c, 0x11, 0xf3}, 40)...)
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "manifest.json", Method: zip.Deflate})
		w.Write(man)
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "flows/main.json", Method: method, Flags: 0x1,
			CRC32: crc32.ChecksumIEEE(plain), CompressedSize64: uint64(len(cipher)), UncompressedSize64: uint64(len(plain))})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(cipher)
		zw.Close()
		_, err = ReadBytes(buf.Bytes(), "enc.flow")
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "encrypt") {
			t.Errorf("method %d: err = %v; want an error saying flows/main.json is encrypted", method, err)
		}
	}
}

// Python strips manifest paths before checking and before reading them
// (models.py _is_safe_relpath: `s = str(p or "").strip()`; reader.py
// read_bytes: `p = str(relpath or "").strip()`, then zf.read(p)); our
// CheckPath trims only for its emptiness test. So a path padded with
// blanks (" flows/main.json", e.g. from a hand-edited manifest) loads in
// Python and fails here with "file does not exist", while " /etc/x" or
// " ../x" (absolute / escaping once stripped, refused by Python) pass
// CheckPath as safe, and Write copies them verbatim into a bundle that
// Python's reader refuses.
func TestManifestPathsAreStrippedAsPython(t *testing.T) {
	m := fixtureManifest(fixtureOptions{ID: "pad"})
	m["flows"] = map[string]any{"main": " flows/main.json\n"}
	data := zipEntries(t, [2]string{"manifest.json", mustJSON(t, m)}, [2]string{"flows/main.json", mustJSON(t, leafFlow("main"))})
	if _, err := ReadBytes(data, "pad.flow"); err != nil {
		t.Errorf(`flows.main = " flows/main.json\n" (Python reads zf.read("flows/main.json")): %v`, err)
	}
	for _, p := range []string{" /etc/passwd", "\t../outside.json"} {
		if err := CheckPath(p); err == nil {
			t.Errorf("CheckPath(%q) = nil; once stripped (as Python's _is_safe_relpath does) it is absolute, escaping or drive-like", p)
		}
	}
}

// §8.1 loads a bundle by reading the flows of manifest.flows; assets are
// "optional" (§7.1) and Python never reads them (reader.py reads
// manifest.json at open, the host reads manifest.flows paths only). A
// manifest naming an asset the archive lacks therefore loads in Python,
// but our reader refuses the whole bundle, so none of its workflows can
// run. (docs/compatibility.md lists the manifest strictness we chose;
// missing asset files are not in it.)
func TestMissingAssetDoesNotRefuseBundle(t *testing.T) {
	m := fixtureManifest(fixtureOptions{ID: "noasset"})
	m["assets"] = map[string]any{"logo": "assets/logo.png"}
	data := zipEntries(t, [2]string{"manifest.json", mustJSON(t, m)}, [2]string{"flows/main.json", mustJSON(t, leafFlow("main"))})
	if _, err := ReadBytes(data, "noasset.flow"); err != nil {
		t.Fatalf("a bundle whose manifest names a missing asset: %v; Python loads it (assets are never read)", err)
	}
}

// gateway-api.md §2: "The host loads every `*.flow` directly inside the
// flows dir"; spec §8.5: "Scanning reads every `*.flow` file"; Python's
// registry.scan: `if not path.is_file(): continue`. OpenRegistry instead
// loads a directory named like a bundle (Read accepts directories) and
// serves it as an installed bundle.
func TestRegistrySkipsDirectoriesNamedFlow(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sneaky@1.0.0.flow")
	writeFile(t, filepath.Join(sub, "manifest.json"), []byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "sneaky"}))))
	writeFile(t, filepath.Join(sub, "flows", "main.json"), []byte(mustJSON(t, leafFlow("main"))))
	if err := os.WriteFile(filepath.Join(dir, "real@1.0.0.flow"), zipOfManifest(t, fixtureManifest(fixtureOptions{ID: "real"}), "main"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, errs := OpenRegistry(dir, nil)
	if len(errs) != 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	var refs []string
	for _, b := range r.List() {
		refs = append(refs, b.Ref())
	}
	if len(refs) != 1 || refs[0] != "real@1.0.0" {
		t.Fatalf("registry bundles = %v; want only real@1.0.0 (the directory sneaky@1.0.0.flow is not a .flow file)", refs)
	}
}

// A bundle read without one of its assets writes and reads back: the
// manifest still names the asset, the archive still lacks it.
func TestMissingAssetRoundTrips(t *testing.T) {
	m := fixtureManifest(fixtureOptions{ID: "noasset"})
	m["assets"] = map[string]any{"logo": "assets/logo.png", "icon": "assets/icon.png"}
	data := zipEntries(t, [2]string{"manifest.json", mustJSON(t, m)}, [2]string{"flows/main.json", mustJSON(t, leafFlow("main"))},
		[2]string{"assets/icon.png", "ICO"})
	b, err := ReadBytes(data, "noasset.flow")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Assets["logo"]; ok || string(b.Assets["icon"]) != "ICO" {
		t.Fatalf("assets read = %v; want icon only", b.Assets)
	}
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatalf("Write of a bundle read without an asset: %v", err)
	}
	back, err := ReadBytes(buf.Bytes(), "back.flow")
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if back.Manifest.Assets["logo"] != "assets/logo.png" || string(back.Assets["icon"]) != "ICO" {
		t.Fatalf("read back: manifest assets %v, assets %v", back.Manifest.Assets, back.Assets)
	}
}

// Two flows at one path with different content, or an asset at
// manifest.json, are errors naming what collides.
func TestWriteRefusesCollidingPaths(t *testing.T) {
	m, err := ParseManifest([]byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "clash", Flows: []string{"main", "other"}}))))
	if err != nil {
		t.Fatal(err)
	}
	m.Flows["other"] = "flows//main.json"
	b := &Bundle{Manifest: m, Flows: map[string]map[string]any{"main": leafFlow("main"), "other": leafFlow("other")}}
	if err := Write(&bytes.Buffer{}, b); err == nil || !strings.Contains(err.Error(), "flow other") || !strings.Contains(err.Error(), "flow main") {
		t.Errorf("two flows at one path with different content: err = %v; want an error naming both", err)
	}
	m.Flows["other"] = "flows/other.json"
	m.Assets = map[string]string{"raw": " manifest.json"}
	b = &Bundle{Manifest: m, Flows: map[string]map[string]any{"main": leafFlow("main"), "other": leafFlow("other")},
		Assets: map[string][]byte{"raw": []byte("{}")}}
	if err := Write(&bytes.Buffer{}, b); err == nil || !strings.Contains(err.Error(), "asset raw") || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("an asset at manifest.json: err = %v; want an error naming the asset and the manifest", err)
	}
}

// Write stores a padded manifest path stripped, so that the manifest
// names the entry the archive holds.
func TestWriteStripsPaths(t *testing.T) {
	m, err := ParseManifest([]byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "pad"}))))
	if err != nil {
		t.Fatal(err)
	}
	m.Flows["main"] = " flows/main.json\t"
	var buf bytes.Buffer
	if err := Write(&buf, &Bundle{Manifest: m, Flows: map[string]map[string]any{"main": leafFlow("main")}}); err != nil {
		t.Fatal(err)
	}
	back, err := ReadBytes(buf.Bytes(), "pad.flow")
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if back.Manifest.Flows["main"] != "flows/main.json" {
		t.Fatalf("flows.main = %q; want flows/main.json", back.Manifest.Flows["main"])
	}
}
