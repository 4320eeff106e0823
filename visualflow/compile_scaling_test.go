package visualflow

// Hostile but valid flows that pass every read limit of package bundle
// (64 MiB per file, 256 MiB per bundle) must compile in time and memory
// proportional to their size: a bundle directory is compiled whole at load
// (spec §8.1, `bundle validate DIR`). The tests measure work or memory,
// not wall-clock time; the benchmarks show the time.

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// scalingFlow assembles a flow document from node and edge JSON texts and
// returns it with the length of its text.
func scalingFlow(t testing.TB, nodes, edges []string) (map[string]any, int) {
	t.Helper()
	src := `{"id":"big","entryNode":"s","nodes":[` + strings.Join(nodes, ",") + `],"edges":[` + strings.Join(edges, ",") + `]}`
	return mustFlow(t, src), len(src)
}

const scalingStart = `{"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}}`

// listenersBundle is a bundle whose one flow has n on_event nodes (so n
// listener workflows).
func listenersBundle(t testing.TB, n int) (*bundle.Bundle, int) {
	t.Helper()
	nodes := []string{scalingStart}
	for i := range n {
		nodes = append(nodes, fmt.Sprintf(`{"id":"e%d","type":"on_event","data":{"outputs":[{"id":"exec-out","type":"execution"}],"eventConfig":{"name":"x"}}}`, i))
	}
	flow, size := scalingFlow(t, nodes, nil)
	return &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "bb", BundleVersion: "2",
			Entrypoints: []bundle.Entrypoint{{FlowID: "p"}}, Flows: map[string]string{"p": "flows/p.json"}},
		Flows: map[string]map[string]any{"p": flow},
	}, size
}

// multiEntryFlow has n targets with two incoming exec edges each (so n
// join_exec nodes are inserted by lowering).
func multiEntryFlow(t testing.TB, n int) map[string]any {
	t.Helper()
	nodes := []string{scalingStart}
	var edges []string
	for i := range n {
		nodes = append(nodes,
			fmt.Sprintf(`{"id":"a%d","type":"sequence","data":{"inputs":[{"id":"exec-in","type":"execution"}],"outputs":[{"id":"then:0","type":"execution"},{"id":"then:1","type":"execution"}]}}`, i),
			fmt.Sprintf(`{"id":"t%d","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}}`, i))
		edges = append(edges,
			fmt.Sprintf(`{"source":"a%d","sourceHandle":"then:0","target":"t%d","targetHandle":"exec-in"}`, i, i),
			fmt.Sprintf(`{"source":"a%d","sourceHandle":"then:1","target":"t%d","targetHandle":"exec-in"}`, i, i))
	}
	flow, _ := scalingFlow(t, nodes, edges)
	return flow
}

// manyPinsFlow has one concat node declaring n input pins, each wired.
func manyPinsFlow(t testing.TB, n int) map[string]any {
	t.Helper()
	nodes := []string{scalingStart,
		`{"id":"l","type":"literal_string","data":{"literalValue":"x","outputs":[{"id":"value","type":"string"}]}}`}
	pins := make([]string, 0, n)
	edges := make([]string, 0, n)
	for i := range n {
		pins = append(pins, fmt.Sprintf(`{"id":"p%d","type":"string"}`, i))
		edges = append(edges, fmt.Sprintf(`{"source":"l","sourceHandle":"value","target":"c","targetHandle":"p%d"}`, i))
	}
	nodes = append(nodes, `{"id":"c","type":"concat","data":{"inputs":[`+strings.Join(pins, ",")+`],"outputs":[{"id":"result","type":"string"}]}}`)
	flow, _ := scalingFlow(t, nodes, edges)
	return flow
}

// Listener workflows (one per on_event node, §5.7) share the flow's
// compiled nodes: each used to compile the whole flow again and keep its
// own copy of every node, so memory grew with the square of the flow size
// (400 on_event nodes, a 45 KB flow, held 255 MiB; 1,000 held 1.6 GiB).
// Now the compiled bundle holds a few MiB; the bound is generous.
func TestCompileBundleListenersDoNotMultiplyTheFlow(t *testing.T) {
	const n = 400
	b, size := listenersBundle(t, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cb, err := CompileBundle(b, BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(cb)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("the compiled bundle holds %d KB", held>>10)
	if len(cb.Workflows) != n+1 {
		t.Fatalf("compiled %d workflows, want the flow and %d listeners", len(cb.Workflows), n)
	}
	const limit = 64 << 20
	if held > limit {
		t.Fatalf("a %d KB flow with %d on_event nodes: the compiled bundle holds %d MiB; want under %d MiB "+
			"(each listener workflow keeps a compilation of the whole flow)", size>>10, n, held>>20, limit>>20)
	}
}

// lowerBytes returns the bytes allocated by lowering a parsed flow (the
// least of three tries, to shed noise).
func lowerBytes(t *testing.T, flow map[string]any) uint64 {
	t.Helper()
	return leastAllocated(t, 3, func() func() (any, error) {
		d := parseDocument(flow) // not measured: only the lowering is
		c := &compiler{flowID: d.ID, joinRoutes: map[string][]route{}}
		return func() (any, error) { return d, c.lower(d) }
	})
}

// leastAllocated returns the fewest bytes a run allocated over tries runs
// (the least, to shed noise), each run made by prepare, unmeasured; what a
// run returns is kept alive until measured.
func leastAllocated(t *testing.T, tries int, prepare func() func() (any, error)) uint64 {
	t.Helper()
	least := uint64(0)
	for try := range tries {
		f := prepare()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		v, err := f()
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(v)
		if used := after.TotalAlloc - before.TotalAlloc; try == 0 || used < least {
			least = used
		}
	}
	return least
}

// Lowering rewires every multi-entry target; it used to copy the whole
// edge list once per target (and rescan it per overridden pin), so work
// and garbage grew with targets x edges (3,000 targets, a 1.2 MB flow,
// took 11 s). Quadrupling the targets must now about quadruple the bytes
// lowering allocates, not multiply them by sixteen.
func TestCompileManyMultiEntryTargetsTakesLinearTime(t *testing.T) {
	const n = 500
	small, large := multiEntryFlow(t, n), multiEntryFlow(t, 4*n)
	if _, err := Compile(large, CompileOptions{}); err != nil {
		t.Fatal(err)
	}
	bs, bl := lowerBytes(t, small), lowerBytes(t, large)
	t.Logf("lowering allocated %d KB for %d targets, %d KB for %d", bs>>10, n, bl>>10, 4*n)
	if bl > 8*bs {
		t.Fatalf("lowering %d multi-entry targets allocated %d KB, %d targets %d KB (x%.1f); want about x4 "+
			"(the edge list is rebuilt once per target)", n, bs>>10, 4*n, bl>>10, float64(bl)/float64(bs))
	}
}

// Edge validation used to find each edge's pins by scanning the node's
// declared pins, so a node with many wired pins took pins x edges (40,000
// pins, a 4 MB flow, took 5.5 s). Each declared pin is now indexed once.
func TestCompileManyPinsOnOneNodeTakesLinearTime(t *testing.T) {
	const n = 5000
	flow := manyPinsFlow(t, n)
	g, err := compileGraph(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.program(CompileOptions{}); err != nil {
		t.Fatal(err)
	}
	declared := 0
	for _, nd := range g.order {
		declared += len(nd.Inputs) + len(nd.Outputs)
	}
	if g.c.pinsIndexed > declared {
		t.Fatalf("validating %d edges into a node with %d pins looked at %d pins; want at most the %d declared "+
			"(each edge scans every declared pin)", n, n, g.c.pinsIndexed, declared)
	}
}

func BenchmarkCompileBundle400Listeners(b *testing.B) {
	bd, _ := listenersBundle(b, 400)
	for b.Loop() {
		if _, err := CompileBundle(bd, BundleOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompile3000MultiEntryTargets(b *testing.B) {
	flow := multiEntryFlow(b, 3000)
	for b.Loop() {
		if _, err := Compile(flow, CompileOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompile40000PinsOnOneNode(b *testing.B) {
	flow := manyPinsFlow(b, 40000)
	for b.Loop() {
		if _, err := Compile(flow, CompileOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A node reached from the flow's entry and from a listener is wired once
// in the shared graph: wiring it again would repeat its branches. An
// error in a node only a listener reaches still fails the bundle.
func TestListenersShareWiredNodes(t *testing.T) {
	t.Parallel()
	src := `{"id":"p","nodes":[` + scalingStart + `,
	 {"id":"ev","type":"on_event","data":{"outputs":[{"id":"exec-out","type":"execution"}],"eventConfig":{"name":"x"}}},
	 {"id":"seq","type":"sequence","data":{"inputs":[{"id":"exec-in","type":"execution"}],"outputs":[{"id":"then:0","type":"execution"},{"id":"then:1","type":"execution"}]}},
	 {"id":"a","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}},
	 {"id":"b","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}}%s],
	 "edges":[{"source":"s","sourceHandle":"exec-out","target":"seq","targetHandle":"exec-in"},
	 {"source":"ev","sourceHandle":"exec-out","target":"seq","targetHandle":"exec-in"},
	 {"source":"seq","sourceHandle":"then:0","target":"a","targetHandle":"exec-in"},
	 {"source":"seq","sourceHandle":"then:1","target":"b","targetHandle":"exec-in"}%s]}`
	mk := func(flow map[string]any) *bundle.Bundle {
		return &bundle.Bundle{
			Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "bb", BundleVersion: "2",
				Entrypoints: []bundle.Entrypoint{{FlowID: "p"}}, Flows: map[string]string{"p": "flows/p.json"}},
			Flows: map[string]map[string]any{"p": flow},
		}
	}
	g, err := compileGraph(mustFlow(t, fmt.Sprintf(src, "", "")), CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range []string{"", "ev"} {
		if _, err := g.program(CompileOptions{EntryNode: entry}); err != nil {
			t.Fatal(err)
		}
	}
	if thens := g.nodes["seq"].thens; len(thens) != 2 {
		t.Fatalf("sequence reached from two entries has branches %v, want then:0 and then:1 once", thens)
	}
	cb, err := CompileBundle(mk(mustFlow(t, fmt.Sprintf(src, "", ""))), BundleOptions{})
	if err != nil || len(cb.Workflows) != 2 {
		t.Fatalf("CompileBundle = %v, %v; want the flow and one listener", cb, err)
	}
	// A second on_event node, only a listener's entry, with two edges out
	// of one exec output.
	bad := mustFlow(t, fmt.Sprintf(src,
		`,{"id":"ev2","type":"on_event","data":{"outputs":[{"id":"exec-out","type":"execution"}],"eventConfig":{"name":"y"}}}`,
		`,{"source":"ev2","sourceHandle":"exec-out","target":"a","targetHandle":"exec-in"},{"source":"ev2","sourceHandle":"exec-out","target":"b","targetHandle":"exec-in"}`))
	_, err = CompileBundle(mk(bad), BundleOptions{})
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Node != "ev2" {
		t.Fatalf("CompileBundle error = %v; want one naming node ev2", err)
	}
}

// An edge to an undeclared pin lists the node's pins, but not all of them:
// a node with many pins and as many bad edges would otherwise build
// errors of pins x edges bytes.
func TestUndeclaredPinErrorListsFewPins(t *testing.T) {
	t.Parallel()
	flow := manyPinsFlow(t, 100)
	flow["edges"] = append(flow["edges"].([]any), map[string]any{"source": "l", "sourceHandle": "value", "target": "c", "targetHandle": "nope"})
	_, err := Compile(flow, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "(inputs: p0, p1,") || !strings.Contains(err.Error(), "p31, … 68 more)") {
		t.Fatalf("error = %v; want the first %d input pins listed and the rest counted", err, maxListedPins)
	}
}

// listenerSubflowsBundle is a bundle whose flow p has n on_event nodes,
// each starting its own (tiny) child flow through a subflow node.
func listenerSubflowsBundle(t testing.TB, n int) *bundle.Bundle {
	t.Helper()
	nodes := []string{scalingStart}
	var edges []string
	flows := map[string]string{"p": "flows/p.json"}
	bfl := map[string]map[string]any{}
	for i := range n {
		nodes = append(nodes,
			fmt.Sprintf(`{"id":"e%d","type":"on_event","data":{"outputs":[{"id":"exec-out","type":"execution"}],"eventConfig":{"name":"x"}}}`, i),
			fmt.Sprintf(`{"id":"s%d","type":"subflow","data":{"subflowId":"c%d","inputs":[{"id":"exec-in","type":"execution"}]}}`, i, i))
		edges = append(edges, fmt.Sprintf(`{"source":"e%d","sourceHandle":"exec-out","target":"s%d","targetHandle":"exec-in"}`, i, i))
		c := fmt.Sprintf("c%d", i)
		flows[c] = "flows/" + c + ".json"
		bfl[c] = mustFlow(t, `{"id":"`+c+`","nodes":[`+scalingStart+`],"edges":[]}`)
	}
	bfl["p"], _ = scalingFlow(t, nodes, edges)
	return &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "bb", BundleVersion: "2",
			Entrypoints: []bundle.Entrypoint{{FlowID: "p"}}, Flows: flows},
		Flows: bfl,
	}
}

// compileBundleBytes returns the bytes CompileBundle allocates for b (the
// least of two tries, to shed noise).
func compileBundleBytes(t *testing.T, b *bundle.Bundle) uint64 {
	t.Helper()
	return leastAllocated(t, 2, func() func() (any, error) {
		return func() (any, error) { return CompileBundle(b, BundleOptions{}) }
	})
}

// Summarising a flow's listener workflows (FlowInfo.absorb) looks at each
// node once over all listeners, and keeps one set of the subflows listed:
// rebuilt per listener, a flow whose n on_event nodes each start their own
// subflow took n x n work (16,000 such listeners, a 5 MB flow, 10.7 s).
// Quadrupling the listeners must about quadruple the bytes CompileBundle
// allocates, not multiply them by sixteen.
func TestCompileBundleListenersWithSubflowsTakesLinearTime(t *testing.T) {
	const n = 500
	small, large := listenerSubflowsBundle(t, n), listenerSubflowsBundle(t, 4*n)
	bs, bl := compileBundleBytes(t, small), compileBundleBytes(t, large)
	t.Logf("CompileBundle allocated %d KB for %d listeners with subflows, %d KB for %d", bs>>10, n, bl>>10, 4*n)
	if bl > 8*bs {
		t.Fatalf("compiling %d listeners that each start a subflow allocated %d KB, %d listeners %d KB (x%.1f); want about x4 "+
			"(FlowInfo.addExec rebuilds the set of listed subflows once per listener)", n, bs>>10, 4*n, bl>>10, float64(bl)/float64(bs))
	}
}
