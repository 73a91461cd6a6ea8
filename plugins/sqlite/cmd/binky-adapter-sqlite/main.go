// Command binky-adapter-sqlite is Binky's embedded SQLite adapter: a slice
// is a database file. Binky runs it; see docs/writing-an-adapter.md.
package main

import (
	sqliteadapter "github.com/binkyhq/binky/plugins/sqlite"
	"github.com/binkyhq/binky/sdk"
)

func main() { sdk.Run(sqliteadapter.New()) }
