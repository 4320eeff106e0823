package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Spec §4.6.5: a loop's iteration record is a copy of the bus when it is
// an object, else {"input": bus}, plus item/index/total. Here the node
// before the loop is an exec uppercase whose raw result "HI" is the bus,
// and the loop body is an unwired on_flow_end whose pins input and item
// are filled from the bus, the record (§4.3).
func TestLoopRecordWrapsScalarBusAsInput(t *testing.T) {
	up := rsNode("up", "uppercase", []string{"exec-in:exec", "text:string"}, []string{"exec-out:exec", "result:string"},
		map[string]any{"pinDefaults": map[string]any{"text": "hi"}})
	flow := rsFlow("loop_scalar_bus", "start", []map[string]any{
		rvStart(), up, rvLoop("L", []any{"x"}), rvEnd("end", []string{"input", "item"}, nil),
	}, "start.exec-out>up.exec-in", "up.exec-out>L.exec-in", "L.loop>end.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s), want completed", st.Status, st.Error)
	}
	if st.Output["input"] != "HI" || st.Output["item"] != "x" {
		t.Fatalf("output %s, want input=HI (the scalar bus under the record's input key) and item=x", jsonText(t, st.Output))
	}
}

// Spec §4.6.5 and the reference's loop handler: the record's index is the
// frame's idx as stored, even when a negative idx (a frame written by
// another runtime) picks items[len+idx]. Each iteration appends its index
// to the var indexes; the frame starts at idx -1 over three items, so the
// body sees -1 (item c), then 0, 1, 2.
func TestLoopRecordIndexIsFrameIndexWhenNegative(t *testing.T) {
	app := rsNode("app", "array_append", []string{"array:array", "item:any"}, []string{"result:array"}, nil)
	flow := rsFlow("loop_neg_index", "start", []map[string]any{
		rvStart(),
		rvLoop("L", []any{"a", "b", "c"}),
		setVarNode("sv", "indexes", nil),
		getVarNode("gv", "indexes"),
		app,
		rvEnd("end", []string{"indexes"}, nil),
		getVarNode("gv2", "indexes"),
	}, "start.exec-out>L.exec-in", "L.loop>sv.exec-in", "gv.value>app.array", "L.index>app.item", "app.result>sv.value",
		"L.done>end.exec-in", "gv2.value>end.indexes")
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := tickFromNegativeLoopFrame(t, wf, map[string]any{"indexes": []any{}})
	if got, want := jsonText(t, st.Output["indexes"]), jsonText(t, []any{int64(-1), int64(0), int64(1), int64(2)}); got != want {
		t.Fatalf("indexes %s, want %s (the frame's idx, not the position it picks)", got, want)
	}
}
