// Command binky-adapter-s3 is Binky's S3 and MinIO adapter: a slice is a
// bucket. Binky runs it; see docs/adapters.md.
package main

import (
	s3adapter "github.com/binkyhq/binky/plugins/s3"
	"github.com/binkyhq/binky/sdk"
)

func main() { sdk.Run(s3adapter.New()) }
