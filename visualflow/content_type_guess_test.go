package visualflow

import "testing"

// guessContentType is mimetypes.guess_type(name)[0] or the default: suffix
// aliases expand, a (case-sensitive) compression suffix is dropped, the
// extension is looked up lower-cased in Python's built-in table first. The
// wanted values are Python 3.11's mimetypes.MimeTypes() (built-in tables
// only) guess_type; names whose extension only the system MIME database
// knows are left out, as their guess varies by machine (for Python too).
func TestGuessContentTypeAsPythonMimetypes(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"notes.txt.gz": "text/plain",
		"a.TXT":        "text/plain",
		"x.tgz":        "application/x-tar",
		"x.tbz2":       "application/x-tar",
		"a.svgz":       "image/svg+xml",
		"x.txt.Z":      "text/plain",
		"x.txt.bz2":    "text/plain",
		"x.csv.xz":     "text/csv",
		"page.html.br": "text/html",
		"a.json":       "application/json",
		"a.js":         "application/javascript",
		"a.xml":        "text/xml",
		"a.c":          "text/plain",
		"photo.JPG":    "image/jpeg",
		".gz":          "application/octet-stream",
		".txt":         "application/octet-stream",
		"..txt":        "application/octet-stream",
		"noext":        "application/octet-stream",
	} {
		if got := guessContentType(name); got != want {
			t.Errorf("guessContentType(%q) = %q, want %q", name, got, want)
		}
	}
}
