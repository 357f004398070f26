"""Shared by the deployment tests: the repository's deploy/ folder and the
flags the real binary accepts."""

import functools
import re
import subprocess

from servers import REPO_ROOT, oxiserve_bin

DEPLOY = REPO_ROOT / "deploy"


@functools.cache
def oxiserve_flags():
    """Every `--flag` that `oxiserve --help` lists."""
    out = subprocess.run([str(oxiserve_bin()), "--help"], capture_output=True, text=True,
                         check=True).stdout
    return set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", out))


def check_command(args):
    """`args` run oxiserve (or its `tritonserver` name) with flags it accepts."""
    assert args[0] in ("oxiserve", "tritonserver"), args
    for arg in args[1:]:
        flag = arg.split("=", 1)[0]
        assert flag in oxiserve_flags(), f"{flag} is not an oxiserve flag ({args})"
