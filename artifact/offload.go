package artifact

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// DefaultMaxInlineBytes is the offload threshold when neither
// OffloadOptions.MaxInlineBytes nor EnvMaxInlineBytes sets one (256 KiB).
const DefaultMaxInlineBytes = 262144

// Source tags of the artifacts a store's offloading makes of a terminal
// run's state (store/offload): its private vars and its output. A reader
// of such a run's values (a parent given its child's output) restores
// them with Restore.
const (
	SourceRunVars   = "run_store_offload"
	SourceRunOutput = "run_output_offload"
)

// Source tags of the artifacts a store's offloading makes of a ledger
// record's effect payload and result (store/offload, Python's
// OffloadingLedgerStore). A reader of a record as stored restores them
// with Restore.
const (
	SourceLedgerEffect = "ledger_effect_offload"
	SourceLedgerResult = "ledger_result_offload"
)

// EnvMaxInlineBytes names the environment variable that overrides
// DefaultMaxInlineBytes (an integer; ≤0 disables offloading).
const EnvMaxInlineBytes = "ABSTRACTRUNTIME_MAX_INLINE_BYTES"

// MaxInlineBytes resolves a configured threshold: n when not zero, else
// the integer in EnvMaxInlineBytes when it parses, else
// DefaultMaxInlineBytes. A result ≤0 means offloading is disabled.
func MaxInlineBytes(n int) int {
	if n != 0 {
		return n
	}
	if raw := pyval.Strip(os.Getenv(EnvMaxInlineBytes)); raw != "" {
		// Python's int(): "1_000" reads, and a literal past int64 is
		// kept as the clamped bound (never offload, or off), not dropped.
		if v, err := pyval.ToIndex(raw); err == nil {
			return int(max(min(v, math.MaxInt), math.MinInt))
		}
	}
	return DefaultMaxInlineBytes
}

// OffloadOptions configures Offload.
type OffloadOptions struct {
	// RunID is the run the artifacts belong to ("" for none).
	RunID string
	// MaxInlineBytes is the threshold: 0 means MaxInlineBytes(0) (env or
	// 262144), negative disables offloading entirely (the value is
	// returned as it is, as in Python).
	MaxInlineBytes int
	// BaseTags are added to every artifact's tags, before "path" and
	// "kind".
	BaseTags map[string]string
	// RootPath names the value in paths and tags: "<root>.key",
	// "<root>[i]".
	RootPath string
	// AllowRootReplace lets the value itself be replaced by a ref.
	AllowRootReplace bool
	// AllowFunc, when set, vetoes offloading the value at path by
	// returning false.
	AllowFunc func(path string, v any) bool
}

// Offload returns value with its oversized parts moved into st and
// replaced by refs ({"$artifact": id}), walking depth first:
//
//   - existing refs (objects with "$artifact") are left alone;
//   - a string longer than the threshold in UTF-8 bytes becomes a text
//     artifact (text/plain, kind=text);
//   - a []byte is the base64 string every store encodes it as (nil:
//     null), offloaded as that string: past the threshold only, and read
//     back by Restore as the same string. Python offloads bytes whatever
//     their size (application/octet-stream, kind=bytes), having no JSON
//     form for them; here that made a value read back from a decorated
//     store a ref where an undecorated one gives the string;
//   - after its children, an object or array whose compact JSON is still
//     longer than the threshold becomes a JSON artifact
//     (application/json, kind=json).
//
// Each artifact is tagged BaseTags + {"path": <path>, "kind": <kind>}.
// The input is never mutated: changed containers are copied, unchanged
// subtrees are shared with the result. Typed Go containers ([]string,
// map[string]string, …) are walked in their JSON form, which replaces them
// only where something inside is offloaded; other values are leaves. A
// container that cannot be encoded as JSON stays inline. A cycle or a store error returns the error
// together with the unchanged value (offloading is best-effort for
// callers).
//
// With offloading disabled (threshold ≤0) the value is returned unchanged,
// as Python does.
func Offload(ctx context.Context, st Store, value any, opts OffloadOptions) (any, error) {
	limit := MaxInlineBytes(opts.MaxInlineBytes)
	if limit <= 0 {
		return value, nil
	}
	w := offloader{ctx: ctx, st: st, opts: opts, limit: limit}
	out, _, err := w.walk(value, pyval.Strip(opts.RootPath), true)
	if err != nil {
		return value, err
	}
	return out, nil
}

type offloader struct {
	ctx       context.Context
	st        Store
	opts      OffloadOptions
	limit     int
	ancestors []ancestor
}

type ancestor struct {
	ptr uintptr
	n   int
}

func (w *offloader) allowed(path string, v any, root bool) bool {
	if root && !w.opts.AllowRootReplace {
		return false
	}
	return w.opts.AllowFunc == nil || w.opts.AllowFunc(path, v)
}

func (w *offloader) put(content []byte, contentType, path, kind string) (map[string]any, error) {
	tags := make(map[string]string, len(w.opts.BaseTags)+2)
	for k, v := range w.opts.BaseTags {
		tags[k] = v
	}
	tags["path"] = path
	tags["kind"] = kind
	id := ComputeID(w.opts.RunID, content)
	if meta, err := w.st.Metadata(w.ctx, id); err == nil {
		// The same bytes are stored in this run as another kind (a JSON
		// value and its own text), or by someone else (an effect's own
		// artifact, another offload whose reader restores only its
		// source): overwriting would change how its refs are read and
		// lose its tags, so this one gets an id of its own.
		salt := ""
		if mediaType(meta.ContentType) != mediaType(contentType) {
			salt = contentType + "\x00"
		}
		if meta.Tags["source"] != tags["source"] {
			salt += "source=" + tags["source"] + "\x00"
		}
		if salt != "" {
			id = ComputeID(w.opts.RunID, append([]byte(salt), content...))
		}
	}
	m, err := w.st.Put(w.ctx, PutParams{Content: content, ContentType: contentType, RunID: w.opts.RunID, Tags: tags, ArtifactID: id})
	if err != nil {
		return nil, fmt.Errorf("offloading %s: %w", path, err)
	}
	return Ref(m.ArtifactID), nil
}

func (w *offloader) enter(p uintptr, n int, path string) error {
	for _, a := range w.ancestors {
		if a.ptr == p && a.n == n {
			return fmt.Errorf("offloading %s: cycle (the value contains itself)", path)
		}
	}
	w.ancestors = append(w.ancestors, ancestor{p, n})
	return nil
}

func (w *offloader) leave() { w.ancestors = w.ancestors[:len(w.ancestors)-1] }

// walk returns the new value and whether it differs from cur.
func (w *offloader) walk(cur any, path string, root bool) (any, bool, error) {
	if err := w.ctx.Err(); err != nil {
		return nil, false, err
	}
	switch x := cur.(type) {
	case nil:
		return nil, false, nil
	case []byte:
		if x == nil {
			return x, false, nil // stored as null
		}
		return w.stringForm(cur, base64.StdEncoding.EncodeToString(x), path, root)
	case string:
		if len(x) > w.limit && w.allowed(path, x, root) {
			b := []byte(x)
			if !utf8.Valid(b) {
				// One U+FFFD per bad byte, as the value stored inline
				// reads back.
				b = []byte(pyjson.ToValidUTF8(x))
			}
			ref, err := w.put(b, "text/plain", path, "text")
			return ref, err == nil, err
		}
		return x, false, nil
	case map[string]any:
		if _, ok := x[RefKey]; ok {
			return x, false, nil
		}
		return w.object(x, path, root)
	case []any:
		return w.array(x, path, root)
	}
	return w.typed(cur, path, root)
}

// typed walks a typed Go container ([]string, []map[string]any,
// map[string]string, …), which the stores encode as the JSON list or
// object Python would walk, in its JSON form. When nothing in it is
// offloaded, the value itself is returned, unchanged; one that is not JSON
// stays inline.
func (w *offloader) typed(cur any, path string, root bool) (any, bool, error) {
	switch reflect.ValueOf(cur).Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
	default:
		return cur, false, nil
	}
	norm, err := pyjson.Normalize(cur)
	if err != nil {
		return cur, false, nil
	}
	switch x := norm.(type) {
	case map[string]any, []any:
	case string: // a named []byte type (base64) or a marshaler's string
		return w.stringForm(cur, x, path, root)
	default:
		return cur, false, nil // nil slice or map
	}
	nv, changed, err := w.walk(norm, path, root)
	if err != nil || !changed {
		return cur, false, err
	}
	return nv, true, nil
}

// stringForm offloads cur, a value the stores encode as the string s, as
// that string would be: a text artifact past the threshold, else cur
// itself, unchanged.
func (w *offloader) stringForm(cur any, s, path string, root bool) (any, bool, error) {
	nv, changed, err := w.walk(s, path, root)
	if err != nil || !changed {
		return cur, false, err
	}
	return nv, true, nil
}

func (w *offloader) object(m map[string]any, path string, root bool) (any, bool, error) {
	if err := w.enter(reflect.ValueOf(m).Pointer(), -1, path); err != nil {
		return nil, false, err
	}
	defer w.leave()
	var out map[string]any
	// In key order, as Python walks in insertion order: equal contents
	// share one artifact, whose tags the last path stored sets, and that
	// must not change from one run of the same data to the next.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		nv, changed, err := w.walk(v, childPath(path, k), false)
		if err != nil {
			return nil, false, err
		}
		if changed {
			if out == nil {
				out = make(map[string]any, len(m))
				for k2, v2 := range m {
					out[k2] = v2
				}
			}
			out[k] = nv
		}
	}
	val := any(m)
	if out != nil {
		val = out
	}
	if ref, ok, err := w.maybeJSON(val, path, root); ok || err != nil {
		return ref, ok, err
	}
	return val, out != nil, nil
}

func (w *offloader) array(a []any, path string, root bool) (any, bool, error) {
	if len(a) > 0 {
		if err := w.enter(reflect.ValueOf(a).Pointer(), len(a), path); err != nil {
			return nil, false, err
		}
		defer w.leave()
	}
	var out []any
	for i, v := range a {
		nv, changed, err := w.walk(v, path+"["+strconv.Itoa(i)+"]", false)
		if err != nil {
			return nil, false, err
		}
		if changed {
			if out == nil {
				out = append([]any(nil), a...)
			}
			out[i] = nv
		}
	}
	val := any(a)
	if out != nil {
		val = out
	}
	if ref, ok, err := w.maybeJSON(val, path, root); ok || err != nil {
		return ref, ok, err
	}
	return val, out != nil, nil
}

// maybeJSON offloads a container whose compact JSON exceeds the limit.
// The ok result reports that v was replaced by a ref.
func (w *offloader) maybeJSON(v any, path string, root bool) (any, bool, error) {
	if !w.allowed(path, v, root) {
		return nil, false, nil
	}
	b, err := compactJSON(v)
	if err != nil || len(b) <= w.limit {
		// Like Python, a container that cannot be encoded stays inline.
		return nil, false, nil
	}
	ref, err := w.put(b, "application/json", path, "json")
	if err != nil {
		return nil, false, err
	}
	return ref, true, nil
}

func childPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mediaType is a content type without its parameters.
func mediaType(ct string) string {
	t, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(pyval.Strip(t))
}

// Restore returns v with the refs ({"$artifact": id}) whose artifact mine
// accepts replaced by their content: JSON artifacts decoded (and the refs
// inside them restored, since Offload works depth first), text ones as
// strings. Other refs stay, and so does a ref whose artifact is not in st
// (a dangling ref must not block its reader). v, a copy the caller owns,
// is changed in place. A ref met again inside its own content (a cycle,
// which only damaged or hand-made artifacts hold) stays a ref there.
func Restore(ctx context.Context, st Store, v any, mine func(*Metadata) bool) (any, error) {
	return restore(ctx, st, v, mine, false, map[string]bool{})
}

// RestoreReadable is Restore for best-effort readers (an export, a
// display): a ref whose content is damaged (ErrDamaged) or does not
// decode stays a ref, as a dangling one does, instead of failing the
// whole value. Other store failures are still returned.
func RestoreReadable(ctx context.Context, st Store, v any, mine func(*Metadata) bool) (any, error) {
	return restore(ctx, st, v, mine, true, map[string]bool{})
}

// restore is Restore with the ids of the artifacts whose content it is
// inside; lenient leaves the refs of unreadable content (RestoreReadable).
func restore(ctx context.Context, st Store, v any, mine func(*Metadata) bool, lenient bool, inside map[string]bool) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if id, ok := RefID(x); ok && len(x) == 1 {
			if !ValidID(id) || inside[id] {
				return x, nil // a user value that only looks like a ref, or a cycle
			}
			meta, err := st.Metadata(ctx, id)
			if errors.Is(err, ErrNotFound) {
				return x, nil
			}
			if err != nil {
				return nil, err
			}
			ct := meta.ContentType
			if !mine(meta) || !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/") {
				return x, nil
			}
			_, content, err := st.Get(ctx, id)
			if errors.Is(err, ErrNotFound) || lenient && errors.Is(err, ErrDamaged) {
				return x, nil // metadata without its content: dangling too
			}
			if err != nil {
				return nil, err
			}
			if strings.HasPrefix(ct, "text/") {
				return string(content), nil
			}
			decoded, err := pyjson.Decode(content)
			if err != nil {
				if lenient {
					return x, nil
				}
				return nil, fmt.Errorf("decoding artifact %s: %w", id, err)
			}
			inside[id] = true
			defer delete(inside, id)
			return restore(ctx, st, decoded, mine, lenient, inside)
		}
		for k, e := range x {
			r, err := restore(ctx, st, e, mine, lenient, inside)
			if err != nil {
				return nil, err
			}
			x[k] = r
		}
	case []any:
		for i, e := range x {
			r, err := restore(ctx, st, e, mine, lenient, inside)
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
	}
	return v, nil
}
