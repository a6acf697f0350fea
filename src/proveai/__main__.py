"""`python -m proveai`: the same command line as the `proveai` console script."""

import sys

from proveai.cli import main

sys.exit(main())
