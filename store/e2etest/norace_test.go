//go:build !race

package e2etest_test

const raceEnabled = false
