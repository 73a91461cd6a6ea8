package ports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/binkyhq/binky/host/registry"
)

// The default range, used when neither Options.Range nor the caller names
// one (see the package documentation for why).
const (
	DefaultLo = 20000
	DefaultHi = 29999
)

// DefaultRange returns [DefaultLo, DefaultHi].
func DefaultRange() [2]int { return [2]int{DefaultLo, DefaultHi} }

// ErrExhausted: the range has no run of free ports as long as was asked.
var ErrExhausted = errors.New("port range exhausted")

// Options configure an Allocator; the zero value is ready to use.
type Options struct {
	// Range is the default range, [lo, hi] inclusive, for a Reserve that
	// names none. Zero means DefaultRange.
	Range [2]int
	// Bind opens a listener to prove a port free; nil means net.Listen.
	// Tests replace it to fake held ports or a host without IPv6.
	Bind func(network, address string) (io.Closer, error)

	// Leases is the machine-global lease store (OpenLeases of
	// DefaultLeaseDir() in the daemon). With it, every block this
	// allocator hands out is leased there for this home, and blocks other
	// homes lease (when their claims hold) are never handed out; nil
	// leaves blocks in this home's registry only (tests of one home).
	Leases *Leases
	// HomeID and HomeDir name this home in its leases: the registry's home
	// id and the BINKY_HOME directory, whose HomeIDFile must hold HomeID
	// (other homes read it to tell whether this home still exists).
	// Required with Leases.
	HomeID, HomeDir string
}

// Allocator hands out port blocks recorded in the registry and, with
// Options.Leases, leased machine-wide.
type Allocator struct {
	reg  *registry.Registry
	rng  [2]int
	bind func(network, address string) (io.Closer, error)

	leases          *Leases
	homeID, homeDir string
	me              string // this process's user, as leases name it
	pid             int    // this process, named in its leases as the home's daemon
	pidStart        uint64 // and its start time
	synced          atomic.Bool

	ignoredMu    sync.Mutex
	ignored      []IgnoredLease // what the last view of the leases ignored
	ignoredTotal int            // and how many there were

	// afterWrite, when set (tests), runs after a lease is written and
	// before other users' leases are read again.
	afterWrite func(lo, hi int)
}

// New returns an allocator over reg.
func New(reg *registry.Registry, opts Options) (*Allocator, error) {
	a := &Allocator{reg: reg, rng: opts.Range, bind: opts.Bind, leases: opts.Leases, homeID: opts.HomeID}
	if a.rng == [2]int{} {
		a.rng = DefaultRange()
	}
	if err := validRange(a.rng); err != nil {
		return nil, fmt.Errorf("new port allocator: %w", err)
	}
	if a.bind == nil {
		a.bind = func(network, address string) (io.Closer, error) { return net.Listen(network, address) }
	}
	if a.leases != nil {
		if opts.HomeID == "" || opts.HomeDir == "" {
			return nil, errors.New("new port allocator: leases need the home's id and directory")
		}
		dir, err := canonicalDir(opts.HomeDir)
		if err != nil {
			return nil, fmt.Errorf("new port allocator: home directory %s: %w", opts.HomeDir, err)
		}
		a.homeDir = dir
		a.me = a.leases.me
		a.pid = os.Getpid()
		a.pidStart = procStart(a.pid)
	}
	return a, nil
}

func validRange(r [2]int) error {
	if r[0] < 1 || r[1] > 65535 || r[0] > r[1] {
		return fmt.Errorf("port range %d-%d is not within 1-65535 with lo <= hi", r[0], r[1])
	}
	return nil
}

// Reserve returns the worktree's block of at least size ports inside rng
// (the allocator's range when rng is zero). A block the worktree already has
// is kept when it is large enough and inside rng, without probing (its ports
// may be held by the world's own services). A block too small grows in place
// when the ports right after it are free (grow.go), keeping its first port.
// Otherwise a new block of exactly size ports replaces it. Size 0 asks for
// no block: it returns 0, 0.
func (a *Allocator) Reserve(ctx context.Context, project, worktree string, size int, rng [2]int) (lo, hi int, err error) {
	b, _, err := a.ReserveBlock(ctx, project, worktree, size, rng)
	if err != nil || b == nil {
		return 0, 0, err
	}
	return b.Lo, b.Hi, nil
}

// ReserveBlock is Reserve reporting the block and whether it is new or
// changed, grown in place or moved (for the ports_reserved event). With size 0 it returns nil, false, nil.
func (a *Allocator) ReserveBlock(ctx context.Context, project, worktree string, size int, rng [2]int) (*registry.PortBlock, bool, error) {
	return a.reserve(ctx, project, worktree, size, rng, nil)
}

// ReserveSkipping is Reserve that also reports the ports it found held by
// other programs and stepped over while it searched for a new block (none
// when the worktree's block was kept), so the caller can name their holders.
func (a *Allocator) ReserveSkipping(ctx context.Context, project, worktree string, size int, rng [2]int) (lo, hi int, skipped []int, err error) {
	b, _, err := a.reserve(ctx, project, worktree, size, rng, &skipped)
	if err != nil || b == nil {
		return 0, 0, skipped, err
	}
	return b.Lo, b.Hi, skipped, nil
}

func (a *Allocator) reserve(ctx context.Context, project, worktree string, size int, rng [2]int, skipped *[]int) (*registry.PortBlock, bool, error) {
	if size < 0 {
		return nil, false, fmt.Errorf("reserve ports for %s/%s: size %d is negative", project, worktree, size)
	}
	if size == 0 {
		return nil, false, nil
	}
	if size > MaxBlock {
		return nil, false, fmt.Errorf("reserve ports for %s/%s: the world asks for %d ports, more than the %d one world's block may have; give fewer of its services ports in binky.toml", project, worktree, size, MaxBlock)
	}
	if rng == [2]int{} {
		rng = a.rng
	}
	if err := validRange(rng); err != nil {
		return nil, false, fmt.Errorf("reserve ports for %s/%s: %w; fix [project] port_range in binky.toml", project, worktree, err)
	}
	if a.leases != nil {
		return a.reserveLeased(ctx, project, worktree, size, rng, skipped)
	}
	choose := func(own *registry.PortBlock, others []*registry.PortBlock) (int, int, error) {
		if own != nil && own.Size() >= size && own.Lo >= rng[0] && own.Hi <= rng[1] {
			return own.Lo, own.Hi, nil
		}
		if own != nil {
			if hi, ok := a.grown(ctx, own, size, rng, others); ok {
				return own.Lo, hi, nil
			}
		}
		if skipped != nil {
			*skipped = (*skipped)[:0] // the transaction may run choose again
		}
		return a.search(ctx, others, nil, size, rng, skipped)
	}
	b, created, err := a.reg.ReservePortBlock(ctx, project, worktree, choose)
	if err != nil {
		return nil, false, err
	}
	return b, created, nil
}

// search finds the first run of size ports in rng that overlaps no block in
// others (this home's other worktrees) or leased (other homes' leases) and
// whose every port binds. It runs inside the registry's write transaction
// (and, with leases, under the lease lock).
func (a *Allocator) search(ctx context.Context, others, leased []*registry.PortBlock, size int, rng [2]int, skipped *[]int) (int, int, error) {
	held := 0
	taken := append(slices.Clip(others), leased...)
	for lo := rng[0]; lo+size-1 <= rng[1]; {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		hi := lo + size - 1
		if b := overlapping(taken, lo, hi); b != nil {
			lo = b.Hi + 1
			continue
		}
		next := 0
		for p := lo; p <= hi; p++ {
			if a.probe(p) != nil {
				held++
				if skipped != nil {
					*skipped = append(*skipped, p)
				}
				next = p + 1 // never guess around a held port: start after it
				break
			}
		}
		if next == 0 {
			return lo, hi, nil
		}
		lo = next
	}
	count := func(bs []*registry.PortBlock) int {
		n := 0
		for _, b := range bs {
			if b.Overlaps(rng[0], rng[1]) {
				n++
			}
		}
		return n
	}
	homes := ""
	if a.leases != nil {
		homes = fmt.Sprintf(", %d blocks leased by other binky homes on this machine (%s)", count(leased), a.leases.Dir())
	}
	return 0, 0, fmt.Errorf("%w: no %d consecutive free ports in %d-%d (%d blocks of other worktrees in it%s, %d ports found held by other programs); set [project] port_range in binky.toml to a range with room, or remove worktrees you no longer need",
		ErrExhausted, size, rng[0], rng[1], count(others), homes, held)
}

// overlapping returns the block of others overlapping lo..hi that ends last,
// or nil.
func overlapping(others []*registry.PortBlock, lo, hi int) *registry.PortBlock {
	var last *registry.PortBlock
	for _, b := range others {
		if b.Overlaps(lo, hi) && (last == nil || b.Hi > last.Hi) {
			last = b
		}
	}
	return last
}

// probe binds port on 127.0.0.1, ::1 and 0.0.0.0 in turn, closing each
// listener again: a port held on any of them is not free. A host without
// IPv6 skips ::1.
func (a *Allocator) probe(port int) error {
	for _, host := range [...]string{"127.0.0.1", "::1", "0.0.0.0"} {
		l, err := a.bind("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			if host == "::1" && noIPv6(err) {
				continue
			}
			return fmt.Errorf("port %d is held on %s: %w", port, host, err)
		}
		l.Close()
	}
	return nil
}

// Check returns the ports of lo..hi that something holds now (for `up` to
// report before it starts services).
func (a *Allocator) Check(ctx context.Context, lo, hi int) []int {
	var out []int
	for p := max(lo, 1); p <= hi && p <= 65535; p++ {
		if ctx.Err() != nil {
			break
		}
		if a.probe(p) != nil {
			out = append(out, p)
		}
	}
	return out
}

// Block returns the worktree's block; 0, 0 when it has none.
func (a *Allocator) Block(ctx context.Context, project, worktree string) (lo, hi int, err error) {
	b, err := a.reg.PortBlock(ctx, project, worktree)
	if errors.Is(err, registry.ErrNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return b.Lo, b.Hi, nil
}

// Release gives the worktree's block back and returns what it was; 0, 0 when
// it had none. With leases, the worktree's lease goes too.
func (a *Allocator) Release(ctx context.Context, project, worktree string) (lo, hi int, err error) {
	var sub string
	if a.leases != nil {
		var unlock func()
		var err error
		sub, unlock, err = a.leases.lock(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("release ports of %s/%s: %w", project, worktree, err)
		}
		defer unlock()
	}
	b, err := a.reg.ReleasePortBlock(ctx, project, worktree)
	if err != nil {
		return 0, 0, err
	}
	if a.leases != nil {
		// A lease that cannot be removed is an orphan of this home: the
		// next reservation or SyncLeases removes it.
		_ = a.dropLeases(sub, project, worktree)
	}
	if b == nil {
		return 0, 0, nil
	}
	return b.Lo, b.Hi, nil
}
