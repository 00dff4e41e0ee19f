"""``python -m toolnexus_conformance.ci_gate``: the CI gate's command line."""

from toolnexus_conformance.ci_gate.gate import main

raise SystemExit(main())
