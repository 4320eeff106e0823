package durable

import (
	"math/rand/v2"
	"testing"
	"time"
)

// parseWireTime is a shortcut: for every input it reads, it must give what
// the general path gives, and it must leave every other input to it.
func checkWireTimeAgrees(t *testing.T, s string) {
	t.Helper()
	fast, ok := parseWireTime(s)
	slow, err := parseTimeAnyForm(s)
	if ok && (err != nil || !fast.Equal(slow.Time)) {
		t.Errorf("%q: fast path read %v, general path %v (%v)", s, fast, slow, err)
	}
	got, gotErr := ParseTime(s)
	if (gotErr == nil) != (err == nil) || (err == nil && !got.Equal(slow.Time)) {
		t.Errorf("%q: ParseTime = %v, %v; general path %v, %v", s, got, gotErr, slow, err)
	}
}

func TestParseWireTimeAgreesWithTheGeneralPath(t *testing.T) {
	fixed := []string{
		"2026-11-29T22:46:49.642457+00:00", "2026-11-29T22:46:49+00:00",
		"0001-01-01T00:00:00+00:00", "0001-01-01T00:00:00.000001+00:00", "9999-12-31T23:59:59.999999+00:00",
		"2024-02-29T12:00:00+00:00", "2023-02-29T12:00:00+00:00", "2026-04-31T00:00:00+00:00",
		"2026-13-01T00:00:00+00:00", "2026-00-10T00:00:00+00:00", "2026-01-00T00:00:00+00:00",
		"0000-01-01T00:00:00+00:00", "2026-01-01T24:00:00+00:00", "2026-01-01T23:60:00+00:00",
		"2026-01-01T23:59:60+00:00", "2026-01-01T23:59:59.12345a+00:00", "2026-01-01 23:59:59+00:00",
		"2026-01-01T23:59:59+01:00", "2026-01-01T23:59:59-00:00", "2026-01-01T23:59:59.123456Z",
		"2026-01-01T23:59:59,123456+00:00", "+026-01-01T23:59:59+00:00", "2026-01-01T23:59:5 +00:00",
		"2026-01-01T23:59:59.000000+00:00", "2026-1-01T23:59:59+00:00x",
	}
	for _, s := range fixed {
		checkWireTimeAgrees(t, s)
	}
	if _, ok := parseWireTime(fixed[0]); !ok {
		t.Errorf("the wire form %q missed the fast path", fixed[0])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	lo, hi := minWireTime.Unix(), maxWireTime.Unix()
	for range 20000 {
		at := time.Unix(lo+rng.Int64N(hi-lo), int64(rng.IntN(1e6))*1000).UTC()
		if rng.IntN(4) == 0 {
			at = at.Truncate(time.Second)
		}
		s := FormatTime(at)
		if _, ok := parseWireTime(s); !ok {
			t.Fatalf("%q (written by FormatTime) missed the fast path", s)
		}
		checkWireTimeAgrees(t, s)
		// One byte changed: the fast path reads it only if it is still a
		// valid instant of the wire form.
		b := []byte(s)
		b[rng.IntN(len(b))] = "0123456789:-T.+Z "[rng.IntN(17)]
		checkWireTimeAgrees(t, string(b))
	}
}

func FuzzParseWireTime(f *testing.F) {
	f.Add("2026-11-29T22:46:49.642457+00:00")
	f.Add("2024-02-29T00:00:00+00:00")
	f.Add("0001-01-01T00:00:00+00:00")
	f.Fuzz(checkWireTimeAgrees)
}

func BenchmarkParseTimeWireForm(b *testing.B) {
	for b.Loop() {
		if _, err := ParseTime("2026-11-29T22:46:49.642457+00:00"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseTimeAnyFormWireForm(b *testing.B) {
	for b.Loop() {
		if _, err := parseTimeAnyForm("2026-11-29T22:46:49.642457+00:00"); err != nil {
			b.Fatal(err)
		}
	}
}
