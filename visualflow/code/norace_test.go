//go:build !race

package code

const raceEnabled = false
