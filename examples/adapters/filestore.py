#!/usr/bin/env python3
"""A whole Binky adapter, Python 3 stdlib, one-shot tier: a slice is <config root, else data_dir>/<slice>/."""
import json, os, re, shutil, sys

CALLS, MAX, PROTOCOL = ("describe", "provision", "resolve", "clone", "destroy"), 1 << 20, 1
fail = lambda code, msg: {"ok": False, "error": msg, "code": code}

def answer(call, raw):  # a malformed request raises ValueError, TypeError or AttributeError
    if len(raw) > MAX:
        return fail("invalid", f"request is larger than {MAX} bytes")
    req = json.loads(raw)
    proto, cfg = req.get("protocol", 0), req.get("config") or {}
    if proto > PROTOCOL:
        return fail("invalid", f"request speaks protocol {proto}; this adapter knows protocol {PROTOCOL}")
    if call == "describe":
        return {"ok": True, "protocol": PROTOCOL, "name": "filestore-py", "clone": False, "rpc": False}
    root, slice_ = cfg.get("root") or req.get("data_dir") or "", str(req.get("slice"))
    if proto < 1 or not re.fullmatch(r"[a-z0-9][a-z0-9_]{0,62}", slice_) or not os.path.isabs(root):
        return fail("invalid", "want protocol 1, a slice of [a-z0-9_] and an absolute config root or data_dir")
    path = os.path.join(root, slice_)
    if call == "clone":
        return fail("unsupported", "filestore keeps no server to copy with")
    if call == "provision":
        os.makedirs(path, exist_ok=True)
    if call == "destroy":
        shutil.rmtree(path, ignore_errors=True)
    return {"ok": True, "address": "file://" + path} if call == "resolve" else {"ok": True}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CALLS:
        sys.stderr.write(f"usage: {os.path.basename(sys.argv[0])} {'|'.join(CALLS)} < request.json\n")
        sys.exit(2)
    try:  # whatever goes wrong, the answer is one JSON object
        reply = answer(sys.argv[1], sys.stdin.buffer.read(MAX + 1))
    except (ValueError, TypeError, AttributeError) as e:
        reply = fail("invalid", f"malformed request: {e}")
    except Exception as e:
        reply = fail("internal", f"{sys.argv[1]} failed: {e}")
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.exit(0 if reply.get("ok") else 1)
