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
)

// Write writes b as a deflate-compressed `.flow` zip: manifest.json, each
// flow at its manifest path (flows/<id>.json by default; raw bytes when
// available) and each asset. The manifest is validated first.
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
	// The manifest names each entry as the archive holds it: Python's
	// reader opens the manifest's path verbatim.
	for id, p := range m.Flows {
		m.Flows[id] = normPath(p)
	}
	for name, p := range m.Assets {
		m.Assets[name] = normPath(p)
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
	if err := writeEntry(zw, "manifest.json", manifest); err != nil {
		return fmt.Errorf("writing bundle %s: %w", label(b, b.Source), err)
	}
	for _, id := range slices.Sorted(maps.Keys(m.Flows)) {
		data, err := flowData(b, id)
		if err != nil {
			return fmt.Errorf("writing bundle %s: flow %s: %w", label(b, b.Source), id, err)
		}
		if err := writeEntry(zw, m.Flows[id], data); err != nil {
			return fmt.Errorf("writing bundle %s: flow %s: %w", label(b, b.Source), id, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.Assets)) {
		data, ok := b.Assets[name]
		if !ok {
			return fmt.Errorf("writing bundle %s: asset %s has no content", label(b, b.Source), name)
		}
		if err := writeEntry(zw, m.Assets[name], data); err != nil {
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
