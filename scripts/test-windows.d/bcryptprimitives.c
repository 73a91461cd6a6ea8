/*
 * bcryptprimitives.dll for Wine 8, which has none: Go's runtime (1.22 and
 * later) reads its random bytes from ProcessPrng and refuses to start
 * without it. This forwarder answers ProcessPrng with advapi32's
 * RtlGenRandom (SystemFunction036), which Wine has. It exists only for
 * scripts/test-windows; real Windows (8.1 and later) ships the DLL.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
	(void)inst; (void)reason; (void)reserved;
	return TRUE;
}
