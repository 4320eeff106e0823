package builtin

import (
	"os"
	"strings"
)

// systemDatetimeNode returns the current host-local time: {iso, timezone,
// utc_offset_minutes, locale}. The locale comes from LC_ALL, LANG or
// LC_CTYPE without the encoding suffix ("" when unset).
func systemDatetimeNode(env *Env, _ map[string]any) (any, error) {
	now := env.now()
	zone, offset := now.Zone()
	offMin := offset / 60
	if offset%60 != 0 && offset < 0 {
		offMin-- // floor division, as Python's // does
	}
	lang := ""
	for _, k := range []string{"LC_ALL", "LANG", "LC_CTYPE"} {
		if v := os.Getenv(k); v != "" {
			lang = v
			break
		}
	}
	loc, _, _ := strings.Cut(lang, ".")
	return map[string]any{
		"iso":                IsoFormat(now),
		"timezone":           zone,
		"utc_offset_minutes": int64(offMin),
		"locale":             loc,
	}, nil
}
