//go:build race

package code

// raceEnabled: the race detector slows the code's loops and delays the
// memory watchdog's turns, so bounds that measure how soon the watchdog
// stops a loop do not hold under it (the limit error itself does).
const raceEnabled = true
