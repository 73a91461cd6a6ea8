package supervisor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/binkyhq/binky/host/internal/shareopen"
)

// Log rolling: at each (re)start, and while the service runs (see
// logkeep.go), a log past LogRollSize becomes .1, .1 becomes .2, .2
// becomes .3, and the old .3 is dropped: at most four files of about
// LogRollSize each (20 MiB) per service.
const (
	LogRollSize    = 5 << 20
	LogGenerations = 3
)

// LogFiles lists a log's files oldest first: path.3, path.2, path.1, path.
// Files that do not exist are listed too; readers skip them.
func LogFiles(path string) []string {
	files := make([]string, 0, LogGenerations+1)
	for g := LogGenerations; g >= 1; g-- {
		files = append(files, generation(path, g))
	}
	return append(files, path)
}

func generation(path string, g int) string {
	if g == 0 {
		return path
	}
	return path + "." + strconv.Itoa(g)
}

// RemoveLogs deletes a service log and its generations (worktree removal).
func RemoveLogs(path string) error {
	var errs []error
	for _, f := range LogFiles(path) {
		for _, p := range []string{f, f + indexSuffix} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove log %s: %w", path, err)
	}
	return nil
}

// rollLog rolls path when it is larger than limit. Only a start calls it
// (through logKeeper.roll), between runs, so no process of the service is
// writing the file.
func rollLog(path string, limit int64) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("roll log %s: %w", path, err)
	}
	if fi.Size() <= limit {
		return nil
	}
	return shiftGenerations(path, 0)
}

// openLog opens the service log for appending, creating its directory. The
// mode is 0600: a service may print what it was given in its environment.
func openLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create log directory for %s: %w", path, err)
	}
	f, err := shareopen.Open(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", path, err)
	}
	return f, nil
}

// LinePrefix starts every line Binky itself writes into a service log.
const LinePrefix = "[binky] "

// noteLog appends one line of Binky's own to the service log.
func noteLog(path, format string, args ...any) error {
	f, err := openLog(path)
	if err != nil {
		return err
	}
	line := LinePrefix + time.Now().Format(time.RFC3339) + " " + fmt.Sprintf(format, args...) + "\n"
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
