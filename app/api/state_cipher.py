"""Sealing a saved state with AES-256-GCM (``POST /state/save`` with ``encrypt: true``).

The key is a passphrase of any length (``security.stateEncryptionKey``, or ``PINCHTAB_STATE_KEY``):
scrypt with a fresh random salt per file turns it into the 256-bit AES key, so a short passphrase
does not make a short key and no two files share one. A sealed file is still a JSON object that
keeps in the clear only what listing and cleaning need (name, savedAt); cookies, storage, origins
and metadata are inside. Those clear fields are bound to the sealed part as associated data, so a
file whose name or date was edited fails to open, exactly like a wrong key.

Pure functions, no I/O: the routes read and write the files.
"""
from __future__ import annotations

import base64
import json
import os
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from ..web import untrusted_json

CIPHER = "AES-256-GCM"
# scrypt's cost: about 0.1 s and 32 MiB per save or load, which makes guessing a passphrase slow.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1
# A file asking for more is refused, not obeyed: scrypt takes 128 * n * r bytes (n = 2**20 with r = 32
# is 4 GiB) and p times the work. Twice our own cost is the bound, whoever wrote the file.
MAX_SCRYPT_BYTES = 2 * 128 * SCRYPT_N * SCRYPT_R
MAX_SCRYPT_WORK = 2 * 128 * SCRYPT_N * SCRYPT_R * SCRYPT_P
SALT_BYTES, NONCE_BYTES = 16, 12
CLEAR_FIELDS = ("version", "name", "savedAt")


class WrongKey(Exception):
    """The sealed state does not open with this key (or its clear fields were changed)."""


class BadEnvelope(ValueError):
    """The file says it is sealed but is not a sealed state this module wrote."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: Any, what: str) -> bytes:
    if not isinstance(text, str):
        raise BadEnvelope(f"{what} is missing")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise BadEnvelope(f"{what} is not base64") from None


def _aes_key(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase.encode("utf-8"))


def _clear_part(record: dict[str, Any]) -> bytes:
    return json.dumps([record.get(k) for k in CLEAR_FIELDS], ensure_ascii=False).encode("utf-8")


def is_sealed(record: dict[str, Any]) -> bool:
    """Whether a state file's object is a sealed one (its contents need the key)."""
    return bool(record.get("encrypted")) and "sealed" in record


def seal(record: dict[str, Any], passphrase: str) -> dict[str, Any]:
    """The file's object for ``record`` sealed with ``passphrase``: clear fields plus the sealed rest."""
    salt, nonce = os.urandom(SALT_BYTES), os.urandom(NONCE_BYTES)
    clear = {k: record[k] for k in CLEAR_FIELDS if k in record}
    key = _aes_key(passphrase, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    plain = json.dumps(record, ensure_ascii=False).encode("utf-8")
    data = AESGCM(key).encrypt(nonce, plain, _clear_part(clear))
    return {**clear, "encrypted": True,
            "sealed": {"cipher": CIPHER, "kdf": {"name": "scrypt", "n": SCRYPT_N, "r": SCRYPT_R, "p": SCRYPT_P,
                                                 "salt": _b64(salt)},
                       "nonce": _b64(nonce), "data": _b64(data)}}


def unseal(envelope: dict[str, Any], passphrase: str) -> dict[str, Any]:
    """The record inside a sealed file's object. Raises WrongKey or BadEnvelope."""
    sealed = envelope.get("sealed")
    if not isinstance(sealed, dict) or sealed.get("cipher") != CIPHER:
        raise BadEnvelope(f"not sealed with {CIPHER}")
    kdf = sealed.get("kdf")
    if not isinstance(kdf, dict) or kdf.get("name") != "scrypt":
        raise BadEnvelope("unknown key derivation")
    n, r, p = kdf.get("n"), kdf.get("r"), kdf.get("p")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (n, r, p)) \
            or not (2 <= n and n & (n - 1) == 0 and 1 <= r and 1 <= p and 128 * n * r <= MAX_SCRYPT_BYTES
                    and 128 * n * r * p <= MAX_SCRYPT_WORK):
        raise BadEnvelope("key derivation parameters out of range (they would take more memory or time than "
                          "Pinchtab's own)")
    salt, nonce, data = _unb64(kdf.get("salt"), "salt"), _unb64(sealed.get("nonce"), "nonce"), \
        _unb64(sealed.get("data"), "data")
    if len(nonce) != NONCE_BYTES:
        raise BadEnvelope("nonce has the wrong length")
    try:
        plain = AESGCM(_aes_key(passphrase, salt, n, r, p)).decrypt(nonce, data, _clear_part(envelope))
    except InvalidTag:
        raise WrongKey("the key does not open this state (a different key, or the file was changed)") from None
    try:
        record = untrusted_json.loads(plain.decode("utf-8"))
    except ValueError:
        raise BadEnvelope("the sealed contents are not JSON") from None
    if not isinstance(record, dict):
        raise BadEnvelope("the sealed contents are not a JSON object")
    return record
