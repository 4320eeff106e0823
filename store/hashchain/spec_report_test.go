package hashchain_test

import (
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/store/hashchain"
)

// TestSpecReportJSONShape pins spec §4.6: verify_ledger_chain returns
// {"ok", "count", "errors", "first_bad_index", "head_hash",
// "computed_head_hash"}, a record_hash_mismatch error is {"index", "type",
// "stored", "computed"} and a missing_record_hash error is {"index", "type"}.
func TestSpecReportJSONShape(t *testing.T) {
	t.Parallel()
	stored := chainOf3(t)
	head := stored[2].RecordHash

	b, err := json.Marshal(hashchain.VerifyLedgerChain(stored))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ok":true,"count":3,"errors":[],"first_bad_index":null,"head_hash":"` + head +
		`","computed_head_hash":"` + head + `"}`
	if string(b) != want {
		t.Errorf("report of a valid chain:\n got %s\nwant %s", b, want)
	}

	stored[1].Result = map[string]any{"b": json.Number("42")}
	rep := hashchain.VerifyLedgerChain(stored)
	if len(rep.Errors) != 1 {
		t.Fatalf("errors %v; want one record_hash_mismatch", errorTypes(rep))
	}
	b, err = json.Marshal(rep.Errors[0])
	if err != nil {
		t.Fatal(err)
	}
	want = `{"index":1,"type":"record_hash_mismatch","stored":"` + stored[1].RecordHash +
		`","computed":"` + rep.Errors[0].Computed + `"}`
	if string(b) != want || rep.Errors[0].Computed == "" || rep.Errors[0].Computed == stored[1].RecordHash {
		t.Errorf("record_hash_mismatch error:\n got %s\nwant %s", b, want)
	}

	stored = chainOf3(t)
	stored[0].RecordHash = ""
	rep = hashchain.VerifyLedgerChain(stored)
	b, err = json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		OK            bool              `json:"ok"`
		Count         int               `json:"count"`
		Errors        []json.RawMessage `json:"errors"`
		FirstBadIndex *int              `json:"first_bad_index"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.OK || got.Count != 3 || got.FirstBadIndex == nil || *got.FirstBadIndex != 0 ||
		len(got.Errors) != 1 || string(got.Errors[0]) != `{"index":0,"type":"missing_record_hash"}` {
		t.Errorf("report of a chain missing its first hash: %s", b)
	}
}
