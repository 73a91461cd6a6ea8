// Package safefile opens and reads files that come from a user's
// repository (binky.toml, env_file, golden inputs, [worktree] copy
// sources) only when they are regular files, and never more of them than
// a caller's bound.
//
// A path in a repository can name anything: a FIFO whose open blocks until
// a writer comes (forever, and with it every verb on that repository), a
// character device such as /dev/zero that never ends, a socket or a
// directory. OpenRegular opens without blocking (O_NONBLOCK on Unix) and
// checks the opened descriptor's type (fstat), so there is no window
// between a check and the open for the path to be swapped; on Windows the
// type is checked after the open. Anything but a regular file is refused
// by name: "env/x is a FIFO, not a regular file". A symlink to a regular
// file is a regular file.
//
// ReadRegular reads such a file whole, at most limit bytes: it refuses a
// file whose size is over limit before reading it, and reads at most
// limit+1 bytes of one that grows, so a read costs at most limit bytes of
// memory.
//
// OpenRegularNoFollow and ReadRegularNoFollow are the same for a path that
// must itself be the file, not a symlink to one (a file binky rewrites in
// place, such as the settings `binky hook install` merges into): a symlink
// there is refused, whatever it points to, without opening its target.
package safefile
