"""Builders for Chrome user-data dirs in the shapes Chrome writes, and small test helpers."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def preferences(email: str | None = "ada@example.com", full_name: str = "Ada Lovelace",
                given_name: str = "Ada", profile_name: str = "Person 1",
                consented: bool | None = True) -> dict[str, Any]:
    """A ``Default/Preferences`` document shaped like Chrome's (trimmed, with unrelated keys)."""
    accounts = []
    if email is not None:
        accounts.append({
            "account_id": "114477001122334455667", "accountcapabilities": {
                "accountcapabilities/g42tslldmfya": 1, "accountcapabilities/gi2tklldmfya": 1},
            "email": email, "full_name": full_name, "gaia": "114477001122334455667",
            "given_name": given_name, "hd": "NO_HOSTED_DOMAIN", "is_supervised_child": 0,
            "is_under_advanced_protection": False,
            "last_downloaded_image_url_with_size": "https://lh3.googleusercontent.com/a/x=s256-c-k-no",
            "locale": "en-GB", "picture_url": "https://lh3.googleusercontent.com/a/x=s96-c",
        })
    services: dict[str, Any] = {"last_account_id": "114477001122334455667", "last_username": email or ""}
    if consented is not None:
        services["consented_to_sync"] = consented
    return {
        "account_info": accounts,
        "account_tracker_service_last_update": "13350000000000000",
        "autofill": {"last_version_deduped": 120},
        "browser": {"has_seen_welcome_page": True, "window_placement": {"bottom": 1000, "left": 10}},
        "extensions": {"alerts": {"initialized": True}, "settings": {}},
        "google": {"services": services},
        "intl": {"selected_languages": "en-GB,en"},
        "profile": {"avatar_index": 26, "content_settings": {"exceptions": {"cookies": {}}},
                    "created_by_version": "120.0.6099.109", "exit_type": "Normal",
                    "managed_user_id": "", "name": profile_name},
        "signin": {"allowed": True},
        "sync": {"requested": True},
    }


def local_state(entries: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A ``Local State`` document with ``profile.info_cache`` (Chrome's shape, trimmed)."""
    if entries is None:
        entries = {"Default": info_cache_entry()}
    return {
        "browser": {"enabled_labs_experiments": [], "last_redirect_origin": ""},
        "hardware_acceleration_mode_previous": True,
        "os_crypt": {"app_bound_fixed_data": "", "encrypted_key": "RFBBUEk="},
        "profile": {"info_cache": entries, "last_active_profiles": list(entries),
                    "last_used": next(iter(entries), "Default"), "metrics": {"next_bucket_index": 2},
                    "profiles_order": list(entries)},
        "user_experience_metrics": {"stability": {"browser_last_live_timestamp": "13350000000000000"}},
        "variations_country": "gb",
    }


def info_cache_entry(user_name: str = "ada@example.com", gaia_name: str = "Ada Lovelace",
                     name: str = "Work", consented: bool = True, key: str = "is_consented_primary_account",
                     ) -> dict[str, Any]:
    """One ``profile.info_cache`` entry as Chrome writes it."""
    return {
        "active_time": 1700000000.123, "avatar_icon": "chrome://theme/IDR_PROFILE_AVATAR_26",
        "background_apps": False, "force_signin_profile_locked": False,
        "gaia_given_name": gaia_name.split(" ")[0] if gaia_name else "", "gaia_id": "114477001122334455667",
        "gaia_name": gaia_name, "hosted_domain": "NO_HOSTED_DOMAIN", key: consented,
        "is_ephemeral": False, "is_using_default_avatar": True, "is_using_default_name": False,
        "managed_user_id": "", "metrics_bucket_index": 1, "name": name,
        "signin.with_credential_provider": False, "user_name": user_name,
    }


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=3))  # Chrome writes compact JSON; the shape is what matters
    return path


def make_user_data_dir(root: Path, *, prefs: dict[str, Any] | None = None,
                       state: dict[str, Any] | None = None, cache_files: int = 3,
                       singleton: str | None = "otherhost-4242") -> Path:
    """A realistic user-data dir: Local State, Default/{Preferences, Cookies, ...}, caches, locks."""
    root.mkdir(parents=True, exist_ok=True)
    write_json(root / "Local State", state if state is not None else local_state())
    default = root / "Default"
    write_json(default / "Preferences", prefs if prefs is not None else preferences())
    (default / "Cookies").write_bytes(b"SQLite format 3\x00" + b"\x00" * 4080)
    (default / "History").write_bytes(b"SQLite format 3\x00" + b"\x01" * 2032)
    (default / "Login Data").write_bytes(b"SQLite format 3\x00" + b"\x02" * 1008)
    (default / "Bookmarks").write_text('{"roots": {"bookmark_bar": {"children": []}}, "version": 1}')
    leveldb = default / "Local Storage" / "leveldb"
    leveldb.mkdir(parents=True)
    (leveldb / "000003.log").write_bytes(b"\x00" * 512)
    (leveldb / "LOCK").write_bytes(b"")
    (default / "Sessions").mkdir()
    (default / "Sessions" / "Session_13350000000000000").write_bytes(b"SNSS" + b"\x00" * 100)
    for cache in ("Cache/Cache_Data", "Code Cache/js", "GPUCache"):
        d = default / cache
        d.mkdir(parents=True)
        for i in range(cache_files):
            (d / f"f_{i:06x}").write_bytes(b"c" * 1000)
    (root / "GrShaderCache").mkdir()
    (root / "GrShaderCache" / "data_0").write_bytes(b"s" * 1000)
    if singleton is not None:
        os.symlink(singleton, root / "SingletonLock")
        os.symlink("/nonexistent-dir/SingletonSocket", root / "SingletonSocket")
        os.symlink("1234567890", root / "SingletonCookie")
    return root
