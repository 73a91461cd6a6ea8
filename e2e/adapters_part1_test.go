package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The e2e tests of issue 14's adapter families (s3, kafka, mongodb): each
// brings up two worlds of a project holding a postgres service and one
// service of the family, writes through the slice from a service process
// (the family service's seed), proves the second world cannot see what the
// first wrote, and that remove leaves nothing on the server. The servers
// are scripts/testenv's: MinIO, kfake (a Kafka-protocol cluster, not
// Apache Kafka) and FerretDB (MongoDB wire protocol, not MongoDB).

const e2ePostgres = "postgres://postgres@127.0.0.1:5432/postgres"

// familyWorlds writes the project, brings up worlds one and two, and
// returns each world's resolved addresses (binky env) by service.
// service holds the family service's keys; further [services.*] sections
// may follow them. extra is added to the CLI's environment (for ${env.*}
// tokens).
func familyWorlds(t *testing.T, project, name, service string, extra ...string) (*env, map[string]map[string]string) {
	t.Helper()
	e := newEnv(t, fmt.Sprintf(`
[project]
name = %q
port_range = PORTRANGE

[services.db]
adapter   = "postgres"
admin_url = %q

[services.%s]
%s
[agents]
expose = ["db", %q]
`, project, e2ePostgres, name, service, name))
	e.extra = extra
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

// s3URL is the MinIO of scripts/testenv (BINKY_TEST_S3_URL overrides).
func s3URL() string {
	if u := os.Getenv("BINKY_TEST_S3_URL"); u != "" {
		return u
	}
	return "http://binky:binky-testenv-secret@127.0.0.1:9000"
}

// s3Get fetches bucket/key with curl's SigV4 signing and returns the HTTP
// status and body.
func s3Get(t *testing.T, admin *url.URL, method, path string) (int, string) {
	t.Helper()
	pw, _ := admin.User.Password()
	out, err := exec.Command("curl", "-s", "-X", method, "--aws-sigv4", "aws:amz:us-east-1:s3",
		"-u", admin.User.Username()+":"+pw, "-w", "\n%{http_code}",
		admin.Scheme+"://"+admin.Host+path).Output()
	if err != nil {
		t.Fatalf("curl %s %s: %v", method, path, err)
	}
	s := string(out)
	i := strings.LastIndexByte(s, '\n')
	var code int
	fmt.Sscan(s[i+1:], &code)
	return code, s[:i]
}

// TestS3WorldsOnMinIO: the s3 adapter (under its alias minio) gives each
// world its own bucket on MinIO; the seed writes into it with curl, world
// two's bucket lacks world one's object, and remove deletes both buckets.
func TestS3WorldsOnMinIO(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	admin, err := url.Parse(s3URL())
	if err != nil || admin.User == nil {
		t.Fatalf("BINKY_TEST_S3_URL is not an http://KEY:SECRET@host:port URL")
	}
	needServer(t, "MinIO", admin.Host, "scripts/testenv up")
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is missing; the seed writes with curl --aws-sigv4")
	}
	pw, _ := admin.User.Password()
	project := runName("es3")
	// S3 wants a Content-Length, so curl uploads a file, not a pipe.
	seed := `f=$(mktemp) && printf '%s' "written by ${worktree.name}" >"$f" && ` +
		`curl -sSf --aws-sigv4 "aws:amz:${self.region}:s3" -u "${env.E2E_S3_KEYS}" -T "$f" "${self.endpoint}/${self.bucket}/${worktree.name}.txt"; ` +
		`rc=$?; rm -f "$f"; exit $rc`
	e, worlds := familyWorlds(t, project, "blob", fmt.Sprintf(`adapter   = "minio"
admin_url = "${env.E2E_S3_ADMIN}"
seed      = %q
`, seed), "E2E_S3_ADMIN="+admin.String(), "E2E_S3_KEYS="+admin.User.Username()+":"+pw)
	bucket := func(w string) string {
		u, err := url.Parse(worlds[w]["blob"])
		if err != nil {
			t.Fatalf("world %s: blob address does not parse: %v", w, err)
		}
		return strings.Trim(u.Path, "/")
	}
	one, two := bucket("one"), bucket("two")
	if one == two || one != project+"-one" {
		t.Fatalf("buckets %q and %q; want %s-one and a different one", one, two, project)
	}
	if code, body := s3Get(t, admin, "GET", "/"+one+"/one.txt"); code != 200 || body != "written by one" {
		t.Errorf("world one's object: %d %q; want 200 and what its seed wrote", code, body)
	}
	if code, _ := s3Get(t, admin, "GET", "/"+two+"/one.txt"); code != 404 {
		t.Errorf("world two's bucket: GET one.txt = %d; want 404 (world one's object is not in it)", code)
	}
	for _, w := range []string{"one", "two"} {
		e.must("remove", w)
	}
	for _, b := range []string{one, two} {
		if code, _ := s3Get(t, admin, "HEAD", "/"+b); code != 404 {
			t.Errorf("bucket %s after remove: HEAD %d; want 404", b, code)
		}
	}
}

// buildTestClient builds a test client program of a plugin module
// (plugins/<module>/testdata/testclient, where `go build ./...` does not
// reach it, so a packager never installs it) into the test's directory.
func buildTestClient(t *testing.T, module string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), module+"-testclient")
	cmd := exec.Command("go", "build", "-o", out, "./testdata/testclient")
	cmd.Dir = filepath.Join("..", "plugins", module)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s's test client: %v\n%s", module, err, b)
	}
	return out
}

// kafkaAddr is the kfake cluster of scripts/testenv
// (BINKY_TEST_KAFKA_ADDR overrides).
func kafkaAddr() string {
	a := os.Getenv("BINKY_TEST_KAFKA_ADDR")
	if a == "" {
		a = "kafka://127.0.0.1:9092"
	}
	if !strings.Contains(a, "://") {
		a = "kafka://" + a
	}
	return a
}

// TestKafkaWorldsOnKfake: the kafka adapter (under its alias redpanda)
// gives each world a topic prefix on kfake (a Kafka-protocol cluster in
// memory, not Apache Kafka); provision makes the configured topic, the
// seed produces a record into it with the test client, world two's topic
// holds its own record only, and remove deletes both worlds' topics.
func TestKafkaWorldsOnKfake(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	admin, err := url.Parse(kafkaAddr())
	if err != nil {
		t.Fatal(err)
	}
	needServer(t, "kfake (Kafka protocol)", strings.Split(admin.Host, ",")[0], "scripts/testenv up")
	client := buildTestClient(t, "kafka")
	project := runName("ekf")
	seed := client + ` produce "${self.url}" "${self.prefix}events" "written by ${worktree.name}"`
	e, worlds := familyWorlds(t, project, "bus", fmt.Sprintf(`adapter   = "redpanda"
admin_url = "${env.E2E_KAFKA_ADMIN}"
seed      = %q
config    = { topics = ["events"], partitions = 2 }
`, seed), "E2E_KAFKA_ADMIN="+admin.String())
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(client, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("testclient %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	prefix := map[string]string{"one": project + "-one.", "two": project + "-two."}
	for w, p := range prefix {
		if got := run("consume", worlds[w]["bus"], p+"events"); got != "written by "+w {
			t.Errorf("world %s's topic %sevents holds %q first; want its own seed's record", w, p, got)
		}
		if got := run("topics", admin.String(), p); got != p+"events" {
			t.Errorf("world %s's topics: %q; want only %sevents", w, got, p)
		}
	}
	for _, w := range []string{"one", "two"} {
		e.must("remove", w)
	}
	if got := run("topics", admin.String(), project+"-"); got != "" {
		t.Errorf("topics under %s- after remove: %q; want none", project, got)
	}
}

// mongoURL is the FerretDB of scripts/testenv (BINKY_TEST_MONGO_URL
// overrides).
func mongoURL() string {
	if u := os.Getenv("BINKY_TEST_MONGO_URL"); u != "" {
		return u
	}
	return "mongodb://127.0.0.1:27017"
}

// eventsNamed returns the events of that name in the env's events.log.
func eventsNamed(t *testing.T, e *env, name string) []eventJSON {
	t.Helper()
	var out []eventJSON
	for _, line := range strings.Split(read(filepath.Join(e.home, "events.log")), "\n") {
		var ev eventJSON
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == name {
			out = append(out, ev)
		}
	}
	return out
}

type eventJSON struct {
	Event    string `json:"event"`
	Worktree string `json:"worktree"`
	Service  string `json:"service"`
	Error    string `json:"error"`
}

// TestMongoWorldsOnFerretDB: the mongodb adapter gives each world its own
// database on FerretDB (MongoDB wire protocol over SQLite, not MongoDB)
// from a golden template. FerretDB has no $out, so each world's clone
// answers unsupported: binky logs clone_fallback and builds the world with
// provision, migrate (an index) and seed (a document), all of which the
// world's database holds. A service process writes a document through
// ${docs.url}; world two's database lacks world one's. remove drops the
// worlds' databases, golden drop the template, and nothing of the project
// is left on the server. Against MongoDB 4.4+ (BINKY_TEST_MONGO_URL) the
// same worlds come from a real clone instead.
func TestMongoWorldsOnFerretDB(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	admin := mongoURL()
	u, err := url.Parse(admin)
	if err != nil || u.Host == "" {
		t.Fatalf("BINKY_TEST_MONGO_URL is not a mongodb://[user:password@]host:port URL")
	}
	needServer(t, "FerretDB (MongoDB protocol)", strings.Split(u.Host, ",")[0], "scripts/testenv up")
	client := buildTestClient(t, "mongodb")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(client, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("testclient %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	ferret := strings.HasPrefix(run("server", admin), "ferretdb ")
	project := runName("emg")
	// Registered before the worlds: it runs after their cleanup, dropping
	// whatever a failed run left (the golden template above all).
	t.Cleanup(func() { exec.Command(client, "drop", admin, project+"_").Run() })

	migrate := client + ` index "${self.url}" items note`
	seed := client + ` put "${self.url}" items '{"note": "seeded"}'`
	write := client + ` put "${docs.url}" items '{"note": "written by ${worktree.name}"}' && exec sleep 600`
	e, worlds := familyWorlds(t, project, "docs", fmt.Sprintf(`adapter    = "mongodb"
admin_url  = "${env.E2E_MONGO_ADMIN}"
migrate    = %q
seed       = %q
clone_from = "golden"

[services.writer]
cmd        = %q
depends_on = ["docs"]
`, migrate, seed, write), "E2E_MONGO_ADMIN="+admin)

	for _, w := range []string{"one", "two"} {
		addr := worlds[w]["docs"]
		if a, err := url.Parse(addr); err != nil || a.Scheme != "mongodb" || a.Path != "/"+project+"_"+w {
			t.Fatalf("world %s: docs resolves to %q; want a mongodb:// URL naming database %s_%s", w, addr, project, w)
		}
		// The writer runs after up returns; wait for its document.
		want := "seeded\nwritten by " + w
		var got string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if got = run("notes", addr, "items"); got == want {
				break
			}
		}
		if got != want {
			t.Errorf("world %s's items: %q; want the seeded document and its own writer's, not the other world's", w, got)
		}
		if got := run("indexes", addr, "items"); got != "_id_\nnote_1" {
			t.Errorf("world %s's indexes: %q; want _id_ and migrate's note_1", w, got)
		}
	}

	built, fell, cloned := eventsNamed(t, e, "golden_built"), eventsNamed(t, e, "clone_fallback"), eventsNamed(t, e, "slice_cloned")
	if len(built) != 1 {
		t.Errorf("golden_built %d times; want 1 (the template is built once)", len(built))
	}
	if ferret {
		if len(fell) != 2 || len(cloned) != 0 {
			t.Errorf("FerretDB: clone_fallback %d, slice_cloned %d; want 2 and 0 (no $out: each world falls back)", len(fell), len(cloned))
		}
		for _, ev := range fell {
			if ev.Service != "docs" || !strings.Contains(ev.Error, "unsupported") || !strings.Contains(ev.Error, "FerretDB") {
				t.Errorf("clone_fallback %+v; want service docs, its cause an unsupported clone on FerretDB", ev)
			}
		}
	} else if len(fell) != 0 || len(cloned) != 2 {
		t.Errorf("MongoDB: clone_fallback %d (%+v), slice_cloned %d; want 0 and 2", len(fell), fell, len(cloned))
	}

	for _, w := range []string{"one", "two"} {
		e.must("remove", w)
	}
	left := strings.Fields(run("dbs", admin, project+"_"))
	for _, db := range left {
		if !strings.HasPrefix(db, project+"_golden_") {
			t.Errorf("database %s survives remove", db)
		}
	}
	if len(left) != 1 {
		t.Errorf("databases of %s after remove: %q; want only its golden template", project, left)
	}
	e.must("golden", "drop", "-q", "--project", project)
	if got := run("dbs", admin, project+"_"); got != "" {
		t.Errorf("databases of %s after remove and golden drop: %q; want none", project, got)
	}
}

// adapterJSON is one adapter of `binky adapters --json`.
type adapterJSON struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases"`
	Error   string   `json:"error"`
}

// TestAdapterTestFamilies: binky adapters lists the mongodb, s3 and kafka
// binaries with their aliases, and `binky adapter test` passes for every
// name and alias against scripts/testenv's servers (FerretDB, MinIO,
// kfake, a Kafka-protocol cluster, not Apache Kafka).
func TestAdapterTestFamilies(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	e := newEnv(t, `
[project]
name = "conformance"
port_range = PORTRANGE
`)
	var infos []adapterJSON
	if err := json.Unmarshal([]byte(e.must("adapters", "--json").stdout), &infos); err != nil {
		t.Fatalf("binky adapters --json: %v", err)
	}
	table := e.must("adapters").stdout
	for name, aliases := range map[string][]string{"mongodb": nil, "s3": {"minio"}, "kafka": {"redpanda"}} {
		i := slices.IndexFunc(infos, func(i adapterJSON) bool { return i.Name == name })
		if i < 0 {
			t.Errorf("binky adapters --json lacks %s", name)
			continue
		}
		if got := infos[i]; got.Error != "" || !slices.Equal(got.Aliases, aliases) {
			t.Errorf("adapter %s: aliases %q, error %q; want aliases %q and no error", name, got.Aliases, got.Error, aliases)
		}
		want := strings.Join(aliases, ",")
		if want == "" {
			want = "-"
		}
		if !slices.ContainsFunc(strings.Split(table, "\n"), func(l string) bool {
			f := strings.Fields(l)
			return len(f) > 1 && f[0] == name && f[1] == want
		}) {
			t.Errorf("binky adapters: no row %q with aliases %q in\n%s", name, want, table)
		}
	}

	kafka, _ := url.Parse(kafkaAddr())
	s3, _ := url.Parse(s3URL())
	mongo, _ := url.Parse(mongoURL())
	for _, tc := range []struct{ name, what, admin, addr string }{
		{"mongodb", "FerretDB (MongoDB protocol)", mongo.String(), mongo.Host},
		{"s3", "MinIO", s3.String(), s3.Host},
		{"minio", "MinIO", s3.String(), s3.Host},
		{"kafka", "kfake (Kafka protocol)", kafka.String(), kafka.Host},
		{"redpanda", "kfake (Kafka protocol)", kafka.String(), kafka.Host},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needServer(t, tc.what, strings.Split(tc.addr, ",")[0], "scripts/testenv up")
			r := e.binky("adapter", "test", tc.name, "--admin-url", tc.admin, "--project", runName("e2econf"))
			if r.code != 0 || strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, tc.name+" passes the conformance suite") {
				t.Errorf("binky adapter test %s: exit %d\n%s%s", tc.name, r.code, r.stdout, r.stderr)
			}
			t.Log(r.stdout)
		})
	}
}
