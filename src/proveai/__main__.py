import sys

from proveai.cli import main

sys.exit(main())
