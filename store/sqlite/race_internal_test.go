//go:build race

package sqlite

// raceEnabled: the race detector makes SQLite's code (translated to Go)
// some thirty times slower; the tests that repeat a race many times
// repeat it less under it.
const raceEnabled = true
