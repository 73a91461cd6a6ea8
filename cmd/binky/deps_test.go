package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoDatabaseDriver is the dependency fence: the core reaches databases
// only through adapter binaries, so it must never link a driver.
func TestNoDatabaseDriver(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/jackc/pgx",
		"github.com/go-sql-driver/mysql",
		"github.com/redis/go-redis",
		"go.mongodb.org/mongo-driver",
		"github.com/minio/minio-go",
		"github.com/twmb/franz-go",
		"github.com/lib/pq",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed %d packages; the fence would prove nothing", len(deps))
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("cmd/binky links %s (a database driver belongs in a plugins/ adapter)", dep)
			}
		}
	}
}
