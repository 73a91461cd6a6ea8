package sqliteadapter

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

func cloneSlice(t *testing.T, data string, config map[string]any, source, slice string) (*sdk.CloneResponse, error) {
	t.Helper()
	return New().Clone(context.Background(), &sdk.CloneRequest{Header: hdr(), Target: target(data, slice, config), Source: source})
}

// checkCopy asserts the database at path passes integrity_check and
// returns its row count, checked against the counter the writer keeps.
func checkCopy(t *testing.T, path string) int {
	t.Helper()
	db, err := openDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		t.Fatalf("integrity_check %s: %v", path, err)
	}
	var report []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		report = append(report, line)
	}
	rows.Close()
	if len(report) != 1 || report[0] != "ok" {
		t.Fatalf("integrity_check of the copy %s: got %q; want [ok]", path, report)
	}
	var count, counter int
	if err := db.QueryRow("SELECT (SELECT count(*) FROM rows), (SELECT n FROM counter)").Scan(&count, &counter); err != nil {
		t.Fatalf("count rows of the copy %s: %v", path, err)
	}
	if count != counter {
		t.Fatalf("the copy %s is torn: %d rows; its counter says %d", path, count, counter)
	}
	return count
}

const schema = `CREATE TABLE rows(id INTEGER PRIMARY KEY, batch INT, pad BLOB);
CREATE TABLE counter(n INT);
INSERT INTO counter VALUES (0);`

func TestClone(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	src := provisionSlice(t, target(data, "acme_golden", nil))
	execSQL(t, src, schema, "INSERT INTO rows(batch, pad) VALUES (1, randomblob(100)), (1, randomblob(100))", "UPDATE counter SET n = 2")

	resp, err := cloneSlice(t, data, nil, "acme_golden", "acme_feat")
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	if resp.Method != MethodCopy && resp.Method != MethodReflink {
		t.Errorf("method: got %q; want %q or %q", resp.Method, MethodCopy, MethodReflink)
	}
	dst := filepath.Join(data, "acme", "acme_feat.db")
	if n := checkCopy(t, dst); n != 2 {
		t.Errorf("rows in the clone: got %d; want 2", n)
	}
	// The clone is independent of its source.
	execSQL(t, dst, "INSERT INTO rows(batch) VALUES (2)", "UPDATE counter SET n = 3")
	if n := checkCopy(t, src); n != 2 {
		t.Errorf("rows in the source after writing the clone: got %d; want 2", n)
	}
	// Cloning again replaces the slice.
	if _, err := cloneSlice(t, data, nil, "acme_golden", "acme_feat"); err != nil {
		t.Fatalf("clone again: %v", err)
	}
	if n := checkCopy(t, dst); n != 2 {
		t.Errorf("rows after cloning over the slice: got %d; want 2", n)
	}
	entries, err := os.ReadDir(filepath.Join(data, "acme"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if fmt.Sprint(names) != "[acme_feat.db acme_golden.db]" {
		t.Errorf("files left: got %v; want [acme_feat.db acme_golden.db] (no temporary or WAL file)", names)
	}
}

func TestCloneRefusals(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	provisionSlice(t, target(data, "src", nil))
	tests := []struct {
		name, source, slice string
		want                sdk.Code
	}{
		{"missing source", "nothing", "dst", sdk.CodeInvalid},
		{"onto itself", "src", "src", sdk.CodeInvalid},
		{"bad source name", "../src", "dst", sdk.CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cloneSlice(t, data, nil, tt.source, tt.slice)
			if got := sdk.CodeOf(err); err == nil || got != tt.want {
				t.Errorf("clone %s from %s: got %v (code %s); want code %s", tt.slice, tt.source, err, got, tt.want)
			}
		})
	}
}

// TestCloneReflink needs a filesystem with reflinks (Btrfs, XFS): set
// BINKY_TEST_REFLINK_DIR to a directory on one.
func TestCloneReflink(t *testing.T) {
	base := os.Getenv("BINKY_TEST_REFLINK_DIR")
	if base == "" {
		t.Skip("set BINKY_TEST_REFLINK_DIR to a directory on Btrfs or XFS (mkfs.xfs -m reflink=1) to test reflink clones")
	}
	dir, err := os.MkdirTemp(base, "binky-sqlite-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	config := map[string]any{"dir": dir}
	tg := target(t.TempDir(), "src", config)
	if _, err := New().Provision(context.Background(), &sdk.ProvisionRequest{Header: hdr(), Target: tg}); err != nil {
		t.Fatal(err)
	}
	execSQL(t, filepath.Join(dir, "src.db"), schema, "INSERT INTO rows(batch, pad) VALUES (1, randomblob(1000))", "UPDATE counter SET n = 1")
	resp, err := cloneSlice(t, tg.DataDir, config, "src", "dst")
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	if resp.Method != MethodReflink {
		t.Errorf("method on %s: got %q; want %q", base, resp.Method, MethodReflink)
	}
	if n := checkCopy(t, filepath.Join(dir, "dst.db")); n != 1 {
		t.Errorf("rows in the clone: got %d; want 1", n)
	}
}

// writerEnv makes the test binary a writer process (TestHelperWriter).
const writerEnv = "BINKY_SQLITE_TEST_WRITER"

// TestHelperWriter is not a test: TestCloneWhileWriting runs it as a child
// process that writes the database named in writerEnv until its stdin
// closes. Each transaction inserts 20 rows, deletes up to 10 and keeps
// counter.n equal to the row count; it checkpoints every 8 pages so that
// checkpoints run while clones copy. After each commit it prints n.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv(writerEnv)
	if path == "" {
		t.Skip("runs only as the child process of TestCloneWhileWriting")
	}
	stop := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stop) }()
	err := func() error {
		db, err := openDB(path)
		if err != nil {
			return err
		}
		defer db.Close()
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint=8"); err != nil {
			return err
		}
		for batch := 1; batch <= 100000; batch++ {
			select {
			case <-stop:
				return nil
			default:
			}
			var n int
			err := func() error {
				if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
					return err
				}
				stmts := []string{
					"INSERT INTO rows(batch, pad) SELECT ?, randomblob(400) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 20) SELECT i FROM c)",
					"DELETE FROM rows WHERE id IN (SELECT id FROM rows WHERE batch % 3 = ? % 3 ORDER BY random() LIMIT 10)",
				}
				for _, s := range stmts {
					if _, err := conn.ExecContext(ctx, s, batch); err != nil {
						conn.ExecContext(ctx, "ROLLBACK")
						return err
					}
				}
				if err := conn.QueryRowContext(ctx, "UPDATE counter SET n = (SELECT count(*) FROM rows) RETURNING n").Scan(&n); err != nil {
					conn.ExecContext(ctx, "ROLLBACK")
					return err
				}
				_, err := conn.ExecContext(ctx, "COMMIT")
				return err
			}()
			if err != nil {
				return fmt.Errorf("batch %d: %w", batch, err)
			}
			fmt.Println(n)
		}
		return nil
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestCloneWhileWriting clones a database again and again while another
// process commits to it: every copy must pass integrity_check and hold
// exactly as many rows as its counter says.
func TestCloneWhileWriting(t *testing.T) {
	t.Parallel()
	t.Run("temp dir", func(t *testing.T) {
		t.Parallel()
		cloneWhileWriting(t, nil, "")
	})
	t.Run("reflink dir", func(t *testing.T) {
		base := os.Getenv("BINKY_TEST_REFLINK_DIR")
		if base == "" {
			t.Skip("set BINKY_TEST_REFLINK_DIR to a directory on Btrfs or XFS to run this with reflinks")
		}
		t.Parallel()
		dir, err := os.MkdirTemp(base, "binky-sqlite-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		cloneWhileWriting(t, map[string]any{"dir": dir}, MethodReflink)
	})
}

// cloneWhileWriting runs the test in the directory config names; when
// wantMethod is set every clone must have used it.
func cloneWhileWriting(t *testing.T, config map[string]any, wantMethod string) {
	data := t.TempDir()
	src := provisionSlice(t, target(data, "busy", config))
	execSQL(t, src, schema)
	dir := filepath.Dir(src)

	writer := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
	writer.Env = append(os.Environ(), writerEnv+"="+src)
	stdin, err := writer.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := writer.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	writer.Stderr = os.Stderr
	if err := writer.Start(); err != nil {
		t.Fatalf("start the writer: %v", err)
	}
	committed := bufio.NewScanner(stdout)
	// waitPast reads the writer's progress until it has committed a count
	// above n.
	waitPast := func(n int) {
		t.Helper()
		for committed.Scan() {
			if got, _ := strconv.Atoi(committed.Text()); got > n {
				return
			}
		}
		t.Fatalf("the writer stopped before its count passed %d", n)
	}
	defer func() {
		stdin.Close()
		io.Copy(io.Discard, stdout)
		if err := writer.Wait(); err != nil {
			t.Errorf("writer: %v", err)
		}
	}()

	last := 0
	for i := range 25 {
		waitPast(last) // at least one commit since the previous copy
		slice := fmt.Sprintf("copy%d", i)
		resp, err := cloneSlice(t, data, config, "busy", slice)
		if err != nil {
			t.Fatalf("clone #%d while writing: %v", i, err)
		}
		if wantMethod != "" && resp.Method != wantMethod {
			t.Errorf("clone #%d: method %q; want %q", i, resp.Method, wantMethod)
		}
		n := checkCopy(t, filepath.Join(dir, slice+".db"))
		if n <= last {
			t.Fatalf("copy #%d (%s) holds %d rows; want more than the previous copy's %d", i, resp.Method, n, last)
		}
		last = n
	}
	if _, err := os.Stat(src + "-wal"); err != nil {
		t.Errorf("the source's WAL: %v; want it present while the writer runs (else nothing was tested)", err)
	}
}
