package visualflow

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// Projection limits of read_artifact (§6.10). As the reference's, the
// text limit is tested on the byte length but cuts characters.
const (
	artifactTextMaxChars   = 262144
	artifactBinaryMaxBytes = 131072
)

// runArtifactNode executes read_artifact, import_workspace_file and
// export_artifact (§6.10) against the runtime's artifact store. All three
// are replay-safe: an import stores content-addressed per run (the same
// file imported again yields the same id), a read has no side effect and
// an export rewrites the same bytes.
func (s *step) runArtifactNode(n *node, in map[string]any) (any, error) {
	var st artifact.Store
	if s.rc != nil && s.rc.Runtime() != nil {
		st = s.rc.Runtime().Artifacts()
	}
	if st == nil {
		return nil, nodeErrorf("%s requires an artifact store, but runtime.Config.Artifacts is not set", n.Type)
	}
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	switch n.Type {
	case "import_workspace_file":
		return s.importWorkspaceFile(ctx, st, in)
	case "read_artifact":
		return readArtifact(ctx, st, in)
	default:
		return exportArtifact(ctx, st, in)
	}
}

func (s *step) importWorkspaceFile(ctx context.Context, st artifact.Store, in map[string]any) (any, error) {
	const name = "import_workspace_file"
	abs, shown, data, err := readWorkspaceFile(name, in)
	if err != nil {
		return nil, err
	}
	filename := filepath.Base(abs)
	ct := strings.ToLower(trimmed(in["content_type"]))
	if ct == "" {
		ct = guessContentType(filename)
	}
	sum := sha256.Sum256(data)
	tags := map[string]string{
		"kind":     "run_input",
		"target":   "server",
		"source":   "workspace",
		"path":     shown,
		"filename": filename,
		"modality": trimmed(in["modality"]),
		"sha256":   hex.EncodeToString(sum[:]),
	}
	if s.run.SessionID != "" {
		tags["session_id"] = s.run.SessionID
	}
	meta, err := st.Put(ctx, artifact.PutParams{Content: data, ContentType: ct, RunID: s.run.RunID, Tags: tags})
	if err != nil {
		return nil, nodeErrorf("%s: storing %s: %v", name, shown, err)
	}
	ref := artifactRefObject(meta)
	return map[string]any{
		"artifact":     ref,
		"artifact_ref": pyval.DeepCopy(ref),
		"artifact_id":  meta.ArtifactID,
		"content_type": meta.ContentType,
		"size_bytes":   meta.SizeBytes,
		"source_path":  shown,
	}, nil
}

func readArtifact(ctx context.Context, st artifact.Store, in map[string]any) (any, error) {
	const name = "read_artifact"
	id, err := artifactInputID(name, in["artifact"])
	if err != nil {
		return nil, err
	}
	meta, data, err := loadArtifact(ctx, st, name, id)
	if err != nil {
		return nil, err
	}
	filename := pyval.Strip(meta.Tags["filename"])
	// The reference reads the content type stripped and lower-cased (the
	// ref object keeps it raw) and outputs it, else the default.
	ct := strings.ToLower(pyval.Strip(meta.ContentType))
	// The family comes from the name alone (file name, else source path,
	// else id), as the reference's: a content type only steers the
	// projection below.
	family := artifactFamily(cmp.Or(filename, sourcePathTag(meta), meta.ArtifactID))
	ref := artifactRefObject(meta)
	out := map[string]any{
		"artifact":       ref,
		"artifact_ref":   pyval.DeepCopy(ref),
		"artifact_id":    meta.ArtifactID,
		"content_type":   cmp.Or(ct, artifact.DefaultContentType),
		"content_family": family,
		"size_bytes":     meta.SizeBytes,
		"filename":       filename,
		"source_path":    sourcePathTag(meta),
		"content":        nil,
		"text":           "",
		"json":           nil,
		"binary_base64":  "",
		"is_binary":      false,
		"truncated":      false,
	}
	// The projection cascade of the reference: JSON, else text, else any
	// UTF-8, else base64. A branch that fails leaves content unset (or
	// marks the bytes binary) for the next one; decoding is strict UTF-8,
	// so bytes that are not UTF-8 come back losslessly as base64. JSON is
	// projected for exactly "application/json": with parameters (a
	// charset) the reference's equality fails and the text branches read it.
	warnings := []any{}
	var content any
	isBinary := false
	if ct == "application/json" || family == "json" {
		if err := utf8DecodeError(data); err != nil {
			warnings = append(warnings, "JSON projection failed: "+err.Error())
		} else if v, err := pyval.LoadsJSON(string(data)); err != nil {
			warnings = append(warnings, "JSON projection failed: "+err.Error())
		} else {
			out["text"], out["json"] = string(data), v
			content = pyval.DeepCopy(v)
		}
	}
	if content == nil && (strings.HasPrefix(ct, "text/") || family == "text" || family == "code") {
		// A text artifact is returned whole: only the last-resort branch cuts.
		if err := utf8DecodeError(data); err != nil {
			warnings = append(warnings, "UTF-8 text projection failed: "+err.Error())
			isBinary = true
		} else {
			out["text"] = string(data)
			content = string(data)
		}
	}
	if content == nil && !isBinary {
		if utf8.Valid(data) {
			// Only content is cut, and only when the bytes exceed the
			// limit (the reference compares len(raw), then slices the
			// text): the text output keeps it whole.
			text := string(data)
			out["text"], content = text, text
			if len(data) > artifactTextMaxChars {
				content = cutRunes(text, artifactTextMaxChars)
				warnings = append(warnings, fmt.Sprintf("#TRUNCATION: text projection truncated to %d bytes.", artifactTextMaxChars))
				out["truncated"] = true
			}
		} else {
			isBinary = true
		}
	}
	if isBinary || content == nil {
		chunk := data
		if len(chunk) > artifactBinaryMaxBytes {
			chunk = chunk[:artifactBinaryMaxBytes]
			warnings = append(warnings, fmt.Sprintf("#TRUNCATION: binary projection truncated to %d bytes before base64 encoding.", artifactBinaryMaxBytes))
			out["truncated"] = true
		}
		b64 := base64.StdEncoding.EncodeToString(chunk)
		out["binary_base64"] = b64
		content = map[string]any{"encoding": "base64", "data": b64}
		isBinary = true
	}
	out["content"], out["is_binary"] = content, isBinary
	out["warnings"] = warnings
	return out, nil
}

func exportArtifact(ctx context.Context, st artifact.Store, in map[string]any) (any, error) {
	const name = "export_artifact"
	id, err := artifactInputID(name, in["artifact"])
	if err != nil {
		return nil, err
	}
	abs, shown, err := resolvePath(name, in, "file_path")
	if err != nil {
		return nil, err
	}
	meta, data, err := loadArtifact(ctx, st, name, id)
	if err != nil {
		return nil, err
	}
	if err := writeWorkspaceFile(name, abs, data, in["file_path"]); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return map[string]any{
		"artifact_id":  meta.ArtifactID,
		"file_path":    shown,
		"bytes":        int64(len(data)),
		"sha256":       hex.EncodeToString(sum[:]),
		"content_type": meta.ContentType,
	}, nil
}

// artifactInputID reads an artifact input: a ref object or a bare id
// string. An object's id is `$artifact or artifact_id` (§4.9) with
// Python's `or`, so an empty "$artifact" (the editor's literal default)
// falls through to artifact_id.
func artifactInputID(node string, v any) (string, error) {
	raw := v
	if m, ok := v.(map[string]any); ok {
		raw = m[artifact.RefKey]
		if !pyval.Truthy(raw) {
			raw = m["artifact_id"]
		}
	}
	if s, ok := raw.(string); ok {
		if id := pyval.Strip(s); id != "" {
			return id, nil
		}
	}
	return "", nodeErrorf("%s requires an artifact (an artifact ref object or an artifact id)", node)
}

// utf8DecodeError is nil when data is UTF-8, else the error Python's
// bytes.decode("utf-8") raises for it, which read_artifact's warnings
// quote: the first bad byte (or bytes) and why.
func utf8DecodeError(data []byte) error {
	for i := 0; i < len(data); {
		if r, size := utf8.DecodeRune(data[i:]); r != utf8.RuneError || size > 1 {
			i += size
			continue
		}
		b := data[i]
		need := 0
		switch {
		case b >= 0xC2 && b <= 0xDF:
			need = 1
		case b >= 0xE0 && b <= 0xEF:
			need = 2
		case b >= 0xF0 && b <= 0xF4:
			need = 3
		default:
			return fmt.Errorf("'utf-8' codec can't decode byte 0x%02x in position %d: invalid start byte", b, i)
		}
		// n is the length of the valid prefix of the broken sequence.
		n := 1
		for ; n <= need && i+n < len(data); n++ {
			lo, hi := byte(0x80), byte(0xBF)
			if n == 1 {
				switch b {
				case 0xE0:
					lo = 0xA0
				case 0xED:
					hi = 0x9F
				case 0xF0:
					lo = 0x90
				case 0xF4:
					hi = 0x8F
				}
			}
			if c := data[i+n]; c < lo || c > hi {
				break
			}
		}
		reason := "invalid continuation byte"
		if i+n == len(data) {
			reason = "unexpected end of data"
		}
		if n == 1 {
			return fmt.Errorf("'utf-8' codec can't decode byte 0x%02x in position %d: %s", b, i, reason)
		}
		return fmt.Errorf("'utf-8' codec can't decode bytes in position %d-%d: %s", i, i+n-1, reason)
	}
	return nil
}

// loadArtifact gets an artifact, mapping store errors to node errors.
func loadArtifact(ctx context.Context, st artifact.Store, node, id string) (*artifact.Metadata, []byte, error) {
	meta, data, err := st.Get(ctx, id)
	switch {
	case errors.Is(err, artifact.ErrNotFound), errors.Is(err, artifact.ErrInvalidID):
		return nil, nil, nodeErrorf("%s: artifact not found: %s", node, id)
	case err != nil:
		return nil, nil, nodeErrorf("%s: loading artifact %s: %v", node, id, err)
	}
	return meta, data, nil
}

// sourcePathTag is an artifact's source path as the reference reads it:
// the path tag, else the source_path tag, stripped.
func sourcePathTag(m *artifact.Metadata) string {
	p := m.Tags["path"]
	if p == "" {
		p = m.Tags["source_path"]
	}
	return pyval.Strip(p)
}

// artifactRefObject is the artifact ref of §4.9, empty fields omitted.
func artifactRefObject(m *artifact.Metadata) map[string]any {
	ref := artifact.Ref(m.ArtifactID)
	ref["artifact_id"] = m.ArtifactID
	for k, v := range map[string]string{
		"run_id":       m.RunID,
		"content_type": m.ContentType,
		"modality":     m.Tags["modality"],
		"filename":     pyval.Strip(m.Tags["filename"]),
		"source_path":  sourcePathTag(m),
	} {
		if v != "" {
			ref[k] = v
		}
	}
	ref["size_bytes"] = m.SizeBytes
	return ref
}

// baseContentType is a content type lower-cased without parameters.
func baseContentType(ct string) string {
	ct, _, _ = strings.Cut(ct, ";")
	return strings.ToLower(pyval.Strip(ct))
}

// cutRunes returns the first n characters of s.
func cutRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
