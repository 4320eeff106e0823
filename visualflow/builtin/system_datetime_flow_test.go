package builtin_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Asia/Kolkata even on hosts without zoneinfo

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/visualflow"
)

// system_datetime reports the host-local time inside a run, as the
// reference's `datetime.now().astimezone()` does (spec §6.1), though a
// run's clock is UTC: on a host whose zone is Asia/Kolkata, timezone
// "IST", utc_offset_minutes 330 and an iso ending in "+05:30". The check
// runs in a child test process started with TZ=Asia/Kolkata, so the host
// zone is known without touching time.Local in this process.
func TestSystemDatetimeInFlowIsHostLocal(t *testing.T) {
	if os.Getenv("SYSTEM_DATETIME_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSystemDatetimeInFlowIsHostLocal$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "TZ=Asia/Kolkata", "SYSTEM_DATETIME_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child test (TZ=Asia/Kolkata) failed: %v\n%s", err, out)
		}
		if strings.Contains(string(out), "SKIP") {
			t.Skipf("child skipped:\n%s", out)
		}
		return
	}
	if _, off := time.Now().Zone(); off != 330*60 {
		t.Skipf("TZ=Asia/Kolkata not applied (offset %d)", off)
	}

	node := func(id, typ string, in, out []string) map[string]any {
		pins := func(list []string) []any {
			res := []any{}
			for _, p := range list {
				pid, pt, _ := strings.Cut(p, ":")
				res = append(res, map[string]any{"id": pid, "label": pid, "type": pt})
			}
			return res
		}
		return map[string]any{"id": id, "type": typ, "data": map[string]any{"inputs": pins(in), "outputs": pins(out)}}
	}
	edge := func(s, sh, d, dh string) map[string]any {
		return map[string]any{"source": s, "sourceHandle": sh, "target": d, "targetHandle": dh}
	}
	flow := map[string]any{
		"id": "sysdt", "entryNode": "start",
		"nodes": []any{
			node("start", "on_flow_start", nil, []string{"exec-out:execution"}),
			node("dt", "system_datetime", nil, []string{"iso:string", "timezone:string", "utc_offset_minutes:number", "locale:string"}),
			node("end", "on_flow_end", []string{"exec-in:execution", "iso:any", "tz:any", "off:any"}, nil),
		},
		"edges": []any{
			edge("start", "exec-out", "end", "exec-in"),
			edge("dt", "iso", "end", "iso"),
			edge("dt", "timezone", "end", "tz"),
			edge("dt", "utc_offset_minutes", "end", "off"),
		},
	}
	wf, err := visualflow.Compile(flow, visualflow.CompileOptions{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	reg, err := runtime.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Put(wf); err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, MaxSteps: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := st.Output
	iso, _ := out["iso"].(string)
	if out["tz"] != "IST" || !strings.HasSuffix(iso, "+05:30") || !numIs(out["off"], 330) {
		t.Fatalf("system_datetime in a flow on a TZ=Asia/Kolkata host = {iso: %v, timezone: %v, utc_offset_minutes: %v}; "+
			"the reference (datetime.now().astimezone()) gives timezone IST, offset 330, iso ending +05:30", out["iso"], out["tz"], out["off"])
	}
}

func numIs(v any, n int64) bool {
	switch x := v.(type) {
	case int64:
		return x == n
	case int:
		return int64(x) == n
	case float64:
		return x == float64(n)
	}
	return false
}
