// Package config reads binky.toml: it decodes the file strictly into typed
// structs and validates it, reporting every problem as a Diagnostic with a
// file:line position and a fix hint. Errors make the file unusable; warnings
// flag footguns (a ${self.port} in a service that asks for no port, a
// literal secret in env, a migrate that cannot know its slice…).
//
// Load and Parse return an error only when the file cannot be read, is over
// MaxSize, nests deeper than MaxDepth or writes more than MaxEntries keys and
// array elements (all
// checked before decoding, limits.go), or is not TOML at all; everything
// else is a Diagnostic. LoadContext and ParseContext stop when a context
// ends. Find locates the file from a
// directory inside the repository. Token syntax and rendering live in
// package tokens.
package config
