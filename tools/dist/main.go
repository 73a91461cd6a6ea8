package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Platform is one target of the per-platform archives.
type Platform struct {
	OS, Arch string
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// exe is the file name of a binary on p.
func (p Platform) exe(name string) string {
	if p.OS == "windows" {
		return name + ".exe"
	}
	return name
}

// config is what one run builds.
type config struct {
	root      string // the repository checkout
	out       string // dist/
	version   string // v1.2.3 or a git describe
	commit    string
	mtime     time.Time // every file's time in every archive
	platforms []Platform
	hostBin   string // a host build of binky, for man pages and completions
	work      string // scratch directory for builds
}

func main() {
	var c config
	var epoch int64
	var plats string
	flag.StringVar(&c.root, "root", ".", "the repository checkout")
	flag.StringVar(&c.out, "out", "dist", "output directory (emptied first)")
	flag.StringVar(&c.version, "version", "", "version (default: git describe)")
	flag.StringVar(&c.commit, "commit", "", "commit (default: git rev-parse HEAD)")
	flag.Int64Var(&epoch, "source-date-epoch", -1, "file times in archives (default: $SOURCE_DATE_EPOCH, else the commit's time)")
	flag.StringVar(&plats, "platforms", "linux/amd64,linux/arm64,windows/amd64", "platforms to build")
	flag.Parse()
	if err := c.setup(epoch, plats); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(c.work)
	if err := c.run(); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func (c *config) setup(epoch int64, plats string) error {
	var err error
	if c.root, err = filepath.Abs(c.root); err != nil {
		return err
	}
	if c.out, err = filepath.Abs(c.out); err != nil {
		return err
	}
	if c.version == "" {
		c.version = gitOut(c.root, "describe", "--tags", "--always", "--dirty")
	}
	if c.version == "" {
		c.version = "dev"
	}
	if c.commit == "" {
		c.commit = gitOut(c.root, "rev-parse", "HEAD")
	}
	if epoch < 0 {
		if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
			if epoch, err = strconv.ParseInt(s, 10, 64); err != nil {
				return fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
			}
		} else if s := gitOut(c.root, "log", "-1", "--format=%ct"); s != "" {
			epoch, _ = strconv.ParseInt(s, 10, 64)
		}
	}
	if epoch < 0 {
		epoch = 0
	}
	c.mtime = time.Unix(epoch, 0).UTC()
	for _, p := range strings.Split(plats, ",") {
		os_, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok {
			return fmt.Errorf("platform %q: want os/arch", p)
		}
		c.platforms = append(c.platforms, Platform{os_, arch})
	}
	c.work, err = os.MkdirTemp("", "binky-dist-")
	return err
}

func (c *config) run() error {
	if err := os.RemoveAll(c.out); err != nil {
		return err
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	mods, err := modules(c.root)
	if err != nil {
		return err
	}
	step("source tarball")
	if err := c.source(); err != nil {
		return err
	}
	host := Platform{hostOS(), hostArch()}
	c.hostBin = filepath.Join(c.work, "host", host.exe("binky"))
	if err := c.goBuild(host, ".", "./cmd/binky", c.hostBin, false); err != nil {
		return err
	}
	extras, err := c.extras()
	if err != nil {
		return err
	}
	for _, p := range c.platforms {
		step("build " + p.String())
		bins, err := c.buildAll(p, mods)
		if err != nil {
			return err
		}
		step("archive " + p.String())
		if err := c.archive(p, bins, extras); err != nil {
			return err
		}
		if p.OS == "linux" {
			step("debian packages " + p.String())
			if err := c.debs(p, bins, mods, extras); err != nil {
				return err
			}
		}
		step("npm package " + p.String())
		if err := c.npmPlatform(p, bins); err != nil {
			return err
		}
	}
	if err := c.npmMain(); err != nil {
		return err
	}
	step("checksums")
	return c.checksums()
}

func step(s string) { fmt.Fprintln(os.Stderr, "== dist:", s) }

// checksums writes SHA256SUMS over every file in out, in sorted order.
func (c *config) checksums() error {
	var lines []string
	err := filepath.WalkDir(c.out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(c.out, p)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
	return os.WriteFile(filepath.Join(c.out, "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
