"""Key definitions for Input.dispatchKeyEvent: pure data and lookups."""
from __future__ import annotations

from dataclasses import dataclass

MODIFIER_BITS = {"Alt": 1, "Control": 2, "Ctrl": 2, "Meta": 4, "Cmd": 4, "Command": 4, "Shift": 8}


@dataclass(frozen=True)
class Key:
    key: str
    code: str
    key_code: int
    text: str = ""


_NAMED = {
    "Enter": Key("Enter", "Enter", 13, "\r"),
    "Tab": Key("Tab", "Tab", 9),
    "Escape": Key("Escape", "Escape", 27),
    "Backspace": Key("Backspace", "Backspace", 8),
    "Delete": Key("Delete", "Delete", 46),
    "ArrowLeft": Key("ArrowLeft", "ArrowLeft", 37),
    "ArrowUp": Key("ArrowUp", "ArrowUp", 38),
    "ArrowRight": Key("ArrowRight", "ArrowRight", 39),
    "ArrowDown": Key("ArrowDown", "ArrowDown", 40),
    "Home": Key("Home", "Home", 36),
    "End": Key("End", "End", 35),
    "PageUp": Key("PageUp", "PageUp", 33),
    "PageDown": Key("PageDown", "PageDown", 34),
    "Insert": Key("Insert", "Insert", 45),
    "Space": Key(" ", "Space", 32, " "),
    "Shift": Key("Shift", "ShiftLeft", 16),
    "Control": Key("Control", "ControlLeft", 17),
    "Alt": Key("Alt", "AltLeft", 18),
    "Meta": Key("Meta", "MetaLeft", 91),
}
_ALIASES = {"Return": "Enter", "Esc": "Escape", "Del": "Delete", "Left": "ArrowLeft", "Right": "ArrowRight",
            "Up": "ArrowUp", "Down": "ArrowDown", "Ctrl": "Control", "Cmd": "Meta", " ": "Space"}
for _i in range(1, 13):
    _NAMED[f"F{_i}"] = Key(f"F{_i}", f"F{_i}", 111 + _i)

# Ctrl/Meta + letter carry editing commands; Chrome does not perform them from synthetic keys alone.
EDIT_COMMANDS = {"a": "selectAll", "c": "copy", "v": "paste", "x": "cut", "z": "undo", "y": "redo"}

_PUNCT_CODES = {
    " ": ("Space", 32), "-": ("Minus", 189), "=": ("Equal", 187), "[": ("BracketLeft", 219),
    "]": ("BracketRight", 221), "\\": ("Backslash", 220), ";": ("Semicolon", 186), "'": ("Quote", 222),
    ",": ("Comma", 188), ".": ("Period", 190), "/": ("Slash", 191), "`": ("Backquote", 192),
}


def char_key(ch: str) -> Key:
    """The key that types ``ch`` (characters without a key of their own get code "" and keyCode 0)."""
    if ch == "\n" or ch == "\r":
        return _NAMED["Enter"]
    if ch == "\t":
        return _NAMED["Tab"]
    if len(ch) == 1 and ch.isascii() and ch.isalpha():
        return Key(ch, f"Key{ch.upper()}", ord(ch.upper()), ch)
    if len(ch) == 1 and ch.isdigit() and ch.isascii():
        return Key(ch, f"Digit{ch}", ord(ch), ch)
    if ch in _PUNCT_CODES:
        code, kc = _PUNCT_CODES[ch]
        return Key(ch, code, kc, ch)
    return Key(ch, "", 0, ch)


def parse_combo(combo: str) -> tuple[Key, int]:
    """``"Control+Shift+a"`` -> (the key ``a``, the modifier bitmask). Raises ValueError."""
    if combo.endswith("++"):  # "Control++": the key is "+" itself
        mods, last = combo[:-2].split("+") if combo[:-2] else [], "+"
    elif combo == "+":
        mods, last = [], "+"
    else:
        *mods, last = combo.split("+")
        if not last.strip():
            raise ValueError(f"key {combo!r} ends with '+' but names no key")
    bits = 0
    for m in mods:
        m = m.strip()
        if m not in MODIFIER_BITS:
            raise ValueError(f"unknown modifier {m!r} in key {combo!r}")
        bits |= MODIFIER_BITS[m]
    return lookup(last if last == " " else last.strip()), bits


def lookup(name: str) -> Key:
    """A named key (Enter, ArrowLeft, F5, ...) or a single character. Raises ValueError."""
    name = _ALIASES.get(name, name)
    if name in _NAMED:
        return _NAMED[name]
    for known in _NAMED:
        if known.lower() == name.lower():
            return _NAMED[known]
    if len(name) == 1:  # one code point: a letter, a digit, punctuation, an emoji
        return char_key(name)
    raise ValueError(f"unknown key {name!r}")
