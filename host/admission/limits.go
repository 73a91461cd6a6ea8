package admission

import (
	"fmt"
	"strconv"
)

// Defaults used when neither the registry nor a project sets a bound.
const (
	DefaultMaxParallel  = 0  // no bound on the number of worlds
	DefaultRAMReserve   = 10 // percent of total RAM kept free
	DefaultDiskHeadroom = 2  // GB of free disk kept in BINKY_HOME's filesystem
	// DefaultHysteresis is how many percentage points above the RAM reserve
	// free RAM must climb before a suspended world is resumed.
	DefaultHysteresis = 5
)

// Limits bound admission. A zero field means no bound.
type Limits struct {
	MaxParallel  int     // worlds running at once (up, starting or suspended)
	RAMReserve   float64 // percent of total RAM that must stay free
	DiskHeadroom float64 // GB of disk that must stay free
}

// Lower returns l with each of p's set fields applied where p is stricter:
// a project can lower what it is allowed, never raise it.
func (l Limits) Lower(p Limits) Limits {
	if p.MaxParallel > 0 && (l.MaxParallel == 0 || p.MaxParallel < l.MaxParallel) {
		l.MaxParallel = p.MaxParallel
	}
	// A bigger reserve or headroom is stricter.
	if p.RAMReserve > l.RAMReserve {
		l.RAMReserve = p.RAMReserve
	}
	if p.DiskHeadroom > l.DiskHeadroom {
		l.DiskHeadroom = p.DiskHeadroom
	}
	return l
}

// Sample is one reading of the machine's pressure. A zero total means the
// source cannot tell (that bound is then not applied).
type Sample struct {
	MemTotal, MemAvailable uint64 // bytes
	DiskTotal, DiskFree    uint64 // bytes, of the filesystem holding BINKY_HOME
}

// RAMFreePct is available RAM as a percentage of the total; 100 when unknown.
func (s Sample) RAMFreePct() float64 {
	if s.MemTotal == 0 {
		return 100
	}
	return 100 * float64(s.MemAvailable) / float64(s.MemTotal)
}

// DiskFreeGB is free disk in GB (10^9 bytes).
func (s Sample) DiskFreeGB() float64 { return float64(s.DiskFree) / 1e9 }

// Reason says why a world cannot be admitted now, or "" when it can.
// running is how many worlds hold a slot.
func Reason(l Limits, s Sample, running int) string {
	if l.MaxParallel > 0 && running >= l.MaxParallel {
		return fmt.Sprintf("max_parallel %d reached", l.MaxParallel)
	}
	if l.RAMReserve > 0 && s.MemTotal > 0 && s.RAMFreePct() < l.RAMReserve {
		return fmt.Sprintf("free RAM %s%% < reserve %s%%", num(s.RAMFreePct(), 0), num(l.RAMReserve, 0))
	}
	if l.DiskHeadroom > 0 && s.DiskTotal > 0 && s.DiskFreeGB() < l.DiskHeadroom {
		return fmt.Sprintf("free disk %s GB < headroom %s GB", num(s.DiskFreeGB(), 1), num(l.DiskHeadroom, 1))
	}
	return ""
}

// num prints f with at most prec decimals and no trailing zeros, rounding
// down so "9.9% < 10%" never reads "10% < 10%".
func num(f float64, prec int) string {
	p := 1.0
	for range prec {
		p *= 10
	}
	f = float64(int64(f*p)) / p
	return strconv.FormatFloat(f, 'f', -1, 64)
}
