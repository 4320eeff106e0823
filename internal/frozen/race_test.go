//go:build race

package frozen

// raceEnabled: the race detector makes sync.Pool drop values at random,
// so allocation counts are not the product's.
const raceEnabled = true
