package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A zip entry whose mode says directory but whose name has no trailing
// '/' is not skipped as a directory entry: its name is still checked, so
// "../evil" with directory attributes refuses the bundle. Skipping every
// entry with directory attributes (not only "name/" directory entries)
// would let an unsafe or duplicate name through unchecked.
func TestDirectoryModeEntryWithoutSlashIsStillChecked(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct{ name, data string }{
		{"manifest.json", mustJSON(t, fixtureManifest(fixtureOptions{ID: "dirmode", Flows: []string{"main"}}))},
		{"flows/main.json", mustJSON(t, leafFlow("main"))},
	} {
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.data))
	}
	h := &zip.FileHeader{Name: "../evil", Method: zip.Store}
	h.SetMode(fs.ModeDir | 0o755)
	if _, err := zw.CreateHeader(h); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f := zr.File[2]; !f.FileInfo().IsDir() || strings.HasSuffix(f.Name, "/") {
		t.Fatalf("fixture: entry %q is not a directory-mode entry without a trailing slash", f.Name)
	}
	_, err = ReadBytes(buf.Bytes(), "dirmode.flow")
	if err == nil || !strings.Contains(err.Error(), "unsafe zip entry") {
		t.Fatalf("an entry ../evil with directory attributes: err = %v; want an unsafe zip entry error", err)
	}
}

// unicodePathZip builds a bundle whose flow entry has the raw header name
// rawName (bit 11 clear) and an Info-ZIP Unicode Path extra field of the
// given version naming it flows/café.json, with the CRC-32 of crcName
// (the header name's, for a field that applies to it).
func unicodePathZip(t *testing.T, rawName, crcName string, version byte) []byte {
	t.Helper()
	man := mustJSON(t, fixtureManifest(fixtureOptions{ID: "upath", Flows: []string{"main"}}))
	man = strings.Replace(man, "flows/main.json", "flows/caf\u00e9.json", 1)
	body := append([]byte{version}, binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE([]byte(crcName)))...)
	body = append(body, "flows/caf\u00e9.json"...)
	var extra bytes.Buffer
	extra.Write(binary.LittleEndian.AppendUint16(nil, 0x7075))
	extra.Write(binary.LittleEndian.AppendUint16(nil, uint16(len(body))))
	extra.Write(body)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct {
		h    *zip.FileHeader
		data string
	}{
		{&zip.FileHeader{Name: "manifest.json", Method: zip.Deflate}, man},
		{&zip.FileHeader{Name: rawName, Method: zip.Deflate, NonUTF8: true, Extra: extra.Bytes()}, mustJSON(t, leafFlow("main"))},
	} {
		w, err := zw.CreateHeader(e.h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The Unicode Path extra field names an entry only when it is version 1
// and carries the CRC-32 of the header name, as in Python's zipfile
// (`up_version == 1 and up_name_crc == crc32(filename)`): otherwise it
// was written for another name (the entry was renamed by a tool unaware
// of it) and the header name is used. Here the header name is "x.json",
// so with a field ignored the manifest's flows/café.json is missing.
func TestUnicodePathExtraFieldAppliesOnlyToItsName(t *testing.T) {
	t.Parallel()
	if _, err := ReadBytes(unicodePathZip(t, "x.json", "x.json", 1), "v1.flow"); err != nil {
		t.Fatalf("version-1 field with the header name's CRC: %v (it names the entry flows/café.json)", err)
	}
	for _, c := range []struct {
		name, crcName string
		version       byte
	}{
		{"version 2", "x.json", 2},
		{"CRC of another name", "y.json", 1},
	} {
		_, err := ReadBytes(unicodePathZip(t, "x.json", c.crcName, c.version), "ignored.flow")
		if err == nil || !strings.Contains(err.Error(), "flow main") {
			t.Errorf("%s: err = %v; want flow main missing (the field must be ignored)", c.name, err)
		}
	}
}

// A directory bundle whose flow path is a symbolic link to the parent of
// the bundle directory is refused as escaping it, the error naming the
// path, not as a mere non-regular file.
func TestDirectoryBundleLinkToParentEscapes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "b")
	writeFile(t, filepath.Join(dir, "manifest.json"), []byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "esc", Flows: []string{"main"}}))))
	if err := os.MkdirAll(filepath.Join(dir, "flows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", ".."), filepath.Join(dir, "flows", "main.json")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	_, err := Read(dir)
	if err == nil || !strings.Contains(err.Error(), "escapes the bundle directory") {
		t.Fatalf("flows/main.json linking to the bundle's parent: err = %v; want it refused as escaping the bundle directory", err)
	}
}
