package sqlite

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
)

// A refused renewal is an ErrConflict, and not a store.ClaimHeldError
// naming nobody: a ClaimHeldError names the owner holding the run, and a
// renewal of a claim nobody holds any more has none.
func TestRunClaimRefusedRenewalNamesNoFalseHolder(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for name, cfg := range map[string]Config{"owned": {}, "shared": {Shared: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := openStore(t, cfg)
			now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
			claim := func(p store.RunClaimParams) error {
				p.RunID, p.TTL, p.Now = "run-1", 10*time.Second, now
				return s.RunClaim(ctx, &p)
			}
			var held *store.ClaimHeldError
			err := claim(store.RunClaimParams{Owner: "a", Renew: true})
			if !errors.Is(err, store.ErrConflict) || errors.As(err, &held) {
				t.Errorf("renewal of a claim nobody holds: err = %v, want an ErrConflict that is no ClaimHeldError", err)
			}
			if err := claim(store.RunClaimParams{Owner: "b"}); err != nil {
				t.Fatal(err)
			}
			err = claim(store.RunClaimParams{Owner: "a", Renew: true})
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("renewal by a of b's claim: err = %v, want ErrConflict", err)
			}
			if errors.As(err, &held) && held.Owner != "b" {
				t.Errorf("renewal by a of b's claim: ClaimHeldError names %q, want b", held.Owner)
			}
		})
	}
}
