package sqliteadapter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/binkyhq/binky/sdk"
)

// holdEnv makes the test binary a process that holds a file open:
// "<mode>|<path>", mode being share (FILE_SHARE_DELETE given), noshare
// (read and write shared only) or sqlite (a SQLite connection, which opens
// the database, its WAL and shm without FILE_SHARE_DELETE, as an
// application does).
const holdEnv = "BINKY_SQLITE_TEST_HOLD"

// underWine: scripts/test-windows runs the Windows tier under Wine.
func underWine() bool { return os.Getenv("BINKY_TEST_WINE") == "1" }

// TestHelperHolder holds a file open until its stdin closes; it prints
// "held" once the file is open.
func TestHelperHolder(t *testing.T) {
	v := os.Getenv(holdEnv)
	if v == "" {
		t.Skip("runs only as the child process of the in-use tests")
	}
	mode, path, _ := strings.Cut(v, "|")
	err := func() error {
		switch mode {
		case "sqlite":
			db, err := openDB(path)
			if err != nil {
				return err
			}
			defer db.Close()
			var n int
			if err := db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
				return err
			}
		default:
			share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE)
			if mode == "share" {
				share |= windows.FILE_SHARE_DELETE
			}
			p, _ := windows.UTF16PtrFromString(path)
			h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE, share, nil, windows.OPEN_EXISTING, 0, 0)
			if err != nil {
				return err
			}
			defer windows.CloseHandle(h)
		}
		fmt.Println("held")
		_, _ = io.Copy(io.Discard, os.Stdin)
		return nil
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "holder:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// hold starts a process that holds path open in mode (see holdEnv) and
// returns its pid and a function that makes it close the file and exit.
func hold(t *testing.T, path, mode string) (int, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHolder$")
	cmd.Env = append(os.Environ(), holdEnv+"="+mode+"|"+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			stdin.Close()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(release)
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "held" {
		release()
		t.Fatalf("the holder of %s (%s) did not start: %q %s", path, mode, line, stderr.String())
	}
	return cmd.Process.Pid, release
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// TestOpenSharedLetsOthersRemove: a slice file the adapter holds open can
// be removed and renamed over by others, which os.Open's handle forbids.
func TestOpenSharedLetsOthersRemove(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")
	for _, p := range []string{a, b, c} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f, err := openShared(a, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(a); err != nil {
		t.Errorf("remove %s while openShared holds it: %v", a, err)
	}
	f.Close()
	g, err := openShared(b, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b, b+".moved"); err != nil {
		t.Errorf("rename %s while openShared holds it: %v", b, err)
	}
	g.Close()
	h, err := os.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := os.Remove(c); err == nil {
		t.Errorf("remove %s while os.Open holds it: got no error; want a sharing violation (the reason for openShared)", c)
	}
}

// TestDestroyWhileHeld: a slice another process holds without
// FILE_SHARE_DELETE is refused after a short wait, naming the file (and
// the process where Windows tells), with nothing removed and the claim
// kept; once the process lets go, the next destroy finishes. A holder that
// shares deletion does not stop destroy.
func TestDestroyWhileHeld(t *testing.T) {
	for _, mode := range []string{"noshare", "sqlite", "share"} {
		t.Run(mode, func(t *testing.T) {
			data := t.TempDir()
			tg := owned(data, "acme_main", "home-1", nil)
			path := provisionSlice(t, tg)
			execSQL(t, path, "CREATE TABLE keep(x)", "INSERT INTO keep VALUES (1)")
			pid, release := hold(t, path, mode)
			start := time.Now()
			_, err := New().Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: tg})
			if mode == "share" {
				if err != nil {
					t.Fatalf("destroy while a holder shares deletion: %v", err)
				}
				release()
				if exists(t, path) || exists(t, path+claimSuffix) {
					t.Fatalf("after destroy and the holder's exit: %s or its claim is still there", path)
				}
				provisionSlice(t, tg) // the name is free again
				return
			}
			if err == nil {
				t.Fatal("destroy while held without FILE_SHARE_DELETE: got no error")
			}
			if sdk.CodeOf(err) != sdk.CodeConflict || !strings.Contains(err.Error(), "is in use by") || !strings.Contains(err.Error(), path) {
				t.Errorf("got %v (code %s); want a conflict saying %s is in use", err, sdk.CodeOf(err), path)
			}
			if who := fileHolders(path); len(who) > 0 && !strings.Contains(err.Error(), fmt.Sprintf("pid %d", pid)) {
				t.Errorf("the Restart Manager names %v, yet the error %q does not name the holder, pid %d", who, err, pid)
			} else if len(who) == 0 && !underWine() {
				t.Errorf("the Restart Manager named no holder of %s (pid %d holds it)", path, pid)
			}
			if d := time.Since(start); d < inUseWait {
				t.Errorf("refused after %v; want a wait of %v first", d, inUseWait)
			}
			if !exists(t, path) || claimFile(t, path) == "" {
				t.Fatalf("after the refused destroy: the database or its claim is gone")
			}
			release()
			if n := queryInt(t, path, "SELECT count(*) FROM keep"); n != 1 {
				t.Fatalf("after the refused destroy: %d rows; want the 1 it had", n)
			}
			if _, err := New().Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: tg}); err != nil {
				t.Fatalf("destroy after the holder let go: %v", err)
			}
			for _, p := range []string{path, path + "-wal", path + "-shm", path + claimSuffix} {
				if exists(t, p) {
					t.Errorf("after the second destroy %s is still there", p)
				}
			}
		})
	}
}

// TestCloneWhileHeld: cloning from a source an application holds open
// works; replacing a target held without FILE_SHARE_DELETE is refused
// with the target left whole and no temporary copy behind; a target held
// with FILE_SHARE_DELETE is replaced.
func TestCloneWhileHeld(t *testing.T) {
	data := t.TempDir()
	src := provisionSlice(t, target(data, "acme_golden", nil))
	execSQL(t, src, "CREATE TABLE src(x)", "INSERT INTO src VALUES (1), (2)")
	_, releaseSrc := hold(t, src, "sqlite")
	if _, err := cloneSlice(t, data, nil, "acme_golden", "acme_a"); err != nil {
		t.Fatalf("clone from a source an application holds: %v", err)
	}
	releaseSrc()

	for _, mode := range []string{"noshare", "sqlite", "share"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "share" && underWine() {
				t.Skip("under Wine: a removed file another process holds with FILE_SHARE_DELETE stays, delete-pending, until it is closed (Wine 8 has no POSIX delete), so nothing can be renamed onto its name; Windows 10 and later remove the name at once (docs/windows.md)")
			}
			slice := "acme_" + mode
			dst := provisionSlice(t, target(data, slice, nil))
			execSQL(t, dst, "CREATE TABLE old(x)", "INSERT INTO old VALUES (1)")
			_, release := hold(t, dst, mode)
			_, err := cloneSlice(t, data, nil, "acme_golden", slice)
			if mode == "share" {
				if err != nil {
					t.Fatalf("clone onto a target held with FILE_SHARE_DELETE: %v", err)
				}
				release()
				if n := queryInt(t, dst, "SELECT count(*) FROM src"); n != 2 {
					t.Fatalf("the clone holds %d rows; want 2", n)
				}
				return
			}
			if err == nil || sdk.CodeOf(err) != sdk.CodeConflict || !strings.Contains(err.Error(), "is in use by") {
				t.Fatalf("clone onto a held target: got %v; want a conflict saying it is in use", err)
			}
			release()
			if n := queryInt(t, dst, "SELECT count(*) FROM old"); n != 1 {
				t.Fatalf("after the refused clone the target holds %d rows of its own; want 1", n)
			}
			left, _ := filepath.Glob(filepath.Join(data, "acme", ".clone-*"))
			if len(left) > 0 {
				t.Errorf("the refused clone left %v", left)
			}
			if _, err := cloneSlice(t, data, nil, "acme_golden", slice); err != nil {
				t.Fatalf("clone after the holder let go: %v", err)
			}
			if n := queryInt(t, dst, "SELECT count(*) FROM src"); n != 2 {
				t.Fatalf("the clone holds %d rows; want 2", n)
			}
		})
	}
}
