package visualflow

import (
	"mime"
	"strings"

	"github.com/abstractframework/abstractgateway/artifact"
)

// pyDefaultTypes is Python 3.11's built-in mimetypes table
// (mimetypes._types_map_default, strict types), consulted before the
// system MIME database so common guesses do not vary by machine. Python
// lets /etc/mime.types override some of these (".js", ".xml", ".c", ...);
// here the built-in value wins. Generated with
// python3 -c "import mimetypes; print(mimetypes._types_map_default)".
var pyDefaultTypes = map[string]string{
	".3g2":         "audio/3gpp2",
	".3gp":         "audio/3gpp",
	".3gpp":        "audio/3gpp",
	".3gpp2":       "audio/3gpp2",
	".a":           "application/octet-stream",
	".aac":         "audio/aac",
	".adts":        "audio/aac",
	".ai":          "application/postscript",
	".aif":         "audio/x-aiff",
	".aifc":        "audio/x-aiff",
	".aiff":        "audio/x-aiff",
	".ass":         "audio/aac",
	".au":          "audio/basic",
	".avi":         "video/x-msvideo",
	".avif":        "image/avif",
	".bat":         "text/plain",
	".bcpio":       "application/x-bcpio",
	".bin":         "application/octet-stream",
	".bmp":         "image/bmp",
	".c":           "text/plain",
	".cdf":         "application/x-netcdf",
	".cpio":        "application/x-cpio",
	".csh":         "application/x-csh",
	".css":         "text/css",
	".csv":         "text/csv",
	".dll":         "application/octet-stream",
	".doc":         "application/msword",
	".dot":         "application/msword",
	".dvi":         "application/x-dvi",
	".eml":         "message/rfc822",
	".eps":         "application/postscript",
	".etx":         "text/x-setext",
	".exe":         "application/octet-stream",
	".gif":         "image/gif",
	".gtar":        "application/x-gtar",
	".h":           "text/plain",
	".h5":          "application/x-hdf5",
	".hdf":         "application/x-hdf",
	".heic":        "image/heic",
	".heif":        "image/heif",
	".htm":         "text/html",
	".html":        "text/html",
	".ico":         "image/vnd.microsoft.icon",
	".ief":         "image/ief",
	".jpe":         "image/jpeg",
	".jpeg":        "image/jpeg",
	".jpg":         "image/jpeg",
	".js":          "application/javascript",
	".json":        "application/json",
	".ksh":         "text/plain",
	".latex":       "application/x-latex",
	".loas":        "audio/aac",
	".m1v":         "video/mpeg",
	".m3u":         "application/vnd.apple.mpegurl",
	".m3u8":        "application/vnd.apple.mpegurl",
	".man":         "application/x-troff-man",
	".me":          "application/x-troff-me",
	".mht":         "message/rfc822",
	".mhtml":       "message/rfc822",
	".mif":         "application/x-mif",
	".mjs":         "application/javascript",
	".mov":         "video/quicktime",
	".movie":       "video/x-sgi-movie",
	".mp2":         "audio/mpeg",
	".mp3":         "audio/mpeg",
	".mp4":         "video/mp4",
	".mpa":         "video/mpeg",
	".mpe":         "video/mpeg",
	".mpeg":        "video/mpeg",
	".mpg":         "video/mpeg",
	".ms":          "application/x-troff-ms",
	".n3":          "text/n3",
	".nc":          "application/x-netcdf",
	".nq":          "application/n-quads",
	".nt":          "application/n-triples",
	".nws":         "message/rfc822",
	".o":           "application/octet-stream",
	".obj":         "application/octet-stream",
	".oda":         "application/oda",
	".opus":        "audio/opus",
	".p12":         "application/x-pkcs12",
	".p7c":         "application/pkcs7-mime",
	".pbm":         "image/x-portable-bitmap",
	".pdf":         "application/pdf",
	".pfx":         "application/x-pkcs12",
	".pgm":         "image/x-portable-graymap",
	".pl":          "text/plain",
	".png":         "image/png",
	".pnm":         "image/x-portable-anymap",
	".pot":         "application/vnd.ms-powerpoint",
	".ppa":         "application/vnd.ms-powerpoint",
	".ppm":         "image/x-portable-pixmap",
	".pps":         "application/vnd.ms-powerpoint",
	".ppt":         "application/vnd.ms-powerpoint",
	".ps":          "application/postscript",
	".pwz":         "application/vnd.ms-powerpoint",
	".py":          "text/x-python",
	".pyc":         "application/x-python-code",
	".pyo":         "application/x-python-code",
	".qt":          "video/quicktime",
	".ra":          "audio/x-pn-realaudio",
	".ram":         "application/x-pn-realaudio",
	".ras":         "image/x-cmu-raster",
	".rdf":         "application/xml",
	".rgb":         "image/x-rgb",
	".roff":        "application/x-troff",
	".rtx":         "text/richtext",
	".sgm":         "text/x-sgml",
	".sgml":        "text/x-sgml",
	".sh":          "application/x-sh",
	".shar":        "application/x-shar",
	".snd":         "audio/basic",
	".so":          "application/octet-stream",
	".src":         "application/x-wais-source",
	".srt":         "text/plain",
	".sv4cpio":     "application/x-sv4cpio",
	".sv4crc":      "application/x-sv4crc",
	".svg":         "image/svg+xml",
	".swf":         "application/x-shockwave-flash",
	".t":           "application/x-troff",
	".tar":         "application/x-tar",
	".tcl":         "application/x-tcl",
	".tex":         "application/x-tex",
	".texi":        "application/x-texinfo",
	".texinfo":     "application/x-texinfo",
	".tif":         "image/tiff",
	".tiff":        "image/tiff",
	".tr":          "application/x-troff",
	".trig":        "application/trig",
	".tsv":         "text/tab-separated-values",
	".txt":         "text/plain",
	".ustar":       "application/x-ustar",
	".vcf":         "text/x-vcard",
	".vtt":         "text/vtt",
	".wasm":        "application/wasm",
	".wav":         "audio/x-wav",
	".webm":        "video/webm",
	".webmanifest": "application/manifest+json",
	".wiz":         "application/msword",
	".wsdl":        "application/xml",
	".xbm":         "image/x-xbitmap",
	".xlb":         "application/vnd.ms-excel",
	".xls":         "application/vnd.ms-excel",
	".xml":         "text/xml",
	".xpdl":        "application/xml",
	".xpm":         "image/x-xpixmap",
	".xsl":         "application/xml",
	".xwd":         "image/x-xwindowdump",
	".zip":         "application/zip",
}

// pySuffixMap and pyEncodings are mimetypes' suffix_map and
// encodings_map: an alias expands to a double suffix, and a compression
// suffix is stripped before the type is guessed from the inner name.
var (
	pySuffixMap = map[string]string{
		".svgz": ".svg.gz",
		".tgz":  ".tar.gz",
		".taz":  ".tar.gz",
		".tz":   ".tar.gz",
		".tbz2": ".tar.bz2",
		".txz":  ".tar.xz",
	}
	pyEncodings = map[string]bool{
		".gz":  true,
		".Z":   true,
		".bz2": true,
		".xz":  true,
		".br":  true,
	}
)

// guessContentType is Python's mimetypes.guess_type(filename)[0] or
// application/octet-stream, as import_workspace_file guesses: a suffix
// alias expands (".tgz" is ".tar.gz"), a compression suffix (".gz",
// ".bz2", ".xz", ".Z", ".br"; case-sensitive, as Python's) is dropped so
// "notes.txt.gz" is text/plain, then the extension is looked up, lower-
// cased, in Python's built-in table, else the system MIME database
// (where Python reads /etc/mime.types; the result there varies by
// machine), parameters such as charset dropped.
func guessContentType(filename string) string {
	base, ext := pySplitExt(filename)
	for {
		alias, ok := pySuffixMap[strings.ToLower(ext)]
		if !ok {
			break
		}
		base, ext = pySplitExt(base + alias)
	}
	if pyEncodings[ext] {
		_, ext = pySplitExt(base)
	}
	ext = strings.ToLower(ext)
	if ct, ok := pyDefaultTypes[ext]; ok {
		return ct
	}
	if ext != "" {
		if ct := baseContentType(mime.TypeByExtension(ext)); ct != "" {
			return ct
		}
	}
	return artifact.DefaultContentType
}

// pySplitExt is Python's posixpath.splitext: the extension is from the
// last dot of the last path element, unless that element's dots all lead
// it (".bashrc", "..gz" have none).
func pySplitExt(p string) (string, string) {
	sep := strings.LastIndexByte(p, '/')
	dot := strings.LastIndexByte(p, '.')
	if dot <= sep {
		return p, ""
	}
	for i := sep + 1; i < dot; i++ {
		if p[i] != '.' {
			return p[:dot], p[dot:]
		}
	}
	return p, ""
}
