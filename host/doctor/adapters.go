package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/adapter"
)

// adapterHost discovers adapters on PATH and $BINKY_HOME/adapters without
// a home of its own, so nothing (not even the describe cache) is written
// and every binary is described afresh.
func adapterHost(e *Env) *adapter.Host {
	path := e.PathEnv
	if path == "" {
		path = os.Getenv("PATH")
	}
	path += string(os.PathListSeparator) + filepath.Join(e.Home, "adapters")
	return adapter.New(adapter.Options{PathEnv: path, DescribeTimeout: describeTimeout})
}

// describeTimeout is how long doctor waits for one adapter's describe; an
// adapter that takes longer is reported as hung.
const describeTimeout = 5 * time.Second

// hung reports whether a describe error is the describe timeout (the
// adapter was killed for not answering), not a reply that was wrong.
// sdk/client words a deadline as "timed out after …: context deadline
// exceeded"; TestHungAdapter fails if that wording changes.
func hung(describeErr string) bool {
	return strings.Contains(describeErr, "timed out after") || strings.Contains(describeErr, context.DeadlineExceeded.Error())
}

// checkAdapters describes every discovered adapter; one that fails or
// hangs is named.
func checkAdapters(ctx context.Context, e *Env) []Finding {
	infos, err := adapterHost(e).List(ctx)
	if err != nil {
		return []Finding{fail("binky adapters", "list the adapters: %v", err)}
	}
	if len(infos) == 0 {
		return []Finding{warn("install the binky-adapter-<family> package your binky.toml needs (or, in a checkout, make install)",
			"no binky-adapter-* found on PATH, in %s or in %s", filepath.Join(e.Home, "adapters"), strings.Join(adapter.DefaultSystemDirs(), ", "))}
	}
	var out []Finding
	good := 0
	for _, in := range infos {
		switch {
		case in.Error != "" && hung(in.Error):
			out = append(out, fail("binky adapter test "+in.Name+"  (then reinstall or remove "+in.Path+")",
				"adapter %s (%s) hung: it did not answer describe within %s and was killed", in.Name, in.Path, describeTimeout))
		case in.Error != "":
			out = append(out, fail("binky adapter test "+in.Name+"  (then reinstall or remove "+in.Path+")",
				"adapter %s (%s) does not describe: %s", in.Name, in.Path, in.Error))
		case in.ShadowedBy != "":
			out = append(out, warn("rm "+in.Path+"  (or reorder PATH)", "adapter %s at %s is hidden by %s", in.Name, in.Path, in.ShadowedBy))
		default:
			good++
		}
	}
	if good > 0 {
		out = append([]Finding{ok("%d adapter(s) describe", good)}, out...)
	}
	return out
}

// checkAdapterPaths warns about adapters reached through a symlink or a
// world-writable directory: whoever can write there chooses the code
// binky runs with your credentials.
func checkAdapterPaths(ctx context.Context, e *Env) []Finding {
	infos, err := adapterHost(e).List(ctx)
	if err != nil {
		return []Finding{skip("adapters could not be listed: %v", err)}
	}
	var out []Finding
	for _, in := range infos {
		out = append(out, pathRisks(in.Name, in.Path)...)
	}
	if len(out) == 0 {
		return []Finding{ok("no adapter is reached through a symlink or a world-writable directory")}
	}
	return out
}
