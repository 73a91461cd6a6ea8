// Package man renders Binky's manual pages: binky(1) from the kong model
// of the command line (every verb, its arguments and its flags, so the page
// cannot drift from the parser), and binky.toml(5) from the key reference
// in docs/config.md. `make man` writes them through the hidden verb
// `binky __man`; packages install them.
package man
