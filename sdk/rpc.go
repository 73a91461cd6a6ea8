package sdk

import (
	"context"
	"net/rpc"
	"time"

	"github.com/hashicorp/go-plugin"
)

// Handshake is the go-plugin handshake both sides use. A binary started
// without the magic cookie in its environment does not serve RPC.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  Protocol,
	MagicCookieKey:   "BINKY_ADAPTER_PLUGIN",
	MagicCookieValue: "f1b0c2d7-binky-adapter-5e93",
}

// SocketDirPrefix starts the name of the directory an RPC adapter keeps its
// go-plugin socket in. A host that makes one such directory per adapter
// process and names it in PLUGIN_UNIX_SOCKET_DIR (sdk/client does) lets Run
// remove that directory too, once empty, when the host died first.
const SocketDirPrefix = "binky-rpc-"

// PluginName is the one plugin an adapter binary serves.
const PluginName = "adapter"

// RPCArgs is one call over the RPC tier: the same JSON request the one-shot
// tier reads from stdin, plus the caller's deadline.
type RPCArgs struct {
	Call     string
	Request  []byte
	Deadline time.Time // zero: none
}

// RPCReply is the same JSON reply the one-shot tier writes to stdout.
type RPCReply struct {
	Reply []byte
}

// RPCPlugin is the go-plugin net/rpc plugin. On the adapter side set Impl;
// on the host side leave it nil and use the *RPCClient that Client returns.
type RPCPlugin struct {
	Impl Adapter
	ctx  context.Context // parent of every call's context; nil: none
}

// PluginSet is the plugin map of an adapter binary (or of a host client).
func PluginSet(impl Adapter) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &RPCPlugin{Impl: impl}}
}

// pluginSet is PluginSet whose calls end when ctx does.
func pluginSet(ctx context.Context, impl Adapter) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &RPCPlugin{Impl: impl, ctx: ctx}}
}

// Server implements plugin.Plugin.
func (p *RPCPlugin) Server(*plugin.MuxBroker) (any, error) {
	return &RPCServer{Impl: p.Impl, ctx: p.ctx}, nil
}

// Client implements plugin.Plugin.
func (p *RPCPlugin) Client(_ *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &RPCClient{c: c}, nil
}

// RPCServer serves an Adapter over net/rpc.
type RPCServer struct {
	Impl Adapter
	ctx  context.Context // parent of every call's context; nil: none
}

// Call runs one call through Dispatch. Its context ends at the caller's
// deadline or when the adapter stops serving.
func (s *RPCServer) Call(args RPCArgs, reply *RPCReply) error {
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if !args.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, args.Deadline)
		defer cancel()
	}
	reply.Reply = Dispatch(ctx, s.Impl, args.Call, args.Request)
	return nil
}

// RPCClient calls an adapter over net/rpc. It speaks raw JSON so that both
// tiers carry byte-identical requests and replies.
type RPCClient struct {
	c *rpc.Client
}

// Call sends one JSON request and returns the JSON reply. The context's
// deadline travels to the adapter; cancelling ctx abandons the wait (the host
// then kills the plugin process).
func (c *RPCClient) Call(ctx context.Context, call string, request []byte) ([]byte, error) {
	args := RPCArgs{Call: call, Request: request}
	if d, ok := ctx.Deadline(); ok {
		args.Deadline = d
	}
	var reply RPCReply
	rc := c.c.Go("Plugin.Call", args, &reply, make(chan *rpc.Call, 1))
	select {
	case <-rc.Done:
		if rc.Error != nil {
			return nil, rc.Error
		}
		return reply.Reply, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var _ plugin.Plugin = (*RPCPlugin)(nil)
