package admission

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// diskFree is the total and available bytes of the volume holding dir.
func diskFree(dir string) (total, free uint64, err error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, 0, err
	}
	var avail, tot, totFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &tot, &totFree); err != nil {
		return 0, 0, fmt.Errorf("read free space of %s: %w", dir, err)
	}
	return tot, avail, nil
}
