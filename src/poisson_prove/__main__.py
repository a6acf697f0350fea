import sys

from poisson_prove.cli import main

sys.exit(main())
