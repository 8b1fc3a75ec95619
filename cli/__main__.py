"""`python -m cairn.cli ...`: the `cairn` command without the console script."""

import sys

from cairn.cli import main

sys.exit(main())
