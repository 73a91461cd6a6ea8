// Command binky-adapter-mongodb is Binky's MongoDB adapter: a slice is a
// database. Binky runs it; see docs/adapters.md.
package main

import (
	mongoadapter "github.com/binkyhq/binky/plugins/mongodb"
	"github.com/binkyhq/binky/sdk"
)

func main() { sdk.Run(mongoadapter.New()) }
