"""`python -m oxiserve_stub` = the zygote (fd 3 = control socket)."""

import sys

from oxiserve_stub.zygote import main

sys.exit(main())
