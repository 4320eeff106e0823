//go:build sqlitecgo

package sqlite

import _ "github.com/mattn/go-sqlite3" // registers "sqlite3" (cgo)

func init() {
	benchDrivers = append(benchDrivers, benchDriver{name: "mattn", driver: "sqlite3"})
}
