<#
.SYNOPSIS
  What Wine cannot show about binky on Windows: run this on a real Windows
  10/11 machine (docs/windows.md, "The checklist for a real Windows machine").

.DESCRIPTION
  Makes a throwaway git repository and BINKY_HOME, and checks, printing
  PASS, FAIL or SKIP (with why) for each:

    1. CTRL_BREAK reaches a Go service (binky-demo-app) and the service
       stops by itself before stop_timeout, with no "terminating it" note
       in its log (the note means the fallback: the job was terminated).
    2. The same for a Python and a Node service, and whether their
       SIGBREAK handlers ran (each writes a file when its handler runs).
    3. A batch-file service (a .cmd wrapper around node, as npm.cmd is;
       with -Npm, npm.cmd itself): down ends it and everything it started,
       without hanging on "Terminate batch job (Y/N)?".
    4. The daemon's first client is answered (go-winio's placeholder pipe
       instance, taken at listen time), 20 calls in sequence.
    5. With -SshHost: a world started from an SSH session (ssh HOST binky up)
       survives the end of that session: its daemon started outside the
       session's job (CREATE_BREAKAWAY_FROM_JOB), or doctor says it cannot.
    6. Two logon sessions: run with -Phase first in one session (it leaves
       a world up), then with -Phase second -Dir <the printed directory> in
       another session of the same user (an SSH session and the desktop):
       the second stops and restarts the daemon, which must re-adopt the
       services (their jobs are named in Global\), then takes the world down.

  Needs binky.exe, binkyd.exe and binky-demo-app.exe on PATH (or -Bin), and
  git. python.exe and node.exe are used when found; their checks SKIP
  otherwise.

.EXAMPLE
  powershell -ExecutionPolicy Bypass -File scripts\windows-checklist.ps1 -Bin .\bin
#>
param(
  [string]$Bin = "",
  [string]$SshHost = "",
  [ValidateSet("all", "first", "second")][string]$Phase = "all",
  [string]$Dir = "",
  [switch]$Npm
)
$ErrorActionPreference = "Stop"
$results = New-Object System.Collections.Generic.List[object]
function Result($name, $status, $why) {
  $results.Add([pscustomobject]@{ Check = $name; Status = $status; Why = $why })
  Write-Host ("{0,-5} {1}: {2}" -f $status, $name, $why)
}

if ($Bin -ne "") { $env:PATH = (Resolve-Path $Bin).Path + ";" + $env:PATH }
foreach ($exe in "binky", "binkyd", "binky-demo-app", "git") {
  if (-not (Get-Command $exe -ErrorAction SilentlyContinue)) { throw "$exe is not on PATH (use -Bin)" }
}
$python = Get-Command python -ErrorAction SilentlyContinue
$node = Get-Command node -ErrorAction SilentlyContinue

if ($Dir -eq "") { $Dir = Join-Path $env:TEMP ("binky-checklist-" + [guid]::NewGuid().ToString("N").Substring(0, 8)) }
$env:BINKY_HOME = Join-Path $Dir "home"
$repo = Join-Path $Dir "repo"

function Binky { & binky @args; if ($LASTEXITCODE -ne 0) { throw "binky $args: exit $LASTEXITCODE" } }
function Status { (binky status --json | Out-String | ConvertFrom-Json) }
function ServiceLog($wt, $svc) { (binky logs $wt $svc -n 0 | Out-String) }

function Write-Project {
  New-Item -ItemType Directory -Force -Path $repo | Out-Null
  $py = if ($python) { @"
[services.py]
cmd = "python -c \"import signal,sys,time; signal.signal(signal.SIGBREAK, lambda *a: (open('py.stopped','w').write('handled'), sys.exit(0))); time.sleep(3600)\""
stop_timeout = "20s"
"@ } else { "" }
  $nd = if ($node) { @"
[services.node]
cmd = "node -e \"process.on('SIGBREAK', () => { require('fs').writeFileSync('node.stopped', 'handled'); process.exit(0) }); setInterval(() => {}, 1000)\""
stop_timeout = "20s"

[services.batch]
cmd = "$(if ($Npm) { 'npm.cmd exec --yes -- node -e \"setInterval(() => {}, 1000)\"' } else { 'wrapper.cmd' })"
stop_timeout = "20s"
"@ } else { "" }
  Set-Content -Encoding UTF8 -Path (Join-Path $repo "wrapper.cmd") -Value "@echo off`r`nnode -e `"setInterval(() => {}, 1000)`"`r`n"
  Set-Content -Encoding UTF8 -Path (Join-Path $repo "binky.toml") -Value @"
[project]
name = "checklist"

[services.db]
adapter = "sqlite"
migrate = "binky-demo-app migrate --db \"`${self.url}\""

[services.go]
cmd = "binky-demo-app serve --db \"`${db.url}\" --name \"`${worktree.name}\""
ports = ["http"]
depends_on = ["db"]
health = "http://127.0.0.1:`${self.port}/healthz"
stop_timeout = "20s"

$py
$nd
"@
  Push-Location $repo
  git init -q -b main; git add -A; git -c user.name=binky -c user.email=binky@example.invalid commit -q -m init
  Pop-Location
}

function Check-Stop($wt) {
  $st = Status
  $w = $st.worlds | Where-Object { $_.worktree -eq $wt }
  $svcs = @($w.services | Where-Object { $_.kind -eq "cmd" })
  $clock = [Diagnostics.Stopwatch]::StartNew()
  Push-Location $repo; Binky down $wt; Pop-Location
  $took = $clock.Elapsed.TotalSeconds
  foreach ($s in $svcs) {
    $log = ServiceLog $wt $s.name
    $alive = Get-Process -Id $s.pid -ErrorAction SilentlyContinue
    if ($alive) { Result "stop $($s.name)" "FAIL" "pid $($s.pid) still runs after down"; continue }
    if ($log -match "terminating it") { Result "CTRL_BREAK $($s.name)" "FAIL" "the fallback ran: $((($log -split "`n") | Select-String 'terminating it' | Select-Object -Last 1))"; continue }
    Result "CTRL_BREAK $($s.name)" "PASS" ("stopped by itself; down took {0:N1}s" -f $took)
  }
  foreach ($f in @(@{ n = "py"; on = $python }, @{ n = "node"; on = $node })) {
    if (-not $f.on) { Result "handler $($f.n)" "SKIP" "$($f.n) is not installed"; continue }
    $file = Join-Path $w.path "$($f.n).stopped"
    if (Test-Path $file) { Result "handler $($f.n)" "PASS" "its SIGBREAK handler ran" }
    else { Result "handler $($f.n)" "FAIL" "its SIGBREAK handler did not run (no $file)" }
  }
}

if ($Phase -eq "second") {
  # Another logon session of the same user: stop and start the daemon here,
  # and the services the first session's daemon started must be re-adopted.
  $before = (Status).worlds | Where-Object { $_.worktree -eq "two" }
  if (-not $before) { throw "no world 'two' in $env:BINKY_HOME: run -Phase first in the other session" }
  binky doctor | Out-Host
  Push-Location $repo; Binky daemon stop; Binky daemon start; Pop-Location
  $after = (Status).worlds | Where-Object { $_.worktree -eq "two" }
  $pb = ($before.services | Where-Object { $_.name -eq "go" }).pid
  $pa = ($after.services | Where-Object { $_.name -eq "go" }).pid
  if ($pa -eq $pb -and $pa -ne 0) { Result "two sessions: re-adoption" "PASS" "go service pid $pa re-adopted from another logon session" }
  else { Result "two sessions: re-adoption" "FAIL" "go service pid before $pb, after $pa" }
  Check-Stop "two"
} else {
  Write-Project
  Push-Location $repo
  Binky up one
  Pop-Location
  # 4. The first client and many after it.
  $ok = 0
  for ($i = 0; $i -lt 20; $i++) { binky daemon status *> $null; if ($LASTEXITCODE -eq 0) { $ok++ } }
  if ($ok -eq 20) { Result "pipe" "PASS" "20/20 calls answered" } else { Result "pipe" "FAIL" "$ok/20 calls answered" }
  binky doctor | Out-Host
  Check-Stop "one"

  if ($SshHost -ne "") {
    # 5. A world started from an SSH session outlives it.
    ssh $SshHost "set BINKY_HOME=$env:BINKY_HOME&& cd /d `"$repo`" && binky up ssh && binky doctor"
    Start-Sleep -Seconds 5
    $w = (Status).worlds | Where-Object { $_.worktree -eq "ssh" }
    $go = $w.services | Where-Object { $_.name -eq "go" }
    if ($go -and (Get-Process -Id $go.pid -ErrorAction SilentlyContinue)) { Result "ssh" "PASS" "the world started over SSH runs after the session ended" }
    else { Result "ssh" "FAIL" "the world started over SSH is gone (see the doctor output above: job)" }
    Push-Location $repo; binky remove --force ssh; Pop-Location
  } else {
    Result "ssh" "SKIP" "no -SshHost (needs OpenSSH Server on a host you can log in to)"
  }

  if ($Phase -eq "first") {
    Push-Location $repo; Binky up two; Pop-Location
    Write-Host "now, in another logon session of this user, run:"
    Write-Host "  scripts\windows-checklist.ps1 -Phase second -Dir `"$Dir`"$(if ($Bin) { " -Bin `"$Bin`"" })"
  } else {
    Result "two sessions" "SKIP" "run -Phase first here, then -Phase second in another logon session"
  }
}

Write-Host ""
$results | Format-Table -AutoSize | Out-Host
if ($Phase -ne "first") {
  Push-Location $repo
  binky status --json | Out-String | ConvertFrom-Json | ForEach-Object { $_.worlds } | ForEach-Object { binky remove --force $_.worktree *> $null }
  binky daemon stop *> $null
  Pop-Location
}
if ($results | Where-Object { $_.Status -eq "FAIL" }) { exit 1 }
