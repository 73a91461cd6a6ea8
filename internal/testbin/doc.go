// Package testbin copies the running test binary for a test that runs it
// under another name or as another user (a fake adapter, a client run as
// nobody), without the "text file busy" that a copy written by the test
// process itself can meet. Product code never imports it.
package testbin
