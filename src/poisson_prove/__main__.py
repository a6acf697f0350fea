"""`python -m poisson_prove`: the same command line as the `poisson-prove` console script."""

import sys

from poisson_prove.cli import main

sys.exit(main())
