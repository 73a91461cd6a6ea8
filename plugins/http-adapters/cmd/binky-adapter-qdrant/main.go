// Command binky-adapter-qdrant is Binky's Qdrant adapter: a slice is a
// collection-name prefix. Binky runs it; see docs/adapters.md.
package main

import (
	"github.com/binkyhq/binky/plugins/http-adapters/qdrant"
	"github.com/binkyhq/binky/sdk"
)

func main() { sdk.Run(qdrant.New()) }
