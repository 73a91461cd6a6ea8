package testport

import "syscall"

// bindOnly binds a new TCP socket to 127.0.0.1 on a port the system
// picks, and returns the port and how to close the socket. Go's runtime
// has called WSAStartup before any test runs.
func bindOnly() (int, func(), error) {
	s, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, syscall.IPPROTO_TCP)
	if err != nil {
		return 0, nil, err
	}
	release := func() { _ = syscall.Closesocket(s) }
	if err := syscall.Bind(s, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		release()
		return 0, nil, err
	}
	sa, err := syscall.Getsockname(s)
	if err != nil {
		release()
		return 0, nil, err
	}
	return sa.(*syscall.SockaddrInet4).Port, release, nil
}
