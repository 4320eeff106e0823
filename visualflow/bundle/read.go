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
)

// maxEntrySize bounds each file read from a bundle (64 MiB).
const maxEntrySize = 64 << 20

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
		src.files[normPath(f.Name)] = f
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

func (s zipSource) readFile(path string) ([]byte, error) {
	f, ok := s.files[normPath(path)]
	if !ok {
		return nil, fs.ErrNotExist
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

func readFrom(src source, name string) (*Bundle, error) {
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
	b := &Bundle{
		Manifest:  m,
		Flows:     map[string]map[string]any{},
		FlowBytes: map[string][]byte{},
		Assets:    map[string][]byte{},
		Source:    name,
	}
	for id, p := range m.Flows {
		data, err := src.readFile(p)
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
