package visualflow

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// File families (spec §6.10) as the reference classifies them
// (AbstractRuntime utils/file_filters.py over AbstractCore's media
// extension table): by the name's suffix only, archive first, then json,
// then code, then the media table; a name the tables do not know is judged
// by its content (listing) or is a document (artifacts). One table serves
// list_folder_files and read_artifact, as in the reference.

// familyArchiveExts, familyJSONExts and familyCodeExts are checked in that
// order before the media table, so "json" wins over code and "md" is code.
var (
	familyArchiveExts = extSet("7z bz2 gz rar tar tgz xz zip")
	familyJSONExts    = extSet("json jsonl ndjson")
	familyCodeExts    = extSet("bash c cc clj cljs cmake conf containerfile cpp cs css cxx dart dockerfile " +
		"env erl ex exs fish go gradle h hpp hrl html htm hxx ini java jl js json jsonl jsx kt less lua m " +
		"make md php pl pm properties py pyw pyx r rb rs sass scala scss sh sql swift toml ts tsx vue xml " +
		"yaml yml zsh")
)

// familyMediaExts is AbstractCore's extension → media type table
// (FILE_TYPE_MAPPINGS); many of its text entries are shadowed by the code
// set above.
var familyMediaExts = func() map[string]string {
	m := map[string]string{}
	for family, exts := range map[string]string{
		"image":    "jpg jpeg png gif bmp tif tiff webp ico",
		"document": "pdf doc docx xls xlsx ppt pptx odt rtf",
		"audio":    "mp3 wav m4a ogg flac aac",
		"video":    "mp4 avi mov mkv webm wmv mpg mpeg m4v",
		"text": "txt md markdown csv tsv json jsonl ndjson xml html htm yaml yml toml ini cfg conf " +
			"py pyw pyx js jsx ts tsx java kt scala c cpp cc cxx h hpp hxx cs go rs swift rb php pl pm " +
			"sh bash zsh fish r rmd jl matlab m sql lua vim dart ex exs erl hrl clj cljs " +
			"ipynb qmd rst tex latex bib org adoc asciidoc css scss sass less vue svelte " +
			"gradle cmake make dockerfile containerfile gitignore gitattributes env properties log out err",
	} {
		for _, e := range strings.Fields(exts) {
			m[e] = family
		}
	}
	return m
}()

func extSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields(s) {
		m[e] = true
	}
	return m
}

// nameSuffix is Python's Path(name).suffix.lower().lstrip("."): the text
// after the last dot of the last path component, "" when the dot leads
// the name (".env" has none) or ends it. The lowering is Python's full
// mapping ("İ" becomes "i" + U+0307), so such a suffix is one no table
// knows, as in the reference.
func nameSuffix(name string) string {
	name = strings.TrimRight(name, "/")
	name = name[strings.LastIndexByte(name, '/')+1:]
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return ""
	}
	return pyval.Lower(name[i+1:])
}

// familyOfSuffix classifies by suffix; ok is false for a suffix no table
// knows.
func familyOfSuffix(suffix string) (family string, ok bool) {
	switch {
	case familyArchiveExts[suffix]:
		return "archive", true
	case familyJSONExts[suffix]:
		return "json", true
	case familyCodeExts[suffix]:
		return "code", true
	}
	family, ok = familyMediaExts[suffix]
	return family, ok
}

// fileFamily is the family of a file on disk. An unknown suffix is judged
// as AbstractCore's is_text_file does: an empty file is text, one whose
// first 8 KiB hold a NUL byte (or that cannot be read) a document, any
// other text (its latin-1 fallback decodes every byte). Only regular files
// are opened, so a FIFO cannot block the listing.
func fileFamily(path string) string {
	if f, ok := familyOfSuffix(nameSuffix(path)); ok {
		return f
	}
	info, err := os.Stat(path)
	if err != nil {
		return "document"
	}
	if info.Size() == 0 {
		return "text"
	}
	if !info.Mode().IsRegular() {
		return "document"
	}
	fh, err := os.Open(path)
	if err != nil {
		return "document"
	}
	defer fh.Close()
	buf := make([]byte, 8192)
	n, err := io.ReadFull(fh, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "document"
	}
	if bytes.IndexByte(buf[:n], 0) >= 0 {
		return "document"
	}
	return "text"
}

// artifactFamily is read_artifact's content_family: the reference's family
// of the artifact's file name (else its source path, else its id), never
// its content type. For an unknown suffix the reference sniffs a file of
// that name relative to the process's working directory, which does not
// exist in practice, so the answer is "document"; no file is read here.
func artifactFamily(name string) string {
	if f, ok := familyOfSuffix(nameSuffix(name)); ok {
		return f
	}
	return "document"
}

// familyFilterMatches is the reference's file_matches_filters for a file
// that passed the extension filter: "any" keeps every file; archive, json
// and code test the suffix sets (so a .json file is kept by "code" though
// its family is json); any other name must equal the file's family
// (unknown names keep nothing). family computes the file's family lazily.
func familyFilterMatches(filter, suffix string, family func() string) bool {
	switch filter {
	case "any":
		return true
	case "archive":
		return familyArchiveExts[suffix]
	case "json":
		return familyJSONExts[suffix]
	case "code":
		return familyCodeExts[suffix]
	}
	return family() == filter
}
