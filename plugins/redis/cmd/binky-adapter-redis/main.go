// Command binky-adapter-redis is Binky's Redis and Valkey adapter: a slice
// is a key prefix, fenced by an ACL user where the server has ACLs. Binky
// runs it; see docs/adapters.md.
package main

import (
	redisadapter "github.com/binkyhq/binky/plugins/redis"
	"github.com/binkyhq/binky/sdk"
)

func main() { sdk.Run(redisadapter.New()) }
