// Package browserlog owns a world's browser log: what the pages of its url
// services report through the proxy when the project opts in
// ([agents] browser_logs = true) — console.error calls, uncaught errors,
// unhandled promise rejections and failed fetches — and the notes Binky
// adds itself (a page left without the script, entries dropped).
//
// The log is JSON lines, browser.jsonl in the world's log directory, so it
// goes with the world. Store appends to it with the bounds: a size per
// entry and per field (Parse), a rate per world (entries beyond it are
// counted and said once in a note), and a size per file (past it the file
// becomes browser.jsonl.1, the one older generation kept). The file holds
// raw text as the pages sent it; Read returns it, and Redact masks every
// secret the registry records, as service logs are masked when read.
//
// Parse reads what a page posts; it is outside input, bounded and fuzzed.
package browserlog
