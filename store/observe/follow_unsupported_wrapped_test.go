package observe_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// TestFollowOverADecoratorWithoutListenerReturnsAtOnce: a decorated store
// has ListenLedger (store.Wrapper's), which answers errors.ErrUnsupported
// when the store under it reports no appends. Follow returns that error
// at once, as over the bare store; treating it as a failed listening
// would retry it forever, pausing up to 30 s each time.
func TestFollowOverADecoratorWithoutListenerReturnsAtOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := observe.Wrap(store.Wrapper{Store: memory.New()}).Follow(ctx, observe.FollowConfig{})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Follow over a decorated store without a listener = %v, want errors.ErrUnsupported", err)
	}
}
