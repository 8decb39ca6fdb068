"""The generated password of an instance's user ``neo4j``: ``<instance dir>/neo4j-password``,
created once (owner-only, 0600) in an owner-only instance directory (0700)."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

PASSWORD_FILE = "neo4j-password"


def password_path(base_dir: Path) -> Path:
    return base_dir / PASSWORD_FILE


def private_dir(path: Path) -> None:
    """Create ``path`` (and parents) and make it owner-only: 0700."""
    path.mkdir(parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)


def new_password() -> str:
    """A random password that neo4j-admin cannot mistake for an option (no leading '-')."""
    while (password := secrets.token_urlsafe(24)).startswith("-"):
        pass
    return password


def stored_password(base_dir: Path) -> str:
    """The instance's generated password, created on first use (owner-only file)."""
    path = password_path(base_dir)
    private_dir(base_dir)
    if not path.exists():
        with contextlib.suppress(FileExistsError):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(new_password() + "\n")
    if path.stat().st_mode & 0o077:  # someone loosened it: the password is for the owner only
        path.chmod(0o600)
    password = path.read_text().strip()
    if not password:
        raise ValueError(f"{path} is empty: delete it to generate a new password")
    return password
