package artifact

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// RefKey is the key that marks a JSON object as an artifact ref.
const RefKey = "$artifact"

// ComputeID returns the default artifact id of content: the SHA-256 of
// runID, a zero byte and content when runID is not empty, else of content
// alone, as lower-case hex truncated to 32 characters. runID is stripped
// of surrounding whitespace first, as Python's compute_artifact_id does,
// so both runtimes give the same bytes of the same run the same id.
func ComputeID(runID string, content []byte) string {
	h := sha256.New()
	if runID = pyval.Strip(runID); runID != "" {
		h.Write([]byte(runID))
		h.Write([]byte{0})
	}
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// BlobID returns the global dedupe key of content: its full SHA-256 as
// 64 lower-case hex characters.
func BlobID(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// ValidID reports whether id may name an artifact or a blob: it is not
// empty and has only ASCII letters, digits, '_' and '-'. This is the path
// traversal guard; every file access checks it.
func ValidID(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// checkID returns an error wrapping ErrInvalidID when id is not valid.
func checkID(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("artifact id %q: %w", id, ErrInvalidID)
	}
	return nil
}

// Ref returns the ref object that stands for an artifact in JSON values:
// {"$artifact": id}.
func Ref(id string) map[string]any {
	return map[string]any{RefKey: id}
}

// IsRef reports whether v is an artifact ref: any object that has the
// "$artifact" key, whatever else it holds.
func IsRef(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[RefKey]
	return ok
}

// RefID returns the artifact id of a ref (any object with a string
// "$artifact" member).
func RefID(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	id, ok := m[RefKey].(string)
	return id, ok
}

// MediaRefID is RefID for media inputs, which also accept
// {"artifact_id": id}. A "$artifact" member wins over "artifact_id".
func MediaRefID(v any) (string, bool) {
	if id, ok := RefID(v); ok {
		return id, true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	id, ok := m["artifact_id"].(string)
	return id, ok && id != ""
}
