package runtime_test

import (
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// ChildOutput: an ended child without an error of its own (a cancel with
// no reason) still tells its parent what became of it, "Subworkflow
// <status>"; an error it has is handed on as it is. Without the default a
// parent's output.error would be empty. A completed child's null output
// is a plain nil.
func TestChildOutputOfAnEndedChildWithoutErrorNamesItsStatus(t *testing.T) {
	for _, c := range []struct {
		child *durable.RunState
		want  any
	}{
		{&durable.RunState{Status: durable.RunCancelled},
			map[string]any{"success": false, "error": "Subworkflow cancelled", "status": "cancelled"}},
		{&durable.RunState{Status: durable.RunFailed, Error: "boom"},
			map[string]any{"success": false, "error": "boom", "status": "failed"}},
		{&durable.RunState{Status: durable.RunCompleted, Output: map[string]any{"v": 1.0}}, map[string]any{"v": 1.0}},
		{&durable.RunState{Status: durable.RunCompleted}, nil}, // null, not a nil map in an interface
	} {
		if got := runtime.ChildOutput(c.child); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ChildOutput of a %s child (error %q) = %v; want %v", c.child.Status, c.child.Error, got, c.want)
		}
	}
}
