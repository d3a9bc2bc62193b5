"""``pinchtab skills``: install the agent skills we ship (``app/skills/<name>/SKILL.md``) where an
agent loads them, by default Claude Code's ``~/.claude/skills/``."""
from __future__ import annotations

import argparse
import os
import sys
from importlib import resources
from pathlib import Path

DEFAULT_DIR = "~/.claude/skills"


def shipped() -> dict[str, str]:
    """Each skill we ship: its folder name and its SKILL.md text."""
    root = resources.files("app.skills")
    return {entry.name: entry.joinpath("SKILL.md").read_text(encoding="utf-8")
            for entry in sorted(root.iterdir(), key=lambda e: e.name)
            if entry.is_dir() and entry.joinpath("SKILL.md").is_file()}


def install(target: Path) -> list[Path]:
    """Write every skill into ``target/<name>/SKILL.md`` (a reinstall updates them); returns the files.

    Each file is written whole (a temp file, then a rename), so an agent loading skills meanwhile
    never reads half of one. Raises OSError when the folder cannot be written.
    """
    from ..web.files import write_atomic

    written = []
    for name, text in shipped().items():
        path = target / name / "SKILL.md"
        write_atomic(path, text.encode("utf-8"), mode=0o644, what=f"the {name} skill")
        written.append(path)
    return written


def _run(args: argparse.Namespace) -> int:
    if args.action == "list":
        for name, text in shipped().items():
            summary = next((line.split(":", 1)[1].strip().strip('"') for line in text.splitlines()
                            if line.startswith("description:")), "")
            print(f"{name:<18}{summary[:100]}")
        return 0
    target = Path(os.path.expanduser(args.dir or DEFAULT_DIR))
    try:
        written = install(target)
    except OSError as exc:
        print(f"Error: could not write the skills to {target}: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(f"installed {path}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("skills", help="agent skills that teach the cheap way to use pinchtab: list|install",
                       description="`install` writes each skill (a SKILL.md folder) into --dir, by default "
                                   f"{DEFAULT_DIR} where Claude Code looks; `list` names them.")
    p.add_argument("action", choices=("list", "install"))
    p.add_argument("--dir", metavar="DIR", help=f"where to install (default: {DEFAULT_DIR})")
    p.set_defaults(run=_run, command="skills")
