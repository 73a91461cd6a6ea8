package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Arm C: copy-on-write worlds on PostgreSQL 18. For each template size of
// the sweep it builds a golden template on the server at --cow-admin-url
// (a PostgreSQL 18 whose data directory is on a reflink filesystem, and
// readable here: scripts/testenv up pg18 makes one), then clones worlds
// from it through binky-adapter-postgres's one-shot clone verb — the very
// code binky up runs: the freeze, STRATEGY = FILE_COPY with
// file_copy_method = clone, the FIEMAP check — and, side by side on the
// same server, copies by the WAL_LOG strategy (clone_strategy = "wal_log").
//
// Per world: the clone's wall time, the filesystem's used bytes it added
// (statfs of the data directory, each side of the clone measured after a
// CHECKPOINT the benchmark issues, so a clone's deferred writes are
// counted), and the server's checkpoint time during the clone
// (pg_stat_checkpointer, PostgreSQL 17+). Before the worlds, a first full
// read of a clone of the template as seeded (not frozen) is measured —
// time and bytes it adds — and again on world 1, cloned after the
// adapter's freeze.

// cowSize is arm C's result for one template size.
type cowSize struct {
	TargetMB   int     `json:"target_mb"`
	TemplateMB float64 `json:"template_mb"` // pg_database_size
	Method     string  `json:"method"`      // the adapter's reply for the clones
	// First full read of a world: before (template as seeded) and after
	// the freeze.
	ReadUnfrozenSeconds float64    `json:"read_unfrozen_seconds"`
	ReadUnfrozenMB      float64    `json:"read_unfrozen_mb"`
	ReadFrozenSeconds   float64    `json:"read_frozen_seconds"`
	ReadFrozenMB        float64    `json:"read_frozen_mb"`
	Worlds              []cowWorld `json:"worlds"`
	WALLog              []cowWorld `json:"wal_log"`
	// The goal, for the last world: disk ≤ 1 % of the template, clone ≥ 5×
	// faster than the slowest-but-typical (median) WAL_LOG copy.
	DiskShare float64 `json:"disk_share"`
	Speedup   float64 `json:"speedup"`
	Met       bool    `json:"met"`
}

type cowWorld struct {
	N            int     `json:"n"`
	Seconds      float64 `json:"seconds"`
	AddedMB      float64 `json:"added_mb"`
	CheckpointMS float64 `json:"checkpoint_ms"` // -1: the server does not say
	Method       string  `json:"method"`
}

// cowArm is the state of arm C.
type cowArm struct {
	adapter string // binky-adapter-postgres
	psql    string
	admin   string
	dataDir string
	log     io.Writer
}

func runCoW(ctx context.Context, o options, work string, u *undo, progress io.Writer) ([]cowSize, error) {
	binDir := o.binDir
	if binDir == "" {
		binDir = filepath.Join(work, "bin")
		if !exists(filepath.Join(binDir, "binky-adapter-postgres")) {
			fmt.Fprintln(progress, "building binky-adapter-postgres…")
			if _, err := run(ctx, command{name: "go", args: []string{"build", "-o", filepath.Join(binDir, "binky-adapter-postgres"), "github.com/binkyhq/binky/plugins/postgres/cmd/binky-adapter-postgres"}}); err != nil {
				return nil, err
			}
		}
	}
	binDir, _ = filepath.Abs(binDir)
	c := &cowArm{adapter: filepath.Join(binDir, "binky-adapter-postgres"), psql: lookPath("psql", ""), admin: o.cowAdminURL, log: progress}
	if c.psql == "" {
		return nil, errors.New("find psql on PATH: not there (Debian: apt-get install postgresql-client)")
	}
	v, err := c.query(ctx, c.admin, "SHOW server_version_num")
	if err != nil {
		return nil, fmt.Errorf("arm C's server %s: %w", o.cowAdminURL, err)
	}
	if n, _ := strconv.Atoi(v); n < 180000 {
		return nil, fmt.Errorf("arm C needs PostgreSQL 18 (file_copy_method = clone); %s is %s", o.cowAdminURL, v)
	}
	if c.dataDir, err = c.query(ctx, c.admin, "SHOW data_directory"); err != nil {
		return nil, err
	}
	if _, err := usedBytes(c.dataDir); err != nil {
		return nil, fmt.Errorf("arm C measures the filesystem of the server's data directory %s, which is not readable here: %w", c.dataDir, err)
	}
	var out []cowSize
	for _, mb := range o.cowSizes {
		res, err := c.size(ctx, mb, o.cowWorlds, o.walWorlds, u)
		if res != nil {
			out = append(out, *res)
		}
		if err != nil {
			return out, fmt.Errorf("template of %d MB: %w", mb, err)
		}
	}
	return out, nil
}

func (c *cowArm) query(ctx context.Context, url string, sql ...string) (string, error) {
	args := []string{"-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-d", url}
	for _, s := range sql {
		args = append(args, "-c", s)
	}
	out, err := run(ctx, command{name: c.psql, args: args})
	return strings.TrimSpace(out), err
}

// dbURL is the admin URL with its database replaced.
func dbURL(admin, db string) string {
	head, tail, _ := strings.Cut(admin, "?")
	i := strings.LastIndex(head, "/")
	u := head[:i+1] + db
	if tail != "" {
		u += "?" + tail
	}
	return u
}

// call runs one verb of the adapter's one-shot tier and decodes its reply.
func (c *cowArm) call(ctx context.Context, verb, slice, source string, cfg map[string]any) (map[string]any, error) {
	req := map[string]any{"protocol": 1, "adapter": "postgres", "slice": slice, "project": "bw", "admin_url": c.admin, "config": cfg}
	if source != "" {
		req["source"] = source
	}
	b, _ := json.Marshal(req)
	out, err := runInput(ctx, command{name: c.adapter, args: []string{verb}}, b)
	if err != nil {
		return nil, err
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		return nil, fmt.Errorf("%s %s: reply %q: %w", verb, slice, out, err)
	}
	if ok, _ := rep["ok"].(bool); !ok {
		return nil, fmt.Errorf("%s %s: %v", verb, slice, rep["error"])
	}
	return rep, nil
}

// settled is the used bytes of the data directory's filesystem after a
// checkpoint.
func (c *cowArm) settled(ctx context.Context) (int64, error) {
	if _, err := c.query(ctx, c.admin, "CHECKPOINT"); err != nil {
		return 0, err
	}
	return usedBytes(c.dataDir)
}

// checkpointMS is the server's total checkpoint write and sync time so
// far, -1 where pg_stat_checkpointer does not exist (before 17).
func (c *cowArm) checkpointMS(ctx context.Context) float64 {
	s, err := c.query(ctx, c.admin, "SELECT write_time + sync_time FROM pg_stat_checkpointer")
	if err != nil {
		return -1
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return -1
	}
	return f
}

// firstRead times a full read of db and the bytes it makes the server
// write (after a checkpoint).
func (c *cowArm) firstRead(ctx context.Context, db string) (float64, float64, error) {
	before, err := c.settled(ctx)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if _, err := c.query(ctx, dbURL(c.admin, db), "SELECT count(*) FROM items WHERE body <> ''"); err != nil {
		return 0, 0, err
	}
	secs := time.Since(start).Seconds()
	after, err := c.settled(ctx)
	return secs, float64(after-before) / (1 << 20), err
}

// clone makes one world and measures it.
func (c *cowArm) clone(ctx context.Context, n int, slice, tmpl string, cfg map[string]any) (cowWorld, error) {
	w := cowWorld{N: n, CheckpointMS: -1}
	before, err := c.settled(ctx)
	if err != nil {
		return w, err
	}
	cp := c.checkpointMS(ctx)
	start := time.Now()
	rep, err := c.call(ctx, "clone", slice, tmpl, cfg)
	if err != nil {
		return w, err
	}
	w.Seconds = time.Since(start).Seconds()
	if cp >= 0 {
		if cp2 := c.checkpointMS(ctx); cp2 >= 0 {
			w.CheckpointMS = cp2 - cp
		}
	}
	w.Method, _ = rep["method"].(string)
	after, err := c.settled(ctx)
	w.AddedMB = float64(after-before) / (1 << 20)
	return w, err
}

func (c *cowArm) size(ctx context.Context, mb, worlds, walWorlds int, u *undo) (*cowSize, error) {
	res := &cowSize{TargetMB: mb}
	tmpl := fmt.Sprintf("bw_cow%d_golden", mb)
	var made []string
	drop := func(slice string) {
		u.push("drop database "+slice, func(ctx context.Context) error {
			_, err := c.call(ctx, "destroy", slice, "", nil)
			return err
		})
		made = append(made, slice)
	}
	mark := u.mark()
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		if err := u.unwind(uctx, mark); err != nil {
			fmt.Fprintf(c.log, "arm C: clean up: %v\n", err)
		}
	}()
	drop(tmpl)
	if _, err := c.call(ctx, "provision", tmpl, "", nil); err != nil {
		return nil, err
	}
	fmt.Fprintf(c.log, "arm C: seeding a %d MB template…\n", mb)
	rows := mb << 20 / 300
	if _, err := c.query(ctx, dbURL(c.admin, tmpl),
		// No autovacuum: binky clones the template straight after its
		// seed, before autovacuum would get to it.
		"CREATE TABLE items (id bigint PRIMARY KEY, body text NOT NULL) WITH (autovacuum_enabled = false)",
		fmt.Sprintf("INSERT INTO items SELECT g, md5(g::text) || md5((g+1)::text) || md5((g+2)::text) || md5((g+3)::text) || md5((g+4)::text) || md5((g+5)::text) || md5((g+6)::text) FROM generate_series(1, %d) g", rows)); err != nil {
		return nil, err
	}
	s, err := c.query(ctx, c.admin, "SELECT pg_database_size('"+tmpl+"')")
	if err != nil {
		return nil, err
	}
	size, _ := strconv.ParseFloat(s, 64)
	res.TemplateMB = size / (1 << 20)

	// The template as seeded: a clone made without the freeze, read whole.
	unfrozen := tmpl + "_unfrozen"
	drop(unfrozen)
	if _, err := c.query(ctx, c.admin, "SET file_copy_method = clone",
		"CREATE DATABASE "+unfrozen+" TEMPLATE "+tmpl+" STRATEGY = FILE_COPY"); err != nil {
		return res, err
	}
	if res.ReadUnfrozenSeconds, res.ReadUnfrozenMB, err = c.firstRead(ctx, unfrozen); err != nil {
		return res, err
	}
	if _, err := c.call(ctx, "destroy", unfrozen, "", nil); err != nil {
		return res, err
	}
	fmt.Fprintf(c.log, "arm C %d MB: first read of an unfrozen clone %.2fs, %+.1f MB\n", mb, res.ReadUnfrozenSeconds, res.ReadUnfrozenMB)

	for i := 1; i <= worlds; i++ {
		slice := fmt.Sprintf("bw_cow%d_w%d", mb, i)
		drop(slice)
		w, err := c.clone(ctx, i, slice, tmpl, nil)
		if err != nil {
			return res, err
		}
		res.Worlds = append(res.Worlds, w)
		res.Method = w.Method
		fmt.Fprintf(c.log, "arm C %d MB world %d: %.2fs (checkpoints %.0f ms), %+.1f MB, %s\n", mb, i, w.Seconds, w.CheckpointMS, w.AddedMB, w.Method)
		if i == 1 {
			if res.ReadFrozenSeconds, res.ReadFrozenMB, err = c.firstRead(ctx, slice); err != nil {
				return res, err
			}
			fmt.Fprintf(c.log, "arm C %d MB: first read of world 1 (frozen template) %.2fs, %+.1f MB\n", mb, res.ReadFrozenSeconds, res.ReadFrozenMB)
		}
	}
	for i := 1; i <= walWorlds; i++ {
		slice := fmt.Sprintf("bw_cow%d_wal%d", mb, i)
		drop(slice)
		w, err := c.clone(ctx, i, slice, tmpl, map[string]any{"clone_strategy": "wal_log"})
		if err != nil {
			return res, err
		}
		res.WALLog = append(res.WALLog, w)
		fmt.Fprintf(c.log, "arm C %d MB WAL_LOG copy %d: %.2fs (checkpoints %.0f ms), %+.1f MB\n", mb, i, w.Seconds, w.CheckpointMS, w.AddedMB)
		// One at a time: the copies are whole, and the mount is finite.
		if _, err := c.call(ctx, "destroy", slice, "", nil); err != nil {
			return res, err
		}
	}
	if n := len(res.Worlds); n > 0 && len(res.WALLog) > 0 {
		last := res.Worlds[n-1]
		res.DiskShare = last.AddedMB / res.TemplateMB
		res.Speedup = median(res.WALLog) / last.Seconds
		res.Met = res.DiskShare <= 0.01 && res.Speedup >= 5
	}
	return res, nil
}

func median(ws []cowWorld) float64 {
	s := make([]float64, len(ws))
	for i, w := range ws {
		s[i] = w.Seconds
	}
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// writeCoWTable prints arm C as markdown: per size, each world's clone
// time, bytes added and checkpoint time, the WAL_LOG copies beside them,
// and the first-read cost before and after the freeze.
func writeCoWTable(w io.Writer, sizes []cowSize) {
	fmt.Fprintln(w, "\nArm C: copy-on-write worlds on PostgreSQL 18 (file_copy_method = clone, reflink XFS), beside WAL_LOG copies on the same server")
	rows := [][]string{{"template", "world", "strategy", "clone s", "checkpoints ms", "disk added MB", "method"}}
	for _, s := range sizes {
		for _, x := range s.Worlds {
			rows = append(rows, []string{fmt.Sprintf("%.0f MB", s.TemplateMB), strconv.Itoa(x.N), "file_copy+clone", f2(x.Seconds), cpText(x.CheckpointMS), f1(x.AddedMB), x.Method})
		}
		for _, x := range s.WALLog {
			rows = append(rows, []string{fmt.Sprintf("%.0f MB", s.TemplateMB), strconv.Itoa(x.N), "wal_log", f2(x.Seconds), cpText(x.CheckpointMS), f1(x.AddedMB), x.Method})
		}
	}
	writeMarkdown(w, rows)
	fmt.Fprintln(w, "\nFirst full read of a world, and the goal for the last world (disk ≤ 1 % of the template, clone ≥ 5× faster than the median WAL_LOG copy)")
	rows = [][]string{{"template", "read, not frozen", "read, frozen", "last world's disk", "speed-up vs wal_log", "goal"}}
	for _, s := range sizes {
		goal := "not met"
		if s.Met {
			goal = "met"
		}
		rows = append(rows, []string{fmt.Sprintf("%.0f MB", s.TemplateMB),
			fmt.Sprintf("%.2f s, %+.0f MB", s.ReadUnfrozenSeconds, s.ReadUnfrozenMB),
			fmt.Sprintf("%.2f s, %+.0f MB", s.ReadFrozenSeconds, s.ReadFrozenMB),
			fmt.Sprintf("%.2f %%", s.DiskShare*100), fmt.Sprintf("%.1f×", s.Speedup), goal})
	}
	writeMarkdown(w, rows)
}

func f1(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
func f2(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

func cpText(ms float64) string {
	if ms < 0 {
		return "-"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64)
}
