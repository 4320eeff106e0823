package code

import (
	"reflect"
	"testing"
)

// zip's size check counts the rows of its shortest argument, as zip
// makes: zip(range(1 << 40), [7]) is one row, as in Python, and is not
// refused at the memory limit.
func TestZipSizedByItsShortestArgument(t *testing.T) {
	got := evalOK(t, `[list(zip(range(1 << 40), [7])), list(zip([7, 8], range(1 << 40)))]`, map[string]any{})
	want := []any{[]any{[]any{int64(0), int64(7)}}, []any{[]any{int64(7), int64(0)}, []any{int64(8), int64(1)}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v (Python)", got, want)
	}
}
