package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// Write writes b as a deflate-compressed `.flow` zip: manifest.json, each
// flow at its manifest path (flows/<id>.json by default; raw bytes when
// available) and each asset at its manifest path (assets/<name> by
// default). An asset the manifest names without content (as read from a
// bundle that lacks it) is named but not written. The manifest is
// validated first. Each entry is written once: paths shared with equal
// content are written once, and anything else that would put two entries
// of one name in the archive (a path shared with different content, a
// flow or asset at manifest.json) is an error.
func Write(w io.Writer, b *Bundle) error {
	m := b.Manifest
	m.Flows = copyPaths(m.Flows)
	for id := range b.Flows {
		if _, ok := m.Flows[id]; !ok {
			m.Flows[id] = "flows/" + id + ".json"
		}
	}
	if m.Artifacts == nil {
		m.Artifacts = map[string]string{}
	}
	m.Assets = copyPaths(m.Assets)
	for name := range b.Assets {
		if _, ok := m.Assets[name]; !ok {
			m.Assets[name] = "assets/" + name
		}
	}
	// The manifest names each entry as the archive holds it: Python's
	// reader opens the manifest's path verbatim (stripped).
	for id, p := range m.Flows {
		m.Flows[id] = normPath(pyval.Strip(p))
	}
	for name, p := range m.Assets {
		m.Assets[name] = normPath(pyval.Strip(p))
	}
	if m.Metadata == nil {
		m.Metadata = map[string]any{}
	}
	for i := range m.Entrypoints {
		if m.Entrypoints[i].Interfaces == nil {
			m.Entrypoints[i].Interfaces = []string{}
		}
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("writing bundle %s: %w", label(b, b.Source), err)
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("writing bundle %s: manifest: %w", label(b, b.Source), err)
	}
	zw := zip.NewWriter(w)
	entries := entrySet{zw: zw, written: map[string]entryOwner{}}
	if err := writeEntry(zw, "manifest.json", manifest); err != nil {
		return fmt.Errorf("writing bundle %s: %w", label(b, b.Source), err)
	}
	for _, id := range slices.Sorted(maps.Keys(m.Flows)) {
		data, err := flowData(b, id)
		if err != nil {
			return fmt.Errorf("writing bundle %s: flow %s: %w", label(b, b.Source), id, err)
		}
		if err := entries.write(m.Flows[id], "flow "+id, data); err != nil {
			return fmt.Errorf("writing bundle %s: flow %s: %w", label(b, b.Source), id, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.Assets)) {
		data, ok := b.Assets[name]
		if !ok {
			continue
		}
		if err := entries.write(m.Assets[name], "asset "+name, data); err != nil {
			return fmt.Errorf("writing bundle %s: asset %s: %w", label(b, b.Source), name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("writing bundle %s: %w", label(b, b.Source), err)
	}
	return nil
}

// WriteFile writes b to path atomically (temp file, fsync, rename).
func WriteFile(path string, b *Bundle) error {
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		return err
	}
	// A bundle no reader takes (a manifest or flow past the size limits)
	// is refused here rather than written.
	if _, err := ReadBytes(buf.Bytes(), path); err != nil {
		return fmt.Errorf("writing bundle file %s: it would not read back: %w", path, err)
	}
	if err := atomicfile.Write(path, buf.Bytes(), atomicfile.Options{}); err != nil {
		return fmt.Errorf("writing bundle file %s: %w", path, err)
	}
	return nil
}

func flowData(b *Bundle, id string) ([]byte, error) {
	if data, ok := b.FlowBytes[id]; ok {
		return data, nil
	}
	flow, ok := b.Flows[id]
	if !ok {
		return nil, fmt.Errorf("no content")
	}
	return json.MarshalIndent(flow, "", "  ")
}

// entrySet writes each zip entry name once. Two entries of one name would
// read differently: our reader refuses the archive ("duplicate zip
// entry"), and Python's zipfile takes the last, which for manifest.json is
// not the manifest.
type entrySet struct {
	zw      *zip.Writer
	written map[string]entryOwner
}

// entryOwner is what an entry was written for (e.g. "flow main").
type entryOwner struct {
	what string
	data []byte
}

func (s entrySet) write(name, what string, data []byte) error {
	if name == "manifest.json" {
		return fmt.Errorf("path %q is the manifest's", name)
	}
	if prev, ok := s.written[name]; ok {
		if bytes.Equal(prev.data, data) {
			return nil // one entry serves both: it holds the content of each
		}
		return fmt.Errorf("path %q is also the path of %s, with different content", name, prev.what)
	}
	s.written[name] = entryOwner{what: what, data: data}
	return writeEntry(s.zw, name, data)
}

func writeEntry(zw *zip.Writer, name string, data []byte) error {
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func copyPaths(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
