package memory_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		s := memory.New()
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store {
		s := memory.New()
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}
