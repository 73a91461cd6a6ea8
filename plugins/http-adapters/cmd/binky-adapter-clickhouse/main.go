// Command binky-adapter-clickhouse is Binky's ClickHouse adapter: a slice
// is a database, made over the HTTP interface. Binky runs it; see
// docs/adapters.md.
package main

import (
	"github.com/binkyhq/binky/plugins/http-adapters/clickhouse"
	"github.com/binkyhq/binky/sdk"
)

func main() { sdk.Run(clickhouse.New()) }
