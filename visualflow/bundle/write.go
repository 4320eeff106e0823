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
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// Write writes b as a deflate-compressed `.flow` zip: manifest.json, each
// flow at its manifest path (flows/<id>.json by default; raw bytes when
// available) and each asset at its manifest path (assets/<name> by
// default). manifest.json is laid out as Python's packer writes it
// (manifestJSON), NaN and ±Infinity in metadata included. An asset the
// manifest names without content (as read from a bundle that lacks it)
// is named but not written. The manifest is validated first. Each entry
// is written once: paths shared with equal content are written once,
// and anything else that would put two entries of one name in the
// archive (a path shared with different content, a flow or asset at
// manifest.json) is an error.
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
	manifest, err := manifestJSON(m)
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

// manifestStyle is Python's json.dumps(indent=2, ensure_ascii=False),
// which writes NaN and infinities as literals (allow_nan=True).
var manifestStyle = pyjson.Style{Indent: 2, AllowNaN: true}

// member is one member of a JSON object written in a fixed order: an
// object value is a []member, a list of objects a [][]member.
type member struct {
	key   string
	value any
}

// manifestJSON encodes m as AbstractRuntime's pack_workflow_bundle writes
// manifest.json: json.dumps(workflow_bundle_manifest_to_dict(m), indent=2,
// ensure_ascii=False), members in that dict's order. Metadata holding NaN
// or ±Infinity (which the reader accepts, as json.loads does) is written
// with those literals, so a bundle read can be written back.
func manifestJSON(m Manifest) ([]byte, error) {
	eps := make([][]member, len(m.Entrypoints))
	for i, ep := range m.Entrypoints {
		eps[i] = []member{{"flow_id", ep.FlowID}, {"name", ep.Name}, {"description", ep.Description}, {"interfaces", ep.Interfaces}}
	}
	members := []member{
		{"bundle_format_version", m.BundleFormatVersion},
		{"bundle_id", m.BundleID},
		{"bundle_version", m.BundleVersion},
		{"created_at", m.CreatedAt},
		{"entrypoints", eps},
	}
	if m.DefaultEntrypoint != "" {
		members = append(members, member{"default_entrypoint", m.DefaultEntrypoint})
	}
	members = append(members, member{"flows", m.Flows}, member{"artifacts", m.Artifacts},
		member{"assets", m.Assets}, member{"metadata", m.Metadata})
	return appendOrdered(nil, members, "manifest", 0)
}

// appendOrdered appends v (a []member, a [][]member or any value pyjson
// encodes) at path, depth levels down, in manifestStyle.
func appendOrdered(buf []byte, v any, path string, depth int) ([]byte, error) {
	newline := func(depth int) {
		buf = append(buf, '\n')
		for range depth * manifestStyle.Indent {
			buf = append(buf, ' ')
		}
	}
	var err error
	switch x := v.(type) {
	case []member:
		if len(x) == 0 {
			return append(buf, "{}"...), nil
		}
		buf = append(buf, '{')
		for i, m := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			newline(depth + 1)
			buf = pyjson.AppendString(buf, m.key, manifestStyle.ASCII)
			buf = append(buf, ": "...)
			if buf, err = appendOrdered(buf, m.value, path+"."+m.key, depth+1); err != nil {
				return nil, err
			}
		}
		newline(depth)
		return append(buf, '}'), nil
	case [][]member:
		if len(x) == 0 {
			return append(buf, "[]"...), nil
		}
		buf = append(buf, '[')
		for i, obj := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			newline(depth + 1)
			if buf, err = appendOrdered(buf, obj, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return nil, err
			}
		}
		newline(depth)
		return append(buf, ']'), nil
	}
	return pyjson.AppendMember(buf, v, manifestStyle, path, depth)
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
