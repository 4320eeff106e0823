//go:build !race

package frozen

const raceEnabled = false
