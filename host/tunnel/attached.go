package tunnel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"

	"github.com/binkyhq/binky/host/internal/shareopen"
	"github.com/binkyhq/binky/host/safefile"
)

// The hosts a home reaches are kept in a file, so a daemon started again
// (an upgrade, a reboot) reaches them again without waiting for the next
// --host verb. A host leaves it when it has no world left here.

// AttachedFile is the file's name under BINKY_HOME.
const AttachedFile = "reach.json"

type attachedDoc struct {
	Hosts []string `json:"hosts"`
}

// maxAttached bounds what is read of the file (a few host names).
const maxAttached = 1 << 20

// readAttached reads the hosts of path; a missing, unreadable, oversized
// or not regular file is no host (it only saves a verb).
func readAttached(path string) []string {
	b, err := safefile.ReadRegular(path, maxAttached)
	if err != nil {
		return nil
	}
	var d attachedDoc
	if json.Unmarshal(b, &d) != nil {
		return nil
	}
	var out []string
	for _, h := range d.Hosts {
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// writeAttached writes hosts to path (through a temporary file and a
// rename, so a reader never sees half of it; on Windows the rename waits
// for a reader that holds the file, shareopen.Replace); no hosts, an
// empty list.
func writeAttached(path string, hosts []string) error {
	// An empty list is written, not the file removed: one way for both
	// cases (and Wine 8 cannot delete a file: docs/windows.md).
	slices.Sort(hosts)
	b, _ := json.Marshal(attachedDoc{Hosts: hosts})
	tmp, err := os.CreateTemp(filepath.Dir(path), ".reach-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return shareopen.Replace(tmp.Name(), path)
}
