// Package wine tells a test whether it runs under Wine (scripts/test-windows,
// docs/windows.md), so a test can skip what Wine 8 does differently from
// Windows, saying what and why. Product code never imports it: the product
// is not patched for Wine.
package wine
