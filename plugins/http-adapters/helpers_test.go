package httpadapters

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// reachable returns the admin URL in env (or def) when GET path answers
// 2xx, and otherwise stops the test through adaptertest.MissingServer
// naming how to start the server.
func reachable(t *testing.T, env, def, path, what string) string {
	t.Helper()
	u := os.Getenv(env)
	if u == "" {
		u = def
	}
	ep, err := httpx.ParseAdminURL(u, def)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	if _, err := httpx.New().Call(ctx, ep, httpx.Request{Method: http.MethodGet, URL: ep.Base.String() + path}, nil); err != nil {
		adaptertest.MissingServer(t, what+" is not reachable ("+ep.Scrub(err.Error())+"); run scripts/testenv up, or set "+env)
	}
	return u
}

func rabbitmqAdmin(t *testing.T) string {
	return reachable(t, "BINKY_TEST_RABBITMQ_ADMIN", "http://guest:guest@127.0.0.1:15672", "/api/overview", "the RabbitMQ management API")
}
