package main

import (
	"github.com/binkyhq/binky/internal/wine"
	"os/exec"
	"strings"
	"testing"
)

// databaseDrivers are what neither binary may link: the core reaches
// databases only through adapter binaries.
var databaseDrivers = []string{
	"github.com/jackc/pgx",
	"github.com/go-sql-driver/mysql",
	"github.com/redis/go-redis",
	"go.mongodb.org/mongo-driver",
	"github.com/minio/minio-go",
	"github.com/twmb/franz-go",
	"github.com/lib/pq",
}

// heavyPackages are binkyd's: their package init alone costs binky's
// every call milliseconds (GODEBUG=inittrace=1), so the verbs needing them
// are handed off to binkyd.
var heavyPackages = []string{
	"github.com/santhosh-tekuri/jsonschema", // MCP
	"github.com/mark3labs/mcp-go",
	"google.golang.org/protobuf", // go-plugin
	"google.golang.org/grpc",
	"github.com/hashicorp/go-plugin",
	"github.com/caddyserver/certmagic", // certificates
	"go.uber.org/zap",
	"modernc.org/sqlite", // the registry
	"zombiezen.com/go/sqlite",
	"github.com/binkyhq/binky/host/daemon",
	"github.com/binkyhq/binky/host/mcp",
	"github.com/binkyhq/binky/host/adapter",
	"github.com/binkyhq/binky/host/certs",
	"github.com/binkyhq/binky/host/registry",
}

// TestDependencyFence: cmd/binky links no database driver and none of the
// heavy packages binkyd carries.
func TestDependencyFence(t *testing.T) {
	wine.Skip(t, "needs the go toolchain to list the dependencies; the Linux tier checks the fence")
	for _, dep := range deps(t, ".") {
		for _, f := range databaseDrivers {
			if strings.HasPrefix(dep, f) {
				t.Errorf("cmd/binky links %s (a database driver belongs in a plugins/ adapter)", dep)
			}
		}
		for _, f := range heavyPackages {
			if strings.HasPrefix(dep, f) {
				t.Errorf("cmd/binky links %s (heavy at init: the verb needing it belongs to binkyd, see handoff.go)", dep)
			}
		}
	}
}

// TestBinkydNoDatabaseDriver: binkyd may link the heavy packages, never a
// database driver. It links every heavy package today, which proves the
// names binky's fence looks for are spelled right.
func TestBinkydNoDatabaseDriver(t *testing.T) {
	wine.Skip(t, "needs the go toolchain to list the dependencies; the Linux tier checks the fence")
	found := map[string]bool{}
	for _, dep := range deps(t, "../binkyd") {
		for _, f := range databaseDrivers {
			if strings.HasPrefix(dep, f) {
				t.Errorf("cmd/binkyd links %s (a database driver belongs in a plugins/ adapter)", dep)
			}
		}
		for _, f := range heavyPackages {
			found[f] = found[f] || strings.HasPrefix(dep, f)
		}
	}
	for _, f := range heavyPackages {
		if !found[f] {
			t.Errorf("cmd/binkyd does not link %s: binky's fence names a package nobody uses (a typo, or drop it)", f)
		}
	}
}

func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps %s printed %d packages; the fence would prove nothing", pkg, len(deps))
	}
	return deps
}
