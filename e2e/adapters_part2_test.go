package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/binkyhq/binky/plugins/http-adapters/apimodel"
)

// The e2e tests of issue 15's HTTP adapter families (rabbitmq, clickhouse,
// elasticsearch/opensearch, qdrant): each brings up two worlds of a
// project holding a postgres service and one service of the family,
// writes through the slice from the service's seed (curl), proves the
// second world cannot see what the first wrote, and that remove leaves
// nothing on the server. RabbitMQ and ClickHouse are the real servers of
// scripts/testenv; Elasticsearch and Qdrant are the in-process API models
// of plugins/http-adapters/apimodel (no real server can be installed
// here), served from this test process.

const part2Postgres = "postgres://postgres@127.0.0.1:5432/postgres"

// httpWorlds writes the project (a postgres service beside service),
// brings up worlds one and two and returns each world's resolved
// addresses (binky env) by service.
// The service's admin_url is written ${env.P2_ADMIN_URL} (binky refuses a
// literal credential in binky.toml), set from adminEnv with the rest of
// adminEnv's variables.
// binky env prints the exposed services, so db and svc are exposed.
func httpWorlds(t *testing.T, project, svc, service string, adminEnv ...string) (*env, map[string]map[string]string) {
	t.Helper()
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "it runs on every test machine")
	e := newEnv(t, fmt.Sprintf(`
[project]
name = %q
port_range = PORTRANGE

[services.db]
adapter   = "postgres"
admin_url = %q

%s
[agents]
expose = ["db", %q]
`, project, part2Postgres, service, svc))
	e.extra = append(e.extra, adminEnv...)
	worlds := map[string]map[string]string{}
	for _, w := range []string{"one", "two"} {
		e.must("up", w)
		var m map[string]string
		if err := json.Unmarshal([]byte(e.must("env", w).stdout), &m); err != nil {
			t.Fatalf("binky env %s: %v", w, err)
		}
		if !strings.HasPrefix(m["db"], "postgres://") {
			t.Fatalf("world %s: db resolves to %q; want a postgres URL beside the family service", w, m["db"])
		}
		worlds[w] = m
	}
	return e, worlds
}

func needCurl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is missing; the seeds write with curl")
	}
}

// httpDo sends one request (basic auth from raw's userinfo) and returns
// the status and body.
func httpDo(t *testing.T, method, raw, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, raw, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(raw); u.User != nil {
		pw, _ := u.User.Password()
		req.SetBasicAuth(u.User.Username(), pw)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, req.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read the reply: %v", method, req.URL.Redacted(), err)
	}
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestRabbitMQWorlds (real RabbitMQ): each world gets a vhost and a user
// of its own (user = "per-slice"); the seed declares a queue in its vhost
// and publishes to it; world two's vhost has no queue of world one's, its
// user has no permission on world one's vhost, and remove deletes both
// vhosts and users.
func TestRabbitMQWorlds(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	needCurl(t)
	admin := os.Getenv("BINKY_TEST_RABBITMQ_ADMIN")
	if admin == "" {
		admin = "http://guest:guest@127.0.0.1:15672"
	}
	au, err := url.Parse(admin)
	if err != nil || au.User == nil {
		t.Fatalf("BINKY_TEST_RABBITMQ_ADMIN is not an http://user:password@host:port URL")
	}
	needServer(t, "the RabbitMQ management API", au.Host, "scripts/testenv up")
	pw, _ := au.User.Password()
	cred := au.User.Username() + ":" + pw
	api := au.Scheme + "://" + au.Host + "/api"
	project := runName("erq")
	seed := `curl -sf -u "${env.P2_CRED}" -X PUT -H 'content-type: application/json' -d '{"durable":true}' "` + api + `/queues/${self.vhost}/events" && ` +
		`curl -sf -u "${env.P2_CRED}" -X POST -H 'content-type: application/json' -d '{"properties":{},"routing_key":"events","payload":"from ${worktree.name}","payload_encoding":"string"}' "` + api + `/exchanges/${self.vhost}/amq.default/publish"`
	e, worlds := httpWorlds(t, project, "mq", fmt.Sprintf(`[services.mq]
adapter   = "rabbitmq"
admin_url = "${env.P2_ADMIN_URL}"
seed      = %q
config    = { user = "per-slice" }
`, seed), "P2_ADMIN_URL="+admin, "P2_CRED="+cred)
	vhost := map[string]string{}
	for _, w := range []string{"one", "two"} {
		u, err := url.Parse(worlds[w]["mq"])
		if err != nil || u.Scheme != "amqp" {
			t.Fatalf("world %s: mq resolves to a non-amqp address", w)
		}
		vhost[w] = strings.TrimPrefix(u.Path, "/")
		if vhost[w] != project+"_"+w || u.User.Username() != vhost[w] {
			t.Fatalf("world %s: vhost %q user %q; want %s_%s for both", w, vhost[w], u.User.Username(), project, w)
		}
	}
	adminAPI := au.Scheme + "://" + cred + "@" + au.Host + "/api"
	if code, body := httpDo(t, "GET", adminAPI+"/queues/"+vhost["one"]+"/events", ""); code != 200 || !strings.Contains(body, `"name":"events"`) {
		t.Errorf("world one's queue: %d %.200s; want 200 and the queue", code, body)
	}
	code, body := httpDo(t, "POST", adminAPI+"/queues/"+vhost["one"]+"/events/get", `{"count":1,"ackmode":"ack_requeue_true","encoding":"auto"}`)
	if code != 200 || !strings.Contains(body, "from one") {
		t.Errorf("world one's message: %d %q; want what its seed published", code, body)
	}
	code, body = httpDo(t, "POST", adminAPI+"/queues/"+vhost["two"]+"/events/get", `{"count":5,"ackmode":"ack_requeue_true","encoding":"auto"}`)
	if code != 200 || strings.Contains(body, "from one") || !strings.Contains(body, "from two") {
		t.Errorf("world two's queue holds %q; want only world two's message", body)
	}
	if code, body := httpDo(t, "GET", adminAPI+"/users/"+vhost["two"]+"/permissions", ""); code != 200 || strings.Contains(body, vhost["one"]) {
		t.Errorf("world two's user's permissions: %d %s; want none on %s", code, body, vhost["one"])
	}
	for _, w := range []string{"one", "two"} {
		e.must("remove", w)
	}
	for _, w := range []string{"one", "two"} {
		for _, what := range []string{"vhosts", "users"} {
			if code, _ := httpDo(t, "GET", adminAPI+"/"+what+"/"+vhost[w], ""); code != 404 {
				t.Errorf("%s %s after remove: %d; want 404", what, vhost[w], code)
			}
		}
	}
}

// TestClickHouseWorlds (real ClickHouse 18.16): each world gets a
// database; migrate creates a table through ${self.url} and the seed
// inserts its world's name; world two's table holds only its own row, and
// remove drops both databases.
func TestClickHouseWorlds(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	needCurl(t)
	admin := os.Getenv("BINKY_TEST_CLICKHOUSE_URL")
	if admin == "" {
		admin = "http://binky:binky-test-pw@127.0.0.1:18123"
	}
	au, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("BINKY_TEST_CLICKHOUSE_URL does not parse")
	}
	needServer(t, "ClickHouse", au.Host, "scripts/testenv up")
	project := runName("ech")
	e, worlds := httpWorlds(t, project, "ch", `[services.ch]
adapter   = "clickhouse"
admin_url = "${env.P2_ADMIN_URL}"
migrate   = "curl -sf \"${self.url}\" --data-binary 'CREATE TABLE events (who String) ENGINE = TinyLog'"
seed      = "curl -sf \"${self.url}\" --data-binary \"INSERT INTO events VALUES ('${worktree.name}')\""
`, "P2_ADMIN_URL="+admin)
	for _, w := range []string{"one", "two"} {
		u, err := url.Parse(worlds[w]["ch"])
		if err != nil || u.Query().Get("database") != project+"_"+w {
			t.Fatalf("world %s: ch resolves to an address without database=%s_%s", w, project, w)
		}
		code, body := httpDo(t, "POST", worlds[w]["ch"], "SELECT who FROM events ORDER BY who")
		if code != 200 || body != w {
			t.Errorf("world %s's events: %d %q; want only %q", w, code, body, w)
		}
	}
	for _, w := range []string{"one", "two"} {
		e.must("remove", w)
	}
	code, body := httpDo(t, "POST", admin, "SELECT count() FROM system.databases WHERE name LIKE '"+project+"\\_%'")
	if code != 200 || body != "0" {
		t.Errorf("databases of %s after remove: %d %q; want 0", project, code, body)
	}
}

// serveModel serves h on a loopback port for the test's lifetime (a
// listener the daemon's adapters reach like any server).
func serveModel(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestElasticsearchWorldsAgainstAPIModel (API model, not a real server):
// the elasticsearch adapter, under its alias opensearch, gives each world
// the index prefix "<slice>-" with config.indices created under it; the
// seed indexes a document through ${self.url} and ${self.prefix}; each
// world's index holds only its own document, and remove deletes every
// index of both worlds and nothing else.
func TestElasticsearchWorldsAgainstAPIModel(t *testing.T) {
	needCurl(t)
	m := apimodel.NewElasticsearch("elastic", "e2e-model-pw")
	m.AddIndex("unrelated")
	u, _ := url.Parse(serveModel(t, m))
	u.User = url.UserPassword("elastic", "e2e-model-pw")
	project := runName("ees")
	e, worlds := httpWorlds(t, project, "search", `[services.search]
adapter   = "opensearch"
admin_url = "${env.P2_ADMIN_URL}"
seed      = "curl -sf -X POST -H 'content-type: application/json' \"${self.url}/${self.prefix}events/_doc\" -d '{\"who\":\"${worktree.name}\"}'"
config    = { indices = { events = { mappings = '{"properties":{"who":{"type":"keyword"}}}' } } }
`, "P2_ADMIN_URL="+u.String())
	for _, w := range []string{"one", "two"} {
		if worlds[w]["search"] != u.String() {
			t.Errorf("world %s: search resolves to another address than the admin URL", w)
		}
		if n := m.Docs(project + "_" + w + "-events"); n != 1 {
			t.Errorf("world %s's index holds %d documents; want its seed's one", w, n)
		}
	}
	for _, w := range []string{"one", "two"} {
		e.must("remove", w)
	}
	if got := m.Indices(); !slices.Equal(got, []string{"unrelated"}) {
		t.Errorf("indices after remove: %v; want only the unrelated one", got)
	}
}

// TestQdrantWorldsAgainstAPIModel (API model, not a real server): the
// qdrant adapter gives each world the collection prefix "<slice>-" with
// config.collections created under it; the seed upserts a point; each
// world's collection holds only its own point, and remove deletes both
// worlds' collections and nothing else.
func TestQdrantWorldsAgainstAPIModel(t *testing.T) {
	needCurl(t)
	m := apimodel.NewQdrant("e2e-model-key")
	m.AddCollection("unrelated")
	u, _ := url.Parse(serveModel(t, m))
	base := u.String()
	u.User = url.UserPassword("", "e2e-model-key")
	project := runName("eqd")
	e, _ := httpWorlds(t, project, "vec", fmt.Sprintf(`[services.vec]
adapter   = "qdrant"
admin_url = "${env.P2_ADMIN_URL}"
seed      = "curl -sf -X PUT -H \"api-key: ${env.P2_KEY}\" -H 'content-type: application/json' \"%s/collections/${self.prefix}docs/points\" -d '{\"points\":[{\"id\":1,\"vector\":[1,0,0,0]}]}'"
config    = { collections = { docs = { size = 4, distance = "Cosine" } } }
`, base), "P2_ADMIN_URL="+u.String(), "P2_KEY=e2e-model-key")
	for _, w := range []string{"one", "two"} {
		if n := m.Points(project + "_" + w + "-docs"); n != 1 {
			t.Errorf("world %s's collection holds %d points; want its seed's one", w, n)
		}
	}
	for _, w := range []string{"one", "two"} {
		e.must("remove", w)
	}
	if got := m.Collections(); !slices.Equal(got, []string{"unrelated"}) {
		t.Errorf("collections after remove: %v; want only the unrelated one", got)
	}
}

// TestAdaptersTable: `binky adapters --json`, over the adapter binaries
// of every plugin module, lists the product's sixteen names on ten
// implementations — postgres, mysql/mariadb/percona, redis/valkey,
// mongodb, s3/minio, kafka/redpanda, rabbitmq, clickhouse,
// elasticsearch/opensearch, qdrant — plus postgresql as an alias of
// postgres and sqlite (alias sqlite3), the embedded extra; each describes
// cleanly. It passes only once every family's module is in go.work.
func TestAdaptersTable(t *testing.T) {
	e := newEnv(t, "[project]\nname = \"table\"\nport_range = PORTRANGE\n")
	var infos []struct {
		Name    string   `json:"name"`
		Aliases []string `json:"aliases"`
		Path    string   `json:"path"`
		Error   string   `json:"error"`
	}
	if err := json.Unmarshal([]byte(e.must("adapters", "--json").stdout), &infos); err != nil {
		t.Fatalf("binky adapters --json: %v", err)
	}
	want := map[string][]string{
		"postgres":      {"postgresql"},
		"mysql":         {"mariadb", "percona"},
		"redis":         {"valkey"},
		"mongodb":       nil,
		"s3":            {"minio"},
		"kafka":         {"redpanda"},
		"rabbitmq":      nil,
		"clickhouse":    nil,
		"elasticsearch": {"opensearch"},
		"qdrant":        nil,
		"sqlite":        {"sqlite3"},
	}
	// The wanted table itself: sixteen product names on ten
	// implementations, besides postgresql and sqlite (with sqlite3).
	product := 0
	for name, aliases := range want {
		if name != "sqlite" {
			product += 1 + len(aliases)
		}
	}
	if product-1 != 16 || len(want)-1 != 10 {
		t.Fatalf("the wanted table holds %d product names on %d implementations; want 16 on 10", product-1, len(want)-1)
	}
	got := map[string][]string{}
	for _, i := range infos {
		if filepath.Dir(i.Path) != binDir {
			continue // not one of this repository's plugins (make's bin/ has the filestore example)
		}
		if i.Error != "" {
			t.Errorf("adapter %s: %s", i.Name, i.Error)
		}
		a := append([]string(nil), i.Aliases...)
		slices.Sort(a)
		got[i.Name] = a
	}
	for name, aliases := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("adapter %s is not listed", name)
			continue
		}
		if !slices.Equal(g, aliases) {
			t.Errorf("adapter %s: aliases %v; want %v", name, g, aliases)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("adapter %s is listed; the table has no such implementation", name)
		}
	}
}
