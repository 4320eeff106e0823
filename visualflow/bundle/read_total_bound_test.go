package bundle

import (
	"archive/zip"
	"bytes"
	"errors"
	"testing"
)

// totalBundleZip builds a bundle zip whose manifest, flow and four asset
// entries (zeros, cheaply deflated) come to exactly maxBundleSize+over
// bytes in all.
func totalBundleZip(t *testing.T, over int) []byte {
	t.Helper()
	m := fixtureManifest(fixtureOptions{ID: "total"})
	m["assets"] = map[string]any{"a": "assets/a.bin", "b": "assets/b.bin", "c": "assets/c.bin", "d": "assets/d.bin"}
	manifest, flow := mustJSON(t, m), mustJSON(t, leafFlow("main"))
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct{ name, data string }{{"manifest.json", manifest}, {"flows/main.json", flow}} {
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.data))
	}
	full, fullCRC := deflateZeros(t, maxEntrySize>>20, 0)
	// The last asset takes what is left of the budget, plus over.
	rest := 1<<20 - len(manifest) - len(flow) + over
	last, lastCRC := deflateZeros(t, maxEntrySize>>20-1, rest)
	for i, name := range []string{"assets/a.bin", "assets/b.bin", "assets/c.bin", "assets/d.bin"} {
		comp, crc, size := full, fullCRC, uint64(maxEntrySize)
		if i == 3 {
			comp, crc, size = last, lastCRC, uint64(maxEntrySize-1<<20+rest)
		}
		w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate,
			CRC32: crc, CompressedSize64: uint64(len(comp)), UncompressedSize64: size})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A bundle whose files come to exactly maxBundleSize (256 MiB) loads, and
// one byte more is refused as too large. A `>=` for `>` in the budget
// (fits, from the declared sizes, or readFile, from the bytes read) would
// refuse a bundle the limit allows.
func TestReadAcceptsFilesTotallingExactlyBundleLimit(t *testing.T) {
	b, err := ReadBytes(totalBundleZip(t, 0), "total.flow")
	if err != nil {
		t.Fatalf("files of exactly %d bytes in all: %v; want the bundle read", maxBundleSize, err)
	}
	if len(b.Assets) != 4 || len(b.Assets["a"]) != maxEntrySize {
		t.Fatalf("read %d assets (a: %d bytes); want all 4, a of %d bytes", len(b.Assets), len(b.Assets["a"]), maxEntrySize)
	}
	b = nil
	if _, err := ReadBytes(totalBundleZip(t, 1), "total.flow"); !errors.Is(err, errTooLarge) {
		t.Fatalf("files of %d bytes in all: err = %v; want %v", maxBundleSize+1, err, errTooLarge)
	}
}
