// Command binky-adapter-kafka is Binky's Kafka and Redpanda adapter: a
// slice is a topic prefix. Binky runs it; see docs/adapters.md.
package main

import (
	kafkaadapter "github.com/binkyhq/binky/plugins/kafka"
	"github.com/binkyhq/binky/sdk"
)

func main() { sdk.Run(kafkaadapter.New()) }
