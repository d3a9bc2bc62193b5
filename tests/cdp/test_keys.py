"""Unit tests for cdp.keys: named keys, aliases, key combos and the keys that type characters."""
from __future__ import annotations

import pytest

from cdp.keys import EDIT_COMMANDS, MODIFIER_BITS, Key, char_key, lookup, parse_combo


# --- named keys ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name,code,key_code,text", [
    ("Enter", "Enter", 13, "\r"),
    ("Tab", "Tab", 9, ""),
    ("Escape", "Escape", 27, ""),
    ("Backspace", "Backspace", 8, ""),
    ("Delete", "Delete", 46, ""),
    ("ArrowLeft", "ArrowLeft", 37, ""),
    ("ArrowUp", "ArrowUp", 38, ""),
    ("ArrowRight", "ArrowRight", 39, ""),
    ("ArrowDown", "ArrowDown", 40, ""),
    ("Home", "Home", 36, ""),
    ("End", "End", 35, ""),
    ("PageUp", "PageUp", 33, ""),
    ("PageDown", "PageDown", 34, ""),
    ("Insert", "Insert", 45, ""),
])
def test_named_keys_have_their_dom_code_and_windows_key_code(name: str, code: str, key_code: int, text: str) -> None:
    assert lookup(name) == Key(name, code, key_code, text)


def test_enter_types_a_carriage_return_and_other_navigation_keys_type_nothing() -> None:
    assert lookup("Enter").text == "\r"
    assert lookup("Tab").text == ""
    assert lookup("ArrowDown").text == ""


def test_space_is_the_space_character_with_code_space() -> None:
    assert lookup("Space") == Key(" ", "Space", 32, " ")


@pytest.mark.parametrize("n", range(1, 13))
def test_function_keys_f1_to_f12(n: int) -> None:
    assert lookup(f"F{n}") == Key(f"F{n}", f"F{n}", 111 + n)


def test_f13_is_not_a_key() -> None:
    with pytest.raises(ValueError):
        lookup("F13")


@pytest.mark.parametrize("name,code,key_code", [
    ("Shift", "ShiftLeft", 16), ("Control", "ControlLeft", 17), ("Alt", "AltLeft", 18), ("Meta", "MetaLeft", 91),
])
def test_modifier_keys_can_be_pressed_alone(name: str, code: str, key_code: int) -> None:
    assert lookup(name) == Key(name, code, key_code)


@pytest.mark.parametrize("alias,canonical", [
    ("Return", "Enter"), ("Esc", "Escape"), ("Del", "Delete"), ("Left", "ArrowLeft"), ("Right", "ArrowRight"),
    ("Up", "ArrowUp"), ("Down", "ArrowDown"), ("Ctrl", "Control"), ("Cmd", "Meta"), (" ", "Space"),
])
def test_aliases_name_the_same_key(alias: str, canonical: str) -> None:
    assert lookup(alias) == lookup(canonical)


@pytest.mark.parametrize("spelling", ["enter", "ENTER", "arrowleft", "pageup", "f5", "BACKSPACE"])
def test_named_keys_are_found_whatever_the_case(spelling: str) -> None:
    canonical = {"enter": "Enter", "arrowleft": "ArrowLeft", "pageup": "PageUp", "f5": "F5",
                 "backspace": "Backspace"}[spelling.lower()]
    assert lookup(spelling) == lookup(canonical)


@pytest.mark.parametrize("name", ["Foo", "NotAKey", "Enterr", "F13x", "", "Control+"])
def test_unknown_keys_raise_value_error(name: str) -> None:
    with pytest.raises(ValueError):
        lookup(name)


@pytest.mark.parametrize("name", ["ab", "Fn", "F0", "xy"])
def test_two_character_names_are_unknown_keys_not_text(name: str) -> None:
    # Only a single character (one emoji) may stand for the key that types it; "Fn" is not typed as "Fn".
    with pytest.raises(ValueError):
        lookup(name)


def test_unknown_key_error_names_the_key() -> None:
    with pytest.raises(ValueError, match="Hyper"):
        lookup("Hyper")


# --- characters ----------------------------------------------------------------------------------
@pytest.mark.parametrize("ch", list("azAZmQ"))
def test_letters_have_key_codes_and_upper_case_key_codes(ch: str) -> None:
    assert lookup(ch) == Key(ch, f"Key{ch.upper()}", ord(ch.upper()), ch)


def test_lower_and_upper_case_letters_share_the_physical_key() -> None:
    a, big_a = lookup("a"), lookup("A")
    assert (a.code, a.key_code) == (big_a.code, big_a.key_code) == ("KeyA", 65)
    assert (a.text, big_a.text) == ("a", "A")


@pytest.mark.parametrize("d", list("0123456789"))
def test_digits_have_digit_codes(d: str) -> None:
    assert lookup(d) == Key(d, f"Digit{d}", 48 + int(d), d)


@pytest.mark.parametrize("ch,code,key_code", [
    ("-", "Minus", 189), ("=", "Equal", 187), ("[", "BracketLeft", 219), ("]", "BracketRight", 221),
    ("\\", "Backslash", 220), (";", "Semicolon", 186), ("'", "Quote", 222), (",", "Comma", 188),
    (".", "Period", 190), ("/", "Slash", 191), ("`", "Backquote", 192),
])
def test_punctuation_has_its_us_layout_code(ch: str, code: str, key_code: int) -> None:
    assert lookup(ch) == Key(ch, code, key_code, ch)


def test_characters_without_a_key_of_their_own_are_typed_as_text() -> None:
    for ch in ("!", "@", "\u00e9", "\u00df", "\u4e2d"):
        assert char_key(ch) == Key(ch, "", 0, ch)


def test_non_ascii_digits_and_letters_get_no_ascii_key_code() -> None:
    assert char_key("\u0663") == Key("\u0663", "", 0, "\u0663")  # ARABIC-INDIC DIGIT THREE
    assert char_key("\u00c5") == Key("\u00c5", "", 0, "\u00c5")  # A WITH RING


@pytest.mark.parametrize("emoji", ["\U0001F600", "\U0001F44D", "\u2764"])
def test_emoji_is_typed_as_text(emoji: str) -> None:
    k = lookup(emoji)
    assert k.text == emoji
    assert k.key == emoji
    assert (k.code, k.key_code) == ("", 0)


def test_newline_and_tab_characters_type_enter_and_tab() -> None:
    assert char_key("\n") == lookup("Enter")
    assert char_key("\r") == lookup("Enter")
    assert char_key("\t") == lookup("Tab")


# --- combos --------------------------------------------------------------------------------------
def test_modifier_bits_follow_cdp() -> None:
    assert MODIFIER_BITS["Alt"] == 1
    assert MODIFIER_BITS["Control"] == MODIFIER_BITS["Ctrl"] == 2
    assert MODIFIER_BITS["Meta"] == MODIFIER_BITS["Cmd"] == MODIFIER_BITS["Command"] == 4
    assert MODIFIER_BITS["Shift"] == 8


@pytest.mark.parametrize("combo,key,bits", [
    ("Enter", "Enter", 0),
    ("a", "a", 0),
    ("Alt+a", "a", 1),
    ("Control+a", "a", 2),
    ("Ctrl+a", "a", 2),
    ("Meta+c", "c", 4),
    ("Cmd+v", "v", 4),
    ("Command+z", "z", 4),
    ("Shift+Tab", "Tab", 8),
    ("Control+Shift+ArrowLeft", "ArrowLeft", 10),
    ("Alt+Control+Meta+Shift+F5", "F5", 15),
    ("Control+Control+x", "x", 2),
])
def test_parse_combo_returns_the_key_and_the_modifier_bitmask(combo: str, key: str, bits: int) -> None:
    k, got = parse_combo(combo)
    assert k == lookup(key)
    assert got == bits


def test_parse_combo_accepts_spaces_around_modifiers() -> None:
    assert parse_combo(" Control +Shift+Enter") == (lookup("Enter"), 10)


def test_control_plus_plus_presses_the_plus_key() -> None:
    k, bits = parse_combo("Control++")
    assert k.key == "+"
    assert k.text == "+"
    assert bits == 2


def test_plus_alone_is_the_plus_key() -> None:
    k, bits = parse_combo("+")
    assert k.text == "+"
    assert bits == 0


def test_a_trailing_plus_does_not_silently_drop_the_modifier() -> None:
    # "Control+" is incomplete: refuse it, or read it as Control and "+", but never a bare "+".
    try:
        k, bits = parse_combo("Control+")
    except ValueError:
        return
    assert (k.text, bits) == ("+", 2)


def test_parse_combo_rejects_an_unknown_modifier_naming_it() -> None:
    with pytest.raises(ValueError, match="Hyper"):
        parse_combo("Hyper+a")


def test_parse_combo_rejects_an_unknown_final_key() -> None:
    with pytest.raises(ValueError):
        parse_combo("Control+Banana")


def test_a_non_modifier_key_cannot_be_used_as_a_modifier() -> None:
    with pytest.raises(ValueError):
        parse_combo("a+b")


def test_edit_commands_cover_the_clipboard_shortcuts() -> None:
    assert EDIT_COMMANDS["a"] == "selectAll"
    assert EDIT_COMMANDS["c"] == "copy"
    assert EDIT_COMMANDS["v"] == "paste"
    assert EDIT_COMMANDS["x"] == "cut"
    assert EDIT_COMMANDS["z"] == "undo"
    assert EDIT_COMMANDS["y"] == "redo"
