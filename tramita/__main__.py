"""`python -m tramita`: the `tramita` command."""

import sys

from tramita.cli import main

sys.exit(main())
