"""Opens a page in headless Debian chromium: its DOM, and a screenshot
checked to be a real, non-blank image."""

import shutil
import struct
import subprocess
import tempfile
import zlib

import pytest

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium():
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("chromium not found: run scripts/tools.sh (apt-get install chromium)", pytrace=False)
    return path


def _run(page, *args):
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def dump_dom(page):
    """The DOM chromium builds from `page` (a Path), serialized."""
    return _run(page, "--dump-dom").stdout


def screenshot(page, png, size=(1200, 900)):
    """Saves a screenshot of `page` to `png`; returns (width, height, distinct
    byte values in its decompressed pixel rows)."""
    _run(page, f"--screenshot={png}", f"--window-size={size[0]},{size[1]}")
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))
