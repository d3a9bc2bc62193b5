"""Agent skills (``SKILL.md`` folders, the format Claude Code and similar agents load) that teach an
agent the cheap way to use Pinchtab; shipped as package data, installed by ``pinchtab skills install``."""
