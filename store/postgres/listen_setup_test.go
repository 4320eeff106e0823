package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store/postgres"
)

// TestListenerNoticesSilenceBeforeItListens: a listener whose path goes
// silent after the TCP connect but before LISTEN is answered (when
// observe.Follow reconnects after a network failure) ends with an error
// within its setup bound, so Follow connects again, rather than blocking
// until TCP gives up (minutes).
func TestListenerNoticesSilenceBeforeItListens(t *testing.T) {
	testURL(t)
	t.Parallel()
	const heartbeat = 200 * time.Millisecond
	s, proxy := proxiedStore(t, freshSchemaName(t), postgres.Config{MaxConns: 2, ListenHeartbeat: heartbeat})
	proxy.silenceOn("LISTEN")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	listened := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		listened <- s.ListenLedger(ctx, func() { close(ready) }, func(string, bool) {})
	}()
	select {
	case err := <-listened:
		if err == nil || errors.Is(err, context.Canceled) {
			t.Fatalf("ListenLedger over a connection gone silent at LISTEN = %v; want an error", err)
		}
	case <-ready:
		t.Fatal("ListenLedger called ready although its LISTEN was never answered")
	case <-time.After(30 * time.Second):
		cancel()
		err := <-listened
		t.Fatalf("ListenLedger still blocked 30 s after its connection went silent during LISTEN "+
			"(returned %v only once its context was cancelled)", err)
	}
}
