// Package shareopen opens and replaces files the way Unix always does.
// Open asks, on Windows, for FILE_SHARE_DELETE besides read and write
// sharing, so a log can be rolled (renamed) while a service writes it or
// a follower reads it; os.OpenFile does not ask for that sharing. Replace
// renames a new file over one a reader may hold open for a moment, which
// Windows refuses while the handle lives: it tries again for a bounded
// time. On Unix, Open is os.OpenFile and Replace is os.Rename.
package shareopen
