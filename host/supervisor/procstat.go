package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// procStat is the part of /proc/<pid>/stat the supervisor reads.
type procStat struct {
	State     byte   // field 3: R, S, D, Z, X…
	Ppid      int    // field 4
	Pgrp      int    // field 5
	Session   int    // field 6
	StartTime uint64 // field 22: clock ticks after boot
}

func (s procStat) dead() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

var errStatFormat = errors.New("malformed /proc stat line")

// parseStat parses the text of /proc/<pid>/stat. The command name (field 2)
// is in parentheses and may itself hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseStat(b []byte) (procStat, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, errStatFormat
	}
	rest := bytes.Fields(b[end+1:])
	// rest[0] is field 3; field 22 is rest[19].
	if len(rest) < 20 || len(rest[0]) != 1 {
		return procStat{}, fmt.Errorf("%w: %d fields after the command name", errStatFormat, len(rest))
	}
	var s procStat
	s.State = rest[0][0]
	ints := []*int{&s.Ppid, &s.Pgrp, &s.Session}
	for i, p := range ints {
		v, err := strconv.Atoi(string(rest[1+i]))
		if err != nil {
			return procStat{}, fmt.Errorf("%w: field %d: %w", errStatFormat, 4+i, err)
		}
		*p = v
	}
	st, err := strconv.ParseUint(string(rest[19]), 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("%w: field 22: %w", errStatFormat, err)
	}
	s.StartTime = st
	return s, nil
}
