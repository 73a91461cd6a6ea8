// Package redact owns secret masking for everything Binky itself writes or
// shows: events, the daemon log, status output, error messages and the
// service logs `binky logs` reads. A Redactor is told the values resolved
// from ${env.*} and the passwords of adapter addresses (Add, AddAddress)
// and replaces every occurrence of them with "***", in strings or in a
// stream whose writes may split a secret anywhere.
//
// What is caught, for every secret of MinLen (4) bytes or more:
//   - the value as it is;
//   - percent-encoded, whichever bytes the encoder leaves alone: %XX for
//     any byte, hex digits in either case, '+' for a space — JavaScript's
//     encodeURIComponent and encodeURI, Python's quote (safe "/") and
//     quote_plus, Go's url.QueryEscape, url.PathEscape and a URL's
//     userinfo, and every other encoder that escapes bytes one by one;
//   - inside a JSON string, as any encoder writes it: \" \\ \/ \b \f \n \r
//     \t and \uXXXX in either case, a surrogate pair for a character past
//     U+FFFF — Go's encoding/json (with its \u003c \u003e \u0026 HTML
//     escapes or without), JavaScript's JSON.stringify, Python's
//     json.dumps (ensure_ascii or not), PHP's json_encode (\/);
//   - hex, lower and upper case;
//   - base64, standard and URL alphabets, with and without padding, alone
//     or inside a longer base64 text at any of the three byte alignments
//     (there the characters that depend on the secret alone are masked;
//     the one or two characters at each edge, which mix in neighbouring
//     bytes, are left, so up to 4 bits of the secret's first and last
//     bytes may stay visible);
//   - any of these wrapped over lines: one line break ("\n" or "\r\n")
//     between any two bytes, as base64(1) or a hex dump wraps, in a string
//     or a stream (the stream holds back a tail that may begin a secret
//     until the next line settles it);
//   - the password of a URL-shaped secret, in all these forms;
//   - every line of a multi-line secret on its own, and the part of one
//     that a window holds (below).
//
// The escaped spellings are not registered one by one: the matcher reads
// an escape sequence in the text as the bytes it stands for (see
// matcher). One occurrence is read one way: once an escape stood for a
// byte, a '%' (or '\') of the secret must be escaped too; once one stood
// for itself, no escape of that kind is read.
//
// Multi-line secrets and windows. Binky often shows a window of a text:
// the last lines of a log (`binky status`, `binky logs -n`, the MCP logs
// tool), a chunk of a stream, an error that quotes some output. A window
// may begin or end inside a multi-line secret (a PEM key), so besides the
// whole value each line of such a secret that is a fragment is registered
// in all the forms above (but for the base64 of the line alone, which only
// differs in its last characters from what the line gives inside the
// secret's base64):
//   - the lines are what "\n" or "\r\n" separate (in a secret without line
//     breaks that holds PEM armour, a key kept JSON-escaped, the two
//     characters \n), trimmed of spaces, tabs and carriage returns;
//   - a line is a fragment when it is MinLen bytes or more, holds a letter,
//     a digit or a non-ASCII byte, and is not PEM armour
//     ("-----BEGIN …-----", "-----END …-----"): armour and lines of
//     punctuation are public, the same in every key, and masking them would
//     mask every certificate's armour and every "-----" in a log;
//   - a fragment is masked wherever it appears, so the last lines of a log
//     that begin inside a key show "***" for each line of its body, then the
//     END armour and what followed;
//   - a fragment cut by a window's edge: String and Bytes take their
//     argument as a window, so a text that begins with the end of a
//     fragment, ends with its beginning, or lies inside one, has that part
//     masked when it is MinLen bytes or more — as it is, percent-encoded or
//     JSON-escaped; at the start, after what may be the cut tail of one
//     escape sequence and a line break, which stays. A Writer takes the
//     start of its stream, a Flush and Close as the edges.
//
// In a stream, Writer holds back the tail of what it was given from the
// first byte where an occurrence of a form (a fragment included) could
// begin but is not finished, so it never writes the start of a secret
// before it knows whether the secret follows; text that cannot begin one
// passes at once.
//
// What cannot be caught:
//   - secrets shorter than MinLen bytes (they would mask ordinary text),
//     lines of a multi-line secret shorter than MinLen, and the part of a
//     line at a window's edge shorter than MinLen (up to 3 bytes at each
//     edge), or of a hex or base64 spelling of a multi-line secret (up to
//     one line's spelling at each edge: only the raw line is matched in
//     part);
//   - a single-line secret cut by a window's edge: the part the window
//     holds is not masked (a string's start is no secret's part; the tail
//     of an address is a slice name). Only a window redacted on its own
//     has edges; a stream through a Writer is matched across its writes;
//   - a secret split by anything but single line breaks: a line prefix (a
//     timestamp or "svc | " written before the continuation), several line
//     breaks in one place, a secret interleaved with other output,
//     reversed, or printed in pieces by separate programs — but each line
//     of a multi-line secret is masked on its own even so;
//   - other encodings and transformations: base32, base58,
//     quoted-printable, HTML entities (&amp;), a different letter case
//     (beyond hex digits), escaping applied twice (percent-encoding twice,
//     JSON inside a JSON string, a percent-encoded JSON string), one
//     occurrence escaped two ways (a '%' written %25 and another as it
//     is), invalid UTF-8 inside a JSON string (encoders write U+FFFD),
//     hashes, compressed or encrypted data;
//   - in a stream, a single-line secret whose rest arrives after the
//     writer was flushed because the stream went quiet (Writer.Flush masks
//     a held start of MinLen bytes or more, but a shorter start is
//     written; what follows a Flush is a new window, so the rest of a line
//     of a multi-line secret is masked);
//   - secrets Binky was never told: values a service computes or fetches
//     itself.
//
// Cost: a text is scanned once, whatever the number of forms; a position
// is compared with a form only when its first bytes (as they are, after a
// line break or decoded) agree with the form's. A secret or line that
// repeats one byte in a text that repeats it too costs text × length
// (BenchmarkRepeatedByteSecret, BenchmarkRepeatedByteLines).
package redact
