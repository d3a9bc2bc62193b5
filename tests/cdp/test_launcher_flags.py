"""Unit tests for cdp.launcher: Chrome's flags, finding the binary, and CDP URL schemes (no browser, no network)."""
from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from cdp import launcher
from cdp.errors import LaunchError
from cdp.launcher import CANDIDATES, chrome_flags, find_browser, resolve_cdp_url

ALWAYS = ("--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run")


# --- chrome_flags --------------------------------------------------------------------------------
@pytest.mark.parametrize("headless", [True, False])
@pytest.mark.parametrize("as_root", [True, False])
def test_flags_always_keep_chrome_off_the_network_and_quiet(headless: bool, as_root: bool) -> None:
    flags = chrome_flags(headless=headless, user_data_dir="profiles/agent", as_root=as_root)
    for flag in ALWAYS:
        assert flag in flags


@pytest.mark.parametrize("headless", [True, False])
def test_flags_always_ask_for_a_free_debugging_port_and_the_given_profile(headless: bool) -> None:
    flags = chrome_flags(headless=headless, user_data_dir="profiles/my agent", as_root=False)
    assert "--remote-debugging-port=0" in flags
    assert "--user-data-dir=profiles/my agent" in flags  # one argv item, spaces and all
    assert not any(f.startswith("--remote-debugging-port=") and f != "--remote-debugging-port=0" for f in flags)


def test_headless_flag_only_when_headless() -> None:
    assert "--headless=new" in chrome_flags(headless=True, user_data_dir="d", as_root=False)
    headed = chrome_flags(headless=False, user_data_dir="d", as_root=False)
    assert not any(f.startswith("--headless") for f in headed)


def test_no_sandbox_only_as_root() -> None:
    assert "--no-sandbox" in chrome_flags(headless=True, user_data_dir="d", as_root=True)
    assert "--no-sandbox" not in chrome_flags(headless=True, user_data_dir="d", as_root=False)


def test_root_is_detected_from_the_effective_uid_when_not_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher.os, "geteuid", lambda: 0)
    assert "--no-sandbox" in chrome_flags(headless=True, user_data_dir="d")
    monkeypatch.setattr(launcher.os, "geteuid", lambda: 1000)
    assert "--no-sandbox" not in chrome_flags(headless=True, user_data_dir="d")


def test_explicit_as_root_wins_over_the_effective_uid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher.os, "geteuid", lambda: 0)
    assert "--no-sandbox" not in chrome_flags(headless=True, user_data_dir="d", as_root=False)
    monkeypatch.setattr(launcher.os, "geteuid", lambda: 1000)
    assert "--no-sandbox" in chrome_flags(headless=True, user_data_dir="d", as_root=True)


def test_window_size_default_and_override() -> None:
    assert "--window-size=1280,800" in chrome_flags(headless=True, user_data_dir="d", as_root=False)
    flags = chrome_flags(headless=True, user_data_dir="d", as_root=False, window=(800, 600))
    assert "--window-size=800,600" in flags
    assert "--window-size=1280,800" not in flags


def test_extra_flags_come_after_ours_and_the_first_page_is_blank() -> None:
    flags = chrome_flags(headless=True, user_data_dir="d", as_root=False, extra=("--lang=fr", "--proxy-server=x"))
    assert flags[-1] == "about:blank"
    assert flags[-3:-1] == ["--lang=fr", "--proxy-server=x"]
    assert flags.index("--remote-debugging-port=0") < flags.index("--lang=fr")


def test_flags_are_plain_strings_without_duplicates() -> None:
    flags = chrome_flags(headless=True, user_data_dir="d", as_root=True)
    assert all(isinstance(f, str) for f in flags)
    assert len(flags) == len(set(flags))


def test_each_call_returns_a_fresh_list() -> None:
    first = chrome_flags(headless=True, user_data_dir="d", as_root=False)
    first.append("--mutated")
    assert "--mutated" not in chrome_flags(headless=True, user_data_dir="d", as_root=False)


# --- find_browser --------------------------------------------------------------------------------
def fake_exe(directory: Path, name: str, executable: bool = True) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n")
    mode = stat.S_IRUSR | stat.S_IWUSR
    if executable:
        mode |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
    path.chmod(mode)
    return path


@pytest.fixture
def bindir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only our fake browsers (for the process too: shutil.which reads os.environ)."""
    d = tmp_path / "bin"
    d.mkdir()
    monkeypatch.setenv("PATH", str(d))
    return d


def test_configured_binary_wins_over_chrome_bin_and_path(tmp_path: Path, bindir: Path) -> None:
    configured = fake_exe(tmp_path / "opt", "my-chrome")
    chrome_bin = fake_exe(tmp_path / "other", "env-chrome")
    fake_exe(bindir, "chromium")
    got = find_browser(str(configured), env={"PATH": str(bindir), "CHROME_BIN": str(chrome_bin)})
    assert got == str(configured)


def test_configured_name_is_looked_up_on_path(bindir: Path) -> None:
    exe = fake_exe(bindir, "brave-browser")
    assert find_browser("brave-browser", env={"PATH": str(bindir)}) == str(exe)


def test_chrome_bin_is_used_when_nothing_is_configured(tmp_path: Path, bindir: Path) -> None:
    chrome_bin = fake_exe(tmp_path / "other", "env-chrome")
    fake_exe(bindir, "chromium")
    assert find_browser("", env={"PATH": str(bindir), "CHROME_BIN": str(chrome_bin)}) == str(chrome_bin)


def test_chrome_binary_is_the_fallback_of_chrome_bin(tmp_path: Path, bindir: Path) -> None:
    chrome_binary = fake_exe(tmp_path / "other", "env-chrome")
    fake_exe(bindir, "chromium")
    assert find_browser("", env={"PATH": str(bindir), "CHROME_BINARY": str(chrome_binary)}) == str(chrome_binary)


def test_empty_chrome_bin_is_ignored(bindir: Path) -> None:
    exe = fake_exe(bindir, "chromium")
    assert find_browser("", env={"PATH": str(bindir), "CHROME_BIN": ""}) == str(exe)


def test_path_names_are_tried_in_order(bindir: Path) -> None:
    for name in CANDIDATES:
        fake_exe(bindir, name)
    env = {"PATH": str(bindir)}
    assert find_browser("", env=env) == str(bindir / "chromium")
    (bindir / "chromium").unlink()
    assert find_browser("", env=env) == str(bindir / "chromium-browser")
    (bindir / "chromium-browser").unlink()
    assert find_browser("", env=env) == str(bindir / "google-chrome")
    (bindir / "google-chrome").unlink()
    assert find_browser("", env=env) == str(bindir / "google-chrome-stable")
    (bindir / "google-chrome-stable").unlink()
    assert find_browser("", env=env) == str(bindir / "chrome")


def test_candidate_names_start_with_chromium_and_include_chrome() -> None:
    assert CANDIDATES[0] == "chromium"
    assert {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"} <= set(CANDIDATES)


def test_a_non_executable_file_on_path_is_skipped(bindir: Path) -> None:
    fake_exe(bindir, "chromium", executable=False)
    exe = fake_exe(bindir, "google-chrome")
    assert find_browser("", env={"PATH": str(bindir)}) == str(exe)


def test_env_mapping_is_read_instead_of_the_process_environment(tmp_path: Path, bindir: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    process_bin = fake_exe(tmp_path / "proc", "process-chrome")
    monkeypatch.setenv("CHROME_BIN", str(process_bin))
    exe = fake_exe(bindir, "chromium")
    assert find_browser("", env={"PATH": str(bindir)}) == str(exe)


def test_process_environment_is_read_when_no_env_is_given(tmp_path: Path, bindir: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    process_bin = fake_exe(tmp_path / "proc", "process-chrome")
    monkeypatch.setenv("CHROME_BIN", str(process_bin))
    fake_exe(bindir, "chromium")
    assert find_browser() == str(process_bin)


def test_path_of_the_env_mapping_is_searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The env mapping stands for the environment: its PATH, not the process's, says where to look.
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    exe = fake_exe(tmp_path / "bin", "chromium")
    assert find_browser("", env={"PATH": str(exe.parent)}) == str(exe)


def test_configured_binary_that_is_missing_is_an_error_naming_it(tmp_path: Path, bindir: Path) -> None:
    fake_exe(bindir, "chromium")  # no fallback to PATH when the config names a binary
    missing = tmp_path / "nowhere" / "chrome"
    with pytest.raises(LaunchError, match="not found or not executable") as info:
        find_browser(str(missing), env={"PATH": str(bindir)})
    assert repr(str(missing)) in str(info.value)


def test_configured_binary_that_is_not_executable_is_an_error(tmp_path: Path, bindir: Path) -> None:
    plain = fake_exe(tmp_path / "opt", "chrome", executable=False)
    with pytest.raises(LaunchError, match="not found or not executable"):
        find_browser(str(plain), env={"PATH": str(bindir)})


def test_configured_directory_is_not_a_browser(tmp_path: Path, bindir: Path) -> None:
    folder = tmp_path / "chrome-dir"
    folder.mkdir()
    with pytest.raises(LaunchError, match="not found or not executable"):
        find_browser(str(folder), env={"PATH": str(bindir)})


def test_bad_chrome_bin_is_an_error_not_a_fallback_to_path(tmp_path: Path, bindir: Path) -> None:
    fake_exe(bindir, "chromium")
    with pytest.raises(LaunchError, match="CHROME_BIN|not found or not executable") as info:
        find_browser("", env={"PATH": str(bindir), "CHROME_BIN": str(tmp_path / "gone")})
    assert "gone" in str(info.value)


def test_no_browser_anywhere_says_how_to_get_one(bindir: Path) -> None:
    with pytest.raises(LaunchError) as info:
        find_browser("", env={"PATH": str(bindir)})
    msg = str(info.value)
    assert "no Chrome or Chromium found" in msg
    assert "chromium" in msg and "CHROME_BIN" in msg


# --- resolve_cdp_url -----------------------------------------------------------------------------
@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("resolve_cdp_url must not reach the network here")

    monkeypatch.setattr(launcher.requests, "get", refuse)


@pytest.mark.parametrize("url", [
    "ws://127.0.0.1:9222/devtools/browser/abc-123",
    "wss://browser.example.test/devtools/browser/xyz",
    "ws://localhost:9222/devtools/browser/x?token=1",
])
def test_websocket_urls_pass_through_unchanged(url: str, no_network: None) -> None:
    assert resolve_cdp_url(url) == url


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:9222", "file://host/page.html", "localhost:9222",
                                 "127.0.0.1:9222", "", "chrome://version"])
def test_other_schemes_are_rejected_naming_the_url(url: str, no_network: None) -> None:
    with pytest.raises(LaunchError, match="must be http") as info:
        resolve_cdp_url(url)
    assert repr(url) in str(info.value)


def test_a_callers_disable_features_adds_to_ours_instead_of_replacing_them() -> None:
    flags = chrome_flags(headless=True, user_data_dir="d", as_root=False,
                         extra=("--disable-features=Foo,Translate", "--lang=en-US"))
    [features] = [f for f in flags if f.startswith("--disable-features=")]   # Chrome reads only the last one
    names = features.split("=", 1)[1].split(",")
    assert {"Foo", "Translate", "WebUIOmniboxPopup", "WebUIOmniboxAimPopup"} <= set(names)
    assert len(names) == len(set(names)) and "--lang=en-US" in flags


def test_the_launched_browser_preloads_no_omnibox_pages(browser: Any) -> None:
    """Chrome preloads its omnibox popups' WebUI even headless: a renderer that made each launch
    cost three times the CPU. A Chromium that renames the feature shows up here."""
    targets = browser._conn().call("Target.getTargets", {"filter": [{}]})["targetInfos"]
    assert [t["url"] for t in targets if "top-chrome" in t["url"] or t["type"] == "browser_ui"] == []
    assert any(t["type"] == "page" for t in targets)
