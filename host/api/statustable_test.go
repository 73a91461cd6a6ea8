package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fullStatus is a status reply with every field set, as a daemon that was
// not asked for the table (an older one) sends it.
func fullStatus() StatusResult {
	browserErrors := 4
	at := time.Date(2026, 12, 7, 15, 4, 5, 123456789, time.FixedZone("", 3600))
	return StatusResult{
		Worlds: []World{{
			Project: "shop", Worktree: "feat-x", Branch: "feat/x", Path: "/src/shop.worktrees/feat-x", Repo: "/src/shop",
			State: "degraded", Reason: "web: unhealthy", Ports: [2]int{21000, 21009},
			Plan: &Plan{}, Left: []string{"a slice"}, Noop: true, Suspended: "idle", Selection: "profile frontend",
			Services: []Service{
				{Name: "web", Kind: "cmd", State: "unhealthy", Pid: 4242, Warning: "listens on 0.0.0.0", Port: 21000,
					Ports: map[string]int{"http": 21000}, URL: "http://web.feat-x.shop.localhost:1355", Restarts: 2,
					Reason: "unhealthy: GET http://127.0.0.1:21000/: 503 for 40s", LogTail: []string{"line \"one\"", "zwei → drei\t", "\u2028"}},
				{Name: "db", Kind: "adapter", State: "running", Adapter: "postgres", Address: "postgres://u:xxxxx@127.0.0.1:5432/shop_feat_x",
					Clone: "file_copy, copy-on-write", Error: "old error"},
				{Name: "worker", Kind: "cmd", State: "stopped", LeftOut: "not in profile frontend"},
			},
			Verify: &Verify{Passed: true, Commit: "0123456789abcdef", Dirty: true, At: at, Duration: 1234, Stale: true, BrowserErrors: &browserErrors,
				Checks: []Check{{Cmd: "make test", ExitCode: 2, Duration: 1000}}},
			Queue:      &Queue{Position: 2, Reason: "max_parallel 4 reached (machine)", Limit: "machine.max_parallel"},
			Cost:       &Cost{Source: "cgroup", Processes: 3, RSS: 1 << 20, CPUPercent: -1, Disk: &DiskCost{Files: 3, At: at}},
			StableName: "app2", Host: "box",
		}, {Project: "shop", Worktree: "main", State: "down", Services: []Service{}}},
		Remote: []World{{Host: "box", Project: "shop", Worktree: "feat-y", Branch: "feat/y", Path: "/srv/shop.worktrees/feat-y", State: "up",
			Ports: [2]int{31000, 31009}, StableName: "app",
			Services: []Service{{Name: "web", Kind: "cmd", State: "running", Pid: 7, Port: 31000, URL: "http://web.feat-y.shop.localhost:1355"}}}},
		Pressure: &Pressure{RAMFreePct: 86.27956861698448, RAMReserve: 10, DiskFreeGB: -1, DiskHeadroom: 2.5,
			MaxParallel: 4, Running: 1, Queued: 1, Jobs: 2, JobsRunning: 1, JobsQueued: 3},
		Home:     &Home{ID: "21401f4c5b957f95", Dir: "/home/u/.binky"},
		Proxy:    &ProxyInfo{Port: 1356, URL: "http://binky.localhost:1356", Note: "another home's proxy holds 1355"},
		Degraded: &Degraded{Reason: "disk full", Since: at},
	}
}

// TestFullStatusSetsEveryField: fullStatus sets every field of a status
// reply (of the first world, of some service), so a field added to the
// wire is either decoded by DecodeStatusTable or dropped by ForTable: a
// field it forgot would make TestDecodeStatusTable fail, not `binky
// status` silently lose a line.
func TestFullStatusSetsEveryField(t *testing.T) {
	full := fullStatus()
	unset := func(what string, v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).IsZero() {
				t.Errorf("fullStatus leaves %s.%s unset: set it, and teach DecodeStatusTable or ForTable about it", what, v.Type().Field(i).Name)
			}
		}
	}
	unset("StatusResult", reflect.ValueOf(full))
	unset("World", reflect.ValueOf(full.Worlds[0]))
	unset("Verify", reflect.ValueOf(*full.Worlds[0].Verify))
	unset("Queue", reflect.ValueOf(*full.Worlds[0].Queue))
	unset("Pressure", reflect.ValueOf(*full.Pressure))
	unset("ProxyInfo", reflect.ValueOf(*full.Proxy))
	unset("Degraded", reflect.ValueOf(*full.Degraded))
	// Services: each field set by one of them.
	st := reflect.TypeOf(Service{})
	for i := 0; i < st.NumField(); i++ {
		set := false
		for _, s := range full.Worlds[0].Services {
			set = set || !reflect.ValueOf(s).Field(i).IsZero()
		}
		if !set {
			t.Errorf("fullStatus leaves Service.%s unset in every service", st.Field(i).Name)
		}
	}
}

// viaJSON is what encoding/json makes of b, less what the table does not
// print.
func viaJSON(t *testing.T, b []byte) (StatusResult, error) {
	t.Helper()
	var r StatusResult
	err := json.Unmarshal(b, &r)
	r.ForTable()
	return r, err
}

// TestDecodeStatusTable: the hand decoder reads a full reply, and one
// trimmed for the table, as encoding/json does (less what ForTable drops).
func TestDecodeStatusTable(t *testing.T) {
	full := fullStatus()
	table := fullStatus()
	table.ForTable()
	for name, v := range map[string]StatusResult{"full": full, "table": table, "empty": {}, "no worlds": {Worlds: []World{}}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := viaJSON(t, b)
		if err != nil {
			t.Fatal(err)
		}
		var got StatusResult
		if err := DecodeStatusTable(b, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	// The table's reply is much smaller than the full one.
	fb, _ := json.Marshal(full)
	tb, _ := json.Marshal(table)
	if len(tb) >= len(fb) {
		t.Errorf("table reply %d bytes, full %d", len(tb), len(fb))
	}
}

// TestDecodeStatusTableDeclines: what encoding/json would read otherwise
// than the hand decoder is declined, for Call to decode with encoding/json.
func TestDecodeStatusTableDeclines(t *testing.T) {
	for _, in := range []string{
		`{"worlds":[{"Project":"p"}]}`,               // another case
		`{"worlds":[{"project":"p","project":"q"}]}`, // twice
		`{"worlds":[{"pro\u006aect":"p"}]}`,          // an escape in a key
		`{"worlds":[{"services":[{"pid":"12"}]}]}`,   // a type
		`{"worlds":[{"services":[{"pid":1.5}]}]}`,    // not an int
		`{"worlds":[]} x`,                            // text after
		`{"worlds":[],}`,                             // a trailing comma
		`{"pressure":{"ram_free_pct":1e999}}`,        // out of range
		`{"degraded":{"since":"yesterday"}}`,         // not a time
		`{"worlds":[{"cost":{"source":"cgroup",}}]}`, // bad JSON where skipped
		`[]`, // not an object
	} {
		var r StatusResult
		if err := DecodeStatusTable([]byte(in), &r); err == nil {
			t.Errorf("%s: decoded, want an error", in)
		}
	}
}

// TestStatusTableFallsBack: a StatusTable that the hand decoder declines is
// left zero, so Call's encoding/json pass starts clean.
func TestStatusTableFallsBack(t *testing.T) {
	var st StatusTable
	if err := st.DecodeResult([]byte(`{"worlds":[{"project":"p"}],"Pressure":{}}`)); err == nil {
		t.Fatal("decoded a key in another case")
	}
	if !reflect.DeepEqual(st, StatusTable{}) {
		t.Errorf("left %+v, want zero", st)
	}
}

// FuzzDecodeStatusTable: what the hand decoder accepts is JSON, and, when
// encoding/json decodes it into a StatusResult too, the same as that
// less what the table does not print.
func FuzzDecodeStatusTable(f *testing.F) {
	full := fullStatus()
	b, _ := json.Marshal(full)
	f.Add(b)
	full.ForTable()
	b, _ = json.Marshal(full)
	f.Add(b)
	f.Add([]byte(`null`))
	f.Add([]byte(`{"worlds":null,"pressure":null}`))
	f.Add([]byte(`{"worlds":[null,{"ports":[1,2,3],"services":[null,{"log_tail":null}]}]}`))
	f.Add([]byte(`{"worlds":[{"project":"\ud83d\ude00 \u00e9\t","state":"up\u0000"}]}`))
	f.Add([]byte(`{"worlds":[{"ports":[null,7]}],"proxy":{"port":-0}}`))
	f.Add([]byte(` { "degraded" : { "since" : "2026-12-07T15:04:05Z" , "reason" : "x" } } `))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got StatusResult
		if err := DecodeStatusTable(b, &got); err != nil {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("%q: decoded, but it is not JSON", b)
		}
		want, err := viaJSON(t, b)
		if err != nil {
			return // a skipped field's value is of another type: not the table's concern
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
		}
	})
}

func TestStatusTableIsSmall(t *testing.T) {
	full := fullStatus()
	full.ForTable()
	b, _ := json.Marshal(full)
	for _, k := range []string{`"path"`, `"kind"`, `"cost"`, `"home"`, `"checks"`, `"restarts"`, `"adapter"`} {
		if strings.Contains(string(b), k) {
			t.Errorf("the table's reply carries %s: %s", k, b)
		}
	}
}
