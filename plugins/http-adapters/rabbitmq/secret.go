package rabbitmq

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
)

// secretParam is the global parameter holding the random key per-slice
// passwords derive from. Global parameters are readable by administrators
// only.
const secretParam = "binky-adapter-secret"

// derivePassword is the password of a per-slice user: hex of
// HMAC-SHA256(key, "password\x00" + user), 64 characters, URL-safe.
func derivePassword(key []byte, user string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("password\x00"))
	h.Write([]byte(user))
	return hex.EncodeToString(h.Sum(nil))
}

// secret returns the key in the secretParam global parameter, storing a
// fresh random one first when there is none. It is read back after the
// write and on every call, so every adapter process follows the server's
// one copy; two first writes racing leave the later one, and a user set
// with the earlier is re-set by the next resolve.
func (r *RabbitMQ) secret(ctx context.Context, ep *httpx.Endpoint) ([]byte, error) {
	u := ep.URL(nil, "api", "global-parameters", secretParam)
	var got struct {
		Value string `json:"value"`
	}
	resp, err := r.http.Call(ctx, ep, httpx.Request{Method: http.MethodGet, URL: u}, &got, http.StatusNotFound)
	if err != nil {
		return nil, fmt.Errorf("read global parameter %s: %w", secretParam, err)
	}
	if resp.Status == http.StatusNotFound {
		fresh := make([]byte, 32)
		if _, err := rand.Read(fresh); err != nil {
			return nil, fmt.Errorf("make a secret: %w", err)
		}
		if _, err := r.http.Call(ctx, ep, httpx.Request{Method: http.MethodPut, URL: u,
			JSON: map[string]string{"name": secretParam, "value": hex.EncodeToString(fresh)}}, nil); err != nil {
			return nil, fmt.Errorf("store global parameter %s: %w", secretParam, err)
		}
		if _, err := r.http.Call(ctx, ep, httpx.Request{Method: http.MethodGet, URL: u}, &got); err != nil {
			return nil, fmt.Errorf("read global parameter %s: %w", secretParam, err)
		}
	}
	key, err := hex.DecodeString(got.Value)
	if err != nil || len(key) != 32 {
		return nil, sdk.Errorf(sdk.CodeConflict, "global parameter %s does not hold 64 hex digits; delete it (rabbitmqctl clear_global_parameter %s) and resolve again", secretParam, secretParam)
	}
	return key, nil
}
