#!/usr/bin/env node
// The binky npm package's launcher: it runs the binky binary of the
// platform package npm installed beside it (@binkyhq/binky-<os>-<cpu>, an
// optional dependency that npm installs only on its own platform, as
// esbuild and Biome do), with that package's bin directory first on PATH so
// binky finds binkyd and the adapters it carries. stdin, stdout and stderr
// are the child's own: `npx -y binky mcp` speaks MCP straight through.
'use strict';

const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const PLATFORMS = {
  'linux x64': '@binkyhq/binky-linux-x64',
  'linux arm64': '@binkyhq/binky-linux-arm64',
  'win32 x64': '@binkyhq/binky-win32-x64',
};

function fail(msg) {
  process.stderr.write('binky: ' + msg + '\n');
  process.exit(1);
}

function binDir() {
  const key = process.platform + ' ' + process.arch;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    fail('no build for ' + key + ' (there are builds for ' + Object.keys(PLATFORMS).join(', ') + ')');
  }
  try {
    return path.join(path.dirname(require.resolve(pkg + '/package.json')), 'bin');
  } catch (e) {
    fail('the package ' + pkg + ' that carries the binaries is not installed: ' +
      'npm skips optional dependencies with --omit=optional or --no-optional; install again without it');
  }
}

const dir = binDir();
const exe = path.join(dir, process.platform === 'win32' ? 'binky.exe' : 'binky');
if (process.platform !== 'win32') {
  // Some installers drop the executable bit of files outside "bin".
  for (const f of fs.readdirSync(dir)) {
    try { fs.chmodSync(path.join(dir, f), 0o755); } catch (e) { /* read-only install: it is already set */ }
  }
}
const env = Object.assign({}, process.env);
const pathKey = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') || 'PATH';
env[pathKey] = dir + path.delimiter + (env[pathKey] || '');

const r = spawnSync(exe, process.argv.slice(2), { stdio: 'inherit', env: env });
if (r.error) {
  fail('run ' + exe + ': ' + r.error.message);
}
if (r.signal) {
  process.kill(process.pid, r.signal);
}
process.exit(r.status === null ? 1 : r.status);
