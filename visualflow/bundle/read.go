package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// maxEntrySize bounds each file read from a bundle (64 MiB), and
// maxBundleSize all of them together (a small zip may inflate to far
// more than its size).
const (
	maxEntrySize  = 64 << 20
	maxBundleSize = 256 << 20
)

// maxDecodedSize bounds the memory that the decoded JSON of one bundle
// (its manifest, and each flow id's flow) is estimated to take
// (decodedCost), 1 GiB by default. The raw limits alone do not bound it:
// decoded JSON takes from ~3.5 times its text (a typical flow) to ~45
// times (`{"a":0}` becomes a map of its own), so a legal 256 MiB bundle
// could take gigabytes. Typical flows are estimated at ~4 times their
// text, so 1 GiB still lets them use nearly all of the raw budget; the
// example bundles are estimated at 30–70 KiB. A variable so that tests
// can lower it; it is read when a read (or a Pack) starts.
var maxDecodedSize int64 = 1 << 30

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
		entry, err := entryName(f)
		if err != nil {
			return nil, fmt.Errorf("reading bundle %s: zip entry %q: %w", label(nil, name), f.Name, err)
		}
		if strings.HasSuffix(entry, "/") && f.FileInfo().IsDir() {
			continue
		}
		if err := CheckPath(entry); err != nil {
			return nil, fmt.Errorf("reading bundle %s: unsafe zip entry %q: %w", label(nil, name), f.Name, err)
		}
		// Two entries for one path (a name repeated, or spelled with a
		// backslash, a double slash or a NUL-terminated suffix) would let
		// what a zip tool shows differ from what runs (Python's zipfile
		// takes the last of them, this reader would take the first).
		p := normPath(entry)
		if _, dup := src.files[p]; dup {
			return nil, fmt.Errorf("reading bundle %s: duplicate zip entry %q (entry %q)", label(nil, name), p, f.Name)
		}
		src.files[p] = f
	}
	return readFrom(src, name)
}

// entryName is the name f is read under: its bytes as UTF-8 when the
// entry has the UTF-8 flag (general purpose bit 11); else the UTF-8 name
// of an Info-ZIP Unicode Path extra field (0x7075) whose CRC matches the
// header name, as Python's zipfile reads it (the standard zip tool writes
// non-ASCII names that way); else the bytes themselves when they are
// UTF-8 (other tools' unflagged UTF-8 names, which loaded before); else
// code page 437, as Python's zipfile decodes a legacy tool's name
// ("flows/caf\x82.json" is flows/café.json). The name is cut at the first
// NUL byte ("flows/main.json\x00x" is flows/main.json, that file's
// duplicate when it has one). A flagged name that is not UTF-8 is
// refused, as Python's zipfile refuses the archive.
func entryName(f *zip.File) (string, error) {
	n := f.Name
	if f.Flags&0x800 != 0 {
		if !utf8.ValidString(n) {
			return "", errors.New("the name is flagged UTF-8 but is not valid UTF-8")
		}
	} else if u := unicodePathExtra(f); u != "" {
		n = u
	} else if !utf8.ValidString(n) {
		n = decodeCP437(n)
	}
	n, _, _ = strings.Cut(n, "\x00")
	return n, nil
}

// unicodePathExtra returns the UTF-8 name of f's Info-ZIP Unicode Path
// extra field (tag 0x7075: version 1, CRC-32 of the header name, name),
// or "" when f has none that applies to its header name.
func unicodePathExtra(f *zip.File) string {
	extra := f.Extra
	for len(extra) >= 4 {
		tag := binary.LittleEndian.Uint16(extra)
		size := int(binary.LittleEndian.Uint16(extra[2:]))
		extra = extra[4:]
		if size > len(extra) {
			return ""
		}
		body := extra[:size]
		extra = extra[size:]
		if tag != 0x7075 || len(body) < 5 || body[0] != 1 {
			continue
		}
		if binary.LittleEndian.Uint32(body[1:]) != crc32.ChecksumIEEE([]byte(f.Name)) || !utf8.Valid(body[5:]) {
			return ""
		}
		return string(body[5:])
	}
	return ""
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
	// decoded is the estimated memory of what was decoded so far, out of
	// decodedLimit.
	decoded, decodedLimit int64
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

// errDecodedTooLarge reports a bundle whose JSON would take more memory
// decoded than maxDecodedSize.
var errDecodedTooLarge = errors.New("decoded JSON too large")

// chargeDecoded charges the estimated decoded size of data, a file about
// to be decoded, and refuses it past the budget: before decoding, so that
// the memory is never taken.
func (b *budgeted) chargeDecoded(data []byte) error {
	n := decodedCost(data)
	if b.decoded += n; b.decoded > b.decodedLimit {
		return fmt.Errorf("%w: about %s in memory for this file, %s for the bundle's files so far (limit %s)",
			errDecodedTooLarge, mib(n), mib(b.decoded), mib(b.decodedLimit))
	}
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// Estimated heap bytes of the Go values pyjson decodes into an any
// (map[string]any, []any, string, json.Number), measured with Go 1.26
// (decoded_budget_test.go checks them against the heap). The text itself
// is counted once besides: strings and numbers keep a copy of it.
const (
	costValue  = 16  // the interface value in its array or map slot
	costScalar = 16  // the boxed header of a string or json.Number
	costArray  = 88  // the boxed slice header and its first backing array (4 slots)
	costObject = 48  // the map header
	costSmall  = 288 // the one slot group of a map of 1 to 8 members
	costMember = 64  // a member of a larger map: its slot, load and growth slack
)

// maxScanDepth is about the nesting the decoder accepts (pyjson refuses
// deeper documents while decoding), which bounds decodedCost's stack.
const maxScanDepth = 10000

// decodedCost estimates the heap that decoding data (JSON text) into an
// any takes, from one pass over the text counting its values and each
// object's members. Invalid JSON gives some estimate: the decoder refuses
// it before building any value.
func decodedCost(data []byte) int64 {
	var values, scalars, arrays, keys, maps int64
	// members counts the members of each open object (-1: an array).
	// Containers nested past maxScanDepth are not recorded; a member of
	// one is charged as a large map's.
	var members []int
	unrecorded := 0
	open := func(n int) {
		if len(members) < maxScanDepth {
			members = append(members, n)
		} else {
			unrecorded++
		}
	}
	closeContainer := func() {
		if unrecorded > 0 {
			unrecorded--
			return
		}
		if len(members) == 0 {
			return
		}
		switch m := members[len(members)-1]; {
		case m > 8:
			maps += costObject + int64(m)*costMember
		case m > 0:
			maps += costObject + costSmall
		case m == 0:
			maps += costObject
		}
		members = members[:len(members)-1]
	}
	inString, escaped, inToken := false, false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n', ',':
			inToken = false
		case ']', '}':
			inToken = false
			closeContainer()
		case ':':
			inToken = false
			keys++
			if unrecorded == 0 && len(members) > 0 && members[len(members)-1] >= 0 {
				members[len(members)-1]++
			} else {
				maps += costMember
			}
		case '"':
			inToken, inString = false, true
			values++
			scalars++
		case '{':
			inToken = false
			values++
			open(0)
		case '[':
			inToken = false
			values++
			arrays++
			open(-1)
		default:
			if !inToken { // a number or a literal (true, false, null)
				inToken = true
				values++
				if c == '-' || '0' <= c && c <= '9' {
					scalars++
				}
			}
		}
	}
	for len(members) > 0 || unrecorded > 0 { // unclosed: invalid, but counted
		closeContainer()
	}
	// Each member's key was counted above as a string value; the map's
	// cost covers it instead.
	values, scalars = max(values-keys, 0), max(scalars-keys, 0)
	return int64(len(data)) + values*costValue + scalars*costScalar + arrays*costArray + maps
}

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
	src := &budgeted{src: inner, read: map[string][]byte{}, decodedLimit: maxDecodedSize}
	raw, err := src.readFile("manifest.json")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading bundle %s: manifest.json is missing", label(nil, name))
		}
		return nil, fmt.Errorf("reading bundle %s: manifest.json: %w", label(nil, name), err)
	}
	if err := src.chargeDecoded(raw); err != nil {
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
		if err == nil {
			err = src.chargeDecoded(data)
		}
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

// errBOM reports a JSON document that starts with a UTF-8 byte order mark
// (which some Windows editors write).
var errBOM = errors.New("the file starts with a UTF-8 byte order mark (BOM), which JSON does not allow: save it as UTF-8 without BOM")

// decodeDocument decodes data, which must hold exactly one JSON value
// (whitespace around it allowed), into v (a *any or a *map[string]any),
// numbers kept as json.Number. It reads what Python's json.loads reads:
// the NaN, Infinity and -Infinity literals that json.dumps writes for
// such floats are numbers (json.Number("NaN") and so on), and anything
// after the value is refused ("Extra data"), so that `{...} garbage`
// or `{...}}` are not taken for their first value.
func decodeDocument(data []byte, v any) error {
	if bytes.HasPrefix(data, []byte("\ufeff")) {
		// Refused as Python's json.loads refuses it, with an error that
		// names the invisible mark rather than its first byte.
		return errBOM
	}
	if !utf8.Valid(data) {
		// Python's json.loads of the file's text would fail; the decoder
		// would put U+FFFD in silently.
		return errors.New("not valid UTF-8")
	}
	// A stream of values: whatever follows the first one (another value
	// or text that is none) is trailing data.
	val, err := pyjson.DecodeStream(data)
	switch {
	case len(val) > 1 || len(val) == 1 && err != nil:
		return errTrailingData
	case err != nil:
		return err
	case len(val) == 0:
		return errors.New("no JSON value")
	}
	switch dst := v.(type) {
	case *any:
		*dst = val[0]
	case *map[string]any:
		obj, ok := val[0].(map[string]any)
		if !ok && val[0] != nil {
			return fmt.Errorf("expected a JSON object, got %s", pyjson.KindOf(val[0]))
		}
		*dst = obj
	default:
		return fmt.Errorf("decodeDocument: unsupported destination %T", v)
	}
	return nil
}
