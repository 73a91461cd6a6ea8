// Command binky-adapter-rabbitmq is Binky's RabbitMQ adapter: a slice is a
// vhost, made through the management API. Binky runs it; see
// docs/adapters.md.
package main

import (
	"github.com/binkyhq/binky/plugins/http-adapters/rabbitmq"
	"github.com/binkyhq/binky/sdk"
)

func main() { sdk.Run(rabbitmq.New()) }
