//go:build windows

package api

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// homeIDFile mirrors the home's id (ports.HomeIDFile), written by the daemon
// at its first start.
const homeIDFile = "home.id"

// PipeName is the daemon API's named pipe for a home id.
func PipeName(homeID string) string { return `\\.\pipe\binky-` + homeID }

// Endpoint is where the daemon of home listens: the named pipe of its home
// id, or the socket path while the home has no id yet (no daemon ever ran).
func Endpoint(home string) string {
	if id, err := readHomeID(home); err == nil {
		return PipeName(id)
	}
	return Socket(home)
}

func readHomeID(home string) (string, error) {
	b, err := os.ReadFile(filepath.Join(home, homeIDFile))
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if id == "" || strings.ContainsAny(id, `\/:`) || len(id) > 128 {
		return "", fmt.Errorf("%s holds no home id", filepath.Join(home, homeIDFile))
	}
	return id, nil
}

// dial connects to the daemon's named pipe and checks that the process
// serving it runs as this user: a pipe another user made first under the
// name (squatting) is refused.
func dial(ctx context.Context, home string) (net.Conn, error) {
	id, err := readHomeID(home)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, os.ErrNotExist // no daemon ever ran in this home
	}
	if err != nil {
		return nil, err
	}
	conn, err := winio.DialPipeContext(ctx, PipeName(id))
	if err != nil {
		if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, fs.ErrNotExist) {
			return nil, os.ErrNotExist
		}
		return nil, err
	}
	if err := CheckPipeServer(conn); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// CheckPipeServer refuses a pipe whose server process runs as another user.
func CheckPipeServer(conn net.Conn) error {
	fc, ok := conn.(interface{ Fd() uintptr })
	if !ok {
		return fmt.Errorf("daemon pipe: cannot read its handle")
	}
	var pid uint32
	if err := windows.GetNamedPipeServerProcessId(windows.Handle(fc.Fd()), &pid); err != nil {
		return fmt.Errorf("daemon pipe: find its server: %w", err)
	}
	theirs, err := processUser(pid)
	if err != nil {
		return fmt.Errorf("daemon pipe: the user of its server (pid %d): %w", pid, err)
	}
	mine, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("daemon pipe: this process's user: %w", err)
	}
	if !windows.EqualSid(theirs, mine.User.Sid) {
		return fmt.Errorf("daemon pipe is served by pid %d, which runs as %s, not as this user (%s); refusing it", pid, theirs, mine.User.Sid)
	}
	return nil
}

func processUser(pid uint32) (*windows.SID, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return nil, err
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return nil, err
	}
	return u.User.Sid.Copy()
}

// OwnerOnlySDDL is the security descriptor of the daemon's pipe: owned by
// this user, and a protected DACL that admits this user alone.
func OwnerOnlySDDL() (string, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("this process's user: %w", err)
	}
	sid := u.User.Sid.String()
	return "O:" + sid + "D:P(A;;GA;;;" + sid + ")", nil
}

// ListenPipe listens on the daemon API's pipe for homeID with the
// owner-only DACL. It fails when the pipe already exists (another daemon,
// or a squatter): go-winio makes the first instance with
// FILE_FLAG_FIRST_PIPE_INSTANCE.
func ListenPipe(homeID string) (net.Listener, error) {
	sddl, err := OwnerOnlySDDL()
	if err != nil {
		return nil, err
	}
	ln, err := winio.ListenPipe(PipeName(homeID), &winio.PipeConfig{SecurityDescriptor: sddl})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", PipeName(homeID), err)
	}
	takePlaceholder(PipeName(homeID))
	return ln, nil
}

// takePlaceholder opens the listener's first pipe instance once, with no
// access rights, and closes it, before any Accept. go-winio makes that
// first instance without read or write access so that it refuses clients
// and serves only to hold the name; its Accepts wait on the instances it
// makes next. Where the pipe file system does not honour that (Wine 8, and
// Windows 7: go-winio issues #173 and #313), the first client connects to
// the placeholder, which nobody ever accepts, and hangs: the daemon lost
// its first caller. Taken here, the placeholder is connected and closed by
// us, and every client reaches an instance an Accept waits on. On Windows
// 10 and later the open fails with ERROR_PIPE_BUSY (the placeholder
// refuses it, as meant), which changes nothing; any failure is ignored for
// the same reason.
func takePlaceholder(name string) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return
	}
	h, err := windows.CreateFile(p, 0, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		return // ERROR_PIPE_BUSY on Windows 10+: the placeholder refuses clients
	}
	windows.CloseHandle(h)
}
