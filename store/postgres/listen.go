package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// ledgerChannel is the NOTIFY channel of ledger appends and deletes,
// shared by every schema on the database; a payload names its schema.
const ledgerChannel = "abstractgateway_ledger"

// notifySQL notifies an append; the server delivers it when the
// transaction commits, and not at all when it rolls back.
const notifySQL = `SELECT pg_notify($1, $2)`

// payloadSep separates the fields of a notification's payload (schema,
// origin, run id: the run id last, as it may hold any character).
const payloadSep = "\x1f"

// deletedMark follows the origin in the payload of a ledger delete's
// notification (origins are hex). A listener that predates it finds an
// origin that is not its own and wakes the run's followers, as for an
// append.
const deletedMark = "+deleted"

// newOrigin returns a random id for a Store value, which its listener
// uses to skip the appends and deletes the Store made itself (in-process
// followers hear of those from the store decorator that wraps it).
func newOrigin() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// maxNotifyPayload keeps a payload under the server's limit (8000 bytes),
// past which pg_notify fails, and the write with it.
const maxNotifyPayload = 7900

// appendPayload is the payload of an append's notification; a run id too
// long for one is left out, which wakes every follower of the schema.
func (s *Store) appendPayload(runID string) string { return s.notifyPayload(runID, "") }

// deletePayload is the payload of a ledger delete's notification. A run
// id too long for one is left out, the mark kept: every follower then
// learns that any ledger it follows may have been deleted and reads each
// from seq 1, as after listening again (observe.Event). Records read
// twice are the price; a plain wake would have followers read a ledger
// deleted and grown again from its middle.
func (s *Store) deletePayload(runID string) string { return s.notifyPayload(runID, deletedMark) }

// notifyPayload is schema, origin and mark, and the run id, or schema,
// origin and mark alone when the run id does not fit.
func (s *Store) notifyPayload(runID, mark string) string {
	head := s.schema + payloadSep + s.origin + mark
	if id := keyText(runID); len(head)+len(payloadSep)+len(id) <= maxNotifyPayload {
		return head + payloadSep + id
	}
	return head
}

// ListenLedger implements store.LedgerListener with LISTEN on a
// connection of its own (not the pool's): it calls wake with the run id
// of each append or ledger delete (deleted set) another Store value made
// to this schema, from this process or another machine, once it
// committed; the writers must have Config.NotifyAppends set. It calls
// ready once it listens, and returns when ctx ends (ctx's error) or the
// connection fails or stops answering (Config.ListenHeartbeat); changes
// made while it does not listen are not reported, so a follower reads
// from its cursor once ready is called. The server keeps no record of
// deletes to ask on reconnecting: a caller listening again after a failure
// treats every ledger as possibly deleted (see store.LedgerListener).
func (s *Store) ListenLedger(ctx context.Context, ready func(), wake func(runID string, deleted bool)) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	// pgx's default: an ended context ends the connection's I/O at once. The
	// pool's handler asks the server to cancel the statement and waits
	// for its answer, which an idle LISTEN never gets (nothing to cancel),
	// so every stop would wait cancelAnswerWait; nothing is written here.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	// Connecting and LISTEN are bounded as the wait for notifications is
	// (two heartbeats, at least listenSetupFloor: a loaded server may be
	// slow to accept): a path that goes silent while Follow reconnects
	// would otherwise hold the listener until TCP gives up (minutes).
	setupBound := max(2*s.heartbeat, listenSetupFloor)
	setup, cancelSetup := context.WithTimeout(ctx, setupBound)
	defer cancelSetup()
	conn, err := pgx.ConnectConfig(setup, cfg)
	if err != nil {
		return fmt.Errorf("postgres: connecting to listen for ledger appends: %w", err)
	}
	defer func() {
		// A bounded close: the server may be the reason listening ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(setup, "LISTEN "+pgx.Identifier{ledgerChannel}.Sanitize()); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("postgres: listening for ledger appends (within %s): %w", setupBound, err)
	}
	cancelSetup()
	if ready != nil {
		ready()
	}
	for {
		n, err := s.nextNotification(ctx, conn)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		schema, rest, ok := strings.Cut(n.Payload, payloadSep)
		if !ok || schema != s.schema {
			continue
		}
		origin, runID, hasRun := strings.Cut(rest, payloadSep)
		origin, deleted := strings.CutSuffix(origin, deletedMark)
		if origin == s.origin {
			continue
		}
		if !hasRun {
			// A run id too long for a payload: every follower reads (from
			// seq 1 after a delete).
			wake("", deleted)
			continue
		}
		id := keyTextOf(runID)
		wake(id, deleted)
		if strings.ContainsRune(id, utf8.RuneError) {
			// keyText spells every byte that is not UTF-8 as U+FFFD (a
			// payload is text): the writer's run id may have held such
			// bytes, which a follower of the run may use too, and it
			// shares this ledger. Every follower reads from its cursor.
			wake("", false)
		}
	}
}

// listenSetupFloor is the least time a listener's connect and LISTEN get.
const listenSetupFloor = 5 * time.Second

// nextNotification waits for the listening connection's next
// notification, pinging the server each time the connection has been
// silent for the heartbeat: a ping unanswered within the heartbeat is an
// error. A wait cut short by its own timeout leaves the connection usable
// (pgx closes it only on other read errors, and keeps a message read in
// part for the next read).
func (s *Store) nextNotification(ctx context.Context, conn *pgx.Conn) (*pgconn.Notification, error) {
	for {
		wctx, cancel := context.WithTimeout(ctx, s.heartbeat)
		n, err := conn.WaitForNotification(wctx)
		silent := wctx.Err() == context.DeadlineExceeded
		cancel()
		if err == nil {
			return n, nil
		}
		if ctx.Err() != nil || !silent {
			return nil, fmt.Errorf("postgres: waiting for ledger appends: %w", err)
		}
		pctx, cancel := context.WithTimeout(ctx, s.heartbeat)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("postgres: the listening connection did not answer a ping within %s: %w", s.heartbeat, err)
		}
	}
}
