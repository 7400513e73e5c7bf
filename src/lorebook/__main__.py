"""`python -m lorebook` is the `lore` command."""

import sys

from .cli import main

sys.exit(main())
