// Command binky-adapter-postgres is Binky's PostgreSQL adapter: a slice is
// a database on a server the developer already runs. Binky runs it; see
// docs/adapters.md.
package main

import (
	postgresadapter "github.com/binkyhq/binky/plugins/postgres"
	"github.com/binkyhq/binky/sdk"
)

func main() { sdk.Run(postgresadapter.New()) }
