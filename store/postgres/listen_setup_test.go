package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store/postgres"
)

// silenceOnProxy forwards TCP connections to the test server and, from
// the first client message carrying marker on, swallows every byte of
// that connection both ways without closing anything: a network path
// that starts dropping packets silently at that moment.
type silenceOnProxy struct {
	ln     net.Listener
	target string
	marker []byte
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newSilenceOnProxy(t *testing.T, marker string) (*silenceOnProxy, string) {
	t.Helper()
	u, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &silenceOnProxy{ln: ln, target: u.Host, marker: []byte(marker)}
	u.Host = ln.Addr().String()
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p, u.String()
}

func (p *silenceOnProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		var silent atomic.Bool
		pipe := func(from, to net.Conn, watch bool) {
			defer p.wg.Done()
			buf := make([]byte, 64<<10)
			for {
				n, err := from.Read(buf)
				if n > 0 && watch && bytes.Contains(buf[:n], p.marker) {
					silent.Store(true)
				}
				if n > 0 && !silent.Load() {
					if _, werr := to.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}
		p.wg.Add(2)
		go pipe(c, s, true)
		go pipe(s, c, false)
	}
}

func (p *silenceOnProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// TestListenerNoticesSilenceBeforeItListens: a listener whose path goes
// silent after the TCP connect but before LISTEN is answered (when
// observe.Follow reconnects after a network failure) ends with an error
// within its setup bound, so Follow connects again, rather than blocking
// until TCP gives up (minutes).
func TestListenerNoticesSilenceBeforeItListens(t *testing.T) {
	testURL(t)
	t.Parallel()
	const heartbeat = 200 * time.Millisecond
	_, purl := newSilenceOnProxy(t, "LISTEN")
	s, err := postgres.New(t.Context(), postgres.Config{URL: purl, Schema: freshSchemaName(t), Logger: testLogger(t),
		MaxConns: 2, ListenHeartbeat: heartbeat})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
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
