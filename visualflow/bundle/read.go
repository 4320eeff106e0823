package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// maxEntrySize bounds each file read from a bundle (64 MiB), and
// maxBundleSize all of them together (a small zip may inflate to far
// more than its size).
const (
	maxEntrySize  = 64 << 20
	maxBundleSize = 256 << 20
)

// Read loads a bundle from a `.flow` zip file or from a directory with the
// same layout.
func Read(path string) (*Bundle, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", filepath.Base(path), err)
	}
	if info.IsDir() {
		return readFrom(dirSource{root: path}, path)
	}
	if !info.Mode().IsRegular() {
		// A named pipe would block the open for good.
		return nil, fmt.Errorf("reading bundle %s: not a regular file (%s)", filepath.Base(path), info.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	return ReadZip(f, info.Size(), path)
}

// ReadBytes loads a bundle from the bytes of a `.flow` zip; name is used in
// error messages and as the Source.
func ReadBytes(data []byte, name string) (*Bundle, error) {
	return ReadZip(bytes.NewReader(data), int64(len(data)), name)
}

// ReadZip loads a bundle from a zip archive; name is used in error
// messages and as the Source.
func ReadZip(r io.ReaderAt, size int64, name string) (*Bundle, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: not a zip archive: %w", label(nil, name), err)
	}
	src := zipSource{files: map[string]*zip.File{}}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") && f.FileInfo().IsDir() {
			continue
		}
		if err := CheckPath(f.Name); err != nil {
			return nil, fmt.Errorf("reading bundle %s: unsafe zip entry: %w", label(nil, name), err)
		}
		// Two entries for one path (a name repeated, or spelled with a
		// backslash or a double slash) would let what a zip tool shows
		// differ from what runs.
		p := normPath(f.Name)
		if _, dup := src.files[p]; dup {
			return nil, fmt.Errorf("reading bundle %s: duplicate zip entry %q", label(nil, name), p)
		}
		src.files[p] = f
	}
	return readFrom(src, name)
}

// source abstracts zip archives and directories.
type source interface {
	readFile(path string) ([]byte, error)
}

type zipSource struct {
	files map[string]*zip.File
}

// declaredSize is the size the archive declares for path (the reader
// holds an entry to it), so that a bundle too large is refused before
// anything is inflated.
func (s zipSource) declaredSize(path string) (int64, bool) {
	f, ok := s.files[normPath(path)]
	if !ok || f.UncompressedSize64 > maxBundleSize {
		return maxBundleSize + 1, ok
	}
	return int64(f.UncompressedSize64), true
}

func (s zipSource) readFile(path string) ([]byte, error) {
	f, ok := s.files[normPath(path)]
	if !ok {
		return nil, fs.ErrNotExist
	}
	if f.Flags&0x1 != 0 {
		// archive/zip does not decrypt: inflating the cipher text would
		// report a flate or checksum error that hides the cause.
		return nil, errors.New("the entry is encrypted (bundles cannot be password-protected)")
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return readLimited(rc)
}

type dirSource struct {
	root string
}

// readFile refuses paths that escape the bundle directory, including via
// symbolic links.
func (s dirSource) readFile(path string) ([]byte, error) {
	root, err := filepath.EvalSymlinks(s.root)
	if err != nil {
		return nil, err
	}
	full, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(normPath(path))))
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("path %q escapes the bundle directory", path)
	}
	if info, err := os.Stat(full); err != nil {
		return nil, err
	} else if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("path %q is not a regular file (%s)", path, info.Mode().Type())
	}
	f, err := os.Open(full)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f)
}

func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxEntrySize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxEntrySize {
		return nil, fmt.Errorf("file larger than %d bytes", maxEntrySize)
	}
	return data, nil
}

// budgeted reads each path of a source once and refuses to read more
// than maxBundleSize in all. A path decoded again (one entry named by
// several flow ids, each of which gets its own decoded flow) is charged
// again, so that aliasing one entry cannot multiply what a bundle holds
// past the budget.
type budgeted struct {
	src   source
	read  map[string][]byte
	total int
}

func (b *budgeted) readFile(path string) ([]byte, error) {
	p := normPath(path)
	if data, ok := b.read[p]; ok {
		return data, nil
	}
	data, err := b.src.readFile(p)
	if err != nil {
		return nil, err
	}
	if b.total += len(data); b.total > maxBundleSize {
		return nil, errTooLarge
	}
	b.read[p] = data
	return data, nil
}

// readDecoded reads path for a caller that decodes it: a path already
// read (and decoded by an earlier caller) is charged once more.
func (b *budgeted) readDecoded(path string) ([]byte, error) {
	p := normPath(path)
	if data, ok := b.read[p]; ok {
		if b.total += len(data); b.total > maxBundleSize {
			return nil, errTooLarge
		}
		return data, nil
	}
	return b.readFile(p)
}

var errTooLarge = fmt.Errorf("the bundle's files are larger than %d MiB in all", maxBundleSize>>20)

// fits refuses, before anything is inflated, a zip whose entries for the
// manifest's files declare more than maxBundleSize in all (the reads are
// bounded too: an entry longer than it declares is an error). Each flow id
// is charged for its entry, as readDecoded charges it; an asset's entry
// only once.
func (b *budgeted) fits(m Manifest) error {
	z, ok := b.src.(zipSource)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	total := int64(b.total)
	charge := func(p string, again bool) {
		if p = normPath(p); again || !seen[p] {
			seen[p] = true
			if n, ok := z.declaredSize(p); ok {
				total += n
			}
		}
	}
	for _, p := range m.Flows {
		charge(p, true)
	}
	for _, p := range m.Assets {
		charge(p, false)
	}
	if total > maxBundleSize {
		return errTooLarge
	}
	return nil
}

func readFrom(inner source, name string) (*Bundle, error) {
	src := &budgeted{src: inner, read: map[string][]byte{}}
	raw, err := src.readFile("manifest.json")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading bundle %s: manifest.json is missing", label(nil, name))
		}
		return nil, fmt.Errorf("reading bundle %s: manifest.json: %w", label(nil, name), err)
	}
	m, err := ParseManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", label(nil, name), err)
	}
	if err := src.fits(m); err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", label(nil, name), err)
	}
	b := &Bundle{
		Manifest:  m,
		Flows:     map[string]map[string]any{},
		FlowBytes: map[string][]byte{},
		Assets:    map[string][]byte{},
		Source:    name,
	}
	for id, p := range m.Flows {
		// Every flow id decodes a map of its own (callers may change one
		// flow's), so each id naming an entry is charged for it.
		data, err := src.readDecoded(p)
		if err != nil {
			return nil, fmt.Errorf("reading bundle %s: flow %s (%s): %w", label(b, name), id, p, err)
		}
		flow, err := DecodeFlow(data)
		if err != nil {
			return nil, fmt.Errorf("reading bundle %s: flow %s (%s): %w", label(b, name), id, p, err)
		}
		b.Flows[id] = flow
		b.FlowBytes[id] = data
	}
	for asset, p := range m.Assets {
		data, err := src.readFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			// Python never reads assets (its host reads manifest.flows
			// only), so a bundle naming one it lacks still loads there.
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading bundle %s: asset %s (%s): %w", label(b, name), asset, p, err)
		}
		b.Assets[asset] = data
	}
	return b, nil
}

// DecodeFlow decodes VisualFlow JSON text (numbers kept as json.Number);
// the document must be a JSON object.
func DecodeFlow(data []byte) (map[string]any, error) {
	var v any
	if err := decodeDocument(data, &v); err != nil {
		return nil, fmt.Errorf("invalid flow JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("flow JSON must be an object")
	}
	return obj, nil
}

// errTrailingData reports a JSON document with something after its value.
var errTrailingData = errors.New("trailing data after the JSON value")

// decodeDocument decodes data, which must hold exactly one JSON value
// (whitespace around it allowed), into v, numbers kept as json.Number.
// Python's json.loads refuses anything after the value ("Extra data"), so
// taking the first value of `{...} garbage` (or `{...}}`, which a
// Decoder's More does not see) would accept a file the reference refuses.
func decodeDocument(data []byte, v any) error {
	if !utf8.Valid(data) {
		// Python's json.loads of the file's text would fail; Go's decoder
		// would put U+FFFD in silently.
		return errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return errTrailingData
	}
	return nil
}
