package ports

import (
	"testing"

	"github.com/binkyhq/binky/sdk/client"
)

// TestDefaultRangeMissesAdapterPorts: the loopback ports RPC adapters
// listen on under Windows (sdk/client) never fall in the default world
// range, so an adapter cannot hold a world's port.
func TestDefaultRangeMissesAdapterPorts(t *testing.T) {
	lo, hi := DefaultRange()[0], DefaultRange()[1]
	if client.RPCMinPort <= hi && lo <= client.RPCMaxPort {
		t.Errorf("adapters' RPC ports %d-%d overlap the default world range %d-%d", client.RPCMinPort, client.RPCMaxPort, lo, hi)
	}
	if client.RPCMinPort > client.RPCMaxPort || client.RPCMaxPort >= 49152 {
		t.Errorf("adapters' RPC ports %d-%d: want a range below Windows' dynamic ports (49152-65535)", client.RPCMinPort, client.RPCMaxPort)
	}
}
