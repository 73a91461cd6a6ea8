// Command dist builds what a release ships, into dist/ (`make dist`):
//
//   - binky-<version>.src.tar.gz: every tracked file of every module;
//   - binky_<version>_<os>_<arch>.tar.gz (.zip on Windows) for linux/amd64,
//     linux/arm64 and windows/amd64: binky, binkyd, every adapter, the man
//     pages, completions, LICENSE and README;
//   - Debian packages (nfpm): binky (binky + binkyd, man pages, bash, zsh and
//     fish completions) and one binky-adapter-<family> per adapter module,
//     whose binaries go to /usr/lib/binky/adapters, the system adapter
//     directory discovery searches;
//   - npm/: the binky npm package and one @binkyhq/binky-<os>-<cpu> package
//     per platform carrying the binaries (the esbuild pattern), so that
//     `npx -y binky mcp` runs the MCP server with nothing installed;
//   - SHA256SUMS over all of it.
//
// Every byte is a function of the source and the version: binaries are
// built with -trimpath, CGO_ENABLED=0 and version ldflags; archive entries
// carry SOURCE_DATE_EPOCH (the commit's time) as their time, uid 0 and
// fixed modes, in sorted order. Building twice, from two directories,
// gives identical files.
//
// It is its own module so that nfpm and its dependencies never join the
// root module's.
package main
