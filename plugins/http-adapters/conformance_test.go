package httpadapters

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/binkyhq/binky/plugins/http-adapters/apimodel"

	"github.com/binkyhq/binky/sdk/adaptertest"
)

// TestConformanceRabbitMQ runs the kit against binky-adapter-rabbitmq on
// the real RabbitMQ, with the admin user and with per-slice users.
func TestConformanceRabbitMQ(t *testing.T) {
	admin := rabbitmqAdmin(t)
	bin := adaptertest.Binary(t, "binky-adapter-rabbitmq")
	for _, tc := range []struct {
		name string
		cfg  map[string]any
	}{
		{"admin_user", nil},
		{"per_slice_user", map[string]any{"user": "per-slice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adaptertest.Test(t, adaptertest.Options{Binary: bin, AdminURL: admin, Config: tc.cfg})
		})
	}
}

// TestConformanceClickHouse runs the kit against binky-adapter-clickhouse
// on the real ClickHouse scripts/testenv runs.
func TestConformanceClickHouse(t *testing.T) {
	admin := reachable(t, "BINKY_TEST_CLICKHOUSE_URL", "http://binky:binky-test-pw@127.0.0.1:18123", "/ping", "ClickHouse")
	adaptertest.Test(t, adaptertest.Options{Binary: adaptertest.Binary(t, "binky-adapter-clickhouse"), AdminURL: admin})
}

// TestConformanceElasticsearchAgainstAPIModel runs the kit against
// binky-adapter-elasticsearch, under both its names, on the in-process
// model of the Elasticsearch API (package apimodel) — not a real server.
func TestConformanceElasticsearchAgainstAPIModel(t *testing.T) {
	m := apimodel.NewElasticsearch("elastic", "conformance-pw")
	srv := httptest.NewServer(m)
	defer srv.Close()
	admin := withUser(srv.URL, "elastic", "conformance-pw")
	bin := adaptertest.Binary(t, "binky-adapter-elasticsearch")
	for _, tc := range []struct {
		name, adapter string
		cfg           map[string]any
	}{
		{"elasticsearch_indices", "elasticsearch", map[string]any{"indices": map[string]any{"events": map[string]any{"settings": `{"number_of_shards":1}`}}}},
		{"opensearch_bare_prefix", "opensearch", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adaptertest.Test(t, adaptertest.Options{Binary: bin, Adapter: tc.adapter, AdminURL: admin, Config: tc.cfg})
		})
	}
	if left := m.Indices(); len(left) != 0 {
		t.Errorf("indices left after the kit: %v", left)
	}
}

// TestConformanceQdrantAgainstAPIModel runs the kit against
// binky-adapter-qdrant on the in-process model of the Qdrant API
// (package apimodel) — not a real server.
func TestConformanceQdrantAgainstAPIModel(t *testing.T) {
	m := apimodel.NewQdrant("conformance-key")
	srv := httptest.NewServer(m)
	defer srv.Close()
	admin := withUser(srv.URL, "", "conformance-key")
	bin := adaptertest.Binary(t, "binky-adapter-qdrant")
	for _, tc := range []struct {
		name string
		cfg  map[string]any
	}{
		{"collections", map[string]any{"collections": map[string]any{"docs": map[string]any{"size": 4, "distance": "Cosine"}}}},
		{"bare_prefix", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adaptertest.Test(t, adaptertest.Options{Binary: bin, AdminURL: admin, Config: tc.cfg})
		})
	}
	if left := m.Collections(); len(left) != 0 {
		t.Errorf("collections left after the kit: %v", left)
	}
}

func withUser(raw, user, pw string) string {
	u, _ := url.Parse(raw)
	u.User = url.UserPassword(user, pw)
	return u.String()
}
