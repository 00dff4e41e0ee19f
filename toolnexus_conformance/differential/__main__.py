"""``python -m toolnexus_conformance.differential``: the differential search's command line."""

import sys

from toolnexus_conformance.differential.cli import main

sys.exit(main())
