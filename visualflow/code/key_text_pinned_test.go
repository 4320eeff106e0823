package code

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A missing key whose text is cut at maxKeyText bytes is cut at the end
// of a rune: the error stays valid UTF-8 (it is stored as JSON text), so
// "é" * 2000 does not end its quoted key in a lone 0xC3.
func TestMissingKeyTextCutAtARunesEnd(t *testing.T) {
	_, _, err := Eval(context.Background(), `{}["é" * 2000]`, map[string]any{}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "more than 1024 bytes") {
		t.Fatalf("err = %v, want the cut missing key error", err)
	}
	if !utf8.ValidString(err.Error()) {
		t.Fatalf("err = %q: not valid UTF-8", err.Error())
	}
}

// An int key longer than maxKeyText digits is named, not written, in a
// cut key text, and a one-item tuple keeps its trailing comma, as
// Starlark and Python write it.
func TestMissingLongIntKeyIsNamed(t *testing.T) {
	_, _, err := Eval(context.Background(), `{1: 2}[(int("1" + "0" * 1100),)]`, map[string]any{}, Limits{})
	want := "key (<an int of more than 1024 digits>,)… (a text of more than 1024 bytes) not in dict"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
}

// Looking a tuple key up (d[k]) walks it with the watchdog before the
// dict hashes it, as storing it does: a tuple sharing its sub-tuples 40
// levels deep (2^40 hash calls) stops at the timeout.
func TestLookupOfSharedTupleKeyHonoursTimeout(t *testing.T) {
	src := "def f(_input):\n" +
		"    t = (1,)\n" +
		"    for i in range(40):\n" +
		"        t = (t, t)\n" +
		"    d = {1: 1}\n" +
		"    return d[t]\n"
	wantLimitErrorInChild(t, "CODE_SHARED_LOOKUP_CHILD", 0, src, Limits{Timeout: time.Second}, 15*time.Second, "lookup of a tuple sharing its sub-tuples 40 levels deep")
}
