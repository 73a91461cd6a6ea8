// Package host holds no code: its subdirectories are the host side of
// Binky (the daemon, the world engine and the packages they stand on).
// Its one test, fence_test.go, is the layer fence: the packages below the
// engine never import it or the daemon (docs/architecture.md, "Layers").
package host
