package pyjson

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// Every Go integer kind is written as Python writes the int it holds:
// json.dumps([-1, -128, -32768, -2147483648]) (CPython 3.11). A narrow
// signed kind read as unsigned would write -1 as 18446744073709551615.
func TestNegativeIntegersOfEveryKindKeepTheirSign(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		[]any{int8(-1), int8(-128), int16(-32768), int32(-2147483648)},
		[]any{int(-1), int64(-128), int16(-1), int32(-32768)},
		[]int8{-1, -128},
	} {
		b, err := Marshal(v, Line)
		if err != nil {
			t.Fatalf("Marshal(%v): %v", v, err)
		}
		if strings.Contains(string(b), "18446744") || !strings.HasPrefix(string(b), "[-1, -") {
			t.Errorf("Marshal(%v) = %s; want the negative integers as json.dumps writes them", v, b)
		}
	}
	if b, _ := Marshal([]any{int8(-1), int8(-128), int16(-32768), int32(-2147483648)}, Canonical); string(b) != "[-1,-128,-32768,-2147483648]" {
		t.Errorf("Canonical = %s; want [-1,-128,-32768,-2147483648]", b)
	}
}

// The integer digit limit (Python's int_max_str_digits, 4300) is for
// integers only: a literal with an exponent, E as well as e, is a float
// to Python. json.dumps(json.loads("1"*4301 + "E0"), sort_keys=True,
// separators=(",", ":"), ensure_ascii=False) is "Infinity" (CPython
// 3.11), so the encoder must not refuse it as a 4302-digit integer.
func TestExponentLiteralIsNoIntegerForTheDigitLimit(t *testing.T) {
	t.Parallel()
	for _, lit := range []string{strings.Repeat("1", MaxIntDigits+1) + "E0", strings.Repeat("1", MaxIntDigits+1) + "e0"} {
		b, err := Marshal(json.Number(lit), Canonical)
		if err != nil || string(b) != "Infinity" {
			t.Errorf("Marshal(json.Number(%.10q…%d digits E0)) = %.20q, %v; Python writes Infinity", lit, MaxIntDigits+1, b, err)
		}
		if err := Check(map[string]any{"n": json.Number(lit)}, "vars"); err != nil {
			t.Errorf("Check refuses a %d-digit literal with an exponent: %v", MaxIntDigits+1, err)
		}
	}
}

// A json.RawMessage that is not JSON is refused naming its path and
// saying why, with the decoder's own error.
func TestInvalidRawMessageIsRefusedSayingWhy(t *testing.T) {
	t.Parallel()
	_, err := Marshal(map[string]any{"raw": json.RawMessage(`{"a":`)}, Line)
	var pe *Error
	if !errors.As(err, &pe) || pe.Path != "raw" || !strings.Contains(pe.Reason, "invalid raw JSON") || !strings.Contains(pe.Reason, "unexpected end of input") {
		t.Errorf("Marshal of an invalid RawMessage = %v; want an error at raw saying invalid raw JSON and the decoder's reason", err)
	}
}

// OmitBase is embedded by pointer in omittedMembers.
type OmitBase struct{ Limit float64 }

// noFields has no field encoding/json writes: refused as a value.
type noFields struct{ _ int }

// omittedMembers holds, beside an empty map (which makes the encoder walk
// the struct to tell an empty object from a member with no JSON form),
// members encoding/json leaves out, each of which, walked, would be
// refused or would panic the walk: a nil embedded pointer, zero values under omitzero (a struct with
// no JSON form, a nil pointer to a type with an IsZero method), a "-" field.
type omittedMembers struct {
	*OmitBase
	Opaque noFields       `json:"opaque,omitzero"`
	When   *time.Time     `json:"when,omitzero"`
	Fn     func()         `json:"-"`
	Tags   map[string]int `json:"tags"`
}

// The member walk checks only the members encoding/json writes: a struct
// that encoding/json encodes is written as it writes it, however bad the
// members it leaves out.
func TestMembersEncodingJSONLeavesOutAreNotChecked(t *testing.T) {
	t.Parallel()
	v := omittedMembers{Fn: func() {}, Tags: map[string]int{}}
	std, err := json.Marshal(v)
	if err != nil || string(std) != `{"tags":{}}` {
		t.Fatalf("encoding/json = %s, %v; the test expects {\"tags\":{}}", std, err)
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("Marshal panicked: %v", r)
			}
		}()
		b, err := Marshal(map[string]any{"cfg": v}, Line)
		if err != nil || string(b) != `{"cfg": {"tags": {}}}` {
			t.Errorf("Marshal = %s, %v; want {\"cfg\": {\"tags\": {}}}, as encoding/json writes the struct", b, err)
		}
		if err := Check(map[string]any{"cfg": v}, "vars"); err != nil {
			t.Errorf("Check = %v; want nil", err)
		}
	}()
	// The same members, not left out, are still refused by their path.
	bad := omittedMembers{OmitBase: &OmitBase{Limit: math.NaN()}, Tags: map[string]int{}}
	if err := Check(map[string]any{"cfg": bad}, "vars"); err == nil || !strings.HasPrefix(err.Error(), "vars.cfg.Limit ") {
		t.Errorf("Check with a NaN behind the embedded pointer = %v; want an error at vars.cfg.Limit", err)
	}
}
