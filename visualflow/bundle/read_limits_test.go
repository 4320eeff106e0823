package bundle

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"runtime"
	"strings"
	"testing"
)

// A bundle zip whose entries each stay under maxEntrySize but together
// inflate to far more: 8 entries of 64 MiB of zeros, ~0.5 MiB of zip.
// ReadZip bounded each entry, never the total, so the whole 512 MiB was
// inflated and kept in memory (the same with one entry named by many
// manifest paths). Such a bundle must be refused from its entries'
// declared sizes, before anything is inflated.
func TestZipBombOfManyEntriesIsBounded(t *testing.T) {
	const n = 8
	// 64 MiB of zeros, deflated as 64 copies of one self-contained block
	// of 1 MiB (compressing 64 MiB takes seconds under the race detector).
	chunk := make([]byte, 1<<20)
	var block bytes.Buffer
	fw, err := flate.NewWriter(&block, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(chunk)
	fw.Flush()
	var comp bytes.Buffer
	var crc uint32
	for range maxEntrySize / len(chunk) {
		comp.Write(block.Bytes())
		crc = crc32.Update(crc, crc32.IEEETable, chunk)
	}
	comp.Write([]byte{0x03, 0x00}) // the final, empty block

	m := fixtureManifest(fixtureOptions{ID: "bomb", Flows: []string{"main"}})
	assets := map[string]any{}
	for i := range n {
		assets[fmt.Sprintf("a%d", i)] = fmt.Sprintf("assets/a%d.bin", i)
	}
	m["assets"] = assets
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range map[string]string{"manifest.json": mustJSON(t, m), "flows/main.json": mustJSON(t, leafFlow("main"))} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
	}
	for i := range n {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("assets/a%d.bin", i), Method: zip.Deflate,
			CRC32: crc, CompressedSize64: uint64(comp.Len()), UncompressedSize64: maxEntrySize})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b, err := ReadBytes(data, "bomb.flow")
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(b)
	if err == nil || !strings.Contains(err.Error(), "larger than 256 MiB in all") {
		t.Fatalf("a %d KiB bundle inflating to %d MiB: %v (holding %d MiB); want it refused as too large",
			len(data)>>10, n*maxEntrySize>>20, err, held>>20)
	}
}

// Two zip entries that name the same file must be refused: a reader that
// picks one silently may run content that another tool (unzip -p, the
// Python reader, a person inspecting the bundle) does not see for that
// name; taking the last one silently is the bug guarded against.
func TestDuplicateEntriesAreRefused(t *testing.T) {
	man := mustJSON(t, fixtureManifest(fixtureOptions{ID: "dup", Flows: []string{"main"}}))
	flow := mustJSON(t, leafFlow("main"))
	evil := `{"id":"main","nodes":[],"edges":[],"name":"smuggled"}`
	cases := []struct {
		name  string
		files [][2]string
	}{
		// "flows\main.json" and "flows//main.json" are other names than
		// "flows/main.json" in the zip, but normPath folds them onto it
		// and the later entry replaces the one the manifest names.
		{"backslash alias", [][2]string{{"manifest.json", man}, {"flows/main.json", flow}, {`flows\main.json`, evil}}},
		{"double slash alias", [][2]string{{"manifest.json", man}, {"flows/main.json", flow}, {"flows//main.json", evil}}},
		{"exact duplicate", [][2]string{{"manifest.json", man}, {"flows/main.json", flow}, {"flows/main.json", evil}}},
		// Python's zipfile ends a name at its first NUL byte and keeps the
		// last entry of a name: it would run the second entry's flow, or
		// read the second manifest.
		{"NUL alias", [][2]string{{"manifest.json", man}, {"flows/main.json", flow}, {"flows/main.json\x00", evil}}},
		{"NUL alias of the manifest", [][2]string{{"manifest.json", man}, {"flows/main.json", flow},
			{"manifest.json\x00.txt", mustJSON(t, fixtureManifest(fixtureOptions{ID: "smuggled", Flows: []string{"main"}}))}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			for _, f := range tc.files {
				w, err := zw.Create(f[0])
				if err != nil {
					t.Fatal(err)
				}
				w.Write([]byte(f[1]))
			}
			zw.Close()
			b, err := ReadBytes(buf.Bytes(), "dup.flow")
			if err == nil {
				t.Fatalf("bundle with two entries for flows/main.json accepted (flow name read: %v)", b.Flows["main"]["name"])
			}
			if !strings.Contains(strings.ToLower(err.Error()), "duplicate") {
				t.Fatalf("err = %v, want it to name the duplicate entry", err)
			}
		})
	}
}

// manifest.json must be UTF-8 (spec visualflow §7.1); an invalid byte was
// silently replaced by U+FFFD, so the bundle loaded under an id that is
// not the one written (here "x\uFFFD"), where Python's json.loads refuses
// it.
func TestManifestThatIsNotUTF8IsRefused(t *testing.T) {
	man := "{\"bundle_format_version\":\"1\",\"bundle_id\":\"x\xff\",\"entrypoints\":[{\"flow_id\":\"main\"}],\"flows\":{\"main\":\"flows/main.json\"}}"
	data := makeZip(t, map[string]string{"manifest.json": man, "flows/main.json": mustJSON(t, leafFlow("main"))})
	b, err := ReadBytes(data, "latin1.flow")
	if err == nil {
		t.Fatalf("manifest with invalid UTF-8 accepted; bundle id read as %q", b.Manifest.BundleID)
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
	// The error names the asset and its path in the bundle.
	if !strings.Contains(err.Error(), "asset blob (assets/blob.bin)") {
		t.Fatalf("err = %v; want it to name asset blob (assets/blob.bin)", err)
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
