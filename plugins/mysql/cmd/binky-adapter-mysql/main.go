// Command binky-adapter-mysql is Binky's MySQL, MariaDB and Percona
// adapter: a slice is a database (schema) on a server the developer
// already runs. Binky runs it; see docs/adapters.md.
package main

import (
	mysqladapter "github.com/binkyhq/binky/plugins/mysql"
	"github.com/binkyhq/binky/sdk"
)

func main() { sdk.Run(mysqladapter.New()) }
