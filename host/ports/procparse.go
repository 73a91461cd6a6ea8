package ports

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// parseStatStart reads field 22 (the start time, in clock ticks after
// boot) out of the text of /proc/<pid>/stat. The command name (field 2) is
// in parentheses and may itself hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseStatStart(b []byte) (uint64, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return 0, errors.New("malformed /proc stat line: no command name")
	}
	rest := bytes.Fields(b[end+1:])
	// rest[0] is field 3; field 22 is rest[19].
	if len(rest) < 20 {
		return 0, fmt.Errorf("malformed /proc stat line: %d fields after the command name", len(rest))
	}
	st, err := strconv.ParseUint(string(rest[19]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed /proc stat line: field 22: %w", err)
	}
	return st, nil
}

// parseLocksHolder finds, in the text of /proc/locks, the pid holding a
// lock (not waiting for one) on the file with device major:minor and inode
// ino; 0 when none is listed. A line reads
//
//	1: FLOCK  ADVISORY  WRITE 12345 08:02:131 0 EOF
//
// with the device in hex and the inode in decimal; a waiter's line has
// "->" after the number. When no line names the device (overlay file
// systems report another), a single holder of that inode is taken.
func parseLocksHolder(text []byte, major, minor uint32, ino uint64) int {
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, ino)
	inoSuffix := ":" + strconv.FormatUint(ino, 10)
	byIno, inoHolders := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] == "->" {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil || pid <= 0 {
			continue
		}
		if f[5] == want {
			return pid
		}
		if strings.HasSuffix(f[5], inoSuffix) && strings.Count(f[5], ":") == 2 {
			byIno, inoHolders = pid, inoHolders+1
		}
	}
	if inoHolders == 1 {
		return byIno
	}
	return 0
}
