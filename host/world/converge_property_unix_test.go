//go:build !windows

package world

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/internal/gittest"
)

// randomWorld writes a random binky.toml for the property test: the slice
// db with one of two configs, and a random subset of four cmd services,
// each with zero to two ports (or a url), depending on db or on services
// before it, https on or off.
func randomWorld(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString("[project]\nname = \"pr\"\nport_range = PORTRANGE\n")
	if r.IntN(2) == 0 {
		b.WriteString("https = true\n")
	}
	b.WriteString("\n[services.db]\nadapter = \"fake\"\n")
	if r.IntN(2) == 0 {
		b.WriteString("config = { size = \"small\" }\n")
	} else {
		b.WriteString("config = { size = \"small\", owner_role = true }\n")
	}
	var present []string
	for i, name := range []string{"a", "b", "c", "d"} {
		if r.IntN(3) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n[services.%s]\ncmd = 'exec sleep %d'\nenv = { DB = \"${db.url}\" }\n", name, 100720+i)
		switch r.IntN(4) {
		case 1:
			b.WriteString("ports = [\"http\"]\n")
		case 2:
			b.WriteString("ports = [\"http\", \"admin\"]\n")
		case 3:
			fmt.Fprintf(&b, "url = %q\nhealth = { exec = \"true\" }\n", name)
		}
		deps := []string{}
		if r.IntN(2) == 0 {
			deps = append(deps, `"db"`)
		}
		if len(present) > 0 && r.IntN(2) == 0 {
			deps = append(deps, strconv.Quote(present[r.IntN(len(present))]))
		}
		if len(deps) > 0 {
			fmt.Fprintf(&b, "depends_on = [%s]\n", strings.Join(deps, ", "))
		}
		present = append(present, name)
	}
	return b.String()
}

// TestUpConvergesProperty: for random pairs of configs, up of before and
// then of after leaves the world as a fresh up of after would: the same
// services running with the same environment (their ports aside), the
// same slice with the same config, the same URLs; the ports of a service
// kept are stable unless the plan says the block moves; and the next up
// has nothing to do. BINKY_PROPERTY_SEED replays a run,
// BINKY_PROPERTY_PAIRS runs more pairs.
func TestUpConvergesProperty(t *testing.T) {
	gittest.Isolate(t)
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("BINKY_PROPERTY_SEED"), 10, 64); err == nil {
		seed = s
	}
	pairs := 4
	if n, err := strconv.Atoi(os.Getenv("BINKY_PROPERTY_PAIRS")); err == nil && n > 0 {
		pairs = n
	}
	t.Logf("BINKY_PROPERTY_SEED=%d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range pairs {
		before, after := randomWorld(r), randomWorld(r)
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, before)
			upFirst(t, f)
			portsBefore := f.ports()
			f.pids() // note the processes of before, for the ps check below
			f.write(f.wt+"/binky.toml", strings.ReplaceAll(after, "PORTRANGE", f.portRange()))
			w, err := upOp(ctx, f)
			if err != nil {
				t.Fatalf("up of after: %v\nbefore:\n%s\nafter:\n%s\n%s", err, before, after, f.said)
			}
			plan := ""
			if w.Plan != nil {
				plan = strings.Join(w.Plan.Lines(), "\n")
			}
			fresh := newFixture(t, after)
			upFirst(t, fresh)

			// No process of before is left beside those of after.
			f.wantOnlyLive(f.pids())
			got, want := f.shape(), fresh.shape()
			if got != want {
				t.Errorf("up of before then after left:\n%s\na fresh up of after:\n%s\nbefore:\n%s\nafter:\n%s\nplan:\n%s", got, want, before, after, plan)
			}
			if !strings.Contains(plan, "ports     world: moves") {
				now := f.ports()
				for name, p := range portsBefore {
					if q, ok := now[name]; ok && len(q) == len(p) && samePortNames(p, q) {
						for pn := range p {
							if p[pn] != q[pn] {
								t.Errorf("%s's port %s moved %d → %d; the plan did not say the block moves:\n%s", name, pn, p[pn], q[pn], plan)
							}
						}
					}
				}
			}
			again, err := upOp(ctx, f)
			if err != nil || !again.Noop {
				t.Errorf("the up after: noop %v, %v; want nothing to do\nafter:\n%s", again != nil && again.Noop, err, after)
			}
		})
	}
}

func samePortNames(a, b map[string]int) bool {
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// portRange is the fixture's port range as binky.toml writes it.
func (f *fixture) portRange() string {
	f.t.Helper()
	rec := f.record()
	cfg, err := f.e.worldConfig(rec)
	if err != nil {
		f.t.Fatal(err)
	}
	rng := cfg.Project.PortRange
	return fmt.Sprintf("[%d, %d]", rng[0], rng[1])
}

// shape describes the world as the property compares it: each service
// recorded (kind, state, URL scheme and host, port names), the slice's
// config, and each running process's environment without the values
// that name ports.
func (f *fixture) shape() string {
	f.t.Helper()
	rec := f.record()
	svcs, err := f.reg.Services(context.Background(), rec.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	var lines []string
	for _, sv := range svcs {
		line := fmt.Sprintf("%s %s %s", sv.Name, sv.Kind, sv.State)
		if sv.Kind == registry.KindCmd {
			names := slices.Sorted(maps.Keys(sv.Ports))
			line += fmt.Sprintf(" ports %v url %q", names, sv.URL)
			if st, ok := f.e.sup.State(f.e.SupKey(rec.Project, rec.Name, sv.Name)); !ok || !st.State.Live() {
				line += " NOT RUNNING"
			} else {
				for _, kv := range strings.Split(f.processEnv(sv.Name), "\n") {
					if strings.HasPrefix(kv, "DB=") {
						line += " " + kv
					}
				}
			}
		} else {
			line += fmt.Sprintf(" %s config %v", sv.Address, f.fa.sliceConfig(sv.Slice))
		}
		lines = append(lines, line)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
