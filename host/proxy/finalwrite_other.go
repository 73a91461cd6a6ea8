//go:build !linux

package proxy

import "net"

// writeFinal writes b, the last bytes c carries; the caller closes c next.
func writeFinal(c net.Conn, b []byte) error {
	_, err := c.Write(b)
	return err
}
