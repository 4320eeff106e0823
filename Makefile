# Commands mirror the README. `make help` lists them.
GO ?= go

.PHONY: help example test test/race test/postgres test/stress fuzz lint bench verify

help: ## list the targets
	@grep -E '^[a-z/]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

example: ## run the example workflow on the embedded SQLite store
	$(GO) run ./cmd/abstractgateway example

test: ## run every test
	$(GO) test -count=1 ./...

test/race: ## run every test under the race detector
	$(GO) test -race -count=1 ./...

test/postgres: ## run the PostgreSQL store tests against a local throw-away server
	eval "$$(bash .ci/postgres.sh | tail -1)" && $(GO) test -count=1 ./store/postgres/

# STRESS_COUNT repetitions of the concurrent end-to-end scenarios (random
# interleavings, a new seed each) under the race detector; with
# TEST_POSTGRES_URL set, on PostgreSQL too. A failure prints its seed and
# the ledgers involved.
STRESS_COUNT ?= 50
test/stress: ## the concurrent scenarios STRESS_COUNT times under -race
	$(GO) test -race -count=$(STRESS_COUNT) -run '/Concurrent' ./store/e2etest/ ./store/postgres/

# Every fuzz target (the readers of stored files, bundles, wire JSON, the
# code node, effect payloads…) for FUZZTIME each, one after another; `go
# test` alone runs only their seeds. A failure leaves its input under the
# package's testdata/fuzz/ and stops. Go 1.26's fuzz coordinator can end a
# clean run with a bare "context deadline exceeded" as the time runs out
# (golang/go#75804, fixed in Go 1.27): that, with no input written, is
# reported and passed over.
FUZZTIME ?= 1m
fuzz: ## every fuzz target for FUZZTIME each
	@log=$$(mktemp); rcf=$$(mktemp); trap 'rm -f $$log $$rcf' EXIT; \
	for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for name in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go | sed 's/^func //'); do \
			echo "== $$dir $$name"; \
			before=$$(ls $$dir/testdata/fuzz/$$name 2>/dev/null | wc -l); \
			{ $(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$dir; echo $$? > $$rcf; } 2>&1 | tee $$log; \
			[ "$$(cat $$rcf)" = 0 ] && continue; \
			after=$$(ls $$dir/testdata/fuzz/$$name 2>/dev/null | wc -l); \
			if [ "$$after" = "$$before" ] && grep -qx '    context deadline exceeded' $$log && \
				[ "$$(grep -c -- '--- FAIL' $$log)" = 1 ]; then \
				echo "note: $$name ended with Go's fuzz deadline race (golang/go#75804), no input written: not a finding"; \
			else exit 1; fi; \
		done; \
	done

# The one pin of staticcheck; .ci/run reads it from here.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint: ## gofmt, go vet and staticcheck (staticcheck.conf)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

bench: ## the W1–W4 workloads on the memory, JSON and SQLite (NORMAL, FULL) stores, one JSON line each
	$(GO) run ./cmd/abstractgateway bench

verify: lint test test/race ## most of what CI runs (CI adds PostgreSQL, every benchmark once, the CLI smoke)
