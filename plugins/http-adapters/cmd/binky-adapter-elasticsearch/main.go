// Command binky-adapter-elasticsearch is Binky's Elasticsearch and
// OpenSearch adapter: a slice is an index-name prefix. Binky runs it; see
// docs/adapters.md.
package main

import (
	"github.com/binkyhq/binky/plugins/http-adapters/elasticsearch"
	"github.com/binkyhq/binky/sdk"
)

func main() { sdk.Run(elasticsearch.New()) }
