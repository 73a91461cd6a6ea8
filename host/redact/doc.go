// Package redact owns secret masking for everything Binky itself writes or
// shows: events, the daemon log, status output, error messages and the
// service logs `binky logs` reads. A Redactor is told the values resolved
// from ${env.*} and the passwords of adapter addresses (Add, AddAddress)
// and replaces every occurrence of them with "***", in strings or in a
// stream whose writes may split a secret anywhere.
//
// What is caught, for every secret of MinLen (4) bytes or more (Forms):
//   - the value as it is, and URL-encoded (query and path escaping);
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
//   - the password of a URL-shaped secret, in all these forms.
//
// What cannot be caught:
//   - secrets shorter than MinLen bytes (they would mask ordinary text);
//   - a secret split by anything but single line breaks: a line prefix
//     (a timestamp or "svc | " written before the continuation), several
//     line breaks in one place, a secret interleaved with other output,
//     reversed, or printed in pieces by separate programs;
//   - other encodings and transformations: base32, base58, quoted-printable,
//     JSON \u escapes of ordinary characters, a different case (beyond hex),
//     double URL-encoding, a hash, compressed or encrypted data;
//   - in a stream, a secret whose rest arrives after the writer was
//     flushed because the stream went quiet (Writer.Flush masks a held
//     start of MinLen bytes or more, but a shorter start is written);
//   - secrets Binky was never told: values a service computes or fetches
//     itself.
package redact
