//go:build race

package e2etest_test

// raceEnabled: the race detector slows the randomized tests down several
// times; they run fewer seeds under it.
const raceEnabled = true
