package runtime

// New's validation and defaults (runtime.go): the field it refuses to go
// without and the values a zero Config field stands for.

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store/memory"
)

// A Config without a Store is refused with an error naming the field; a
// runtime made anyway would fail at its first read or write.
func TestNewWithoutAStoreIsRefusedNamingTheField(t *testing.T) {
	rt, err := New(Config{})
	if err == nil {
		t.Fatalf("New without a store: %v, want an error", rt)
	}
	if !strings.Contains(err.Error(), "Config.Store") {
		t.Errorf("error %q does not name Config.Store", err)
	}
}

// Zero Config fields stand for their defaults: 100 steps a call (spec §3
// max_steps=100), an empty registry, the retry policy, the wall clock and
// random ids; a Config.MaxSteps given is kept.
func TestNewFillsZeroConfigFieldsWithDefaults(t *testing.T) {
	rt, err := New(Config{Store: memory.New()})
	if err != nil {
		t.Fatal(err)
	}
	if rt.maxSteps != 100 {
		t.Errorf("maxSteps %d, want the default 100", rt.maxSteps)
	}
	if rt.Registry() == nil || rt.policy == nil || rt.clock == nil || rt.newID == nil || rt.logger == nil || rt.sleep == nil {
		t.Errorf("a zero Config field left nil: registry %v policy %v clock %v newID %v logger %v sleep %v",
			rt.Registry() != nil, rt.policy != nil, rt.clock != nil, rt.newID != nil, rt.logger != nil, rt.sleep != nil)
	}
	if !rt.randomIDs || rt.customClock {
		t.Errorf("randomIDs %v customClock %v, want true, false without NewID and Clock", rt.randomIDs, rt.customClock)
	}
	rt, err = New(Config{Store: memory.New(), MaxSteps: 7, NewID: func() string { return "x" }})
	if err != nil {
		t.Fatal(err)
	}
	if rt.maxSteps != 7 || rt.randomIDs {
		t.Errorf("maxSteps %d randomIDs %v, want 7 and false with a NewID", rt.maxSteps, rt.randomIDs)
	}
}
