package history

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// The ledger window: zero LedgerMaxItems is the 2000-record default,
// negative keeps all, and "full" keeps all whatever LedgerMaxItems says
// (a full mode falling back to the default, or a zero limit read as
// "all", would export a different window).
func TestTailSizeResolvesModeAndWindow(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want int
	}{
		{Options{}, DefaultLedgerMaxItems},
		{Options{LedgerMode: " Tail "}, DefaultLedgerMaxItems},
		{Options{LedgerMaxItems: 7}, 7},
		{Options{LedgerMaxItems: -1}, 0},
		{Options{LedgerMode: LedgerFull}, 0},
		{Options{LedgerMode: " FULL ", LedgerMaxItems: 7}, 0},
	} {
		if got, err := tailSize(tc.opts); err != nil || got != tc.want {
			t.Errorf("tailSize(%+v) = %d, %v; want %d", tc.opts, got, err, tc.want)
		}
	}
	if _, err := tailSize(Options{LedgerMode: "head"}); err == nil {
		t.Error(`tailSize(mode "head") succeeded, want an unknown-mode error`)
	}
}

// An artifact summary keeps a list of exactly 40 items and an object of
// exactly 80 keys whole: the truncation markers are only for more (an
// off-by-one would mark a list that lost nothing).
func TestBoundedKeepsExactlyMaxItemsAndKeys(t *testing.T) {
	items := make([]any, boundMaxItems)
	for i := range items {
		items[i] = int64(i)
	}
	if got := bounded(items, 0).([]any); len(got) != boundMaxItems {
		t.Errorf("list of %d items bounded to %d entries %v, want it whole", boundMaxItems, len(got), got[len(got)-1])
	}
	obj := map[string]any{}
	for i := range boundMaxKeys {
		obj[string(rune('a'+i/26))+string(rune('a'+i%26))] = true
	}
	got := bounded(obj, 0).(map[string]any)
	if _, marked := got["truncated_keys"]; marked || len(got) != boundMaxKeys {
		t.Errorf("object of %d keys bounded to %d keys (truncated_keys %v), want it whole", boundMaxKeys, len(got), got["truncated_keys"])
	}
}

// An ANSWER_USER message that is a boolean is answered as Python's str()
// writes it ("True"), as _pick_textish does; dropping booleans would lose
// the answer.
func TestAnswerFromLedgerWritesBooleanMessageAsPython(t *testing.T) {
	rec := &durable.StepRecord{Status: durable.StepCompleted,
		Effect: &durable.Effect{Type: durable.EffectAnswerUser, Payload: map[string]any{"message": true}},
		Result: map[string]any{}}
	if text, _ := answerFromLedger([]*durable.StepRecord{rec}); text != "True" {
		t.Fatalf("answer %q, want %q", text, "True")
	}
}
