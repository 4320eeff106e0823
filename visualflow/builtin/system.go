package builtin

import (
	"os"
	"strings"
	"time"
)

// systemDatetimeNode returns the current host-local time: {iso, timezone,
// utc_offset_minutes, locale}, the clock's instant in the host's zone (a
// run's clock is UTC; Python's datetime.now().astimezone() is local). The
// locale comes from LC_ALL, LC_CTYPE or LANG, in the C library's order of
// precedence, without the encoding suffix ("" when unset).
func systemDatetimeNode(env *Env, _ map[string]any) (any, error) {
	zone := time.Local
	if env != nil && env.Zone != nil {
		zone = env.Zone
	}
	now := env.now().In(zone)
	name, offset := now.Zone()
	offMin := offset / 60
	if offset%60 != 0 && offset < 0 {
		offMin-- // floor division, as Python's // does
	}
	lang := ""
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := os.Getenv(k); v != "" {
			lang = v
			break
		}
	}
	loc, _, _ := strings.Cut(lang, ".")
	return map[string]any{
		"iso":                IsoFormat(now),
		"timezone":           name,
		"utc_offset_minutes": int64(offMin),
		"locale":             loc,
	}, nil
}
