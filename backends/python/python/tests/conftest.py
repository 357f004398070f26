import os
import sys

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if PKG_PARENT not in sys.path:
    sys.path.insert(0, PKG_PARENT)
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import pytest  # noqa: E402

from harness import Stub, Zygote  # noqa: E402


@pytest.fixture(scope="module")
def zygote():
    z = Zygote()
    assert z.ready["op"] == "ready", z.ready
    yield z
    z.close()


@pytest.fixture
def stub(zygote):
    s = Stub(zygote)
    yield s
    s.close()
