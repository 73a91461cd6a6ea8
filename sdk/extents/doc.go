// Package extents tells, on Linux, how many bytes of a file are mapped to
// blocks and how many of those the filesystem shares with another file (a
// reflink copy), from the file's extent map (FIEMAP). Adapters that clone
// by reflink use it: postgres to verify a copy-on-write clone, sqlite to
// count a slice's shared bytes once. Elsewhere File answers ErrUnsupported.
package extents
