"""npm packages the benchmarks measure against, installed once into a cache dir (never the repo).

``ensure_package("ws@8", "ws")`` installs with ``npm install --prefix <cache>/<name>`` the first
time and answers (the package's folder, None) or (None, why not).
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

INSTALL_TIMEOUT_S = 300.0


def cache_dir(name: str) -> Path:
    override = os.environ.get("PINCHTAB_BENCH_CACHE")
    if override:
        return Path(override) / name
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pinchtab-bench"
    return base / name


def installed_version(package_dir: Path) -> str | None:
    try:
        meta = json.loads((package_dir / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return str(meta.get("version") or "") or None


@functools.cache
def ensure_package(spec: str, cache_name: str) -> tuple[Path | None, str | None]:
    """Install ``spec`` (``name`` or ``name@range``) once; (its folder under node_modules, None) or (None, why)."""
    if shutil.which("node") is None:
        return None, "node is not on PATH"
    name = spec.rsplit("@", 1)[0] if spec.count("@") > (1 if spec.startswith("@") else 0) else spec
    prefix = cache_dir(cache_name)
    folder = prefix / "node_modules" / name
    if (folder / "package.json").is_file():
        return folder, None
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm is not on PATH"
    prefix.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}
    cmd = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", spec]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"npm install {spec} timed out after {INSTALL_TIMEOUT_S:.0f}s"
    except OSError as exc:
        return None, f"npm install {spec} failed to start: {exc}"
    if proc.returncode != 0 or not (folder / "package.json").is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        return None, f"npm install {spec} failed (exit {proc.returncode}): " + " | ".join(tail)
    return folder, None
